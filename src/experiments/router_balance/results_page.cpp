#include "router_balance/results_page.hpp"

#include <functional>
#include <map>
#include <optional>

#include "k3lab/report/stats.hpp"
#include "k3lab/report/svg.hpp"
#include "router_balance/decision.hpp"
#include "router_balance/parameters.hpp"
#include "router_balance/unit_metrics.hpp"
#include "router_balance/units.hpp"

namespace k3lab::experiments::router_balance {
namespace {

using Extract = std::function<std::optional<double>(const UnitMetrics&)>;

struct Metric {
  std::string name;
  Extract extract;
};

const std::vector<Metric>& metrics() {
  static const std::vector<Metric> list = {
      {"expert_load_cv (mean over layers and logged updates)", [](const UnitMetrics& m) { return std::optional(m.expert_load_cv); }},
      {"max_to_mean_load (mean)", [](const UnitMetrics& m) { return std::optional(m.max_to_mean_load); }},
      {"dropped_token_rate (mean)", [](const UnitMetrics& m) { return std::optional(m.dropped_token_rate); }},
      {"final primary_training_loss", [](const UnitMetrics& m) { return std::optional(m.final_primary_loss); }},
      {"correction_bias_oscillation: mean |change|", [](const UnitMetrics& m) { return m.bias_mean_abs_change; }},
      {"correction_bias_oscillation: sign-flip fraction", [](const UnitMetrics& m) { return m.bias_sign_flip_fraction; }},
  };
  return list;
}

std::string interval_text(const report::Interval& i) {
  return "[" + report::format_significant(i.low, 4) + ", " + report::format_significant(i.high, 4) + "]";
}

std::vector<double> present(const std::vector<UnitMetrics>& runs, const Extract& extract) {
  std::vector<double> v;
  for (const auto& r : runs) {
    if (auto x = extract(r)) v.push_back(*x);
  }
  return v;
}

// Seed-mean curve of a logged quantity (runs of one arm share the logged updates).
report::Series logged_series(const std::string& label, const std::vector<UnitMetrics>& runs,
                             const std::function<double(const LoggedUpdate&)>& extract) {
  report::Series s{label, {}, {}, {}, {}};
  for (std::size_t i = 0; i < runs.front().logged.size(); ++i) {
    double sum = 0;
    for (const auto& r : runs) sum += extract(r.logged.at(i));
    s.x.push_back(static_cast<double>(runs.front().logged[i].update));
    s.y.push_back(sum / static_cast<double>(runs.size()));
  }
  return s;
}

report::Chart chart(std::string id, std::string title, std::string y_label) {
  report::Chart c;
  c.id = std::move(id);
  c.title = std::move(title);
  c.x_label = "update";
  c.y_label = std::move(y_label);
  return c;
}

// Seeds with a result in both arms, in treatment order.
std::pair<std::vector<UnitMetrics>, std::vector<UnitMetrics>> pairs(const std::vector<UnitMetrics>& treatment,
                                                                    const std::vector<UnitMetrics>& baseline) {
  std::pair<std::vector<UnitMetrics>, std::vector<UnitMetrics>> out;
  for (const auto& t : treatment) {
    for (const auto& b : baseline) {
      if (t.seed == b.seed) {
        out.first.push_back(t);
        out.second.push_back(b);
      }
    }
  }
  return out;
}

}  // namespace

void add_results(const core::Protocol& protocol, const RunRecords& records, report::Page& page) {
  std::map<std::string, std::vector<UnitMetrics>> by_arm;
  std::map<std::string, std::size_t> failures;
  const std::size_t planned = records.manifest.value("units_planned", static_cast<std::size_t>(0));
  std::size_t terminal = 0;
  for (const auto& record : records.terminal_records()) {
    ++terminal;
    if (auto m = unit_metrics(record)) {
      by_arm[m->arm].push_back(std::move(*m));
    } else if (record.value("kind", "") == "failure") {
      ++failures[record.value("data", nlohmann::json::object()).value("arm", std::string("unknown arm"))];
    }
  }
  if (by_arm.empty()) {
    page.add_text("No completed training run yet: the result tables appear once a unit has a result record.");
    return;
  }
  const auto p = parse_parameters(records.manifest.at("parameters"));

  report::Table per_arm;
  per_arm.id = "per-arm-results";
  per_arm.title = "Per-arm results over the measured updates (mean over seeds, Student-t 95% interval)";
  per_arm.columns = {"metric"};
  for (const auto& arm : arm_ids()) {
    per_arm.columns.insert(per_arm.columns.end(), {arm + " mean", arm + " 95% CI", arm + " n"});
  }
  for (const auto& metric : metrics()) {
    std::vector<report::Cell> row = {metric.name};
    for (const auto& arm : arm_ids()) {
      const auto v = by_arm.count(arm) ? present(by_arm.at(arm), metric.extract) : std::vector<double>{};
      if (v.empty()) {
        row.insert(row.end(), {report::Cell(), report::Cell(), report::Cell(0)});
        continue;
      }
      row.push_back(report::Cell(report::mean(v)));
      row.push_back(v.size() >= 2 ? report::Cell(interval_text(report::t_interval_mean(v))) : report::Cell());
      row.push_back(report::Cell(v.size()));
    }
    per_arm.rows.push_back(std::move(row));
  }
  std::vector<report::Cell> failure_row = {"failures (NaN, OOM: outcomes of the arm)"};
  for (const auto& arm : arm_ids()) {
    failure_row.insert(failure_row.end(), {report::Cell(failures.count(arm) ? failures.at(arm) : 0), report::Cell(), report::Cell()});
  }
  per_arm.rows.push_back(std::move(failure_row));
  per_arm.caption = "Loads, dropped assignments and biases are logged every " + std::to_string(p.log_interval_updates) +
                    " updates from the first measured update (after " + std::to_string(p.warmup_updates) +
                    " warmup updates); the final primary loss is the mean of the last " +
                    std::to_string(p.final_loss_window_updates) + " updates without the auxiliary term. "
                    "Bias oscillation exists only in the two bias arms. Definitions: docs/router-balance.md.";
  page.add_table(std::move(per_arm));

  // Balance and loss together, all four arms (the protocol's interpretation boundary).
  auto cv = chart("load-cv", "Expert-load coefficient of variation per logged update (seed mean, layer mean)", "std / mean of routes per expert");
  auto max_mean = chart("max-to-mean-load", "Max-to-mean expert load per logged update (seed mean, layer mean)", "max load / mean load");
  auto dropped = chart("dropped-token-rate", "Dropped token-expert assignments per logged update (seed mean)", "fraction over capacity");
  auto loss = chart("primary-loss", "Primary training loss at every update (seed mean, no auxiliary term)", "next-token loss (nats/token)");
  for (const auto& arm : arm_ids()) {
    if (!by_arm.count(arm)) continue;
    const auto& runs = by_arm.at(arm);
    cv.series.push_back(logged_series(arm, runs, [](const LoggedUpdate& l) { return l.expert_load_cv; }));
    max_mean.series.push_back(logged_series(arm, runs, [](const LoggedUpdate& l) { return l.max_to_mean_load; }));
    dropped.series.push_back(logged_series(arm, runs, [](const LoggedUpdate& l) { return l.dropped_token_rate; }));
    report::Series curve{arm, {}, {}, {}, {}};
    for (std::size_t i = 0; i < runs.front().primary_losses.size(); ++i) {
      double sum = 0;
      for (const auto& r : runs) sum += r.primary_losses.at(i);
      curve.x.push_back(static_cast<double>(i));
      curve.y.push_back(sum / static_cast<double>(runs.size()));
    }
    loss.series.push_back(std::move(curve));
  }
  loss.caption = "Plotted beside the balance charts: balanced routing is not better if it damages the loss.";
  page.add_chart(std::move(cv));
  page.add_chart(std::move(loss));
  page.add_chart(std::move(max_mean));
  page.add_chart(std::move(dropped));

  // Paired comparisons: Quantile Balancing against each other arm.
  const std::string qb = "quantile-balancing";
  report::Table paired;
  paired.id = "paired-comparisons";
  paired.title = "Quantile Balancing against each arm, paired by seed (paired bootstrap " +
                 report::format_significant(100 * p.confidence, 3) + "% intervals)";
  paired.columns = {"baseline", "metric", "effect", "pairs", "mean effect", "interval", "interval excludes zero"};
  std::map<std::string, report::Interval> decision_intervals;
  std::size_t decision_pairs = 0;
  for (const auto& baseline : arm_ids()) {
    if (baseline == qb || !by_arm.count(qb) || !by_arm.count(baseline)) continue;
    const auto [t, b] = pairs(by_arm.at(qb), by_arm.at(baseline));
    if (t.size() < 2) continue;
    struct Row {
      std::string metric, effect, key;
      report::PairedEffect kind;
      Extract extract;
    };
    std::vector<Row> rows = {
        {"expert_load_cv", "difference QB - baseline", "cv", report::PairedEffect::Difference, metrics()[0].extract},
        {"max_to_mean_load", "difference QB - baseline", "", report::PairedEffect::Difference, metrics()[1].extract},
        {"dropped_token_rate", "difference QB - baseline", "", report::PairedEffect::Difference, metrics()[2].extract},
        {"final primary_training_loss", "relative change (QB - baseline) / baseline", "loss",
         report::PairedEffect::RelativeImprovementHigherBetter, metrics()[3].extract},
    };
    if (baseline == "fixed-step-bias") {
      rows.push_back({"bias oscillation: mean |change|", "difference QB - baseline", "oscillation",
                      report::PairedEffect::Difference, metrics()[4].extract});
      rows.push_back({"bias oscillation: sign-flip fraction", "difference QB - baseline", "",
                      report::PairedEffect::Difference, metrics()[5].extract});
    }
    for (const auto& row : rows) {
      const auto tv = present(t, row.extract), bv = present(b, row.extract);
      const auto interval = report::paired_bootstrap_interval(tv, bv, row.kind, static_cast<std::size_t>(p.bootstrap_resamples),
                                                              p.bootstrap_seed, p.confidence);
      if (baseline == "fixed-step-bias" && !row.key.empty()) {
        decision_intervals[row.key] = interval;
        decision_pairs = t.size();
      }
      paired.rows.push_back({baseline, row.metric, row.effect, t.size(), report::Cell(interval.estimate),
                             interval_text(interval), interval.excludes_zero() ? "yes" : "no"});
    }
  }
  if (paired.rows.empty()) {
    page.add_text("Paired comparisons need at least two seeds with a result in quantile-balancing and another arm.");
    return;
  }
  paired.caption = "Percentile bootstrap of the mean per-seed effect: " + std::to_string(p.bootstrap_resamples) +
                   " resamples of whole pairs, seed " + std::to_string(p.bootstrap_seed) +
                   " (parameters.decision). A negative difference means Quantile Balancing is lower.";
  page.add_table(std::move(paired));

  report::Table decision;
  decision.id = "decision";
  decision.title = "Predeclared decision rule: Quantile Balancing against fixed-step-bias, paired by seed";
  decision.columns = {"question", "paired effect [interval]", "answer"};
  auto yes = [](bool v) { return std::string(v ? "yes" : "no"); };
  auto effect = [](const report::Interval& i) { return report::format_significant(i.estimate, 4) + " " + interval_text(i); };
  if (decision_intervals.size() == 3) {
    const auto& cv_i = decision_intervals.at("cv");
    const auto& osc_i = decision_intervals.at("oscillation");
    const auto& loss_i = decision_intervals.at("loss");
    const auto d = decide(cv_i, osc_i, loss_i, p.max_relative_loss_increase);
    const bool all_terminal = planned > 0 && terminal >= planned;
    decision.rows.push_back({"(a) mean expert-load CV lower (difference negative, interval excludes zero)?", effect(cv_i), yes(d.cv_lower)});
    decision.rows.push_back({"(b) bias oscillation (mean |change|) lower (difference negative, interval excludes zero)?",
                             effect(osc_i), yes(d.oscillation_lower)});
    decision.rows.push_back({"(c) upper end of the relative final-loss change <= +" +
                                 report::format_significant(100 * p.max_relative_loss_increase, 3) + "%?",
                             effect(loss_i), yes(d.loss_within_budget)});
    decision.rows.push_back({"verdict", "", all_terminal ? (d.supported() ? "supported" : "not supported") : "not final"});
    decision.caption = std::string(all_terminal ? "" : "Not final: " + std::to_string(terminal) + " of " +
                                                           std::to_string(planned) + " planned runs have ended. ") +
                       "Pairs: " + std::to_string(decision_pairs) + " seeds. " +
                       protocol.document.value("decision_rule", std::string());
  } else {
    decision.rows.push_back({"verdict", "", "not available: fewer than two seeds with both arms"});
  }
  page.add_table(std::move(decision));
}

}  // namespace k3lab::experiments::router_balance
