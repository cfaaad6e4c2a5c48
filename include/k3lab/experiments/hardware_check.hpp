#pragma once
// The hardware a run's comparison rests on: the fingerprint (core/hardware_fingerprint.hpp) of the
// attempt that produced each unit's terminal record, grouped. Units of one comparison that ran on
// different fingerprints are flagged on the page, and the proxy experiments' decision gate
// (training/gate.hpp) withholds the decision unless the protocol allows it (docs/verdicts.md).
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/core/protocol.hpp"
#include "k3lab/experiments/experiment.hpp"
#include "k3lab/report/page.hpp"

namespace k3lab::experiments {

// The page status prefix of a run whose terminal units ran on more than one fingerprint.
inline constexpr const char* kMixedHardwareStatus = "MIXED HARDWARE";

struct HardwareGroup {
  nlohmann::json fingerprint;  // as recorded, with its "id"
  std::size_t units = 0;
};

struct HardwareGroups {
  std::vector<HardwareGroup> recorded;  // distinct fingerprint ids, most units first (ties: by id)
  std::size_t not_recorded = 0;         // units whose attempt carries no fingerprint (older ledgers)
  // More than one recorded fingerprint; units without one are not counted against the rest.
  bool mixed() const { return recorded.size() > 1; }
};

// For each unit with a terminal record, the "hardware" of the last attempt record of that unit (and
// worker) before it; the last terminal record of a unit counts, as in RunRecords::terminal_records.
HardwareGroups terminal_unit_hardware(const RunRecords& records);

// One line of facts: "cpu <model> (<n> logical cores), device <d>[, <count> x <model>, driver <v>, CUDA <c>],
// LibTorch <v> [id <id>]".
std::string describe_fingerprint(const nlohmann::json& fingerprint);

// The protocol's optional "controls": {"mixed_hardware": "allowed"} lets a decision read units that ran
// on different fingerprints (the page still flags them).
bool mixed_hardware_allowed(const core::Protocol& protocol);

// The page's hardware statement: one line in its Reproduce section naming the fingerprint when every
// terminal unit shares it (or saying that none was recorded); otherwise a "MIXED HARDWARE" status
// prefix and a block among the results listing each fingerprint's facts and unit count.
void add_hardware_check(const core::Protocol& protocol, const RunRecords& records, report::Page& page);

}  // namespace k3lab::experiments
