#include "context_probe/window_rule.hpp"

#include <cstdio>

#include "context_probe/plan.hpp"

namespace k3lab::experiments::context_probe {

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
