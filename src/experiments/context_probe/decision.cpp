#include "context_probe/decision.hpp"

#include "context_probe/units.hpp"

namespace k3lab::experiments::context_probe {

std::vector<StratumDecision> decide(const Parameters& p, const RunDigest& digest) {
  std::vector<StratumDecision> out;
  for (const auto& family : p.families) {
    for (const std::string stratum : {kCold, kWarm}) {
      StratumDecision d;
      d.family = family;
      d.stratum = stratum;
      bool contiguous = true;
      for (std::size_t i = 0; i < p.lengths.size(); ++i) {
        const auto it = digest.groups.find({family, p.lengths[i], stratum});
        const bool measured = it != digest.groups.end() && it->second.results > 0;
        if (!measured) {
          contiguous = false;
          continue;
        }
        RateAt rate;
        rate.length = p.lengths[i];
        rate.passes = it->second.passes;
        rate.valid = it->second.results;
        rate.wilson = report::wilson_interval(rate.passes, rate.valid, p.decision_confidence);
        d.rates.push_back(rate);
        if (i == 0) d.base_measured = true;
        if (!d.base_measured) continue;
        const auto& base = d.rates.front();
        const bool loss = i > 0 && rate.wilson.estimate < base.wilson.estimate && rate.wilson.high < base.wilson.low;
        if (loss && !d.loss_at) d.loss_at = rate.length;
        if (contiguous && !d.loss_at) d.retained_through = rate.length;
      }
      out.push_back(std::move(d));
    }
  }
  return out;
}

std::string hypothesis_verdict(const std::vector<StratumDecision>& decisions) {
  bool any_measured = false;
  for (const auto& d : decisions) {
    if (d.loss_at) return "supported";
    any_measured = any_measured || d.base_measured;
  }
  return any_measured ? "not supported" : "undecided";
}

}  // namespace k3lab::experiments::context_probe
