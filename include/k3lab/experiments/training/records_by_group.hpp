#pragma once
// The first table of a proxy experiment's page: terminal records per group of units (an arm, or a
// phase and arm) against the frozen plan, so an unfinished run shows what is still open.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/experiments/experiment.hpp"
#include "k3lab/report/page.hpp"

namespace k3lab::experiments::training {

struct RecordsByGroupTable {
  std::string id = "terminal-records-by-arm";
  std::string title = "Terminal records by arm";
  std::string group_column = "arm";
  std::string caption = {};  // shown when the plan is known
  // A unit's group from its spec; the default reads spec.arm.
  std::function<std::string(const nlohmann::json& spec)> group_of = {};
};

// `planned`: the frozen units, or nullopt when the manifest holds no parameters (then planned and
// open counts stay empty and the caption says why). Groups appear in plan order, then in record order.
void add_terminal_records_by_group(const RunRecords& records, const std::optional<std::vector<Unit>>& planned,
                                   const RecordsByGroupTable& table, report::Page& page);

}  // namespace k3lab::experiments::training
