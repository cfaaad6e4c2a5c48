#pragma once
// The protocol's loss-spike definition, applied to the recorded per-step training losses:
//   step t (0-based, t >= W) is a spike when loss[t] > mean(loss[t-W .. t-1]) + k * sd(loss[t-W .. t-1])
// with W = loss_spike.window_updates, k = loss_spike.threshold_sigma and sd the sample standard
// deviation (divisor W - 1). The trainer's own rule (a factor over a trailing median) cannot express
// this, so situ-qat computes spikes here and the page reads only these.
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

namespace k3lab::experiments::situ_qat {

struct LossSpike {
  std::int64_t step = 0;  // 0-based index into the losses
  double loss = 0;
  double trailing_mean = 0;
  double trailing_sd = 0;
};

// Non-finite losses (a failed run's last step) are never spikes and never enter a window.
std::vector<LossSpike> detect_loss_spikes(const std::vector<double>& losses, int window_updates, double threshold_sigma);

// {"definition", "window_updates", "threshold_sigma", "count", "spikes": [{step, tokens, loss, trailing_mean, trailing_sd}]}
// tokens: training tokens after the step, (step + 1) * batch_tokens.
nlohmann::json loss_spikes_json(const std::vector<double>& losses, int window_updates, double threshold_sigma,
                                std::int64_t batch_tokens);

}  // namespace k3lab::experiments::situ_qat
