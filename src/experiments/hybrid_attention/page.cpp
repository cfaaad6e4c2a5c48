#include "hybrid_attention/page.hpp"

#include <cmath>
#include <functional>
#include <optional>

#include "hybrid_attention/decision.hpp"
#include "hybrid_attention/parameters.hpp"
#include "hybrid_attention/unit_metrics.hpp"
#include "hybrid_attention/units.hpp"
#include "k3lab/experiments/training/arm_runs.hpp"
#include "k3lab/experiments/training/downstream_page.hpp"
#include "k3lab/experiments/training/failure_rule.hpp"
#include "k3lab/experiments/training/gate.hpp"
#include "k3lab/experiments/training/page_tables.hpp"
#include "k3lab/experiments/training/results_frame.hpp"
#include "k3lab/report/stats.hpp"
#include "k3lab/report/svg.hpp"

namespace k3lab::experiments::hybrid_attention {
namespace {

using Runs = training::ArmRuns<UnitMetrics>;
using Extract = std::function<std::optional<double>(const UnitMetrics&)>;

// The finite values of a metric over one arm's runs.
std::vector<double> values_of(const std::vector<UnitMetrics>& runs, const Extract& extract) {
  std::vector<double> values;
  for (const auto& r : runs) {
    if (auto v = extract(r); v && std::isfinite(*v)) values.push_back(*v);
  }
  return values;
}

// A map entry as a metric (nullopt when the run lacks the key).
template <class Map>
std::optional<double> entry(const Map& map, std::int64_t key) {
  auto it = map.find(key);
  return it == map.end() ? std::nullopt : std::optional<double>(static_cast<double>(it->second));
}

std::string bytes_label(bool allocator) {
  return allocator ? "peak accelerator bytes (CUDA caching allocator)" : "measured inference-state bytes (KV/latent cache + KDA state; CPU has no allocator statistics)";
}

struct Frame {
  std::int64_t window = 0;   // the training window
  std::int64_t longest = 0;  // the longest probe length
  bool allocator = true;     // every run's inference memory is the allocator peak
};

void add_final_metrics(const Runs& runs, const Frame& f, report::Page& page) {
  const std::int64_t longest = f.longest;
  const std::string L = std::to_string(longest);
  auto value = [](double v) { return std::optional<double>(v); };
  const std::vector<training::ArmMetric<UnitMetrics>> metrics = {
      {"trainable parameters", [&](const UnitMetrics& m) { return value(static_cast<double>(m.parameters)); }},
      {"validation loss at the budget", [&](const UnitMetrics& m) { return value(m.final_validation_loss); }},
      {"retrieval at " + std::to_string(f.window) + " (training window)",
       [window = f.window](const UnitMetrics& m) {
         return m.mqar_accuracy.count(window) ? std::optional<double>(m.retrieval_at(window)) : std::nullopt;
       }},
      {"retrieval at " + L + " (longest)", [&](const UnitMetrics& m) { return value(m.retrieval_at(longest)); }},
      {"MQAR accuracy at " + L, [&](const UnitMetrics& m) { return value(m.mqar_accuracy.at(longest)); }},
      {"needle accuracy at " + L, [&](const UnitMetrics& m) { return value(m.needle_accuracy.at(longest)); }},
      {"inference memory at " + L + " (bytes)", [&](const UnitMetrics& m) { return value(m.inference_memory_at(longest)); }},
      {"KDA state norm ratio " + L + " / " + std::to_string(f.window), [](const UnitMetrics& m) { return m.state_norm_ratio; }},
      {"decode vs chunkwise max |logit difference|", [&](const UnitMetrics& m) { return value(m.decode_logit_drift); }},
      {"decode vs chunkwise relative state difference", [&](const UnitMetrics& m) { return value(m.decode_state_drift); }},
      {"peak training bytes", [](const UnitMetrics& m) {
         return m.peak_training_bytes ? std::optional<double>(static_cast<double>(*m.peak_training_bytes)) : std::nullopt;
       }},
      {"training tokens/s (timing)", [](const UnitMetrics& m) { return m.train_tokens_per_s; }},
      {"decode tokens/s at " + L + " (timing)", [longest](const UnitMetrics& m) { return entry(m.decode_tokens_per_s, longest); }},
      {"loss spikes", [&](const UnitMetrics& m) { return value(static_cast<double>(m.loss_spikes)); }},
  };
  auto table = training::arm_mean_table("final-metrics",
                                        "Per-arm results at the token budget (mean over seeds, Student-t 95% interval)",
                                        arm_ids(), runs.by_arm, metrics, false);
  table.caption = "Retrieval = mean of MQAR and needle exact-match accuracy. Inference memory: " + bytes_label(f.allocator) +
                  ". Intervals need at least two seeds; throughput comes from wall-clock timing and is not part of the "
                  "deterministic ledger data.";
  page.add_table(std::move(table));
}

void add_retrieval(const Runs& runs, const Frame& f, report::Page& page) {
  auto retrieval = report::make_table(
      "retrieval-by-length", "Long-context retrieval by probe length (last evaluation, mean over seeds)",
      {"arm", "length", "beyond window", "MQAR", "MQAR 95% CI", "needle", "needle 95% CI"});
  auto chart = training::line_chart("retrieval-by-length", "Retrieval (mean of MQAR and needle) by context length",
                                    "context length (tokens)", "exact-match accuracy");
  for (const auto& arm : arm_ids()) {
    if (!runs.has(arm)) continue;
    const auto& arm_runs = runs.by_arm.at(arm);
    report::Series series{arm, {}, {}, {}, {}};
    for (const auto& [length, unused] : arm_runs.front().mqar_accuracy) {
      const auto len = length;
      const auto mq = values_of(arm_runs, [len](const UnitMetrics& m) { return entry(m.mqar_accuracy, len); });
      const auto nd = values_of(arm_runs, [len](const UnitMetrics& m) { return entry(m.needle_accuracy, len); });
      std::vector<report::Cell> row = {arm, len, len > f.window ? "yes" : "no"};
      training::append_arm_summary(row, mq, false);
      training::append_arm_summary(row, nd, false);
      retrieval.rows.push_back(std::move(row));
      series.x.push_back(static_cast<double>(len));
      series.y.push_back(0.5 * (report::mean(mq) + report::mean(nd)));
    }
    chart.series.push_back(std::move(series));
  }
  retrieval.caption = "The training window is " + std::to_string(f.window) +
                      " tokens; lengths beyond it measure retrieval past what any arm was trained on.";
  page.add_table(std::move(retrieval));
  page.add_chart(std::move(chart));
}

void add_inference_memory(const Runs& runs, report::Page& page) {
  auto memory = report::make_table(
      "inference-memory-by-length", "Batch-1 inference memory and throughput by length (seed means)",
      {"arm", "length", "inference-state bytes", "peak accelerator bytes", "prefill tokens/s", "decode tokens/s"});
  auto mean_cell = [](const std::vector<double>& v) { return v.empty() ? report::Cell() : report::Cell(report::mean(v)); };
  for (const auto& arm : arm_ids()) {
    if (!runs.has(arm)) continue;
    const auto& arm_runs = runs.by_arm.at(arm);
    for (const auto& [length, unused] : arm_runs.front().state_bytes) {
      const auto len = length;
      const auto state = values_of(arm_runs, [len](const UnitMetrics& m) { return entry(m.state_bytes, len); });
      const auto peak = values_of(arm_runs, [len](const UnitMetrics& m) { return entry(m.peak_inference_bytes, len); });
      const auto prefill = values_of(arm_runs, [len](const UnitMetrics& m) { return entry(m.prefill_tokens_per_s, len); });
      const auto decode = values_of(arm_runs, [len](const UnitMetrics& m) { return entry(m.decode_tokens_per_s, len); });
      memory.rows.push_back({arm, len, mean_cell(state), peak.empty() ? report::Cell("not measured on cpu") : mean_cell(peak),
                             mean_cell(prefill), mean_cell(decode)});
    }
  }
  memory.caption = "Inference-state bytes are measured from the live caches after prefill plus " +
                   std::string("32 decode steps (float32 model). Throughput is wall-clock timing of that workload.");
  page.add_table(std::move(memory));
}

void add_curves(const Runs& runs, report::Page& page) {
  auto loss = training::line_chart("validation-loss", "Validation loss at every evaluation (seed mean)", "training tokens",
                                   "validation loss (nats/token)");
  auto position = training::line_chart("loss-by-position",
                                       "Loss by position on held-out text of the longest probe length (seed mean)",
                                       "position (bucket start, tokens)", "loss (nats/token)");
  training::add_arm_curves(loss, arm_ids(), runs.by_arm, &UnitMetrics::validation_curve);
  training::add_arm_curves(position, arm_ids(), runs.by_arm, &UnitMetrics::loss_by_position);
  page.add_chart(std::move(loss));
  position.caption = "Buckets are training-window wide; every bucket after the first lies beyond the training window.";
  page.add_chart(std::move(position));
}

void add_frontier(const Runs& runs, const Frame& f, report::Page& page) {
  auto frontier = training::line_chart("quality-memory-frontier",
                                       "Quality/memory frontier at " + std::to_string(f.longest) + " tokens (one point per seed)",
                                       f.allocator ? "peak inference bytes" : "inference-state bytes", "retrieval accuracy");
  frontier.kind = report::Chart::Kind::Scatter;
  frontier.log_x = true;
  for (const auto& arm : arm_ids()) {
    if (!runs.has(arm)) continue;
    report::Series s{arm, {}, {}, {}, {}};
    for (const auto& r : runs.by_arm.at(arm)) {
      s.x.push_back(r.inference_memory_at(f.longest));
      s.y.push_back(r.retrieval_at(f.longest));
    }
    frontier.series.push_back(std::move(s));
  }
  frontier.caption = "The hybrid wins only if it moves this frontier: above the line joining the all-KDA and "
                     "full-attention points, not merely to the left of full attention.";
  page.add_chart(std::move(frontier));
}

// The rule's conditions over the seeds where every arm completed; "" when fewer than two.
std::string add_conditions(const Runs& runs, const training::SeedTally& tally, std::int64_t longest,
                           report::Table& decision) {
  if (!tally.enough_pairs()) return "";
  auto point = [&](const std::string& arm) {
    std::vector<UnitMetrics> paired;
    for (const auto& run : runs.by_arm.at(arm)) {
      if (tally.is_paired(run.seed)) paired.push_back(run);
    }
    return ArmPoint{report::mean(values_of(paired, [longest](const UnitMetrics& m) { return m.retrieval_at(longest); })),
                    report::mean(values_of(paired, [longest](const UnitMetrics& m) { return m.inference_memory_at(longest); }))};
  };
  const auto hybrid = point("hybrid-3kda-1mla"), kda = point("all-kda"), full = point("full-attention");
  const auto d = decide(hybrid, kda, full);
  auto num = [](double v) { return report::format_significant(v, 4); };
  using training::yes_no;
  decision.rows.push_back({"(a) hybrid retrieval > all-KDA retrieval", num(hybrid.retrieval) + " vs " + num(kda.retrieval),
                           yes_no(d.retrieval_above_kda)});
  decision.rows.push_back({"(b) hybrid inference memory < full-attention", num(hybrid.memory) + " vs " + num(full.memory),
                           yes_no(d.memory_below_full)});
  decision.rows.push_back({"(c) hybrid above the all-KDA/full-attention line",
                           d.above_frontier ? num(hybrid.retrieval) + " vs line " + num(d.frontier_retrieval)
                                            : std::string("undefined: equal memory"),
                           d.above_frontier ? yes_no(*d.above_frontier) : std::string("undefined")});
  return d.supported() ? "supported" : "not supported";
}

void add_decision(const core::Protocol& protocol, const Runs& runs, const training::RunOutcomes& outcomes,
                  const Frame& f, report::Page& page) {
  const auto tally = training::tally_seeds(outcomes, "hybrid-3kda-1mla", {"all-kda", "full-attention"});
  auto decision = report::make_table(
      "decision",
      "Predeclared decision rule (seed means at the budget over the seeds every arm completed, longest probe length " +
          std::to_string(f.longest) + ")",
      {"condition", "values", "holds"});
  const auto rule_verdict = add_conditions(runs, tally, f.longest, decision);
  training::add_decision_table(std::move(decision), tally,
                               {"verdict", training::counted_verdict(tally, rule_verdict, "not supported"),
                                training::yes_no(tally.claim_allowed() && rule_verdict == "supported")},
                               "The verdict holds at this proxy size, data, kernels and budget only. ", protocol, page);
}

}  // namespace

void add_results(const core::Protocol& protocol, const RunRecords& records, report::Page& page) {
  const auto [terminal, outcomes, runs] = training::read_results<UnitMetrics>(records, arm_ids(), unit_metrics);
  if (!training::state_rule_before_results(outcomes, !runs.by_arm.empty(), page)) return;
  Frame f;
  const auto& any = runs.by_arm.begin()->second.front();
  f.window = any.training_window;
  f.longest = any.longest_length;
  for (const auto& [arm, arm_runs] : runs.by_arm) {
    for (const auto& r : arm_runs) f.allocator = f.allocator && r.memory_is_allocator_peak();
  }
  add_final_metrics(runs, f, page);
  add_retrieval(runs, f, page);
  add_inference_memory(runs, page);
  add_curves(runs, page);
  add_frontier(runs, f, page);
  const auto& parameters = records.manifest.at("parameters");
  training::add_downstream_results(parameters, terminal,
                                   {arm_ids(),
                                    {{"hybrid-3kda-1mla", "all-kda"}, {"hybrid-3kda-1mla", "full-attention"}},
                                    parse_parameters(parameters).analysis.value_or(training::Bootstrap{}), "analysis",
                                    "downstream_task_quality",
                                    [&outcomes](const nlohmann::json& r) { return outcomes.counts(r); }},
                                   page);
  if (!training::decision_readable(outcomes, protocol, records, page)) return;
  add_decision(protocol, runs, outcomes, f, page);
}

}  // namespace k3lab::experiments::hybrid_attention
