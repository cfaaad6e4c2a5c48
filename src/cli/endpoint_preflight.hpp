#pragma once
// The pre-flight of an API experiment's endpoint as the CLI runs it: `k3lab check-endpoint` alone, and
// `k3lab run` before a new run on a real endpoint (api/preflight.hpp).
#include <string>

#include <nlohmann/json.hpp>

#include "k3lab/api/endpoint_choice.hpp"
#include "k3lab/api/preflight.hpp"

namespace k3lab::cli {

// Probes `choice` with the protocol's model (or options.served_model) and reasoning effort for
// `profile`, under the run options' transport settings; interruptible by the runner's stop flag.
api::PreflightReport preflight_endpoint(const std::string& experiment_id, const api::EndpointChoice& choice,
                                        const nlohmann::json& options, const std::string& profile);

}  // namespace k3lab::cli
