#include "per_head_muon/unit_metrics.hpp"

namespace k3lab::experiments::per_head_muon {

std::optional<UnitMetrics> unit_metrics(const nlohmann::json& record) {
  UnitMetrics m;
  const auto* data = training::result_data(record, {"training", "configuration"}, m);
  if (!data) return std::nullopt;
  m.phase = data->at("phase").get<std::string>();
  m.config = data->at("configuration").at("config").get<int>();
  m.learning_rate = data->at("configuration").at("learning_rate").get<double>();
  m.weight_decay = data->at("configuration").at("weight_decay").get<double>();
  const auto& training = data->at("training");
  if (training.contains("losses") && !training.at("losses").empty()) {
    m.final_training_loss = training.at("losses").back().get<double>();
  }
  double dispersion_sum = 0;
  for (const auto& e : training.at("evaluations")) {
    const auto tokens = e.at("tokens").get<std::int64_t>();
    m.validation_curve.emplace_back(tokens, e.at("validation_loss").get<double>());
    if (!e.contains("probes")) continue;
    const auto& probes = e.at("probes");
    if (probes.contains("update_norm_dispersion")) {
      const double d = probes.at("update_norm_dispersion").at("mean").get<double>();
      m.dispersion_curve.emplace_back(tokens, d);
      dispersion_sum += d;
    }
    if (probes.contains("head_diversity")) {
      m.diversity_curve.emplace_back(tokens, probes.at("head_diversity").at("mean").get<double>());
    }
  }
  if (m.validation_curve.empty()) return std::nullopt;
  m.final_validation_loss = m.validation_curve.back().second;
  if (!m.dispersion_curve.empty()) m.mean_dispersion = dispersion_sum / static_cast<double>(m.dispersion_curve.size());
  if (!m.diversity_curve.empty()) m.final_head_diversity = m.diversity_curve.back().second;
  const auto& timing = record.value("timing", nlohmann::json::object());
  if (timing.contains("optimizer_step_time_s")) m.step_time_s = timing.at("optimizer_step_time_s").at("mean_s").get<double>();
  return m;
}

}  // namespace k3lab::experiments::per_head_muon
