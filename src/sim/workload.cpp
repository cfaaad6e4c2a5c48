#include "k3lab/sim/workload.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace k3lab::sim {

std::uint32_t LengthDistribution::sample(core::Rng& rng) const {
  switch (kind) {
    case Kind::Fixed: return value;
    case Kind::Uniform: return min + static_cast<std::uint32_t>(rng.below(std::uint64_t{max} - min + 1));
    case Kind::LogNormal: {
      const double x = median * std::exp(sigma * rng.normal());
      const double clamped = std::clamp(std::round(x), static_cast<double>(min), static_cast<double>(max));
      return static_cast<std::uint32_t>(clamped);
    }
  }
  return 0;
}

double LengthDistribution::mean_estimate() const {
  switch (kind) {
    case Kind::Fixed: return value;
    case Kind::Uniform: return 0.5 * (static_cast<double>(min) + max);
    case Kind::LogNormal: return std::min<double>(max, median * std::exp(0.5 * sigma * sigma));
  }
  return 0;
}

double ArrivalProcess::sample_gap_seconds(core::Rng& rng) const {
  if (kind == Kind::Poisson) return rng.exponential(rate_per_second);
  const double shape = 1.0 / (cv * cv);
  return rng.gamma(shape, 1.0 / (rate_per_second * shape));
}

void MixSpec::validate() const {
  auto fail = [&](const std::string& field, const std::string& what) {
    throw std::invalid_argument("mix \"" + id + "\": " + field + ": " + what);
  };
  if (phases.empty()) fail("phases", "needs at least one phase");
  double total = 0;
  for (std::size_t p = 0; p < phases.size(); ++p) {
    const Phase& phase = phases[p];
    const std::string at = "phases[" + std::to_string(p) + "]";
    if (!(phase.arrival_fraction > 0 && phase.arrival_fraction <= 1)) fail(at + ".arrival_fraction", "must be in (0, 1]");
    total += phase.arrival_fraction;
    if (!(phase.arrival.rate_per_second > 0)) fail(at + ".arrival.rate_per_second", "must be > 0");
    if (!(phase.arrival.cv > 0)) fail(at + ".arrival.cv", "must be > 0");
    if (phase.classes.empty()) fail(at + ".classes", "needs at least one request class");
    for (std::size_t c = 0; c < phase.classes.size(); ++c) {
      const RequestClass& rc = phase.classes[c];
      const std::string cat = at + ".classes[" + std::to_string(c) + "]";
      if (!(rc.weight > 0)) fail(cat + ".weight", "must be > 0");
      for (const auto* d : {&rc.prompt_tokens, &rc.output_tokens}) {
        const std::string dat = cat + (d == &rc.prompt_tokens ? ".prompt_tokens" : ".output_tokens");
        if (d->kind != LengthDistribution::Kind::Fixed && d->min > d->max) fail(dat, "min must not exceed max");
        if (d->kind == LengthDistribution::Kind::LogNormal && !(d->median > 0 && d->sigma >= 0)) {
          fail(dat, "lognormal needs median > 0 and sigma >= 0");
        }
      }
      const auto& p_tok = rc.prompt_tokens;
      const std::uint32_t smallest = p_tok.kind == LengthDistribution::Kind::Fixed ? p_tok.value : p_tok.min;
      if (smallest == 0) fail(cat + ".prompt_tokens", "must never draw 0: every request has at least one prompt token");
    }
  }
  if (std::abs(total - 1.0) > 1e-9) {
    fail("phases[].arrival_fraction", "must sum to 1 (they sum to " + std::to_string(total) + ")");
  }
}

std::vector<std::uint64_t> phase_counts(const MixSpec& mix, std::uint64_t arrivals) {
  std::vector<std::uint64_t> counts;
  std::uint64_t assigned = 0;
  double cumulative = 0;
  for (std::size_t p = 0; p < mix.phases.size(); ++p) {
    cumulative += mix.phases[p].arrival_fraction;
    const std::uint64_t end = p + 1 == mix.phases.size()
                                  ? arrivals
                                  : std::min<std::uint64_t>(arrivals, std::llround(cumulative * static_cast<double>(arrivals)));
    counts.push_back(end - std::min(end, assigned));
    assigned = std::max(assigned, end);
  }
  return counts;
}

Trace generate_trace(const MixSpec& mix, std::uint64_t arrivals, std::uint64_t seed, std::string source) {
  mix.validate();
  Trace trace;
  trace.source = std::move(source);
  trace.generator_seed = seed;
  trace.records.reserve(arrivals);
  core::Rng rng(seed);
  const auto counts = phase_counts(mix, arrivals);
  double t_seconds = 0;
  for (std::size_t p = 0; p < mix.phases.size(); ++p) {
    const Phase& phase = mix.phases[p];
    double total_weight = 0;
    for (const auto& c : phase.classes) total_weight += c.weight;
    for (std::uint64_t i = 0; i < counts[p]; ++i) {
      t_seconds += phase.arrival.sample_gap_seconds(rng);
      double pick = rng.uniform() * total_weight;
      std::size_t chosen = phase.classes.size() - 1;
      for (std::size_t c = 0; c + 1 < phase.classes.size(); ++c) {
        if (pick < phase.classes[c].weight) {
          chosen = c;
          break;
        }
        pick -= phase.classes[c].weight;
      }
      const RequestClass& rc = phase.classes[chosen];
      TraceRecord r;
      r.arrival_us = std::llround(t_seconds * 1e6);
      r.prompt_tokens = rc.prompt_tokens.sample(rng);
      r.output_tokens = rc.output_tokens.sample(rng);
      trace.records.push_back(r);
    }
  }
  return trace;
}

}  // namespace k3lab::sim
