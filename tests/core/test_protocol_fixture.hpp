#pragma once
// A minimal valid protocol document and a throwaway folder, shared by the core tests.
#include <string>

#include <nlohmann/json.hpp>

#include "common/temp_dir.hpp"

namespace k3lab::testing {

inline nlohmann::json minimal_protocol(const std::string& id = "memory-pool") {
  return nlohmann::json::parse(R"({
    "id": ")" + id + R"(", "title": "t", "seed_section": "s", "evidence_class": "systems-simulation",
    "hypothesis": "h", "arms": [{"id": "a", "description": "d", "requested_by_seed": true},
                                {"id": "b", "description": "d", "requested_by_seed": true}],
    "controlled_variables": ["x"], "metrics": [{"name": "m", "description": "d"}],
    "evaluation_cadence": "e", "stopping_rule": "s", "invalid_run_rule": "i", "decision_rule": "d",
    "can_say": ["c"], "cannot_say": ["n"],
    "parameters": {"units": 6, "seed": 1, "invalid_every": 0, "fail_unit": -1},
    "profiles": {"full": {}, "smoke": {"units": 4}}})");
}

}  // namespace k3lab::testing
