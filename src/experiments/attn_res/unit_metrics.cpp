#include "attn_res/unit_metrics.hpp"

namespace k3lab::experiments::attn_res {

std::optional<UnitMetrics> unit_metrics(const nlohmann::json& record) {
  UnitMetrics m;
  const auto* data = training::result_data(record, {"training", "stored_residual_memory"}, m);
  if (!data) return std::nullopt;
  const auto& evaluations = data->at("training").at("evaluations");
  if (evaluations.empty()) return std::nullopt;
  m.parameters = data->at("parameters").get<std::int64_t>();
  m.attnres_parameters = data->at("attnres_parameters").get<std::int64_t>();
  m.stored_residual_sources = data->at("stored_residual_memory").at("sources").get<std::int64_t>();
  m.stored_residual_bytes = data->at("stored_residual_memory").at("bytes").get<double>();
  m.loss_spikes = static_cast<std::int64_t>(data->at("training").at("loss_spikes").size());
  for (const auto& e : evaluations) {
    const auto tokens = e.at("tokens").get<std::int64_t>();
    m.validation_curve.emplace_back(tokens, e.at("validation_loss").get<double>());
    const auto& depth = e.at("probes").at("depth_attention");
    if (!depth.is_null()) {
      const auto& s = depth.at("summary");
      m.depth.push_back({tokens, s.at("mean_entropy").get<double>(), s.at("mean_normalised_entropy").get<double>(),
                         s.at("mean_diversity").get<double>(), s.at("collapse_fraction").get<double>()});
    }
  }
  m.final_validation_loss = m.validation_curve.back().second;
  const auto& last = evaluations.back().at("probes");
  for (const auto& s : last.at("gradient_norm_by_depth").at("sublayers")) {
    m.final_grad_norm_by_sublayer.push_back(s.at("grad_norm").get<double>());
  }
  if (!last.at("depth_attention").is_null()) {
    for (const auto& a : last.at("depth_attention").at("aggregations")) m.final_aggregations.push_back(a);
  }
  const auto& timing = record.value("timing", nlohmann::json::object());
  if (timing.contains("training")) {
    const auto& t = timing.at("training");
    if (t.value("train_seconds", 0.0) > 0) m.train_tokens_per_s = t.at("train_tokens_per_s").get<double>();
    if (t.contains("peak_training_bytes") && !t.at("peak_training_bytes").is_null()) {
      m.peak_training_bytes = t.at("peak_training_bytes").get<double>();
    }
  }
  return m;
}

}  // namespace k3lab::experiments::attn_res
