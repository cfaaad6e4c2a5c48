#include "situ_qat/unit_metrics.hpp"

namespace k3lab::experiments::situ_qat {

double UnitMetrics::mean_saturation() const {
  double sum = 0;
  for (const auto& c : checkpoints) sum += c.saturation_both;
  return checkpoints.empty() ? 0.0 : sum / static_cast<double>(checkpoints.size());
}

std::optional<UnitMetrics> unit_metrics(const nlohmann::json& record) {
  UnitMetrics m;
  const auto* data = training::result_data(record, {"training", "loss_spikes"}, m);
  if (!data) return std::nullopt;
  m.loss_spikes = data->at("loss_spikes").at("count").get<std::int64_t>();
  for (const auto& e : data->at("training").at("evaluations")) {
    const auto tokens = e.at("tokens").get<std::int64_t>();
    m.validation_curve.emplace_back(tokens, e.at("validation_loss").get<double>());
    if (!e.contains("probes") || !e.at("probes").contains("activations")) continue;
    const auto& a = e.at("probes").at("activations");
    ActivationCheckpoint c;
    c.tokens = tokens;
    c.hidden_p99 = a.at("hidden").at("p99").get<double>();
    c.hidden_p999 = a.at("hidden").at("p999").get<double>();
    c.input_p99 = a.at("inputs").at("p99").get<double>();
    c.input_p999 = a.at("inputs").at("p999").get<double>();
    const auto& q = a.at("quantization_error");
    c.error_weights = q.at("weights").get<double>();
    c.error_inputs = q.at("inputs").get<double>();
    c.error_hidden = q.at("hidden").get<double>();
    c.error_outputs = q.at("outputs").get<double>();
    const auto& s = a.at("saturation");
    c.saturation_gate = s.at("gate").get<double>();
    c.saturation_up = s.at("up").get<double>();
    c.saturation_both = s.at("both").get<double>();
    m.checkpoints.push_back(c);
  }
  if (m.validation_curve.empty() || m.checkpoints.empty()) return std::nullopt;
  m.final_validation_loss = m.validation_curve.back().second;
  return m;
}

}  // namespace k3lab::experiments::situ_qat
