#include "k3lab/experiments/experiment.hpp"

#include <map>

namespace k3lab::experiments {

UnitOutcome UnitOutcome::result(nlohmann::json data, nlohmann::json timing) {
  UnitOutcome o;
  o.kind = Kind::Result;
  o.data = std::move(data);
  o.timing = std::move(timing);
  return o;
}

UnitOutcome UnitOutcome::invalid(std::string reason, std::string detail, nlohmann::json data) {
  UnitOutcome o;
  o.kind = Kind::Invalid;
  o.reason = std::move(reason);
  o.detail = std::move(detail);
  o.data = std::move(data);
  return o;
}

UnitOutcome UnitOutcome::failure(std::string failure_class, std::string detail, nlohmann::json data) {
  UnitOutcome o;
  o.kind = Kind::Failure;
  o.reason = std::move(failure_class);
  o.detail = std::move(detail);
  o.data = std::move(data);
  return o;
}

std::vector<nlohmann::json> RunRecords::terminal_records() const {
  std::map<std::string, nlohmann::json> by_unit;
  std::vector<std::string> order;
  for (const auto& r : ledger.records) {
    if (!core::is_terminal_kind(r.value("kind", "")) || !r.contains("unit")) continue;
    const auto unit = r["unit"].get<std::string>();
    if (!by_unit.count(unit)) order.push_back(unit);
    by_unit[unit] = r;
  }
  // Order by the frozen plan when there is one, so that sharded and single-process runs agree.
  std::vector<nlohmann::json> out;
  for (const auto& r : ledger.records) {
    if (r.value("kind", "") != "plan" || !r.contains("units")) continue;
    for (const auto& id : r["units"]) {
      auto it = by_unit.find(id.get<std::string>());
      if (it != by_unit.end()) {
        out.push_back(it->second);
        by_unit.erase(it);
      }
    }
    break;
  }
  for (const auto& unit : order) {
    auto it = by_unit.find(unit);
    if (it != by_unit.end()) out.push_back(it->second);
  }
  return out;
}

nlohmann::json Experiment::plan_details(const core::Protocol&, const nlohmann::json&,
                                        const std::vector<Unit>&) const {
  return nlohmann::json::object();
}

WindowVerdict Experiment::check_window(const core::Protocol&, const nlohmann::json&,
                                       const std::vector<nlohmann::json>&) const {
  return {};
}

std::vector<std::string> Experiment::run_labels(const nlohmann::json&) const { return {}; }

}  // namespace k3lab::experiments
