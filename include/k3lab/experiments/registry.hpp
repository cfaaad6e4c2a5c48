#pragma once
// The registry: one row per protocol module, the only place that names them all. Linked by the
// programs (the k3lab CLI) and nothing below them, so the spine and the layers never depend on a module.
#include <memory>
#include <string>
#include <vector>

#include "k3lab/experiments/experiment.hpp"

namespace k3lab::experiments {

// Every registered experiment, in the seed's order (the order of `k3lab list`, `--all` and the report).
const Catalog& registry();

// The module for an id; std::invalid_argument with a did-you-mean for an unknown id.
std::unique_ptr<Experiment> make_experiment(const std::string& id);

}  // namespace k3lab::experiments
