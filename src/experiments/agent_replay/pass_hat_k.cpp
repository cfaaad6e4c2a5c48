#include "agent_replay/pass_hat_k.hpp"

#include <stdexcept>

namespace k3lab::experiments::agent_replay {

double binomial(std::size_t n, std::size_t k) {
  if (k > n) return 0.0;
  double out = 1.0;
  for (std::size_t i = 1; i <= k; ++i) out = out * static_cast<double>(n - k + i) / static_cast<double>(i);
  return out;
}

std::optional<double> pass_hat_k(const std::vector<TaskTally>& tasks, std::size_t k, std::size_t* tasks_used) {
  if (k == 0) throw std::invalid_argument("pass^k needs k >= 1");
  double sum = 0.0;
  std::size_t used = 0;
  for (const auto& t : tasks) {
    if (t.successes > t.runs) throw std::invalid_argument("pass^k: a task has more successes than runs");
    if (t.runs < k) continue;
    sum += binomial(t.successes, k) / binomial(t.runs, k);
    ++used;
  }
  if (tasks_used) *tasks_used = used;
  if (used == 0) return std::nullopt;
  return sum / static_cast<double>(used);
}

}  // namespace k3lab::experiments::agent_replay
