#pragma once
// The protocol's metrics on plain numbers (one MoE layer, one update), exactly as docs/router-balance.md
// defines them:
//   expert_load_cv               population std / mean of the per-expert routes (every expert is the
//                                whole population), per layer and logged update
//   max_to_mean_load             max_j load_j / mean_j load_j, per layer and logged update
//   dropped_token_rate           assignments over capacity / (tokens x top_k)
//   primary_training_loss        next-token loss without the aux term; final value: mean of the last
//                                final_loss_window_updates per-update losses
//   correction_bias_oscillation  over measured updates t (bias after update t minus bias after t-1,
//                                per layer and expert): the mean |delta|, and among consecutive pairs of
//                                nonzero changes of one expert the fraction with opposite signs
#include <cstdint>
#include <vector>

namespace k3lab::experiments::router_balance {

double load_cv(const std::vector<double>& loads);
double max_to_mean(const std::vector<double>& loads);
double dropped_rate(std::int64_t dropped, std::int64_t assignments);
// Throws std::invalid_argument when the window is empty or longer than the losses.
double final_loss(const std::vector<double>& losses, std::int64_t window);

// Accumulates the oscillation over the bias vectors of one run, one call per measured update, the
// first call being the bias just before the first measured update.
class OscillationTracker {
 public:
  void observe(const std::vector<std::vector<double>>& bias);  // [layer][expert]
  double mean_abs_change() const;  // 0 with no change observed
  double sign_flip_fraction() const;  // 0 with no pair of nonzero changes
  std::int64_t changes() const { return changes_; }
  std::int64_t change_pairs() const { return pairs_; }

 private:
  std::vector<std::vector<double>> last_bias_, last_delta_;
  double abs_sum_ = 0;
  std::int64_t changes_ = 0, pairs_ = 0, flips_ = 0;
};

}  // namespace k3lab::experiments::router_balance
