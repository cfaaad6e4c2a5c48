#include "k3lab/experiments/experiment.hpp"

#include <map>
#include <optional>

namespace k3lab::experiments {

UnitOutcome UnitOutcome::result(nlohmann::json data, nlohmann::json timing) {
  return {.kind = Kind::Result, .data = std::move(data), .timing = std::move(timing), .reason = {}, .detail = {}};
}

UnitOutcome UnitOutcome::invalid(std::string reason, std::string detail, nlohmann::json data) {
  return {.kind = Kind::Invalid, .data = std::move(data), .timing = {}, .reason = std::move(reason),
          .detail = std::move(detail)};
}

UnitOutcome UnitOutcome::failure(std::string failure_class, std::string detail, nlohmann::json data) {
  return {.kind = Kind::Failure, .data = std::move(data), .timing = {}, .reason = std::move(failure_class),
          .detail = std::move(detail)};
}

core::LedgerRecords RunRecords::terminal_records() const {
  // Positions only: each record is parsed once here, and the result shares the ledger's text.
  std::map<std::string, std::size_t> by_unit;
  std::vector<std::string> order;
  std::optional<std::size_t> plan;
  for (auto it = ledger.records.begin(); it != ledger.records.end(); ++it) {
    const auto r = *it;
    const std::string kind = r.value("kind", "");
    if (kind == "plan" && r.contains("units") && !plan) plan = it.index();
    if (!core::is_terminal_kind(kind) || !r.contains("unit")) continue;
    const auto unit = r["unit"].get<std::string>();
    if (!by_unit.count(unit)) order.push_back(unit);
    by_unit[unit] = it.index();
  }
  // Order by the frozen plan when there is one, so that sharded and single-process runs agree.
  std::vector<std::size_t> out;
  out.reserve(by_unit.size());
  if (plan) {
    const nlohmann::json plan_record = ledger.records[*plan];  // a named copy: the loop outlives temporaries
    for (const auto& id : plan_record.at("units")) {
      auto it = by_unit.find(id.get<std::string>());
      if (it != by_unit.end()) {
        out.push_back(it->second);
        by_unit.erase(it);
      }
    }
  }
  for (const auto& unit : order) {
    auto it = by_unit.find(unit);
    if (it != by_unit.end()) out.push_back(it->second);
  }
  return ledger.records.subset(out);
}

nlohmann::json Experiment::plan_details(const core::Protocol&, const nlohmann::json&,
                                        const std::vector<Unit>&) const {
  return nlohmann::json::object();
}

namespace {

class NeverStops final : public WindowRule {
 public:
  void add(const nlohmann::json&) override {}
  WindowVerdict verdict() const override { return {}; }
};

}  // namespace

std::unique_ptr<WindowRule> Experiment::window_rule(const core::Protocol&, const nlohmann::json&) const {
  return std::make_unique<NeverStops>();
}

WindowVerdict Experiment::check_window(const core::Protocol& protocol, const nlohmann::json& parameters,
                                       const std::vector<nlohmann::json>& terminal_records) const {
  return verdict_over(*window_rule(protocol, parameters), terminal_records);
}

WindowVerdict verdict_over(WindowRule& rule, const std::vector<nlohmann::json>& terminal_records) {
  for (const auto& record : terminal_records) rule.add(record);
  return rule.verdict();
}

std::vector<std::string> Experiment::run_labels(const nlohmann::json&) const { return {}; }

core::Protocol load_checked_protocol(const Experiment& experiment, const std::filesystem::path& file,
                                     core::FileNaming naming) {
  core::Protocol protocol = core::load_protocol(file, &experiment.parameter_schema(), naming);
  std::vector<core::SchemaIssue> issues;
  for (const auto& profile : core::profile_names()) {
    try {
      experiment.enumerate(protocol, protocol.parameters_for(profile));
    } catch (const std::exception& e) {
      issues.push_back({"profiles." + profile, e.what()});
    }
  }
  if (!issues.empty()) throw core::ProtocolError(file, std::move(issues));
  return protocol;
}

}  // namespace k3lab::experiments
