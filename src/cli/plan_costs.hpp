#pragma once
// The cost sections `k3lab plan` prints for a proxy-training experiment: GPU-hours per arm with their
// basis (measured from a throughput record, or the floor and the bench command that would measure it),
// and the evaluation cadence's cost as a share of training, with a warning above the stated share.
#include <iosfwd>

#include <nlohmann/json.hpp>

namespace k3lab::cli {

// Prints details["gpu_hours_by_arm"] (as experiments/training/measured_estimate.hpp fills it) and
// details["evaluation_cost"]; prints nothing for details without them.
void print_plan_costs(const nlohmann::json& details, std::ostream& out);

// Details without the two sections print_plan_costs prints, for the generic listing.
nlohmann::json without_plan_costs(nlohmann::json details);

}  // namespace k3lab::cli
