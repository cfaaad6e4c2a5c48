#include "memory_pool/decision.hpp"

#include <stdexcept>

namespace k3lab::experiments::memory_pool {

namespace {

// Per seeded trace present in both arms (trace order): the paired differences and the unified arm's copies.
struct Pairs {
  std::vector<double> admit;  // unified - fixed, admitted by the last arrival
  std::vector<double> delay;  // fixed - unified, mean queue delay, s
  std::vector<double> p99;    // unified - fixed, queue delay p99, s
  std::vector<double> moved_gb;
  std::vector<double> copy_seconds;
};

Pairs pairs_of(const RunResults& results, const std::string& mix, const DecisionArms& arms) {
  std::map<std::size_t, const nlohmann::json*> fixed, unified;
  if (const auto it = results.decision.find({mix, arms.fixed}); it != results.decision.end()) {
    for (const auto& r : it->second) fixed[r.trace_index] = &r.data;
  }
  if (const auto it = results.decision.find({mix, arms.unified}); it != results.decision.end()) {
    for (const auto& r : it->second) unified[r.trace_index] = &r.data;
  }
  Pairs p;
  for (const auto& [trace, f] : fixed) {
    const auto u = unified.find(trace);
    if (trace == 0 || u == unified.end()) continue;
    const nlohmann::json& ud = *u->second;
    const nlohmann::json& fd = *f;
    p.admit.push_back(data_number(ud["counts"]["admitted_by_last_arrival"]) -
                      data_number(fd["counts"]["admitted_by_last_arrival"]));
    p.delay.push_back(data_number(fd["queue_delay_seconds"]["mean"]) - data_number(ud["queue_delay_seconds"]["mean"]));
    p.p99.push_back(data_number(ud["queue_delay_seconds"]["p99"]) - data_number(fd["queue_delay_seconds"]["p99"]));
    p.moved_gb.push_back(data_number(ud["compaction"]["bytes_moved"]) / 1e9);
    p.copy_seconds.push_back(data_number(ud["compaction"]["stall_seconds"]));
  }
  return p;
}

std::string admission_only_verdict(const MeanInterval& diff) {
  if (diff.n < 2) return "not enough seeded traces";
  if (diff.low > 0) return "supported";
  if (diff.high < 0) return "refuted";
  return "unresolved";
}

}  // namespace

report::Table admission_decision_table(const sim::SimParameters& params, const RunResults& results,
                                       const DecisionArms& arms, bool smoke) {
  auto decision = report::make_table(
      "memory-pool-decision", "Decision: does unified allocation admit more requests than fixed pools?",
      {"mix", "pairs", "admitted by last arrival: unified - fixed (mean)", "95% CI low", "95% CI high", "verdict",
       "queue delay p99: unified - fixed, s (mean)", "unified bytes moved, GB (mean)", "unified copy time, s (mean)"});
  for (const auto& mix : params.mixes) {
    const Pairs p = pairs_of(results, mix.id, arms);
    const auto d = mean_ci95(p.admit);
    decision.rows.push_back({mix.id, d.n, report::Cell(d.mean, 5), report::Cell(d.low, 5), report::Cell(d.high, 5),
                             smoke ? std::string("not evaluated (smoke)") : admission_only_verdict(d),
                             report::Cell(mean_ci95(p.p99).mean, 5),
                             report::Cell(mean_ci95(p.moved_gb).mean, 5),
                             report::Cell(mean_ci95(p.copy_seconds).mean, 5)});
  }
  decision.caption = "Arms compared: " + arms.unified + " vs " + arms.fixed +
                     " (both requested by the seed), paired on the same seeded traces; Student-t 95% interval of the "
                     "mean paired difference. Supported: interval above zero, with compaction copies already charged "
                     "on the critical path; refuted: below zero; unresolved: contains zero. The seed's test case is "
                     "the mix that shifts from short to long requests. The padded-single-page reference arm enters no "
                     "verdict. A smoke run reads no verdict.";
  return decision;
}

report::Table co_primary_decision_table(const sim::SimParameters& params, const RunResults& results,
                                        const DecisionArms& arms, const std::map<std::string, SplitChoice>& splits,
                                        bool smoke) {
  auto decision = report::make_table(
      "memory-pool-decision",
      "Decision: does unified allocation admit more requests, or admit them sooner, than the tuned fixed split?",
      {"mix", "pairs", "tuned fixed-split ratio", "d_admit: unified - fixed, admitted by last arrival (mean)",
       "d_admit 95% CI low", "d_admit 95% CI high", "d_delay: fixed - unified, mean queue delay, s (mean)",
       "d_delay 95% CI low", "d_delay 95% CI high", "verdict", "unified bytes moved, GB (mean)",
       "unified copy time, s (mean)"});
  for (const auto& mix : params.mixes) {
    const Pairs p = pairs_of(results, mix.id, arms);
    const CoPrimaryDecision d = decide(p.admit, p.delay);
    const auto split = splits.find(mix.id);
    const bool chosen = split != splits.end() && split->second.chosen;
    decision.rows.push_back(
        {mix.id, d.admit.n, chosen ? report::Cell(split->second.ratio, 6) : report::Cell("not chosen"),
         report::Cell(d.admit.mean, 5), report::Cell(d.admit.low, 5), report::Cell(d.admit.high, 5),
         report::Cell(d.delay.mean, 5), report::Cell(d.delay.low, 5), report::Cell(d.delay.high, 5),
         smoke ? std::string("not evaluated (smoke)") : verdict_text(d.verdict),
         report::Cell(mean_ci95(p.moved_gb).mean, 5), report::Cell(mean_ci95(p.copy_seconds).mean, 5)});
  }
  decision.caption =
      "Arms compared: " + arms.unified + " vs " + arms.fixed +
      " at its tuned ratio (both requested by the seed), paired on the same seeded traces; Student-t 95% intervals of "
      "the mean paired differences, both oriented so that positive favours unified allocation. Co-primary rule "
      "(protocol v2): supported when at least one interval lies above zero and neither lies below zero; refuted when "
      "at least one lies below zero and neither above; otherwise unresolved (a trade-off when one lies above and the "
      "other below). Compaction copies are already charged on the critical path. The seed's test case is the mix that "
      "shifts from short to long requests. The padded-single-page reference arm enters no verdict. A smoke run reads "
      "no verdict.";
  return decision;
}

CoPrimaryVerdict co_primary_verdict(const MeanInterval& admit, const MeanInterval& delay) {
  if (admit.n < 2 || delay.n < 2) return CoPrimaryVerdict::NotEnoughPairs;
  const bool any_above = admit.low > 0 || delay.low > 0;
  const bool any_below = admit.high < 0 || delay.high < 0;
  if (any_above && !any_below) return CoPrimaryVerdict::Supported;
  if (any_below && !any_above) return CoPrimaryVerdict::Refuted;
  if (any_above && any_below) return CoPrimaryVerdict::TradeOff;
  return CoPrimaryVerdict::Unresolved;
}

std::string verdict_text(CoPrimaryVerdict verdict) {
  switch (verdict) {
    case CoPrimaryVerdict::NotEnoughPairs:
      return "not enough seeded traces";
    case CoPrimaryVerdict::Supported:
      return "supported";
    case CoPrimaryVerdict::Refuted:
      return "refuted";
    case CoPrimaryVerdict::TradeOff:
      return "unresolved (trade-off: one metric better, the other worse)";
    case CoPrimaryVerdict::Unresolved:
      return "unresolved";
  }
  return "unresolved";
}

CoPrimaryDecision decide(const std::vector<double>& admit_differences, const std::vector<double>& delay_differences) {
  if (admit_differences.size() != delay_differences.size()) {
    throw std::invalid_argument("co-primary decision: admission and delay differences must pair the same traces");
  }
  CoPrimaryDecision d;
  d.admit = mean_ci95(admit_differences);
  d.delay = mean_ci95(delay_differences);
  d.verdict = co_primary_verdict(d.admit, d.delay);
  return d;
}

}  // namespace k3lab::experiments::memory_pool
