#include "context_probe/window_rule.hpp"

#include <cstdio>
#include <optional>

#include "context_probe/plan.hpp"
#include "k3lab/api/configuration_error.hpp"

namespace k3lab::experiments::context_probe {
namespace {

std::optional<api::ConfigurationFailure> configuration_error_of(const nlohmann::json& record) {
  if (record.value("kind", "") != "failure") return std::nullopt;
  const auto data = record.find("data");
  if (data == record.end() || !data->contains("call") || !(*data)["call"].is_object()) return std::nullopt;
  const auto& call = (*data)["call"];
  const auto label = api::configuration_error(call.value("error_class", ""), call.value("http_status", 0),
                                              call.value("error_message", ""));
  if (!label) return std::nullopt;
  return api::ConfigurationFailure{record.value("unit", ""), *label, call.value("error_message", "")};
}

class InvalidWindowRule final : public WindowRule {
 public:
  explicit InvalidWindowRule(const Parameters& p)
      : p_(p),
        planned_scored_(p.families.size() * p.fixture_seeds.size() * p.lengths.size() *
                        static_cast<std::size_t>(p.repetitions) * 2),
        tolerated_(tolerated_invalid_cells(p, planned_scored_)) {}

  void add(const nlohmann::json& r) override {
    expired_ += r.value("reason", "") == "window-expired" ? 1 : 0;
    if (!config_) config_ = configuration_error_of(r);
    const auto spec = r.find("spec");
    if (spec == r.end() || spec->value("role", "") != "scored") return;
    const std::string kind = r.value("kind", "");
    invalid_ += kind == "invalid" ? 1 : 0;
    failed_ += kind == "failure" ? 1 : 0;
  }

  WindowVerdict verdict() const override {
    WindowVerdict verdict;
    verdict.data = {{"invalid_scored_cells", invalid_},
                    {"failed_scored_cells", failed_},
                    {"planned_scored_cells", planned_scored_},
                    {"tolerated", tolerated_},
                    {"limit_fraction", p_.invalid_fraction_limit}};
    verdict.data["window_expired_units"] = expired_;
    if (expired_ > 0) {
      char hours[32];
      std::snprintf(hours, sizeof hours, "%g", p_.test_window_hours);
      verdict.stop = true;
      verdict.reason = std::string("the ") + hours + "-hour test window closed before every planned call had run "
                       "(the seed runs the whole matrix inside one window): this window is invalid; rerun the "
                       "complete matrix in a new window (--fresh)";
    } else if (config_) {
      verdict.stop = true;
      verdict.data["configuration_error"] = config_->to_json();
      verdict.reason = config_->stop_reason();
    } else if (invalid_ + failed_ > tolerated_) {
      verdict.stop = true;
      char percent[32];
      std::snprintf(percent, sizeof percent, "%g", p_.invalid_fraction_limit * 100.0);
      verdict.reason = std::to_string(invalid_ + failed_) + " of " + std::to_string(planned_scored_) +
                       " scored cells have no valid measurement (more than " + percent +
                       "%): stop this test window and rerun the complete matrix in a later window";
    }
    return verdict;
  }

 private:
  Parameters p_;
  std::size_t planned_scored_;
  std::size_t tolerated_;
  std::size_t invalid_ = 0, failed_ = 0, expired_ = 0;
  std::optional<api::ConfigurationFailure> config_;
};

}  // namespace

std::unique_ptr<WindowRule> invalid_window_rule(const Parameters& p) { return std::make_unique<InvalidWindowRule>(p); }

WindowVerdict check_invalid_window(const Parameters& p, const std::vector<nlohmann::json>& terminal_records) {
  return verdict_over(*invalid_window_rule(p), terminal_records);
}

}  // namespace k3lab::experiments::context_probe
