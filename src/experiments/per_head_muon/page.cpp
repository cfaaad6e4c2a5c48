#include "per_head_muon/page.hpp"

#include <cmath>
#include <functional>
#include <map>

#include "k3lab/experiments/training/arm_runs.hpp"
#include "k3lab/experiments/training/downstream_page.hpp"
#include "k3lab/experiments/training/failure_rule.hpp"
#include "k3lab/experiments/training/gate.hpp"
#include "k3lab/experiments/training/page_tables.hpp"
#include "k3lab/experiments/training/results_frame.hpp"
#include "k3lab/report/svg.hpp"
#include "per_head_muon/decision.hpp"
#include "per_head_muon/parameters.hpp"
#include "per_head_muon/selection.hpp"
#include "per_head_muon/unit_metrics.hpp"
#include "per_head_muon/units.hpp"

namespace k3lab::experiments::per_head_muon {
namespace {

using Runs = training::ArmRuns<UnitMetrics>;

void add_selection_table(const Parameters& p, const std::vector<nlohmann::json>& terminal, report::Page& page) {
  auto t = report::make_table(
      "pilot-selection",
      "Pilot search: mean validation loss at the pilot budget per configuration, and each arm's selection",
      {"arm", "config", "learning rate", "weight decay", "pilot runs ended", "mean pilot validation loss", "selected"});
  for (const auto& arm : arm_ids()) {
    const auto s = select_configuration(p, arm, terminal);
    for (const auto& score : s.scores) {
      const bool chosen = s.selected && s.selected->id == score.configuration.id;
      t.rows.push_back({arm, score.configuration.id, report::Cell(score.configuration.learning_rate),
                        report::Cell(score.configuration.weight_decay),
                        std::to_string(score.losses.size()) + " of " + std::to_string(p.pilot_seeds.size()),
                        std::isfinite(score.mean_loss) ? report::Cell(score.mean_loss) : report::Cell("infinite (failed or none)"),
                        s.selected ? (chosen ? "yes" : "") : "pending"});
    }
  }
  t.caption = std::string("Selection rule: ") + kSelectionRule + ". Recomputed here from the pilot terminal records; "
              "each confirmatory record also stores the selection it used.";
  page.add_table(std::move(t));
}

const std::vector<training::ArmMetric<UnitMetrics>>& final_metrics() {
  using training::metric_of;
  static const std::vector<training::ArmMetric<UnitMetrics>> metrics = {
      metric_of<UnitMetrics>("validation loss at the budget", [](const UnitMetrics& m) { return m.final_validation_loss; }),
      metric_of<UnitMetrics>("training loss (last step)", [](const UnitMetrics& m) { return m.final_training_loss; }),
      metric_of<UnitMetrics>("update-norm dispersion (CV across heads, mean over logged steps)", [](const UnitMetrics& m) { return m.mean_dispersion; }),
      metric_of<UnitMetrics>("head diversity at the budget (mean pairwise subspace distance)", [](const UnitMetrics& m) { return m.final_head_diversity; }),
      metric_of<UnitMetrics>("optimizer step time (s, wall clock)", [](const UnitMetrics& m) { return m.step_time_s.value_or(0.0); }),
  };
  return metrics;
}

void add_confirmatory(const Runs& runs, report::Page& page) {
  auto per_arm = training::arm_mean_table("confirmatory-metrics",
                                          "Confirmatory runs at the token budget (mean over seeds, Student-t 95% interval)",
                                          arm_ids(), runs.by_arm, final_metrics(), true);
  per_arm.caption = "Dispersion: coefficient of variation across heads of the per-head Frobenius norm of the applied "
                    "q/k/v change of one optimizer step, per layer and projection, averaged over layers, projections and "
                    "the logged steps (every eval_interval_tokens). Head diversity: mean pairwise normalized projection "
                    "distance between heads' query (and key) row spaces (docs/per-head-muon.md).";
  page.add_table(std::move(per_arm));

  auto loss = training::line_chart("validation-loss", "Confirmatory validation loss at every evaluation (seed mean)",
                                   "training tokens", "validation loss (nats/token)");
  auto dispersion = training::line_chart("update-norm-dispersion", "Update-norm dispersion across heads (seed mean)",
                                         "training tokens", "coefficient of variation");
  training::add_arm_curves(loss, arm_ids(), runs.by_arm, &UnitMetrics::validation_curve);
  training::add_arm_curves(dispersion, arm_ids(), runs.by_arm, &UnitMetrics::dispersion_curve);
  page.add_chart(std::move(loss));
  page.add_chart(std::move(dispersion));
}

// Every paired comparison of Per-Head Muon against Muon, by metric.
std::map<std::string, report::Interval> add_comparisons(const Parameters& p, const std::vector<UnitMetrics>& treatment,
                                                        const std::vector<UnitMetrics>& control, report::Page& page) {
  const std::string difference = "difference per-head - muon";
  const std::vector<training::Comparison<UnitMetrics>> comparisons = {
      {"update-norm dispersion", "relative reduction (muon - per-head) / muon", report::PairedEffect::RelativeImprovementLowerBetter,
       [](const UnitMetrics& m) { return m.mean_dispersion; }},
      {"validation loss", difference, report::PairedEffect::Difference, [](const UnitMetrics& m) { return m.final_validation_loss; }},
      {"training loss", difference, report::PairedEffect::Difference, [](const UnitMetrics& m) { return m.final_training_loss; }},
      {"head diversity", difference, report::PairedEffect::Difference, [](const UnitMetrics& m) { return m.final_head_diversity; }},
      {"optimizer step time", "relative overhead (per-head - muon) / muon", report::PairedEffect::RelativeImprovementHigherBetter,
       [](const UnitMetrics& m) { return m.step_time_s.value_or(0.0); }},
  };
  training::PairedComparisons paired("Per-Head Muon against standard Muon, paired by confirmatory seed at the budget", {}, p);
  auto intervals = training::compare(paired, comparisons, treatment, control);
  page.add_table(paired.finish("decision"));
  return intervals;
}

void add_decision(const core::Protocol& protocol, const Parameters& p, const training::SeedTally& tally,
                  const std::map<std::string, report::Interval>& intervals, const training::DownstreamResults& end_task,
                  report::Page& page) {
  using training::effect_text;
  using training::yes_no;
  auto decision = training::decision_table("Predeclared decision rule (Per-Head Muon vs standard Muon, paired by seed)");
  std::string rule_verdict;
  if (!intervals.empty()) {
    const auto& disp = intervals.at("update-norm dispersion");
    const auto& vloss = intervals.at("validation loss");
    const auto& step_time = intervals.at("optimizer step time");
    const auto d = decide(disp, vloss, step_time.estimate, p.max_step_time_overhead, end_task.difference("per-head-muon", "muon"));
    decision.rows.push_back({"(a) update-norm dispersion lower (reduction positive, interval excludes zero)?",
                             effect_text(disp), yes_no(d.dispersion_lower)});
    decision.rows.push_back({"(b1) validation loss lower (difference negative, interval excludes zero)?", effect_text(vloss),
                             yes_no(d.loss_better)});
    decision.rows.push_back({"(b2) end-task " + end_task.metric + " higher (difference positive, interval excludes zero)?",
                             end_task.effect("per-head-muon", "muon"), end_task.answer("per-head-muon", "muon", false)});
    decision.rows.push_back({"(b) convergence or end-task quality better (b1 or b2)?", "", yes_no(d.quality_better)});
    decision.rows.push_back({"(c) step-time overhead at most " +
                                 report::format_significant(100 * p.max_step_time_overhead, 3) + "%?",
                             effect_text(step_time), yes_no(d.cost_acceptable)});
    rule_verdict = d.supported() ? "supported" : "not supported";
  }
  training::add_decision_table(std::move(decision), tally,
                               {"verdict", "", training::counted_verdict(tally, rule_verdict, "not supported")},
                               "AdamW is reported beside both in the confirmatory table. ", protocol, page);
}

bool confirmatory(const nlohmann::json& record) {
  return record.value("spec", nlohmann::json::object()).value("phase", "") == "confirmatory";
}

std::string spec_arm(const nlohmann::json& record) {
  return record.value("spec", nlohmann::json::object()).value("arm", std::string("unknown arm"));
}

}  // namespace

void add_results(const core::Protocol& protocol, const RunRecords& records, report::Page& page) {
  page.add_text("Optimizer step time is wall-clock timing (record timing, not deterministic data).");
  if (!records.manifest.contains("parameters")) return;
  const auto p = parse_parameters(records.manifest.at("parameters"));
  const auto terminal = records.terminal_records();
  add_selection_table(p, terminal, page);

  const auto outcomes =
      training::classify_runs(terminal, arm_ids().size() * p.confirmatory_seeds.size(), arm_ids(), confirmatory);
  auto runs = training::group_by_arm<UnitMetrics>(terminal, unit_metrics, confirmatory, spec_arm);
  training::drop_excluded(runs, outcomes);
  if (!training::state_rule_before_results(outcomes, !runs.by_arm.empty(), page,
                                           "No confirmatory result yet: the per-arm and paired tables appear "
                                           "once a confirmatory unit has a result."))
    return;
  add_confirmatory(runs, page);
  const auto end_task = training::add_downstream_results(
      records.manifest.at("parameters"), terminal,
      {arm_ids(), {{"per-head-muon", "muon"}, {"per-head-muon", "adamw"}}, p, "decision", "end_task_quality",
       [&outcomes](const nlohmann::json& r) { return confirmatory(r) && outcomes.counts(r); }},
      page);

  const auto tally = training::tally_seeds(outcomes, "per-head-muon", {"muon"});
  const auto [treatment, control] = training::paired_runs(runs, tally, "muon");
  std::map<std::string, report::Interval> intervals;
  if (!training::too_few_pairs(control.size(), "confirmatory seeds with a result in both Muon arms", page)) {
    intervals = add_comparisons(p, treatment, control, page);
  }
  if (!training::decision_readable(outcomes, protocol, records, page)) return;
  add_decision(protocol, p, tally, intervals, end_task, page);
}

}  // namespace k3lab::experiments::per_head_muon
