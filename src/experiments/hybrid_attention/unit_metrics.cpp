#include "hybrid_attention/unit_metrics.hpp"

namespace k3lab::experiments::hybrid_attention {

double UnitMetrics::retrieval_at(std::int64_t length) const {
  return 0.5 * (mqar_accuracy.at(length) + needle_accuracy.at(length));
}

double UnitMetrics::inference_memory_at(std::int64_t length) const {
  if (auto it = peak_inference_bytes.find(length); it != peak_inference_bytes.end()) return static_cast<double>(it->second);
  return static_cast<double>(state_bytes.at(length));
}

std::optional<UnitMetrics> unit_metrics(const nlohmann::json& record) {
  UnitMetrics m;
  const auto* data = training::result_data(record, {"training", "final"}, m);
  if (!data) return std::nullopt;
  m.parameters = data->at("parameters").get<std::int64_t>();
  m.training_window = data->at("trainer_config").at("sequence_length").get<std::int64_t>();
  const auto& training = data->at("training");
  m.loss_spikes = static_cast<std::int64_t>(training.at("loss_spikes").size());
  const auto& evaluations = training.at("evaluations");
  if (evaluations.empty()) return std::nullopt;
  for (const auto& e : evaluations) {
    m.validation_curve.emplace_back(e.at("tokens").get<std::int64_t>(), e.at("validation_loss").get<double>());
  }
  m.final_validation_loss = m.validation_curve.back().second;
  const auto& probes = evaluations.back().at("probes");
  for (const auto& r : probes.at("retrieval")) {
    const auto length = r.at("length").get<std::int64_t>();
    m.mqar_accuracy[length] = r.at("mqar").at("accuracy").get<double>();
    m.needle_accuracy[length] = r.at("needle").at("accuracy").get<double>();
    m.longest_length = std::max(m.longest_length, length);
  }
  for (const auto& b : probes.at("loss_by_position").at("buckets")) {
    m.loss_by_position.emplace_back(b.at("from").get<std::int64_t>(), b.at("loss").get<double>());
  }
  const auto& norms = probes.at("kda_state_norm");
  if (!norms.empty()) {
    std::optional<double> at_window, at_longest;
    for (const auto& n : norms) {
      const auto position = n.at("position").get<std::int64_t>();
      if (position == m.training_window) at_window = n.at("mean_state_norm").get<double>();
      if (position == m.longest_length) at_longest = n.at("mean_state_norm").get<double>();
    }
    if (at_window && at_longest && *at_window > 0) m.state_norm_ratio = *at_longest / *at_window;
  }
  for (const auto& i : data->at("final").at("inference_memory")) {
    const auto length = i.at("length").get<std::int64_t>();
    m.state_bytes[length] = i.at("state_bytes").get<std::int64_t>();
    if (!i.at("peak_bytes").is_null()) m.peak_inference_bytes[length] = i.at("peak_bytes").get<std::int64_t>();
  }
  m.decode_logit_drift = data->at("final").at("decode_drift").at("max_abs_logit_difference").get<double>();
  m.decode_state_drift = data->at("final").at("decode_drift").at("relative_state_difference").get<double>();
  const auto& timing = record.value("timing", nlohmann::json::object());
  if (timing.contains("training")) {
    const auto& t = timing.at("training");
    if (t.value("train_seconds", 0.0) > 0) m.train_tokens_per_s = t.at("train_tokens_per_s").get<double>();
    if (t.contains("peak_training_bytes") && !t.at("peak_training_bytes").is_null()) {
      m.peak_training_bytes = t.at("peak_training_bytes").get<std::int64_t>();
    }
  }
  if (timing.contains("final")) {
    for (const auto& s : timing.at("final").at("inference_speed")) {
      const auto length = s.at("length").get<std::int64_t>();
      m.prefill_tokens_per_s[length] = s.at("prefill_tokens_per_s").get<double>();
      m.decode_tokens_per_s[length] = s.at("decode_tokens_per_s").get<double>();
    }
  }
  return m;
}

}  // namespace k3lab::experiments::hybrid_attention
