#include "context_probe/window_rule.hpp"

#include <array>
#include <cstdio>
#include <optional>

#include "context_probe/plan.hpp"
#include "k3lab/api/configuration_error.hpp"

namespace k3lab::experiments::context_probe {
namespace {

// The first failed call whose error shows a misconfigured endpoint: (unit, label, message).
std::optional<std::array<std::string, 3>> first_configuration_error(const std::vector<nlohmann::json>& records) {
  for (const auto& r : records) {
    if (r.value("kind", "") != "failure") continue;
    const auto data = r.find("data");
    if (data == r.end() || !data->contains("call") || !(*data)["call"].is_object()) continue;
    const auto& call = (*data)["call"];
    if (const auto label = api::configuration_error(call.value("error_class", ""), call.value("http_status", 0),
                                                    call.value("error_message", ""))) {
      return std::array<std::string, 3>{r.value("unit", ""), *label, call.value("error_message", "")};
    }
  }
  return std::nullopt;
}

}  // namespace

WindowVerdict check_invalid_window(const Parameters& p, const std::vector<nlohmann::json>& terminal_records) {
  const std::size_t planned_scored =
      p.families.size() * p.fixture_seeds.size() * p.lengths.size() * static_cast<std::size_t>(p.repetitions) * 2;
  const std::size_t tolerated = tolerated_invalid_cells(p, planned_scored);
  std::size_t invalid = 0, failed = 0, expired = 0;
  for (const auto& r : terminal_records) {
    expired += r.value("reason", "") == "window-expired" ? 1 : 0;
    const auto spec = r.find("spec");
    if (spec == r.end() || spec->value("role", "") != "scored") continue;
    const std::string kind = r.value("kind", "");
    invalid += kind == "invalid" ? 1 : 0;
    failed += kind == "failure" ? 1 : 0;
  }
  WindowVerdict verdict;
  verdict.data = {{"invalid_scored_cells", invalid},
                  {"failed_scored_cells", failed},
                  {"planned_scored_cells", planned_scored},
                  {"tolerated", tolerated},
                  {"limit_fraction", p.invalid_fraction_limit}};
  verdict.data["window_expired_units"] = expired;
  if (expired > 0) {
    char hours[32];
    std::snprintf(hours, sizeof hours, "%g", p.test_window_hours);
    verdict.stop = true;
    verdict.reason = std::string("the ") + hours + "-hour test window closed before every planned call had run "
                     "(the seed runs the whole matrix inside one window): this window is invalid; rerun the "
                     "complete matrix in a new window (--fresh)";
    return verdict;
  }
  if (const auto config = first_configuration_error(terminal_records)) {
    verdict.stop = true;
    verdict.data["configuration_error"] = {{"unit", (*config)[0]}, {"label", (*config)[1]}, {"message", (*config)[2]}};
    verdict.reason = "configuration error (" + (*config)[1] + ") in unit " + (*config)[0] + ": " + (*config)[2] +
                     ". The endpoint is misconfigured, not measured; fix it (docs/endpoints.md) and start a new "
                     "run with --fresh";
    return verdict;
  }
  if (invalid + failed > tolerated) {
    verdict.stop = true;
    char percent[32];
    std::snprintf(percent, sizeof percent, "%g", p.invalid_fraction_limit * 100.0);
    verdict.reason = std::to_string(invalid + failed) + " of " + std::to_string(planned_scored) +
                     " scored cells have no valid measurement (more than " + percent +
                     "%): stop this test window and rerun the complete matrix in a later window";
  }
  return verdict;
}

}  // namespace k3lab::experiments::context_probe
