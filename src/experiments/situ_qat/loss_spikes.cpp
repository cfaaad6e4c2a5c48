#include "situ_qat/loss_spikes.hpp"

#include <cmath>
#include <stdexcept>

namespace k3lab::experiments::situ_qat {

std::vector<LossSpike> detect_loss_spikes(const std::vector<double>& losses, int window_updates, double threshold_sigma) {
  if (window_updates < 2) throw std::invalid_argument("loss spikes: window_updates must be at least 2 (a standard deviation needs two losses)");
  std::vector<LossSpike> spikes;
  const auto w = static_cast<std::size_t>(window_updates);
  for (std::size_t t = w; t < losses.size(); ++t) {
    if (!std::isfinite(losses[t])) continue;
    double sum = 0;
    bool finite = true;
    for (std::size_t i = t - w; i < t; ++i) {
      finite = finite && std::isfinite(losses[i]);
      sum += losses[i];
    }
    if (!finite) continue;
    const double mean = sum / static_cast<double>(w);
    double squares = 0;
    for (std::size_t i = t - w; i < t; ++i) squares += (losses[i] - mean) * (losses[i] - mean);
    const double sd = std::sqrt(squares / static_cast<double>(w - 1));
    if (losses[t] > mean + threshold_sigma * sd) {
      spikes.push_back({static_cast<std::int64_t>(t), losses[t], mean, sd});
    }
  }
  return spikes;
}

nlohmann::json loss_spikes_json(const std::vector<double>& losses, int window_updates, double threshold_sigma,
                                std::int64_t batch_tokens) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& s : detect_loss_spikes(losses, window_updates, threshold_sigma)) {
    list.push_back({{"step", s.step}, {"tokens", (s.step + 1) * batch_tokens}, {"loss", s.loss},
                    {"trailing_mean", s.trailing_mean}, {"trailing_sd", s.trailing_sd}});
  }
  return {{"definition", "loss[t] > mean + threshold_sigma * sd of the previous window_updates step losses "
                         "(sample sd); the first window_updates steps are not tested"},
          {"window_updates", window_updates},
          {"threshold_sigma", threshold_sigma},
          {"count", list.size()},
          {"spikes", list}};
}

}  // namespace k3lab::experiments::situ_qat
