#include "router_balance/page.hpp"

#include <functional>
#include <map>
#include <optional>

#include "k3lab/experiments/training/arm_runs.hpp"
#include "k3lab/experiments/training/failure_rule.hpp"
#include "k3lab/experiments/training/gate.hpp"
#include "k3lab/experiments/training/page_tables.hpp"
#include "k3lab/experiments/training/results_frame.hpp"
#include "k3lab/report/svg.hpp"
#include "router_balance/decision.hpp"
#include "router_balance/parameters.hpp"
#include "router_balance/unit_metrics.hpp"
#include "router_balance/units.hpp"

namespace k3lab::experiments::router_balance {
namespace {

using Runs = training::ArmRuns<UnitMetrics>;
using Extract = std::function<std::optional<double>(const UnitMetrics&)>;

const std::vector<training::ArmMetric<UnitMetrics>>& metrics() {
  static const std::vector<training::ArmMetric<UnitMetrics>> list = {
      {"expert_load_cv (mean over layers and logged updates)", [](const UnitMetrics& m) { return std::optional(m.expert_load_cv); }},
      {"max_to_mean_load (mean)", [](const UnitMetrics& m) { return std::optional(m.max_to_mean_load); }},
      {"dropped_token_rate (mean)", [](const UnitMetrics& m) { return std::optional(m.dropped_token_rate); }},
      {"final primary_training_loss", [](const UnitMetrics& m) { return std::optional(m.final_primary_loss); }},
      {"correction_bias_oscillation: mean |change|", [](const UnitMetrics& m) { return m.bias_mean_abs_change; }},
      {"correction_bias_oscillation: sign-flip fraction", [](const UnitMetrics& m) { return m.bias_sign_flip_fraction; }},
  };
  return list;
}

std::vector<double> present(const std::vector<UnitMetrics>& runs, const Extract& extract) {
  std::vector<double> v;
  for (const auto& r : runs) {
    if (auto x = extract(r)) v.push_back(*x);
  }
  return v;
}

void add_per_arm(const Runs& runs, const training::RunOutcomes& outcomes, const Parameters& p, report::Page& page) {
  auto per_arm = training::arm_mean_table(
      "per-arm-results", "Per-arm results over the measured updates (mean over seeds, Student-t 95% interval)",
      arm_ids(), runs.by_arm, metrics(), true);
  std::vector<report::Cell> failure_row = {"failed runs (NaN, OOM, timeout: outcomes of the arm)"};
  for (const auto& arm : arm_ids()) {
    failure_row.insert(failure_row.end(), {report::Cell(outcomes.failures_of(arm).size()), report::Cell(), report::Cell()});
  }
  per_arm.rows.push_back(std::move(failure_row));
  per_arm.caption = "Loads, dropped assignments and biases are logged every " + std::to_string(p.log_interval_updates) +
                    " updates from the first measured update (after " + std::to_string(p.warmup_updates) +
                    " warmup updates); the final primary loss is the mean of the last " +
                    std::to_string(p.final_loss_window_updates) + " updates without the auxiliary term. "
                    "Bias oscillation exists only in the two bias arms. Definitions: docs/router-balance.md.";
  page.add_table(std::move(per_arm));
}

// Balance and loss together, all four arms (the protocol's interpretation boundary).
void add_charts(const Runs& runs, report::Page& page) {
  using training::line_chart;
  auto cv = line_chart("load-cv", "Expert-load coefficient of variation per logged update (seed mean, layer mean)", "update",
                       "std / mean of routes per expert");
  auto max_mean = line_chart("max-to-mean-load", "Max-to-mean expert load per logged update (seed mean, layer mean)",
                             "update", "max load / mean load");
  auto dropped = line_chart("dropped-token-rate", "Dropped token-expert assignments per logged update (seed mean)",
                            "update", "fraction over capacity");
  auto loss = line_chart("primary-loss", "Primary training loss at every update (seed mean, no auxiliary term)", "update",
                         "next-token loss (nats/token)");
  auto logged = [](double (*value)(const LoggedUpdate&)) {
    return [value](const UnitMetrics& m) {
      return training::curve_of(m.logged, [](const LoggedUpdate& l) { return l.update; }, value);
    };
  };
  training::add_arm_curves(cv, arm_ids(), runs.by_arm, logged([](const LoggedUpdate& l) { return l.expert_load_cv; }));
  training::add_arm_curves(max_mean, arm_ids(), runs.by_arm, logged([](const LoggedUpdate& l) { return l.max_to_mean_load; }));
  training::add_arm_curves(dropped, arm_ids(), runs.by_arm, logged([](const LoggedUpdate& l) { return l.dropped_token_rate; }));
  training::add_arm_curves(loss, arm_ids(), runs.by_arm, [](const UnitMetrics& m) {
    training::Curve curve;
    for (std::size_t i = 0; i < m.primary_losses.size(); ++i) curve.emplace_back(static_cast<double>(i), m.primary_losses[i]);
    return curve;
  });
  loss.caption = "Plotted beside the balance charts: balanced routing is not better if it damages the loss.";
  page.add_chart(std::move(cv));
  page.add_chart(std::move(loss));
  page.add_chart(std::move(max_mean));
  page.add_chart(std::move(dropped));
}

constexpr const char* kQuantileBalancing = "quantile-balancing";
constexpr const char* kFixedStepBias = "fixed-step-bias";

// The decision rule's intervals (against fixed-step-bias, over the seeds both arms completed).
using DecisionInputs = std::map<std::string, report::Interval>;  // cv, oscillation, loss

// Quantile Balancing against each arm over the seeds both completed; false when no arm pairs with it
// on two seeds.
bool add_comparisons(const Runs& runs, const training::RunOutcomes& outcomes, const Parameters& p,
                     DecisionInputs& decision, report::Page& page) {
  const std::string qb = kQuantileBalancing;
  training::PairedComparisons paired("Quantile Balancing against each arm, paired by seed", {"baseline"}, p);
  struct Row {
    std::string metric, effect, key;  // key: the decision rule's name for it
    report::PairedEffect kind;
    Extract extract;
  };
  const std::string difference = "difference QB - baseline";
  for (const auto& baseline : arm_ids()) {
    if (baseline == qb) continue;
    const auto [t, b] = training::paired_runs(runs, training::tally_seeds(outcomes, qb, {baseline}), baseline);
    if (t.size() < 2) continue;
    std::vector<Row> rows = {
        {"expert_load_cv", difference, "cv", report::PairedEffect::Difference, metrics()[0].extract},
        {"max_to_mean_load", difference, "", report::PairedEffect::Difference, metrics()[1].extract},
        {"dropped_token_rate", difference, "", report::PairedEffect::Difference, metrics()[2].extract},
        {"final primary_training_loss", "relative change (QB - baseline) / baseline", "loss",
         report::PairedEffect::RelativeImprovementHigherBetter, metrics()[3].extract},
    };
    if (baseline == kFixedStepBias) {
      rows.push_back({"bias oscillation: mean |change|", difference, "oscillation", report::PairedEffect::Difference,
                      metrics()[4].extract});
      rows.push_back({"bias oscillation: sign-flip fraction", difference, "", report::PairedEffect::Difference,
                      metrics()[5].extract});
    }
    for (const auto& row : rows) {
      const auto interval = paired.add({baseline}, row.metric, row.effect, row.kind, present(t, row.extract),
                                       present(b, row.extract));
      if (baseline == kFixedStepBias && !row.key.empty()) decision[row.key] = interval;
    }
  }
  if (paired.empty()) return false;
  page.add_table(paired.finish("decision", "A negative difference means Quantile Balancing is lower."));
  return true;
}

void add_decision(const core::Protocol& protocol, const Parameters& p, const DecisionInputs& intervals,
                  const training::SeedTally& tally, report::Page& page) {
  auto decision = training::decision_table("Predeclared decision rule: Quantile Balancing against fixed-step-bias, paired by seed");
  std::string rule_verdict;
  if (tally.enough_pairs() && intervals.size() == 3) {
    using training::effect_text;
    using training::yes_no;
    const auto& cv_i = intervals.at("cv");
    const auto& osc_i = intervals.at("oscillation");
    const auto& loss_i = intervals.at("loss");
    const auto d = decide(cv_i, osc_i, loss_i, p.max_relative_loss_increase);
    decision.rows.push_back({"(a) mean expert-load CV lower (difference negative, interval excludes zero)?",
                             effect_text(cv_i), yes_no(d.cv_lower)});
    decision.rows.push_back({"(b) bias oscillation (mean |change|) lower (difference negative, interval excludes zero)?",
                             effect_text(osc_i), yes_no(d.oscillation_lower)});
    decision.rows.push_back({"(c) upper end of the relative final-loss change <= +" +
                                 report::format_significant(100 * p.max_relative_loss_increase, 3) + "%?",
                             effect_text(loss_i), yes_no(d.loss_within_budget)});
    rule_verdict = d.supported() ? "supported" : "not supported";
  }
  training::add_decision_table(std::move(decision), tally,
                               {"verdict", "", training::counted_verdict(tally, rule_verdict, "not supported")},
                               "Pairs: " + std::to_string(tally.paired.size()) + " seeds. ", protocol, page);
}

}  // namespace

void add_results(const core::Protocol& protocol, const RunRecords& records, report::Page& page) {
  const auto [terminal, outcomes, runs] = training::read_results<UnitMetrics>(records, arm_ids(), unit_metrics);
  if (!training::state_rule_before_results(outcomes, !runs.by_arm.empty(), page)) return;
  const auto p = parse_parameters(records.manifest.at("parameters"));
  add_per_arm(runs, outcomes, p, page);
  add_charts(runs, page);
  DecisionInputs decision;
  if (!add_comparisons(runs, outcomes, p, decision, page)) {
    page.add_text("Paired comparisons need at least two seeds with a result in quantile-balancing and another arm.");
  }
  if (!training::decision_readable(outcomes, protocol, records, page)) return;
  add_decision(protocol, p, decision, training::tally_seeds(outcomes, kQuantileBalancing, {kFixedStepBias}), page);
}

}  // namespace k3lab::experiments::router_balance
