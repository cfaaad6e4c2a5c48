#include "router_balance/unit_metrics.hpp"

namespace k3lab::experiments::router_balance {

std::optional<UnitMetrics> unit_metrics(const nlohmann::json& record) {
  UnitMetrics u;
  const auto* data = training::result_data(record, {"metrics", "logged"}, u);
  if (!data) return std::nullopt;
  const auto& m = data->at("metrics");
  u.expert_load_cv = m.at("expert_load_cv").get<double>();
  u.max_to_mean_load = m.at("max_to_mean_load").get<double>();
  u.dropped_token_rate = m.at("dropped_token_rate").get<double>();
  u.final_primary_loss = m.at("primary_training_loss").get<double>();
  if (const auto& o = m.at("correction_bias_oscillation"); o.is_object()) {
    u.bias_mean_abs_change = o.at("mean_abs_change").get<double>();
    u.bias_sign_flip_fraction = o.at("sign_flip_fraction").get<double>();
  }
  for (const auto& l : data->at("logged")) {
    u.logged.push_back({l.at("update").get<std::int64_t>(), l.at("expert_load_cv").get<double>(),
                        l.at("max_to_mean_load").get<double>(), l.at("dropped_token_rate").get<double>()});
  }
  u.primary_losses = data->value("primary_losses", std::vector<double>{});
  if (u.logged.empty()) return std::nullopt;
  return u;
}

}  // namespace k3lab::experiments::router_balance
