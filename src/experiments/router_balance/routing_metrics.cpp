#include "router_balance/routing_metrics.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "k3lab/report/stats.hpp"

namespace k3lab::experiments::router_balance {

double load_cv(const std::vector<double>& loads) {
  return report::coefficient_of_variation(loads, report::Spread::Population);
}

double max_to_mean(const std::vector<double>& loads) {
  return *std::max_element(loads.begin(), loads.end()) / report::mean(loads);
}

double dropped_rate(std::int64_t dropped, std::int64_t assignments) {
  return static_cast<double>(dropped) / static_cast<double>(assignments);
}

double final_loss(const std::vector<double>& losses, std::int64_t window) {
  if (window <= 0 || window > static_cast<std::int64_t>(losses.size())) {
    throw std::invalid_argument("router-balance: final_loss_window_updates (" + std::to_string(window) +
                                ") must be in 1..the number of updates (" + std::to_string(losses.size()) + ")");
  }
  double sum = 0;
  for (auto it = losses.end() - window; it != losses.end(); ++it) sum += *it;
  return sum / static_cast<double>(window);
}

void OscillationTracker::observe(const std::vector<std::vector<double>>& bias) {
  if (last_bias_.empty()) {
    last_bias_ = bias;
    last_delta_.assign(bias.size(), {});
    for (std::size_t l = 0; l < bias.size(); ++l) last_delta_[l].assign(bias[l].size(), 0.0);
    return;
  }
  for (std::size_t l = 0; l < bias.size(); ++l) {
    for (std::size_t j = 0; j < bias[l].size(); ++j) {
      const double delta = bias[l][j] - last_bias_[l][j];
      abs_sum_ += std::abs(delta);
      ++changes_;
      const double previous = last_delta_[l][j];
      if (delta != 0 && previous != 0) {
        ++pairs_;
        if ((delta > 0) != (previous > 0)) ++flips_;
      }
      // A zero change does not break a run: the next nonzero change pairs with the last nonzero one.
      if (delta != 0) last_delta_[l][j] = delta;
    }
  }
  last_bias_ = bias;
}

double OscillationTracker::mean_abs_change() const {
  return changes_ == 0 ? 0.0 : abs_sum_ / static_cast<double>(changes_);
}

double OscillationTracker::sign_flip_fraction() const {
  return pairs_ == 0 ? 0.0 : static_cast<double>(flips_) / static_cast<double>(pairs_);
}

}  // namespace k3lab::experiments::router_balance
