#include "agent_replay/window_rule.hpp"

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

// The first such error among a run's call errors.
std::optional<api::ConfigurationFailure> configuration_error_of(const nlohmann::json& record) {
  const auto data = record.find("data");
  if (data == record.end() || !data->contains("api_errors") || !(*data)["api_errors"].is_array()) return std::nullopt;
  for (const auto& e : (*data)["api_errors"]) {
    if (const auto label =
            api::configuration_error(e.value("error_class", ""), e.value("http_status", 0), e.value("message", ""))) {
      return api::ConfigurationFailure{record.value("unit", ""), *label, e.value("message", "")};
    }
  }
  return std::nullopt;
}

class InvalidWindowRule final : public WindowRule {
 public:
  explicit InvalidWindowRule(const Parameters& p)
      : runs_per_arm_(static_cast<std::size_t>(p.task_count) * p.repetitions),
        tolerated_(tolerated_invalid_runs_per_arm(p)) {}

  void add(const nlohmann::json& r) override {
    const std::string kind = r.value("kind", "");
    if (kind == "invalid" || kind == "failure") ++invalid_by_arm_[arm_of(r)];
    if (kind == "result" && rejected_unfaulted(r.value("data", nlohmann::json::object()))) ++rejected_by_arm_[arm_of(r)];
    if (!config_) config_ = configuration_error_of(r);
  }

  WindowVerdict verdict() const override {
    WindowVerdict verdict;
    verdict.data = {{"invalid_runs_by_arm", invalid_by_arm_},
                    {"tolerated_per_arm", tolerated_},
                    {"runs_per_arm", runs_per_arm_}};
    if (config_) {
      verdict.stop = true;
      verdict.data["configuration_error"] = config_->to_json();
      verdict.reason = config_->stop_reason();
      return verdict;
    }
    for (const auto& [arm, n] : rejected_by_arm_) {
      if (n <= tolerated_) continue;
      verdict.stop = true;
      verdict.data["rejected_before_fault_by_arm"] = rejected_by_arm_;
      verdict.reason = "arm " + arm + " has " + std::to_string(n) + " runs the endpoint rejected (HTTP 4xx) before "
                       "any fault was applied: the endpoint refuses the protocol itself (a context limit, a "
                       "parameter it does not accept), so these are not outcomes; fix the endpoint and start a new "
                       "run with --fresh";
      return verdict;
    }
    for (const auto& [arm, n] : invalid_by_arm_) {
      if (n <= tolerated_) continue;
      verdict.stop = true;
      verdict.reason = "arm " + arm + " has " + std::to_string(n) + " invalid runs of " +
                       std::to_string(runs_per_arm_) +
                       " (more than the limit): invalidate the whole test window, do not drop the arm";
      break;
    }
    return verdict;
  }

 private:
  std::size_t runs_per_arm_;
  std::size_t tolerated_;
  std::map<std::string, std::size_t> invalid_by_arm_, rejected_by_arm_;
  std::optional<api::ConfigurationFailure> config_;
};

}  // namespace

std::unique_ptr<WindowRule> invalid_window_rule(const Parameters& p) { return std::make_unique<InvalidWindowRule>(p); }

WindowVerdict check_invalid_window(const Parameters& p, const std::vector<nlohmann::json>& terminal_records) {
  return verdict_over(*invalid_window_rule(p), terminal_records);
}

}  // namespace k3lab::experiments::agent_replay
