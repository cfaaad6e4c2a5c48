#pragma once
// pass^k (tau-bench): the chance that k repetitions of a task drawn without replacement from its n
// all succeed, averaged over tasks: mean_t C(c_t, k) / C(n_t, k), where task t succeeded c_t times in
// n_t valid repetitions. pass^1 is the mean success rate per task.
#include <cstddef>
#include <optional>
#include <vector>

namespace k3lab::experiments::agent_replay {

struct TaskTally {
  std::size_t successes = 0;
  std::size_t runs = 0;  // valid repetitions
};

// C(n, k) as a double (exact for the small n of a protocol). 0 when k > n.
double binomial(std::size_t n, std::size_t k);

// nullopt when no task has at least k valid runs; tasks with fewer than k are left out (their count
// is returned in `tasks_used`). Throws std::invalid_argument for k == 0 or successes > runs.
std::optional<double> pass_hat_k(const std::vector<TaskTally>& tasks, std::size_t k, std::size_t* tasks_used = nullptr);

}  // namespace k3lab::experiments::agent_replay
