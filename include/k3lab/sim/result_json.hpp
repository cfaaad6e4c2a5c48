#pragma once
// A simulation result as JSON (the unit's ledger data). Same result, same bytes.
#include <nlohmann/json.hpp>

#include "k3lab/sim/engine.hpp"

namespace k3lab::sim {

nlohmann::json result_to_json(const SimResult& result);

}  // namespace k3lab::sim
