#pragma once
// The numbers the router-balance page reads from one result record (ledger data only).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/experiments/training/arm_runs.hpp"

namespace k3lab::experiments::router_balance {

struct LoggedUpdate {
  std::int64_t update = 0;
  double expert_load_cv = 0, max_to_mean_load = 0, dropped_token_rate = 0;  // means over layers
};

struct UnitMetrics : training::RunIdentity {
  double expert_load_cv = 0;         // mean over layers and logged measured updates
  double max_to_mean_load = 0;       // idem
  double dropped_token_rate = 0;     // idem
  double final_primary_loss = 0;     // mean of the last final_loss_window_updates
  std::optional<double> bias_mean_abs_change;   // bias arms only
  std::optional<double> bias_sign_flip_fraction;
  std::vector<LoggedUpdate> logged;
  std::vector<double> primary_losses;  // every update
};

// nullopt unless the record is a router-balance result with metrics.
std::optional<UnitMetrics> unit_metrics(const nlohmann::json& record);

}  // namespace k3lab::experiments::router_balance
