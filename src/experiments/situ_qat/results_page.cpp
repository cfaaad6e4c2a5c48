#include "situ_qat/results_page.hpp"

#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <sstream>

#include "k3lab/report/stats.hpp"
#include "k3lab/report/svg.hpp"
#include "situ_qat/decision.hpp"
#include "situ_qat/parameters.hpp"
#include "situ_qat/unit_metrics.hpp"
#include "situ_qat/units.hpp"

namespace k3lab::experiments::situ_qat {
namespace {

using Extract = std::function<double(const UnitMetrics&)>;
using CheckpointExtract = std::function<double(const ActivationCheckpoint&)>;

struct Metric {
  std::string name;
  Extract extract;
};

const std::vector<Metric>& final_metrics() {
  static const std::vector<Metric> metrics = {
      {"validation loss at the budget", [](const UnitMetrics& m) { return m.final_validation_loss; }},
      {"hidden product p99 |a|", [](const UnitMetrics& m) { return m.final_checkpoint().hidden_p99; }},
      {"hidden product p99.9 |a|", [](const UnitMetrics& m) { return m.final_checkpoint().hidden_p999; }},
      {"FFN input p99 |a|", [](const UnitMetrics& m) { return m.final_checkpoint().input_p99; }},
      {"FFN input p99.9 |a|", [](const UnitMetrics& m) { return m.final_checkpoint().input_p999; }},
      {"quantization error: FFN output (rel. RMS)", [](const UnitMetrics& m) { return m.final_checkpoint().error_outputs; }},
      {"quantization error: FFN weights", [](const UnitMetrics& m) { return m.final_checkpoint().error_weights; }},
      {"quantization error: FFN inputs", [](const UnitMetrics& m) { return m.final_checkpoint().error_inputs; }},
      {"quantization error: hidden product", [](const UnitMetrics& m) { return m.final_checkpoint().error_hidden; }},
      {"saturated fraction at the budget (gate and up)", [](const UnitMetrics& m) { return m.final_checkpoint().saturation_both; }},
      {"saturated fraction at the budget (gate)", [](const UnitMetrics& m) { return m.final_checkpoint().saturation_gate; }},
      {"saturated fraction at the budget (up)", [](const UnitMetrics& m) { return m.final_checkpoint().saturation_up; }},
      {"saturation time (mean saturated fraction over checkpoints)", [](const UnitMetrics& m) { return m.mean_saturation(); }},
      {"loss spikes (protocol definition)", [](const UnitMetrics& m) { return static_cast<double>(m.loss_spikes); }},
  };
  return metrics;
}

std::string interval_text(double low, double high) {
  return "[" + report::format_significant(low, 4) + ", " + report::format_significant(high, 4) + "]";
}

std::vector<double> values(const std::vector<UnitMetrics>& runs, const Extract& extract) {
  std::vector<double> v;
  for (const auto& r : runs) v.push_back(extract(r));
  return v;
}

// Mean over seeds of a checkpoint quantity, per checkpoint index (runs of one arm share checkpoints).
report::Series checkpoint_series(const std::string& label, const std::vector<UnitMetrics>& runs,
                                 const CheckpointExtract& extract) {
  report::Series s{label, {}, {}, {}, {}};
  for (std::size_t i = 0; i < runs.front().checkpoints.size(); ++i) {
    double sum = 0;
    for (const auto& r : runs) sum += extract(r.checkpoints.at(i));
    s.x.push_back(static_cast<double>(runs.front().checkpoints[i].tokens));
    s.y.push_back(sum / static_cast<double>(runs.size()));
  }
  return s;
}

struct Comparison {
  std::string metric;
  std::string effect;
  report::PairedEffect kind;
  Extract extract;
};

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
      const auto& data = record.value("data", nlohmann::json::object());
      ++failures[data.value("arm", std::string("unknown arm"))];
    }
  }
  page.add_text("Downstream task quality: **not measured**. The protocol's metric is \"accuracy on the predeclared "
                "downstream suite\", but experiments/situ-qat.json declares no suite; k3lab does not invent one after "
                "the freeze. Validation loss is the only quality measure on this page.");
  if (by_arm.empty()) {
    page.add_text("No completed training run yet: the result tables appear once a unit has a result record.");
    return;
  }

  report::Table per_arm;
  per_arm.id = "final-metrics";
  per_arm.title = "Per-arm results at the token budget (mean over seeds, Student-t 95% interval)";
  per_arm.columns = {"metric"};
  for (const auto& arm : arm_ids()) {
    per_arm.columns.push_back(arm + " mean");
    per_arm.columns.push_back(arm + " 95% CI");
    per_arm.columns.push_back(arm + " n");
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
      if (v.size() >= 2) {
        const auto ci = report::t_interval_mean(v);
        row.push_back(interval_text(ci.low, ci.high));
      } else {
        row.push_back(report::Cell());
      }
      row.push_back(report::Cell(v.size()));
    }
    per_arm.rows.push_back(std::move(row));
  }
  per_arm.caption = "Activations are |values| pooled over every layer and token of the fixed validation sample at the "
                    "last activation checkpoint (the budget). Hidden product: act(gate, up) before the down projection; "
                    "FFN input: the normed residual entering gate and up. Quantization error: relative RMS error of the "
                    "MX fake-quantized tensor against full precision (docs/situ-qat.md). Saturation uses beta1 and beta2 "
                    "in both arms; in SwiGLU nothing is capped, so it counts large pre-activations only.";
  page.add_table(std::move(per_arm));

  // Charts over training tokens.
  report::Chart tails;
  tails.id = "activation-tails";
  tails.title = "Activation p99.9 over training tokens (seed mean)";
  tails.x_label = "training tokens";
  tails.y_label = "p99.9 of |activation|";
  tails.log_y = true;
  report::Chart loss;
  loss.id = "validation-loss";
  loss.title = "Validation loss at every evaluation (seed mean)";
  loss.x_label = "training tokens";
  loss.y_label = "validation loss (nats/token)";
  report::Chart saturation;
  saturation.id = "saturation";
  saturation.title = "Saturated fraction of gate and up pre-activations over training tokens (seed mean)";
  saturation.x_label = "training tokens";
  saturation.y_label = "fraction with |tanh(z / beta)| >= level";
  report::Chart error;
  error.id = "quantization-error";
  error.title = "FFN-output quantization error over training tokens (seed mean)";
  error.x_label = "training tokens";
  error.y_label = "relative RMS error";
  for (const auto& arm : arm_ids()) {
    if (!by_arm.count(arm)) continue;
    const auto& runs = by_arm.at(arm);
    tails.series.push_back(checkpoint_series(arm + " hidden product", runs, [](const ActivationCheckpoint& c) { return c.hidden_p999; }));
    tails.series.push_back(checkpoint_series(arm + " FFN input", runs, [](const ActivationCheckpoint& c) { return c.input_p999; }));
    saturation.series.push_back(checkpoint_series(arm, runs, [](const ActivationCheckpoint& c) { return c.saturation_both; }));
    error.series.push_back(checkpoint_series(arm, runs, [](const ActivationCheckpoint& c) { return c.error_outputs; }));
    report::Series curve{arm, {}, {}, {}, {}};
    for (std::size_t i = 0; i < runs.front().validation_curve.size(); ++i) {
      double sum = 0;
      for (const auto& r : runs) sum += r.validation_curve.at(i).second;
      curve.x.push_back(static_cast<double>(runs.front().validation_curve[i].first));
      curve.y.push_back(sum / static_cast<double>(runs.size()));
    }
    loss.series.push_back(std::move(curve));
  }
  tails.caption = "Sampled every activation_histograms.interval_tokens on the same validation tokens in every arm and seed.";
  page.add_chart(std::move(tails));
  page.add_chart(std::move(loss));
  page.add_chart(std::move(error));
  page.add_chart(std::move(saturation));

  // Pairs: seeds with a result in both arms.
  std::vector<UnitMetrics> control, treatment;
  if (by_arm.count("swiglu") && by_arm.count("situ-glu")) {
    for (const auto& s : by_arm.at("situ-glu")) {
      for (const auto& c : by_arm.at("swiglu")) {
        if (c.seed == s.seed) {
          control.push_back(c);
          treatment.push_back(s);
        }
      }
    }
  }
  if (control.size() < 2) {
    page.add_text("Paired comparisons need at least two seeds with a result in both arms; " +
                  std::to_string(control.size()) + " so far.");
    return;
  }
  const auto p = parse_parameters(records.manifest.at("parameters"));
  const std::string reduction = "relative reduction (swiglu - situ) / swiglu";
  const std::string difference = "difference situ - swiglu";
  const std::vector<Comparison> comparisons = {
      {"hidden product p99.9", reduction, report::PairedEffect::RelativeImprovementLowerBetter,
       [](const UnitMetrics& m) { return m.final_checkpoint().hidden_p999; }},
      {"hidden product p99", reduction, report::PairedEffect::RelativeImprovementLowerBetter,
       [](const UnitMetrics& m) { return m.final_checkpoint().hidden_p99; }},
      {"FFN input p99.9", reduction, report::PairedEffect::RelativeImprovementLowerBetter,
       [](const UnitMetrics& m) { return m.final_checkpoint().input_p999; }},
      {"FFN input p99", reduction, report::PairedEffect::RelativeImprovementLowerBetter,
       [](const UnitMetrics& m) { return m.final_checkpoint().input_p99; }},
      {"quantization error: FFN output", reduction, report::PairedEffect::RelativeImprovementLowerBetter,
       [](const UnitMetrics& m) { return m.final_checkpoint().error_outputs; }},
      {"quantization error: FFN weights", reduction, report::PairedEffect::RelativeImprovementLowerBetter,
       [](const UnitMetrics& m) { return m.final_checkpoint().error_weights; }},
      {"quantization error: FFN inputs", reduction, report::PairedEffect::RelativeImprovementLowerBetter,
       [](const UnitMetrics& m) { return m.final_checkpoint().error_inputs; }},
      {"quantization error: hidden product", reduction, report::PairedEffect::RelativeImprovementLowerBetter,
       [](const UnitMetrics& m) { return m.final_checkpoint().error_hidden; }},
      {"validation loss", difference, report::PairedEffect::Difference,
       [](const UnitMetrics& m) { return m.final_validation_loss; }},
      {"loss spikes", difference, report::PairedEffect::Difference,
       [](const UnitMetrics& m) { return static_cast<double>(m.loss_spikes); }},
      {"saturation time", difference, report::PairedEffect::Difference,
       [](const UnitMetrics& m) { return m.mean_saturation(); }},
  };
  report::Table paired;
  paired.id = "paired-comparisons";
  paired.title = "SiTU-GLU against SwiGLU, paired by seed at the budget (paired bootstrap " +
                 report::format_significant(100 * p.confidence, 3) + "% intervals)";
  paired.columns = {"metric", "effect", "pairs", "mean effect", "interval", "interval excludes zero"};
  std::map<std::string, report::Interval> intervals;
  for (const auto& c : comparisons) {
    const auto t = values(treatment, c.extract), b = values(control, c.extract);
    const auto interval = report::paired_bootstrap_interval(t, b, c.kind, static_cast<std::size_t>(p.bootstrap_resamples),
                                                            p.bootstrap_seed, p.confidence);
    intervals[c.metric] = interval;
    paired.rows.push_back({c.metric, c.effect, control.size(), report::Cell(interval.estimate),
                           interval_text(interval.low, interval.high), interval.excludes_zero() ? "yes" : "no"});
  }
  paired.caption = "Percentile bootstrap of the mean per-seed effect: " + std::to_string(p.bootstrap_resamples) +
                   " resamples of whole pairs, seed " + std::to_string(p.bootstrap_seed) +
                   " (parameters.analysis). A positive reduction means SiTU-GLU is lower.";
  page.add_table(std::move(paired));

  const bool all_terminal = planned > 0 && terminal >= planned;
  const auto& tail_i = intervals.at("hidden product p99.9");
  const auto& error_i = intervals.at("quantization error: FFN output");
  const auto& loss_i = intervals.at("validation loss");
  const auto d = decide(tail_i, error_i, loss_i);
  auto yes = [](bool v) { return std::string(v ? "yes" : "no"); };
  auto effect = [](const report::Interval& i) {
    return report::format_significant(i.estimate, 4) + " " + interval_text(i.low, i.high);
  };
  report::Table decision;
  decision.id = "decision";
  decision.title = "Predeclared decision rule (paired by seed, at the budget)";
  decision.columns = {"question", "paired effect [interval]", "answer"};
  decision.rows.push_back({"hidden product p99.9 reduced (positive, interval excludes zero)?", effect(tail_i),
                           yes(positive_beyond_zero(tail_i))});
  decision.rows.push_back({"FFN-output quantization error reduced (positive, interval excludes zero)?", effect(error_i),
                           yes(positive_beyond_zero(error_i))});
  decision.rows.push_back({"tails reduced (both of the above)?", "", yes(d.tails_reduced)});
  decision.rows.push_back({"quality lost (validation-loss difference positive, interval excludes zero)?", effect(loss_i),
                           yes(d.quality_lost)});
  decision.rows.push_back({"loss spikes (reported beside the rule)", effect(intervals.at("loss spikes")), ""});
  decision.rows.push_back({"saturation time (reported beside the rule)", effect(intervals.at("saturation time")), ""});
  for (const auto& arm : arm_ids()) {
    decision.rows.push_back({"numerical failures of " + arm + " (outcomes of the arm, not in the pairs)",
                             std::to_string(failures.count(arm) ? failures.at(arm) : 0), ""});
  }
  decision.rows.push_back({"verdict", "", all_terminal ? to_string(d.verdict) : std::string("not final")});
  decision.caption = std::string(all_terminal ? "" : "Not final: " + std::to_string(terminal) + " of " +
                                                         std::to_string(planned) + " planned runs have ended. ") +
                     "Pairs: " + std::to_string(control.size()) + " seeds with a result in both arms. "
                     "k3lab reads the rule's \"activation p99.9\" as the hidden product's (the tensor SiTU-GLU bounds) "
                     "and its \"quantization error\" as the FFN output's; the other tensors are in the paired table. " +
                     protocol.document.value("decision_rule", std::string());
  page.add_table(std::move(decision));
}

}  // namespace k3lab::experiments::situ_qat
