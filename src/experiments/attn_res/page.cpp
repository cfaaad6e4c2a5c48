#include "attn_res/page.hpp"

#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "attn_res/decision.hpp"
#include "attn_res/parameters.hpp"
#include "attn_res/run_unit.hpp"
#include "attn_res/unit_metrics.hpp"
#include "attn_res/units.hpp"
#include "k3lab/experiments/training/downstream_page.hpp"
#include "k3lab/experiments/training/failure_rule.hpp"
#include "k3lab/experiments/training/gate.hpp"
#include "k3lab/experiments/training/page_tables.hpp"
#include "k3lab/experiments/training/results_frame.hpp"
#include "k3lab/report/stats.hpp"

namespace k3lab::experiments::attn_res {
namespace {

constexpr const char* kBaseline = "ordinary-residual";
const std::vector<std::string> kAttnResArms = {"full-attnres", "block-attnres"};

using ByArm = std::map<std::string, std::map<std::uint64_t, UnitMetrics>>;  // arm -> seed -> metrics
using Extract = std::function<std::optional<double>(const UnitMetrics&)>;

std::string percent(double v) {
  char text[64];
  std::snprintf(text, sizeof text, "%.2f%%", 100.0 * v);
  return text;
}
using training::yes_no;

// Seed mean of a metric over one arm's results that have it.
std::optional<double> seed_mean(const ByArm& by_arm, const std::string& arm, const Extract& extract) {
  if (!by_arm.count(arm)) return std::nullopt;
  std::vector<double> values;
  for (const auto& [seed, m] : by_arm.at(arm)) {
    if (auto v = extract(m)) values.push_back(*v);
  }
  if (values.empty()) return std::nullopt;
  return report::mean(values);
}

report::Cell cell(const std::optional<double>& v) { return v ? report::Cell(*v) : report::Cell(); }

// The validation losses at the budget of the seeds both arms completed, paired by seed.
struct Pairs {
  std::vector<std::uint64_t> seeds;
  std::vector<double> arm, baseline;
};
Pairs paired_losses(const ByArm& by_arm, const std::string& arm) {
  Pairs p;
  if (!by_arm.count(arm) || !by_arm.count(kBaseline)) return p;
  for (const auto& [seed, m] : by_arm.at(arm)) {
    if (auto it = by_arm.at(kBaseline).find(seed); it != by_arm.at(kBaseline).end()) {
      p.seeds.push_back(seed);
      p.arm.push_back(m.final_validation_loss);
      p.baseline.push_back(it->second.final_validation_loss);
    }
  }
  return p;
}

const Extract kResidualBytes = [](const UnitMetrics& m) { return std::optional<double>(m.stored_residual_bytes); };
const Extract kThroughput = [](const UnitMetrics& m) { return m.train_tokens_per_s; };
const Extract kAllocatorPeak = [](const UnitMetrics& m) { return m.peak_training_bytes; };

void add_loss_by_seed(const ByArm& by_arm, report::Page& page) {
  auto t = report::make_table(
      "validation-loss-by-seed",
      "Validation loss at the token budget by seed, and the paired relative improvement over ordinary residuals",
      {"seed"});
  for (const auto& arm : arm_ids()) t.columns.push_back(arm);
  for (const auto& arm : kAttnResArms) t.columns.push_back(arm + " relative improvement");
  std::map<std::uint64_t, bool> seeds;
  for (const auto& [arm, runs] : by_arm) {
    for (const auto& [seed, m] : runs) seeds[seed] = true;
  }
  for (const auto& [seed, unused] : seeds) {
    std::vector<report::Cell> row = {std::to_string(seed)};
    auto loss = [&](const std::string& arm) -> std::optional<double> {
      if (!by_arm.count(arm) || !by_arm.at(arm).count(seed)) return std::nullopt;
      return by_arm.at(arm).at(seed).final_validation_loss;
    };
    for (const auto& arm : arm_ids()) row.push_back(cell(loss(arm)));
    for (const auto& arm : kAttnResArms) {
      const auto a = loss(arm), b = loss(kBaseline);
      row.push_back(a && b && *b != 0 ? report::Cell((*b - *a) / *b) : report::Cell());
    }
    t.rows.push_back(std::move(row));
  }
  std::vector<report::Cell> mean_row = {"mean"};
  const Extract loss = [](const UnitMetrics& m) { return std::optional<double>(m.final_validation_loss); };
  for (const auto& arm : arm_ids()) mean_row.push_back(cell(seed_mean(by_arm, arm, loss)));
  for (const auto& arm : kAttnResArms) {
    const auto pairs = paired_losses(by_arm, arm);
    if (pairs.seeds.empty()) {
      mean_row.emplace_back();
      continue;
    }
    const auto effects =
        report::paired_effects(pairs.arm, pairs.baseline, report::PairedEffect::RelativeImprovementLowerBetter);
    mean_row.push_back(report::mean(effects));
  }
  t.rows.push_back(std::move(mean_row));
  t.caption = "Relative improvement = (ordinary - arm) / ordinary for the same seed (positive: lower loss than "
              "ordinary residuals). The mean row of the improvement columns is over the seeds both arms completed.";
  page.add_table(std::move(t));
}

void add_paired_gain(const ByArm& by_arm, const Decision& d, report::Page& page) {
  auto t = report::make_table(
      "paired-gain", "Paired per-seed relative improvement over ordinary residuals (validation loss at the budget)",
      {"arm", "paired seeds", "mean relative improvement", "bootstrap CI low", "bootstrap CI high", "seeds improved"});
  for (const auto& arm : kAttnResArms) {
    const auto pairs = paired_losses(by_arm, arm);
    if (pairs.seeds.empty()) {
      t.rows.push_back({arm, 0, report::Cell(), report::Cell(), report::Cell(), "no paired seeds"});
      continue;
    }
    const auto g = paired_gain(pairs.arm, pairs.baseline, d);
    t.rows.push_back({arm, pairs.seeds.size(), g.interval.estimate, g.interval.low, g.interval.high,
                      std::to_string(g.seeds_improved) + " of " + std::to_string(pairs.seeds.size())});
  }
  t.caption = "Percentile bootstrap of the mean over seeds, resampling whole seed pairs (" +
              std::to_string(d.bootstrap_resamples) + " resamples, seed " + std::to_string(d.bootstrap_seed) + ", " +
              percent(d.confidence) + " two-sided), over the seeds both arms completed. Whether a gain is claimed is "
              "the decision rule's, below, where failed runs count against their arm.";
  page.add_table(std::move(t));
}

void add_engineering(const ByArm& by_arm, const Decision& d, report::Page& page) {
  auto t =
      report::make_table("engineering-constraints",
                         "Stored residual memory, throughput and parameters against ordinary residuals (seed means)",
                         {"arm", "parameters", "AttnRes parameters", "stored residual sources", "stored residual bytes",
                          "memory regression", "training tokens/s (timing)", "throughput regression",
                          "peak training bytes (allocator)", "allocator peak regression"});
  const auto base_memory = seed_mean(by_arm, kBaseline, kResidualBytes);
  const auto base_speed = seed_mean(by_arm, kBaseline, kThroughput);
  const auto base_peak = seed_mean(by_arm, kBaseline, kAllocatorPeak);
  for (const auto& arm : arm_ids()) {
    if (!by_arm.count(arm)) continue;
    const auto& any = by_arm.at(arm).begin()->second;
    const auto memory = seed_mean(by_arm, arm, kResidualBytes);
    const auto speed = seed_mean(by_arm, arm, kThroughput);
    const auto peak = seed_mean(by_arm, arm, kAllocatorPeak);
    t.rows.push_back({arm, any.parameters, any.attnres_parameters, any.stored_residual_sources, cell(memory),
                      memory && base_memory ? report::Cell(memory_regression(*memory, *base_memory)) : report::Cell(),
                      cell(speed),
                      speed && base_speed ? report::Cell(throughput_regression(*speed, *base_speed)) : report::Cell(),
                      peak ? report::Cell(*peak) : report::Cell("not measured on cpu"),
                      peak && base_peak ? report::Cell(memory_regression(*peak, *base_peak)) : report::Cell()});
  }
  t.caption = "Stored residual bytes = sources x d_model x 4 (float32) x tokens of one training micro-batch, where "
              "sources is what the residual path keeps for aggregation at its peak: 1 (ordinary), 2L+1 (Full: the "
              "embedding and every attention and MLP output), ceil(L/S)+1 (Block: the embedding and every block sum). "
              "Regressions are arm/ordinary - 1 for memory and 1 - arm/ordinary for throughput; the rule rejects a "
              "mechanism above " + percent(d.max_memory_regression) + " (memory) or " +
              percent(d.max_throughput_regression) + " (throughput). Throughput is training tokens over training "
              "wall-clock of the whole run (evaluations excluded), not part of the deterministic ledger data. The "
              "allocator peak (CUDA only) covers everything training holds, including what autograd keeps in "
              "every arm.";
  page.add_table(std::move(t));
}

void add_block_vs_full(const ByArm& by_arm, report::Page& page) {
  const auto full = paired_losses(by_arm, "full-attnres"), block = paired_losses(by_arm, "block-attnres");
  const auto full_memory = seed_mean(by_arm, "full-attnres", kResidualBytes);
  const auto block_memory = seed_mean(by_arm, "block-attnres", kResidualBytes);
  if (full.seeds.empty() || block.seeds.empty() || !full_memory || !block_memory) return;
  auto mean_improvement = [](const Pairs& p) {
    return report::mean(report::paired_effects(p.arm, p.baseline, report::PairedEffect::RelativeImprovementLowerBetter));
  };
  const double f = mean_improvement(full), b = mean_improvement(block);
  const auto fraction = fraction_of_gain(b, f);
  auto t = report::make_table(
      "block-vs-full", "Block AttnRes: the fraction of Full AttnRes's gain it recovers, beside their residual memory",
      {"Full mean relative improvement", "Block mean relative improvement", "fraction of Full's gain",
       "Block / Full stored residual memory"});
  t.rows.push_back({f, b, fraction ? report::Cell(*fraction) : report::Cell("undefined: Full gained nothing"),
                    *block_memory / *full_memory});
  t.caption = "Means over each arm's seeds paired with ordinary residuals. The fraction is Block's mean improvement "
              "over Full's; it is only defined when Full improved on ordinary residuals.";
  page.add_table(std::move(t));
}

void add_depth_attention(const ByArm& by_arm, report::Page& page) {
  auto t = report::make_table(
      "depth-attention",
      "Depth-attention statistics at the token budget (seed means over aggregations with at least two sources)",
      {"arm", "aggregations", "entropy (nats)", "entropy / ln(sources)", "block preference diversity",
       "recent-source collapse fraction"});
  auto chart = training::line_chart("depth-attention-entropy",
                                    "Depth-attention entropy / ln(sources) at every checkpoint (seed mean)",
                                    "training tokens", "normalised entropy");
  for (const auto& arm : kAttnResArms) {
    if (!by_arm.count(arm)) continue;
    const auto& runs = by_arm.at(arm);
    const auto& first = runs.begin()->second;
    if (first.depth.empty()) continue;
    const std::size_t last = first.depth.size() - 1;
    auto at = [&](const std::function<double(const CheckpointDepth&)>& f, std::size_t i) {
      return seed_mean(by_arm, arm, [&](const UnitMetrics& m) {
        return i < m.depth.size() ? std::optional<double>(f(m.depth[i])) : std::nullopt;
      });
    };
    std::int64_t aggregations = 0;
    for (const auto& a : first.final_aggregations) aggregations += a.at("sources").get<std::int64_t>() >= 2 ? 1 : 0;
    t.rows.push_back({arm, aggregations, cell(at([](const CheckpointDepth& c) { return c.mean_entropy; }, last)),
                      cell(at([](const CheckpointDepth& c) { return c.mean_normalised_entropy; }, last)),
                      cell(at([](const CheckpointDepth& c) { return c.mean_diversity; }, last)),
                      cell(at([](const CheckpointDepth& c) { return c.collapse_fraction; }, last))});
    report::Series s{arm, {}, {}, {}, {}};
    for (std::size_t i = 0; i < first.depth.size(); ++i) {
      if (auto v = at([](const CheckpointDepth& c) { return c.mean_normalised_entropy; }, i)) {
        s.x.push_back(static_cast<double>(first.depth[i].tokens));
        s.y.push_back(*v);
      }
    }
    chart.series.push_back(std::move(s));
  }
  if (t.rows.empty()) return;
  t.caption = "Measured on a fixed validation batch at each checkpoint from the learned pseudo-queries and key-norm "
              "gains. Entropy: of each aggregation's softmax over its depth sources, averaged over tokens. Diversity: "
              "fraction of tokens whose highest-weight source differs from the aggregation's most common one. "
              "Collapse: fraction of aggregations whose mean weight on the most recent source exceeds 0.9. "
              "Not applicable to ordinary residuals (no depth selection).";
  page.add_table(std::move(t));
  page.add_chart(std::move(chart));

  auto by_aggregation =
      report::make_table("depth-attention-by-aggregation", "Each aggregation at the token budget (seed means)",
                         {"arm", "consumer", "reads", "sources", "entropy (nats)", "diversity",
                          "weight on the most recent source", "seeds collapsed"});
  for (const auto& arm : kAttnResArms) {
    if (!by_arm.count(arm)) continue;
    const auto& runs = by_arm.at(arm);
    const std::size_t consumers = runs.begin()->second.final_aggregations.size();
    for (std::size_t c = 0; c < consumers; ++c) {
      auto field = [&](const char* key) {
        return seed_mean(by_arm, arm, [&](const UnitMetrics& m) {
          return c < m.final_aggregations.size() ? std::optional<double>(m.final_aggregations[c].at(key).get<double>())
                                                 : std::nullopt;
        });
      };
      std::size_t collapsed = 0, seeds = 0;
      for (const auto& [seed, m] : runs) {
        if (c >= m.final_aggregations.size()) continue;
        ++seeds;
        collapsed += m.final_aggregations[c].at("collapsed").get<bool>() ? 1 : 0;
      }
      const auto sources = runs.begin()->second.final_aggregations[c].at("sources").get<std::int64_t>();
      const bool one_source = sources < 2;
      const auto consumer = static_cast<std::int64_t>(c);
      const std::string reads = consumer == 2 * static_cast<std::int64_t>(consumers / 2)
                                    ? "final norm"
                                    : "layer " + std::to_string(consumer / 2) + (consumer % 2 == 0 ? " attention" : " MLP");
      by_aggregation.rows.push_back({arm, consumer, reads, sources,
                                     cell(field("entropy")), cell(field("diversity")), cell(field("recent_weight")),
                                     one_source ? std::string("n/a (one source)")
                                                : std::to_string(collapsed) + " of " + std::to_string(seeds)});
    }
  }
  by_aggregation.caption = "Consumer c is the aggregation before sublayer c (2l: layer l's attention, 2l+1: its MLP); "
                           "the last one feeds the final norm. One-source aggregations have weight 1 by construction.";
  page.add_table(std::move(by_aggregation));
}

void add_gradient_norms(const ByArm& by_arm, report::Page& page) {
  auto chart = training::line_chart("gradient-norm-by-depth",
                                    "Gradient norm of every sublayer's parameters at the token budget (seed mean)",
                                    "sublayer (2l: attention of layer l, 2l+1: its MLP)", "gradient L2 norm");
  chart.log_y = true;
  auto t = report::make_table("gradient-norm-by-depth", chart.title, {"sublayer", "kind"});
  std::size_t sublayers = 0;
  for (const auto& arm : arm_ids()) {
    if (!by_arm.count(arm)) continue;
    t.columns.push_back(arm);
    sublayers = std::max(sublayers, by_arm.at(arm).begin()->second.final_grad_norm_by_sublayer.size());
  }
  for (std::size_t s = 0; s < sublayers; ++s) {
    std::vector<report::Cell> row = {s, s % 2 == 0 ? "attention" : "mlp"};
    for (const auto& arm : arm_ids()) {
      if (!by_arm.count(arm)) continue;
      row.push_back(cell(seed_mean(by_arm, arm, [s](const UnitMetrics& m) {
        return s < m.final_grad_norm_by_sublayer.size() ? std::optional<double>(m.final_grad_norm_by_sublayer[s])
                                                        : std::nullopt;
      })));
    }
    t.rows.push_back(std::move(row));
  }
  for (const auto& arm : arm_ids()) {
    if (!by_arm.count(arm)) continue;
    report::Series series{arm, {}, {}, {}, {}};
    for (std::size_t s = 0; s < sublayers; ++s) {
      const auto v = seed_mean(by_arm, arm, [s](const UnitMetrics& m) {
        return s < m.final_grad_norm_by_sublayer.size() ? std::optional<double>(m.final_grad_norm_by_sublayer[s])
                                                        : std::nullopt;
      });
      if (v && *v > 0) {
        series.x.push_back(static_cast<double>(s));
        series.y.push_back(*v);
      }
    }
    chart.series.push_back(std::move(series));
  }
  t.caption = "From a dedicated backward of the mean loss on the fixed validation probe batch at each checkpoint "
              "(unclipped; not the training step's gradients). Every checkpoint's norms are in the ledger.";
  page.add_table(std::move(t));
  page.add_chart(std::move(chart));
}

void add_loss_chart(const ByArm& by_arm, report::Page& page) {
  auto chart = training::line_chart("validation-loss", "Validation loss at every checkpoint (seed mean)", "training tokens",
                                    "validation loss (nats/token)");
  for (const auto& arm : arm_ids()) {
    if (!by_arm.count(arm)) continue;
    std::vector<training::Curve> curves;
    for (const auto& [seed, m] : by_arm.at(arm)) curves.push_back(training::curve_of(m.validation_curve));
    chart.series.push_back(training::seed_mean_series(arm, curves));
  }
  page.add_chart(std::move(chart));
}

// What the predeclared conditions say over one arm's pairs.
struct ArmRule {
  std::string verdict;  // "" when there are too few pairs
  bool claimed = false;
};

// Rows (a)-(d) for one arm and what they say.
ArmRule add_conditions(const ByArm& by_arm, const std::string& arm, const Decision& d, report::Table& t) {
  const auto pairs = paired_losses(by_arm, arm);
  const auto base_memory = seed_mean(by_arm, kBaseline, kResidualBytes);
  const auto arm_memory = seed_mean(by_arm, arm, kResidualBytes);
  if (pairs.seeds.size() < 2 || !base_memory || !arm_memory) return {};
  const auto g = paired_gain(pairs.arm, pairs.baseline, d);
  const double memory = memory_regression(*arm_memory, *base_memory);
  const auto speed = seed_mean(by_arm, arm, kThroughput);
  const auto base_speed = seed_mean(by_arm, kBaseline, kThroughput);
  std::optional<double> slowdown;
  if (speed && base_speed) slowdown = throughput_regression(*speed, *base_speed);
  const bool memory_ok = memory <= d.max_memory_regression;
  const bool speed_ok = slowdown && *slowdown <= d.max_throughput_regression;
  t.rows.push_back({arm, "(a) mean relative improvement >= " + percent(d.min_relative_improvement),
                    percent(g.interval.estimate) + " (" + std::to_string(g.seeds_improved) + " of " +
                        std::to_string(pairs.seeds.size()) + " seeds improved)",
                    yes_no(g.meets_minimum)});
  t.rows.push_back({arm, "(b) paired bootstrap " + percent(d.confidence) + " CI excludes zero",
                    "[" + percent(g.interval.low) + ", " + percent(g.interval.high) + "]" +
                        (g.interval.high < 0 ? " (entirely below zero: a reliable loss, not a gain)" : ""),
                    yes_no(g.interval.excludes_zero())});
  t.rows.push_back({arm, "(c) stored residual memory regression <= " + percent(d.max_memory_regression), percent(memory),
                    yes_no(memory_ok)});
  t.rows.push_back({arm, "(d) training throughput regression <= " + percent(d.max_throughput_regression),
                    slowdown ? percent(*slowdown) : std::string("not measured"),
                    slowdown ? yes_no(speed_ok) : std::string("undefined")});
  std::string verdict = g.claimed() ? "reliable validation-loss gain" : "no reliable gain";
  if (!memory_ok || !speed_ok) {
    verdict += "; mechanism REJECTED on ";
    verdict += !memory_ok && !speed_ok ? "memory and throughput" : (!memory_ok ? "memory" : "throughput");
    if (!slowdown) verdict += " (throughput not measured)";
  } else if (g.claimed()) {
    verdict += " within the memory and throughput limits: GAIN CLAIMED";
  }
  return {verdict, g.claimed() && memory_ok && speed_ok};
}

void add_decision(const core::Protocol& protocol, const ByArm& by_arm, const training::RunOutcomes& outcomes,
                  const Decision& d, const training::DownstreamResults& downstream, report::Page& page) {
  auto t = report::make_table("decision", "Predeclared decision rule (paired seeds at the token budget)",
                              {"arm", "condition", "values", "holds"});
  for (const auto& arm : kAttnResArms) {
    const auto tally = training::tally_seeds(outcomes, arm, {kBaseline});
    const auto rule = add_conditions(by_arm, arm, d, t);
    for (auto& row : training::tally_rows(tally)) t.rows.push_back({arm, row[0], row[1], row[2]});
    t.rows.push_back({arm, "reported beside the rule, not part of it: downstream " + downstream.metric +
                               " difference against " + kBaseline + " (interval excludes zero?)",
                      downstream.effect(arm, kBaseline), downstream.answer(arm, kBaseline, false)});
    t.rows.push_back({arm, "verdict: (a) and (b) claim the gain; (c) and (d) must hold; no seed lost by the arm",
                      training::counted_verdict(tally, rule.verdict, "no reliable gain"),
                      yes_no(tally.claim_allowed() && rule.claimed)});
  }
  t.caption = "Stored residual memory is the analytic residual bank (the engineering-constraints table): AttnRes "
              "keeps more depth sources than the one accumulated stream by construction, so (c) fails for any depth "
              "under this definition; the allocator peak beside it (CUDA) shows what training holds in total. At this "
              "proxy size, data and budget only. " + protocol.document.value("decision_rule", std::string());
  page.add_table(std::move(t));
}

}  // namespace

void add_results(const core::Protocol& protocol, const RunRecords& records, report::Page& page) {
  const auto terminal = records.terminal_records();
  const auto outcomes = training::classify_runs(
      terminal, records.manifest.value("units_planned", static_cast<std::size_t>(0)), arm_ids());
  ByArm by_arm;
  for (const auto& record : terminal) {
    if (auto m = unit_metrics(record); m && !outcomes.excluded(m->seed)) {
      const auto arm = m->arm;
      const auto seed = m->seed;
      by_arm[arm].emplace(seed, std::move(*m));
    }
  }
  if (!training::state_rule_before_results(outcomes, !by_arm.empty(), page)) return;
  const auto p = parse_parameters(records.manifest.at("parameters"));
  add_loss_by_seed(by_arm, page);
  add_paired_gain(by_arm, p.decision, page);
  training::DownstreamSection section{arm_ids(), {}, p.decision, "decision"};
  for (const auto& arm : kAttnResArms) section.comparisons.push_back({arm, kBaseline});
  section.counts = [&outcomes](const nlohmann::json& r) { return outcomes.counts(r); };
  const auto downstream = training::add_downstream_results(records.manifest.at("parameters"), terminal, section, page);
  add_engineering(by_arm, p.decision, page);
  add_block_vs_full(by_arm, page);
  add_depth_attention(by_arm, page);
  add_gradient_norms(by_arm, page);
  add_loss_chart(by_arm, page);
  if (!training::decision_readable(outcomes, protocol, records, page)) return;
  add_decision(protocol, by_arm, outcomes, p.decision, downstream, page);
}

}  // namespace k3lab::experiments::attn_res
