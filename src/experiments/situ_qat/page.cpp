#include "situ_qat/page.hpp"

#include <functional>
#include <map>

#include "k3lab/experiments/training/arm_runs.hpp"
#include "k3lab/experiments/training/downstream_page.hpp"
#include "k3lab/experiments/training/failure_rule.hpp"
#include "k3lab/experiments/training/gate.hpp"
#include "k3lab/experiments/training/page_tables.hpp"
#include "k3lab/experiments/training/results_frame.hpp"
#include "k3lab/report/svg.hpp"
#include "situ_qat/decision.hpp"
#include "situ_qat/parameters.hpp"
#include "situ_qat/unit_metrics.hpp"
#include "situ_qat/units.hpp"

namespace k3lab::experiments::situ_qat {
namespace {

using Runs = training::ArmRuns<UnitMetrics>;

const std::vector<training::ArmMetric<UnitMetrics>>& final_metrics() {
  using training::metric_of;
  static const std::vector<training::ArmMetric<UnitMetrics>> metrics = {
      metric_of<UnitMetrics>("validation loss at the budget", [](const UnitMetrics& m) { return m.final_validation_loss; }),
      metric_of<UnitMetrics>("hidden product p99 |a|", [](const UnitMetrics& m) { return m.final_checkpoint().hidden_p99; }),
      metric_of<UnitMetrics>("hidden product p99.9 |a|", [](const UnitMetrics& m) { return m.final_checkpoint().hidden_p999; }),
      metric_of<UnitMetrics>("FFN input p99 |a|", [](const UnitMetrics& m) { return m.final_checkpoint().input_p99; }),
      metric_of<UnitMetrics>("FFN input p99.9 |a|", [](const UnitMetrics& m) { return m.final_checkpoint().input_p999; }),
      metric_of<UnitMetrics>("quantization error: FFN output (rel. RMS)", [](const UnitMetrics& m) { return m.final_checkpoint().error_outputs; }),
      metric_of<UnitMetrics>("quantization error: FFN weights", [](const UnitMetrics& m) { return m.final_checkpoint().error_weights; }),
      metric_of<UnitMetrics>("quantization error: FFN inputs", [](const UnitMetrics& m) { return m.final_checkpoint().error_inputs; }),
      metric_of<UnitMetrics>("quantization error: hidden product", [](const UnitMetrics& m) { return m.final_checkpoint().error_hidden; }),
      metric_of<UnitMetrics>("saturated fraction at the budget (gate and up)", [](const UnitMetrics& m) { return m.final_checkpoint().saturation_both; }),
      metric_of<UnitMetrics>("saturated fraction at the budget (gate)", [](const UnitMetrics& m) { return m.final_checkpoint().saturation_gate; }),
      metric_of<UnitMetrics>("saturated fraction at the budget (up)", [](const UnitMetrics& m) { return m.final_checkpoint().saturation_up; }),
      metric_of<UnitMetrics>("saturation time (mean saturated fraction over checkpoints)", [](const UnitMetrics& m) { return m.mean_saturation(); }),
      metric_of<UnitMetrics>("loss spikes (protocol definition)", [](const UnitMetrics& m) { return static_cast<double>(m.loss_spikes); }),
  };
  return metrics;
}

// Seed mean of a checkpoint quantity over training tokens.
report::Series checkpoint_series(const std::string& label, const std::vector<UnitMetrics>& runs,
                                 double (*value)(const ActivationCheckpoint&)) {
  return training::seed_mean_series(label, runs, [value](const UnitMetrics& m) {
    return training::curve_of(m.checkpoints, [](const ActivationCheckpoint& c) { return c.tokens; }, value);
  });
}

void add_charts(const Runs& runs, report::Page& page) {
  using training::line_chart;
  auto tails = line_chart("activation-tails", "Activation p99.9 over training tokens (seed mean)", "training tokens",
                          "p99.9 of |activation|");
  tails.log_y = true;
  auto loss = line_chart("validation-loss", "Validation loss at every evaluation (seed mean)", "training tokens",
                         "validation loss (nats/token)");
  auto saturation = line_chart("saturation",
                               "Saturated fraction of gate and up pre-activations over training tokens (seed mean)",
                               "training tokens", "fraction with |tanh(z / beta)| >= level");
  auto error = line_chart("quantization-error", "FFN-output quantization error over training tokens (seed mean)",
                          "training tokens", "relative RMS error");
  for (const auto& arm : arm_ids()) {
    if (!runs.has(arm)) continue;
    const auto& arm_runs = runs.by_arm.at(arm);
    tails.series.push_back(checkpoint_series(arm + " hidden product", arm_runs, [](const ActivationCheckpoint& c) { return c.hidden_p999; }));
    tails.series.push_back(checkpoint_series(arm + " FFN input", arm_runs, [](const ActivationCheckpoint& c) { return c.input_p999; }));
  }
  auto checkpoints = [](double (*value)(const ActivationCheckpoint&)) {
    return [value](const UnitMetrics& m) {
      return training::curve_of(m.checkpoints, [](const ActivationCheckpoint& c) { return c.tokens; }, value);
    };
  };
  training::add_arm_curves(saturation, arm_ids(), runs.by_arm,
                           checkpoints([](const ActivationCheckpoint& c) { return c.saturation_both; }));
  training::add_arm_curves(error, arm_ids(), runs.by_arm,
                           checkpoints([](const ActivationCheckpoint& c) { return c.error_outputs; }));
  training::add_arm_curves(loss, arm_ids(), runs.by_arm, &UnitMetrics::validation_curve);
  tails.caption = "Sampled every activation_histograms.interval_tokens on the same validation tokens in every arm and seed.";
  page.add_chart(std::move(tails));
  page.add_chart(std::move(loss));
  page.add_chart(std::move(error));
  page.add_chart(std::move(saturation));
}

// Every paired comparison, by metric.
std::map<std::string, report::Interval> add_comparisons(const Parameters& p, const std::vector<UnitMetrics>& treatment,
                                                        const std::vector<UnitMetrics>& control, report::Page& page) {
  const std::string reduction = "relative reduction (swiglu - situ) / swiglu";
  const std::string difference = "difference situ - swiglu";
  const auto lower = report::PairedEffect::RelativeImprovementLowerBetter;
  const auto diff = report::PairedEffect::Difference;
  const std::vector<training::Comparison<UnitMetrics>> comparisons = {
      {"hidden product p99.9", reduction, lower, [](const UnitMetrics& m) { return m.final_checkpoint().hidden_p999; }},
      {"hidden product p99", reduction, lower, [](const UnitMetrics& m) { return m.final_checkpoint().hidden_p99; }},
      {"FFN input p99.9", reduction, lower, [](const UnitMetrics& m) { return m.final_checkpoint().input_p999; }},
      {"FFN input p99", reduction, lower, [](const UnitMetrics& m) { return m.final_checkpoint().input_p99; }},
      {"quantization error: FFN output", reduction, lower, [](const UnitMetrics& m) { return m.final_checkpoint().error_outputs; }},
      {"quantization error: FFN weights", reduction, lower, [](const UnitMetrics& m) { return m.final_checkpoint().error_weights; }},
      {"quantization error: FFN inputs", reduction, lower, [](const UnitMetrics& m) { return m.final_checkpoint().error_inputs; }},
      {"quantization error: hidden product", reduction, lower, [](const UnitMetrics& m) { return m.final_checkpoint().error_hidden; }},
      {"validation loss", difference, diff, [](const UnitMetrics& m) { return m.final_validation_loss; }},
      {"loss spikes", difference, diff, [](const UnitMetrics& m) { return static_cast<double>(m.loss_spikes); }},
      {"saturation time", difference, diff, [](const UnitMetrics& m) { return m.mean_saturation(); }},
  };
  training::PairedComparisons paired("SiTU-GLU against SwiGLU, paired by seed at the budget", {}, p);
  auto intervals = training::compare(paired, comparisons, treatment, control);
  page.add_table(paired.finish("analysis", "A positive reduction means SiTU-GLU is lower."));
  return intervals;
}

void add_decision(const core::Protocol& protocol, const training::SeedTally& tally,
                  const std::map<std::string, report::Interval>& intervals,
                  const training::DownstreamResults& downstream, report::Page& page) {
  using training::effect_text;
  using training::yes_no;
  auto decision = training::decision_table("Predeclared decision rule (paired by seed, at the budget)");
  std::string rule_verdict;
  if (!intervals.empty()) {
    const auto& tail_i = intervals.at("hidden product p99.9");
    const auto& error_i = intervals.at("quantization error: FFN output");
    const auto& loss_i = intervals.at("validation loss");
    const auto d = decide(tail_i, error_i, loss_i, downstream.difference("situ-glu", "swiglu"));
    decision.rows.push_back({"hidden product p99.9 reduced (positive, interval excludes zero)?", effect_text(tail_i),
                             yes_no(positive_beyond_zero(tail_i))});
    decision.rows.push_back({"FFN-output quantization error reduced (positive, interval excludes zero)?",
                             effect_text(error_i), yes_no(positive_beyond_zero(error_i))});
    decision.rows.push_back({"tails reduced (both of the above)?", "", yes_no(d.tails_reduced)});
    decision.rows.push_back({"validation loss worse (difference positive, interval excludes zero)?", effect_text(loss_i),
                             yes_no(d.loss_lost)});
    decision.rows.push_back({"downstream " + downstream.metric + " lower (difference negative, interval excludes zero)?",
                             downstream.effect("situ-glu", "swiglu"), downstream.answer("situ-glu", "swiglu", true)});
    decision.rows.push_back({"quality lost (either of the two)?", "", yes_no(d.quality_lost)});
    decision.rows.push_back({"loss spikes (reported beside the rule)", effect_text(intervals.at("loss spikes")), ""});
    decision.rows.push_back({"saturation time (reported beside the rule)", effect_text(intervals.at("saturation time")), ""});
    rule_verdict = to_string(d.verdict);
  }
  training::add_decision_table(
      std::move(decision), tally,
      {"verdict", "", training::counted_verdict(tally, rule_verdict, to_string(Verdict::NotSupported))},
      "Pairs: " + std::to_string(tally.paired.size()) +
          " seeds with a result in both arms. k3lab reads the rule's \"activation p99.9\" as the hidden product's (the "
          "tensor SiTU-GLU bounds) and its \"quantization error\" as the FFN output's; the other tensors are in the "
          "paired table. ",
      protocol, page);
}

}  // namespace

void add_results(const core::Protocol& protocol, const RunRecords& records, report::Page& page) {
  const auto [terminal, outcomes, runs] = training::read_results<UnitMetrics>(records, arm_ids(), unit_metrics);
  if (!training::state_rule_before_results(outcomes, !runs.by_arm.empty(), page)) return;
  auto per_arm = training::arm_mean_table("final-metrics",
                                          "Per-arm results at the token budget (mean over seeds, Student-t 95% interval)",
                                          arm_ids(), runs.by_arm, final_metrics(), true);
  per_arm.caption = "Activations are |values| pooled over every layer and token of the fixed validation sample at the "
                    "last activation checkpoint (the budget). Hidden product: act(gate, up) before the down projection; "
                    "FFN input: the normed residual entering gate and up. Quantization error: relative RMS error of the "
                    "MX fake-quantized tensor against full precision (docs/situ-qat.md). Saturation uses beta1 and beta2 "
                    "in both arms; in SwiGLU nothing is capped, so it counts large pre-activations only.";
  page.add_table(std::move(per_arm));
  add_charts(runs, page);
  const auto& parameters = records.manifest.at("parameters");
  const auto p = parse_parameters(parameters);
  const auto downstream = training::add_downstream_results(
      parameters, terminal, {arm_ids(), {{"situ-glu", "swiglu"}}, p, "analysis", "downstream_task_quality",
                               [&outcomes](const nlohmann::json& r) { return outcomes.counts(r); }},
      page);

  const auto tally = training::tally_seeds(outcomes, "situ-glu", {"swiglu"});
  const auto [treatment, control] = training::paired_runs(runs, tally, "swiglu");
  std::map<std::string, report::Interval> intervals;
  if (!training::too_few_pairs(control.size(), "seeds with a result in both arms", page)) {
    intervals = add_comparisons(p, treatment, control, page);
  }
  if (!training::decision_readable(outcomes, protocol, records, page)) return;
  add_decision(protocol, tally, intervals, downstream, page);
}

}  // namespace k3lab::experiments::situ_qat
