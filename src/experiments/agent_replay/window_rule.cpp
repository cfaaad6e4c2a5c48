#include "agent_replay/window_rule.hpp"

#include <map>

#include "agent_replay/plan.hpp"

namespace k3lab::experiments::agent_replay {

WindowVerdict check_invalid_window(const Parameters& p, const std::vector<nlohmann::json>& terminal_records) {
  std::map<std::string, std::size_t> invalid_by_arm;
  for (const auto& r : terminal_records) {
    const std::string kind = r.value("kind", "");
    if (kind != "invalid" && kind != "failure") continue;
    const auto spec = r.find("spec");
    const std::string arm = spec != r.end() ? spec->value("arm", "(unknown arm)") : "(unknown arm)";
    ++invalid_by_arm[arm];
  }
  const std::size_t tolerated = tolerated_invalid_runs_per_arm(p);
  WindowVerdict verdict;
  verdict.data = {{"invalid_runs_by_arm", invalid_by_arm},
                  {"tolerated_per_arm", tolerated},
                  {"runs_per_arm", static_cast<std::size_t>(p.task_count) * p.repetitions}};
  for (const auto& [arm, n] : invalid_by_arm) {
    if (n > tolerated) {
      verdict.stop = true;
      verdict.reason = "arm " + arm + " has " + std::to_string(n) + " invalid runs of " +
                       std::to_string(static_cast<std::size_t>(p.task_count) * p.repetitions) +
                       " (more than the limit): invalidate the whole test window, do not drop the arm";
      break;
    }
  }
  return verdict;
}

}  // namespace k3lab::experiments::agent_replay
