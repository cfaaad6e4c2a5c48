#include "hybrid_attention/results_page.hpp"

#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <sstream>

#include "hybrid_attention/unit_metrics.hpp"
#include "hybrid_attention/units.hpp"
#include "k3lab/report/stats.hpp"
#include "k3lab/report/svg.hpp"

namespace k3lab::experiments::hybrid_attention {
namespace {

using Extract = std::function<std::optional<double>(const UnitMetrics&)>;

struct Summary {
  std::size_t n = 0;
  double mean = 0;
  std::optional<report::Interval> ci;  // n >= 2
};

std::optional<Summary> summarise(const std::vector<UnitMetrics>& runs, const Extract& extract) {
  std::vector<double> values;
  for (const auto& r : runs) {
    if (auto v = extract(r); v && std::isfinite(*v)) values.push_back(*v);
  }
  if (values.empty()) return std::nullopt;
  Summary s;
  s.n = values.size();
  s.mean = report::mean(values);
  if (values.size() >= 2) s.ci = report::t_interval_mean(values);
  return s;
}

report::Cell mean_cell(const std::optional<Summary>& s) { return s ? report::Cell(s->mean) : report::Cell(); }

report::Cell ci_cell(const std::optional<Summary>& s) {
  if (!s || !s->ci) return report::Cell();
  std::ostringstream text;
  text.precision(4);
  text << "[" << s->ci->low << ", " << s->ci->high << "]";
  return report::Cell(text.str());
}

std::string bytes_label(bool allocator) {
  return allocator ? "peak accelerator bytes (CUDA caching allocator)" : "measured inference-state bytes (KV/latent cache + KDA state; CPU has no allocator statistics)";
}

}  // namespace

void add_results(const core::Protocol& protocol, const RunRecords& records, report::Page& page) {
  std::map<std::string, std::vector<UnitMetrics>> by_arm;
  std::size_t planned = records.manifest.value("units_planned", static_cast<std::size_t>(0));
  std::size_t valid = 0;
  for (const auto& record : records.terminal_records()) {
    if (auto m = unit_metrics(record)) {
      by_arm[m->arm].push_back(std::move(*m));
      ++valid;
    }
  }
  if (valid == 0) {
    page.add_text("No completed training run yet: the result tables appear once a unit has a result record.");
    return;
  }
  const auto& any = by_arm.begin()->second.front();
  const std::int64_t window = any.training_window;
  const std::int64_t longest = any.longest_length;
  bool allocator = true;
  for (const auto& [arm, runs] : by_arm) {
    for (const auto& r : runs) allocator = allocator && r.memory_is_allocator_peak();
  }
  const std::string L = std::to_string(longest);

  // Final metrics per arm.
  struct Row {
    std::string metric;
    Extract extract;
  };
  const std::vector<Row> metrics = {
      {"trainable parameters", [](const UnitMetrics& m) { return std::optional<double>(static_cast<double>(m.parameters)); }},
      {"validation loss at the budget", [](const UnitMetrics& m) { return std::optional<double>(m.final_validation_loss); }},
      {"retrieval at " + std::to_string(window) + " (training window)",
       [window](const UnitMetrics& m) {
         return m.mqar_accuracy.count(window) ? std::optional<double>(m.retrieval_at(window)) : std::nullopt;
       }},
      {"retrieval at " + L + " (longest)", [longest](const UnitMetrics& m) { return std::optional<double>(m.retrieval_at(longest)); }},
      {"MQAR accuracy at " + L, [longest](const UnitMetrics& m) { return std::optional<double>(m.mqar_accuracy.at(longest)); }},
      {"needle accuracy at " + L, [longest](const UnitMetrics& m) { return std::optional<double>(m.needle_accuracy.at(longest)); }},
      {"inference memory at " + L + " (bytes)", [longest](const UnitMetrics& m) { return std::optional<double>(m.inference_memory_at(longest)); }},
      {"KDA state norm ratio " + L + " / " + std::to_string(window), [](const UnitMetrics& m) { return m.state_norm_ratio; }},
      {"decode vs chunkwise max |logit difference|", [](const UnitMetrics& m) { return std::optional<double>(m.decode_logit_drift); }},
      {"decode vs chunkwise relative state difference", [](const UnitMetrics& m) { return std::optional<double>(m.decode_state_drift); }},
      {"peak training bytes", [](const UnitMetrics& m) {
         return m.peak_training_bytes ? std::optional<double>(static_cast<double>(*m.peak_training_bytes)) : std::nullopt;
       }},
      {"training tokens/s (timing)", [](const UnitMetrics& m) { return m.train_tokens_per_s; }},
      {"decode tokens/s at " + L + " (timing)", [longest](const UnitMetrics& m) {
         return m.decode_tokens_per_s.count(longest) ? std::optional<double>(m.decode_tokens_per_s.at(longest)) : std::nullopt;
       }},
      {"loss spikes", [](const UnitMetrics& m) { return std::optional<double>(static_cast<double>(m.loss_spikes)); }},
  };
  report::Table final_table;
  final_table.id = "final-metrics";
  final_table.title = "Per-arm results at the token budget (mean over seeds, Student-t 95% interval)";
  final_table.columns = {"metric"};
  for (const auto& arm : arm_ids()) {
    final_table.columns.push_back(arm + " mean");
    final_table.columns.push_back(arm + " 95% CI");
  }
  for (const auto& row : metrics) {
    std::vector<report::Cell> cells = {row.metric};
    for (const auto& arm : arm_ids()) {
      const auto s = by_arm.count(arm) ? summarise(by_arm.at(arm), row.extract) : std::nullopt;
      cells.push_back(mean_cell(s));
      cells.push_back(ci_cell(s));
    }
    final_table.rows.push_back(std::move(cells));
  }
  final_table.caption = "Retrieval = mean of MQAR and needle exact-match accuracy. Inference memory: " +
                        bytes_label(allocator) + ". Intervals need at least two seeds; throughput comes from wall-clock "
                        "timing and is not part of the deterministic ledger data.";
  page.add_table(std::move(final_table));

  // Retrieval by length.
  report::Table retrieval;
  retrieval.id = "retrieval-by-length";
  retrieval.title = "Long-context retrieval by probe length (last evaluation, mean over seeds)";
  retrieval.columns = {"arm", "length", "beyond window", "MQAR", "MQAR 95% CI", "needle", "needle 95% CI"};
  report::Chart retrieval_chart;
  retrieval_chart.id = "retrieval-by-length";
  retrieval_chart.title = "Retrieval (mean of MQAR and needle) by context length";
  retrieval_chart.x_label = "context length (tokens)";
  retrieval_chart.y_label = "exact-match accuracy";
  retrieval_chart.kind = report::Chart::Kind::Line;
  for (const auto& arm : arm_ids()) {
    if (!by_arm.count(arm)) continue;
    const auto& runs = by_arm.at(arm);
    report::Series series{arm, {}, {}, {}, {}};
    for (const auto& [length, unused] : runs.front().mqar_accuracy) {
      const auto len = length;
      const auto mq = summarise(runs, [len](const UnitMetrics& m) { return std::optional<double>(m.mqar_accuracy.at(len)); });
      const auto nd = summarise(runs, [len](const UnitMetrics& m) { return std::optional<double>(m.needle_accuracy.at(len)); });
      retrieval.rows.push_back({arm, len, len > window ? "yes" : "no", mean_cell(mq), ci_cell(mq), mean_cell(nd), ci_cell(nd)});
      series.x.push_back(static_cast<double>(len));
      series.y.push_back(0.5 * (mq->mean + nd->mean));
    }
    retrieval_chart.series.push_back(std::move(series));
  }
  retrieval.caption = "The training window is " + std::to_string(window) +
                      " tokens; lengths beyond it measure retrieval past what any arm was trained on.";
  page.add_table(std::move(retrieval));
  page.add_chart(std::move(retrieval_chart));

  // Inference memory and speed by length.
  report::Table memory;
  memory.id = "inference-memory-by-length";
  memory.title = "Batch-1 inference memory and throughput by length (seed means)";
  memory.columns = {"arm", "length", "inference-state bytes", "peak accelerator bytes", "prefill tokens/s", "decode tokens/s"};
  for (const auto& arm : arm_ids()) {
    if (!by_arm.count(arm)) continue;
    const auto& runs = by_arm.at(arm);
    for (const auto& [length, unused] : runs.front().state_bytes) {
      const auto len = length;
      const auto state = summarise(runs, [len](const UnitMetrics& m) { return std::optional<double>(static_cast<double>(m.state_bytes.at(len))); });
      const auto peak = summarise(runs, [len](const UnitMetrics& m) {
        return m.peak_inference_bytes.count(len) ? std::optional<double>(static_cast<double>(m.peak_inference_bytes.at(len))) : std::nullopt;
      });
      const auto prefill = summarise(runs, [len](const UnitMetrics& m) {
        return m.prefill_tokens_per_s.count(len) ? std::optional<double>(m.prefill_tokens_per_s.at(len)) : std::nullopt;
      });
      const auto decode = summarise(runs, [len](const UnitMetrics& m) {
        return m.decode_tokens_per_s.count(len) ? std::optional<double>(m.decode_tokens_per_s.at(len)) : std::nullopt;
      });
      memory.rows.push_back({arm, len, mean_cell(state), peak ? mean_cell(peak) : report::Cell("not measured on cpu"),
                             mean_cell(prefill), mean_cell(decode)});
    }
  }
  memory.caption = "Inference-state bytes are measured from the live caches after prefill plus " +
                   std::string("32 decode steps (float32 model). Throughput is wall-clock timing of that workload.");
  page.add_table(std::move(memory));

  // Validation loss curves and loss by position.
  report::Chart loss_chart;
  loss_chart.id = "validation-loss";
  loss_chart.title = "Validation loss at every evaluation (seed mean)";
  loss_chart.x_label = "training tokens";
  loss_chart.y_label = "validation loss (nats/token)";
  report::Chart position_chart;
  position_chart.id = "loss-by-position";
  position_chart.title = "Loss by position on held-out text of the longest probe length (seed mean)";
  position_chart.x_label = "position (bucket start, tokens)";
  position_chart.y_label = "loss (nats/token)";
  for (const auto& arm : arm_ids()) {
    if (!by_arm.count(arm)) continue;
    const auto& runs = by_arm.at(arm);
    report::Series curve{arm, {}, {}, {}, {}}, position{arm, {}, {}, {}, {}};
    for (std::size_t i = 0; i < runs.front().validation_curve.size(); ++i) {
      double sum = 0;
      for (const auto& r : runs) sum += r.validation_curve.at(i).second;
      curve.x.push_back(static_cast<double>(runs.front().validation_curve[i].first));
      curve.y.push_back(sum / static_cast<double>(runs.size()));
    }
    for (std::size_t i = 0; i < runs.front().loss_by_position.size(); ++i) {
      double sum = 0;
      for (const auto& r : runs) sum += r.loss_by_position.at(i).second;
      position.x.push_back(static_cast<double>(runs.front().loss_by_position[i].first));
      position.y.push_back(sum / static_cast<double>(runs.size()));
    }
    loss_chart.series.push_back(std::move(curve));
    position_chart.series.push_back(std::move(position));
  }
  page.add_chart(std::move(loss_chart));
  position_chart.caption = "Buckets are training-window wide; every bucket after the first lies beyond the training window.";
  page.add_chart(std::move(position_chart));

  // The frontier, per seed.
  report::Chart frontier;
  frontier.id = "quality-memory-frontier";
  frontier.title = "Quality/memory frontier at " + L + " tokens (one point per seed)";
  frontier.x_label = allocator ? "peak inference bytes" : "inference-state bytes";
  frontier.y_label = "retrieval accuracy";
  frontier.kind = report::Chart::Kind::Scatter;
  frontier.log_x = true;
  for (const auto& arm : arm_ids()) {
    if (!by_arm.count(arm)) continue;
    report::Series s{arm, {}, {}, {}, {}};
    for (const auto& r : by_arm.at(arm)) {
      s.x.push_back(r.inference_memory_at(longest));
      s.y.push_back(r.retrieval_at(longest));
    }
    frontier.series.push_back(std::move(s));
  }
  frontier.caption = "The hybrid wins only if it moves this frontier: above the line joining the all-KDA and "
                     "full-attention points, not merely to the left of full attention.";
  page.add_chart(std::move(frontier));

  // The decision rule, read only with every planned run valid.
  const bool all_arms = by_arm.count("full-attention") && by_arm.count("all-kda") && by_arm.count("hybrid-3kda-1mla");
  if (planned == 0 || valid < planned || !all_arms) {
    page.add_text("Decision rule not evaluated: " + std::to_string(valid) + " of " + std::to_string(planned) +
                  " planned runs are valid results. The protocol reads aggregate results only after every planned run "
                  "completed. " + protocol.document.value("stopping_rule", std::string()));
    return;
  }
  auto mean_of = [&](const std::string& arm, const Extract& e) { return summarise(by_arm.at(arm), e)->mean; };
  const Extract retrieval_e = [longest](const UnitMetrics& m) { return std::optional<double>(m.retrieval_at(longest)); };
  const Extract memory_e = [longest](const UnitMetrics& m) { return std::optional<double>(m.inference_memory_at(longest)); };
  const double r_h = mean_of("hybrid-3kda-1mla", retrieval_e), r_k = mean_of("all-kda", retrieval_e),
               r_f = mean_of("full-attention", retrieval_e);
  const double m_h = mean_of("hybrid-3kda-1mla", memory_e), m_k = mean_of("all-kda", memory_e),
               m_f = mean_of("full-attention", memory_e);
  const bool a = r_h > r_k;
  const bool b = m_h < m_f;
  std::optional<bool> c;
  double line = 0;
  if (m_f != m_k) {
    line = r_k + (r_f - r_k) * (m_h - m_k) / (m_f - m_k);
    c = r_h > line;
  }
  report::Table decision;
  decision.id = "decision";
  decision.title = "Predeclared decision rule (seed means at the budget, longest probe length " + L + ")";
  decision.columns = {"condition", "values", "holds"};
  auto num = [](double v) { return report::format_significant(v, 4); };
  auto yes = [](bool v) { return std::string(v ? "yes" : "no"); };
  decision.rows.push_back({"(a) hybrid retrieval > all-KDA retrieval",
                           num(r_h) + " vs " + num(r_k), yes(a)});
  decision.rows.push_back({"(b) hybrid inference memory < full-attention", num(m_h) + " vs " + num(m_f), yes(b)});
  decision.rows.push_back({"(c) hybrid above the all-KDA/full-attention line",
                           c ? num(r_h) + " vs line " + num(line) : std::string("undefined: equal memory"),
                           c ? yes(*c) : std::string("undefined")});
  const bool supported = a && b && c.value_or(false);
  decision.caption = std::string("Hypothesis ") + (supported ? "SUPPORTED" : "NOT SUPPORTED") +
                     " at this proxy size, data, kernels and budget. " + protocol.document.value("decision_rule", std::string());
  page.add_table(std::move(decision));
}

}  // namespace k3lab::experiments::hybrid_attention
