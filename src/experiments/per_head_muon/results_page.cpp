#include "per_head_muon/results_page.hpp"

#include <cmath>
#include <functional>
#include <map>

#include "k3lab/report/stats.hpp"
#include "k3lab/report/svg.hpp"
#include "per_head_muon/decision.hpp"
#include "per_head_muon/parameters.hpp"
#include "per_head_muon/selection.hpp"
#include "per_head_muon/unit_metrics.hpp"
#include "per_head_muon/units.hpp"

namespace k3lab::experiments::per_head_muon {
namespace {

using Extract = std::function<double(const UnitMetrics&)>;

struct Metric {
  std::string name;
  Extract extract;
};

const std::vector<Metric>& final_metrics() {
  static const std::vector<Metric> metrics = {
      {"validation loss at the budget", [](const UnitMetrics& m) { return m.final_validation_loss; }},
      {"training loss (last step)", [](const UnitMetrics& m) { return m.final_training_loss; }},
      {"update-norm dispersion (CV across heads, mean over logged steps)", [](const UnitMetrics& m) { return m.mean_dispersion; }},
      {"head diversity at the budget (mean pairwise subspace distance)", [](const UnitMetrics& m) { return m.final_head_diversity; }},
      {"optimizer step time (s, wall clock)", [](const UnitMetrics& m) { return m.step_time_s.value_or(0.0); }},
  };
  return metrics;
}

std::string interval_text(const report::Interval& i) {
  return "[" + report::format_significant(i.low, 4) + ", " + report::format_significant(i.high, 4) + "]";
}

std::vector<double> values(const std::vector<UnitMetrics>& runs, const Extract& extract) {
  std::vector<double> v;
  for (const auto& r : runs) v.push_back(extract(r));
  return v;
}

report::Series mean_curve(const std::string& label, const std::vector<UnitMetrics>& runs,
                          const std::function<const std::vector<std::pair<std::int64_t, double>>&(const UnitMetrics&)>& curve) {
  report::Series s{label, {}, {}, {}, {}};
  const auto& first = curve(runs.front());
  for (std::size_t i = 0; i < first.size(); ++i) {
    double sum = 0;
    std::size_t n = 0;
    for (const auto& r : runs) {
      if (i < curve(r).size()) {
        sum += curve(r)[i].second;
        ++n;
      }
    }
    s.x.push_back(static_cast<double>(first[i].first));
    s.y.push_back(sum / static_cast<double>(n));
  }
  return s;
}

void add_selection_table(const Parameters& p, const std::vector<nlohmann::json>& terminal, report::Page& page) {
  report::Table t;
  t.id = "pilot-selection";
  t.title = "Pilot search: mean validation loss at the pilot budget per configuration, and each arm's selection";
  t.columns = {"arm", "config", "learning rate", "weight decay", "pilot runs ended", "mean pilot validation loss", "selected"};
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

}  // namespace

void add_results(const core::Protocol& protocol, const RunRecords& records, report::Page& page) {
  page.add_text("End-task quality: **not measured**. The protocol's metric is \"accuracy on the predeclared "
                "downstream suite\", but experiments/per-head-muon.json declares no suite; k3lab does not invent one "
                "after the freeze. Validation loss is the only quality measure on this page. Optimizer step time is "
                "wall-clock timing (record timing, not deterministic data).");
  if (!records.manifest.contains("parameters")) return;
  const auto p = parse_parameters(records.manifest.at("parameters"));
  const auto terminal = records.terminal_records();
  add_selection_table(p, terminal, page);

  std::map<std::string, std::vector<UnitMetrics>> by_arm;
  std::map<std::string, std::size_t> failures;
  std::size_t confirmatory_ended = 0;
  for (const auto& record : terminal) {
    const auto& spec = record.value("spec", nlohmann::json::object());
    if (spec.value("phase", "") != "confirmatory") continue;
    ++confirmatory_ended;
    if (auto m = unit_metrics(record)) {
      by_arm[m->arm].push_back(std::move(*m));
    } else if (record.value("kind", "") == "failure") {
      ++failures[spec.value("arm", std::string("unknown arm"))];
    }
  }
  if (by_arm.empty()) {
    page.add_text("No confirmatory result yet: the per-arm and paired tables appear once a confirmatory unit has a result.");
    return;
  }

  report::Table per_arm;
  per_arm.id = "confirmatory-metrics";
  per_arm.title = "Confirmatory runs at the token budget (mean over seeds, Student-t 95% interval)";
  per_arm.columns = {"metric"};
  for (const auto& arm : arm_ids()) {
    per_arm.columns.insert(per_arm.columns.end(), {arm + " mean", arm + " 95% CI", arm + " n"});
  }
  for (const auto& metric : final_metrics()) {
    std::vector<report::Cell> row = {metric.name};
    for (const auto& arm : arm_ids()) {
      if (!by_arm.count(arm)) {
        row.insert(row.end(), {report::Cell(), report::Cell(), report::Cell(0)});
        continue;
      }
      const auto v = values(by_arm.at(arm), metric.extract);
      row.push_back(report::Cell(report::mean(v)));
      row.push_back(v.size() >= 2 ? report::Cell(interval_text(report::t_interval_mean(v))) : report::Cell());
      row.push_back(report::Cell(v.size()));
    }
    per_arm.rows.push_back(std::move(row));
  }
  per_arm.caption = "Dispersion: coefficient of variation across heads of the per-head Frobenius norm of the applied "
                    "q/k/v change of one optimizer step, per layer and projection, averaged over layers, projections and "
                    "the logged steps (every eval_interval_tokens). Head diversity: mean pairwise normalized projection "
                    "distance between heads' query (and key) row spaces (docs/per-head-muon.md).";
  page.add_table(std::move(per_arm));

  report::Chart loss{"validation-loss", "Confirmatory validation loss at every evaluation (seed mean)", "training tokens",
                     "validation loss (nats/token)"};
  report::Chart dispersion{"update-norm-dispersion", "Update-norm dispersion across heads (seed mean)", "training tokens",
                           "coefficient of variation"};
  for (const auto& arm : arm_ids()) {
    if (!by_arm.count(arm)) continue;
    const auto& runs = by_arm.at(arm);
    loss.series.push_back(mean_curve(arm, runs, [](const UnitMetrics& m) -> const auto& { return m.validation_curve; }));
    dispersion.series.push_back(mean_curve(arm, runs, [](const UnitMetrics& m) -> const auto& { return m.dispersion_curve; }));
  }
  page.add_chart(std::move(loss));
  page.add_chart(std::move(dispersion));

  std::vector<UnitMetrics> control, treatment;
  if (by_arm.count("muon") && by_arm.count("per-head-muon")) {
    for (const auto& t : by_arm.at("per-head-muon")) {
      for (const auto& c : by_arm.at("muon")) {
        if (c.seed == t.seed) {
          control.push_back(c);
          treatment.push_back(t);
        }
      }
    }
  }
  if (control.size() < 2) {
    page.add_text("Paired comparisons need at least two confirmatory seeds with a result in both Muon arms; " +
                  std::to_string(control.size()) + " so far.");
    return;
  }
  struct Comparison {
    std::string metric, effect;
    report::PairedEffect kind;
    Extract extract;
  };
  const std::vector<Comparison> comparisons = {
      {"update-norm dispersion", "relative reduction (muon - per-head) / muon", report::PairedEffect::RelativeImprovementLowerBetter,
       [](const UnitMetrics& m) { return m.mean_dispersion; }},
      {"validation loss", "difference per-head - muon", report::PairedEffect::Difference,
       [](const UnitMetrics& m) { return m.final_validation_loss; }},
      {"training loss", "difference per-head - muon", report::PairedEffect::Difference,
       [](const UnitMetrics& m) { return m.final_training_loss; }},
      {"head diversity", "difference per-head - muon", report::PairedEffect::Difference,
       [](const UnitMetrics& m) { return m.final_head_diversity; }},
      {"optimizer step time", "relative overhead (per-head - muon) / muon", report::PairedEffect::RelativeImprovementHigherBetter,
       [](const UnitMetrics& m) { return m.step_time_s.value_or(0.0); }},
  };
  report::Table paired;
  paired.id = "paired-comparisons";
  paired.title = "Per-Head Muon against standard Muon, paired by confirmatory seed at the budget (paired bootstrap " +
                 report::format_significant(100 * p.confidence, 3) + "% intervals)";
  paired.columns = {"metric", "effect", "pairs", "mean effect", "interval", "interval excludes zero"};
  std::map<std::string, report::Interval> intervals;
  for (const auto& c : comparisons) {
    const auto t = values(treatment, c.extract), b = values(control, c.extract);
    const auto interval = report::paired_bootstrap_interval(t, b, c.kind, static_cast<std::size_t>(p.bootstrap_resamples),
                                                            p.bootstrap_seed, p.confidence);
    intervals[c.metric] = interval;
    paired.rows.push_back({c.metric, c.effect, control.size(), report::Cell(interval.estimate), interval_text(interval),
                           interval.excludes_zero() ? "yes" : "no"});
  }
  paired.caption = "Percentile bootstrap of the mean per-seed effect: " + std::to_string(p.bootstrap_resamples) +
                   " resamples of whole pairs, seed " + std::to_string(p.bootstrap_seed) + " (parameters.decision).";
  page.add_table(std::move(paired));

  const std::size_t planned_confirmatory = arm_ids().size() * p.confirmatory_seeds.size();
  const bool final = confirmatory_ended >= planned_confirmatory;
  const auto& disp = intervals.at("update-norm dispersion");
  const auto& vloss = intervals.at("validation loss");
  const double overhead = intervals.at("optimizer step time").estimate;
  const auto d = decide(disp, vloss, overhead, p.max_step_time_overhead);
  auto yes = [](bool v) { return std::string(v ? "yes" : "no"); };
  auto effect = [](const report::Interval& i) { return report::format_significant(i.estimate, 4) + " " + interval_text(i); };
  report::Table decision;
  decision.id = "decision";
  decision.title = "Predeclared decision rule (Per-Head Muon vs standard Muon, paired by seed)";
  decision.columns = {"question", "paired effect [interval]", "answer"};
  decision.rows.push_back({"(a) update-norm dispersion lower (reduction positive, interval excludes zero)?", effect(disp),
                           yes(d.dispersion_lower)});
  decision.rows.push_back({"(b) validation loss lower (difference negative, interval excludes zero)?", effect(vloss),
                           yes(d.quality_better)});
  decision.rows.push_back({"(b) end-task quality higher?", "not measured (no suite declared)", "not measured"});
  decision.rows.push_back({"(c) step-time overhead at most " + report::format_significant(100 * p.max_step_time_overhead, 3) + "%?",
                           effect(intervals.at("optimizer step time")), yes(d.cost_acceptable)});
  for (const auto& arm : arm_ids()) {
    decision.rows.push_back({"confirmatory failures of " + arm + " (outcomes of the arm, not in the pairs)",
                             std::to_string(failures.count(arm) ? failures.at(arm) : 0), ""});
  }
  decision.rows.push_back({"verdict", "", final ? (d.supported() ? "supported" : "not supported") : "not final"});
  decision.caption = std::string(final ? "" : "Not final: " + std::to_string(confirmatory_ended) + " of " +
                                                  std::to_string(planned_confirmatory) + " confirmatory runs have ended. ") +
                     "AdamW is reported beside both in the confirmatory table. " +
                     protocol.document.value("decision_rule", std::string());
  page.add_table(std::move(decision));
}

}  // namespace k3lab::experiments::per_head_muon
