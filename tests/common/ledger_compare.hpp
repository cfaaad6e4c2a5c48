#pragma once
// The deterministic part of a ledger: what two runs of one command must share. Written here, not
// taken from core, so that a change in core cannot widen what the comparison ignores.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace k3lab::testing {

// `record` without "t", "seq", "timing", "worker" and "hardware" (top-level keys; the ledger contract
// puts every wall-clock measurement under "timing", and an attempt's hardware fingerprint names the
// machine, which differs from the recording one).
nlohmann::json deterministic_part(const nlohmann::json& record);

// Empty when both ledgers have the same deterministic parts in the same order; otherwise says where
// they first differ (record index, unit, kind, and a JSON patch from expected to actual).
std::string ledger_difference(const std::vector<nlohmann::json>& expected, const std::vector<nlohmann::json>& actual);

}  // namespace k3lab::testing
