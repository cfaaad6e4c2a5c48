#pragma once
// router-balance's arms are the four routing controls of models/router_control.hpp.
#include <string>

#include "k3lab/models/router_control.hpp"

namespace k3lab::experiments::router_balance {

// no-control, aux-loss, fixed-step-bias, quantile-balancing; throws std::invalid_argument for any other.
models::RouterControl control_of_arm(const std::string& arm);

}  // namespace k3lab::experiments::router_balance
