#include "router_balance/router_control.hpp"

#include <stdexcept>

namespace k3lab::experiments::router_balance {

models::RouterControl control_of_arm(const std::string& arm) {
  if (arm == "no-control") return models::RouterControl::None;
  if (arm == "aux-loss") return models::RouterControl::AuxLoss;
  if (arm == "fixed-step-bias") return models::RouterControl::FixedStepBias;
  if (arm == "quantile-balancing") return models::RouterControl::QuantileBalancing;
  throw std::invalid_argument("router-balance: unknown arm \"" + arm +
                              "\"; the arms are no-control, aux-loss, fixed-step-bias and quantile-balancing");
}

}  // namespace k3lab::experiments::router_balance
