#include "agent_replay/window_rule.hpp"

#include <array>
#include <map>
#include <optional>

#include "agent_replay/plan.hpp"
#include "k3lab/api/configuration_error.hpp"

namespace k3lab::experiments::agent_replay {
namespace {

std::string arm_of(const nlohmann::json& record) {
  const auto spec = record.find("spec");
  return spec != record.end() ? spec->value("arm", "(unknown arm)") : "(unknown arm)";
}

// A run the endpoint rejected (HTTP 4xx) at a turn before the arm's fault was applied: the rejection
// cannot be the fault's outcome, so the endpoint refuses the protocol itself (a context limit, a
// parameter it does not accept).
bool rejected_unfaulted(const nlohmann::json& data) {
  if (data.value("stop", "") != "api_error" || !data.contains("api_errors") || data["api_errors"].empty()) return false;
  const auto& last = data["api_errors"].back();
  const int status = last.value("http_status", 0);
  if (status < 400 || status >= 500) return false;
  const auto& fault = data.value("fault", nlohmann::json::object());
  const bool applied = fault.value("applied", false) && fault.contains("turn") && fault["turn"].is_number_integer();
  return !applied || fault["turn"].get<int>() > last.value("turn", 0);
}

// The first call error of any run that shows a misconfigured endpoint: (unit, label, message).
std::optional<std::array<std::string, 3>> first_configuration_error(const std::vector<nlohmann::json>& records) {
  for (const auto& r : records) {
    const auto data = r.find("data");
    if (data == r.end() || !data->contains("api_errors") || !(*data)["api_errors"].is_array()) continue;
    for (const auto& e : (*data)["api_errors"]) {
      if (const auto label =
              api::configuration_error(e.value("error_class", ""), e.value("http_status", 0), e.value("message", ""))) {
        return std::array<std::string, 3>{r.value("unit", ""), *label, e.value("message", "")};
      }
    }
  }
  return std::nullopt;
}

}  // namespace

WindowVerdict check_invalid_window(const Parameters& p, const std::vector<nlohmann::json>& terminal_records) {
  std::map<std::string, std::size_t> invalid_by_arm, rejected_by_arm;
  for (const auto& r : terminal_records) {
    const std::string kind = r.value("kind", "");
    if (kind == "invalid" || kind == "failure") ++invalid_by_arm[arm_of(r)];
    if (kind == "result" && rejected_unfaulted(r.value("data", nlohmann::json::object()))) ++rejected_by_arm[arm_of(r)];
  }
  const std::size_t tolerated = tolerated_invalid_runs_per_arm(p);
  WindowVerdict verdict;
  verdict.data = {{"invalid_runs_by_arm", invalid_by_arm},
                  {"tolerated_per_arm", tolerated},
                  {"runs_per_arm", static_cast<std::size_t>(p.task_count) * p.repetitions}};
  if (const auto config = first_configuration_error(terminal_records)) {
    verdict.stop = true;
    verdict.data["configuration_error"] = {{"unit", (*config)[0]}, {"label", (*config)[1]}, {"message", (*config)[2]}};
    verdict.reason = "configuration error (" + (*config)[1] + ") in unit " + (*config)[0] + ": " + (*config)[2] +
                     ". The endpoint is misconfigured, not measured; fix it (docs/endpoints.md) and start a new "
                     "run with --fresh";
    return verdict;
  }
  for (const auto& [arm, n] : rejected_by_arm) {
    if (n > tolerated) {
      verdict.stop = true;
      verdict.data["rejected_before_fault_by_arm"] = rejected_by_arm;
      verdict.reason = "arm " + arm + " has " + std::to_string(n) + " runs the endpoint rejected (HTTP 4xx) before "
                       "any fault was applied: the endpoint refuses the protocol itself (a context limit, a "
                       "parameter it does not accept), so these are not outcomes; fix the endpoint and start a new "
                       "run with --fresh";
      return verdict;
    }
  }
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
