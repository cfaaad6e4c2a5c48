#include "agent_replay/plan.hpp"

#include <cmath>
#include <map>

#include "k3lab/api/transport_options.hpp"

namespace k3lab::experiments::agent_replay {

std::size_t tolerated_invalid_runs_per_arm(const Parameters& p) {
  const double runs_per_arm = static_cast<double>(p.task_count) * p.repetitions;
  // The epsilon keeps an exact product (e.g. 0.05 x 80 = 4) from rounding down.
  return static_cast<std::size_t>(std::floor(p.invalid_fraction_limit_per_arm * runs_per_arm + 1e-9));
}

nlohmann::json plan_details(const Parameters& p, const std::vector<Unit>& units) {
  std::map<std::string, std::size_t> by_arm, by_rep;
  std::size_t tasks = 0;
  for (const auto& u : units) {
    ++by_arm[u.spec.at("arm").get<std::string>()];
    ++by_rep[std::to_string(u.spec.at("rep").get<int>())];
    tasks = std::max<std::size_t>(tasks, u.spec.at("task").get<std::size_t>());
  }
  const double most_model_calls = static_cast<double>(units.size()) * p.max_model_turns;
  nlohmann::json d;
  d["runs"] = {{"total", units.size()}, {"by_arm", by_arm}, {"by_repetition", by_rep}, {"tasks", tasks}};
  // Every send counts, whatever the error class (api::RetryPolicy: one cap of 1 + retries per turn).
  d["model_calls"] = {{"most_before_transport_retries", most_model_calls},
                      {"most_sends_every_error_class", most_model_calls * (1 + p.transport_retries)},
                      {"max_model_turns_per_run", p.max_model_turns}};
  d["window"] = {{"hours", p.test_window_hours},
                 {"model", p.model},
                 {"reasoning_effort", p.reasoning_effort},
                 {"invalid_fraction_limit_per_arm", p.invalid_fraction_limit_per_arm},
                 {"runs_per_arm", static_cast<std::size_t>(p.task_count) * p.repetitions},
                 {"invalidate_when_one_arm_has_more_invalid_runs_than", tolerated_invalid_runs_per_arm(p)}};
  d["transport"] = api::transport_plan(p.transport, api::RetryPolicy::with_retries(p.transport_retries),
                                       most_model_calls, p.test_window_hours);
  const double completion_usd = most_model_calls * p.max_completion_tokens * p.pricing.output / 1e6;
  d["cost_usd"] = {{"completion_upper_bound", std::round(completion_usd * 100.0) / 100.0},
                   {"prompt", "not estimated: it depends on each task's transcript length; measured per run"}};
  d["assumptions"] = {"the completion bound assumes every run uses all its model turns at the full output cap",
                      "resent turns are not priced (at most " + std::to_string(p.transport_retries) +
                          " resends of a turn whatever the error class)"};
  return d;
}

}  // namespace k3lab::experiments::agent_replay
