#pragma once
// A direct-API run is bound to the endpoint it started with: the base URL (or the embedded mock),
// the served model name, and whether the endpoint is simulated. `k3lab run` records this identity in
// the manifest (options.endpoint) and refuses to resume a run against another endpoint, so that one
// window never pools the answers of two servers.
//
// The served model name (`--served-model NAME`, options.served_model) is for a server that serves the
// protocol's model under another name (vLLM/SGLang --served-model-name): requests carry NAME as
// `model`, while the protocol's model id (and its price table) stays frozen.
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "k3lab/api/endpoint_choice.hpp"

namespace k3lab::api {

struct EndpointIdentity {
  std::string base_url;      // the normalised base URL, or "embedded-mock"
  std::string served_model;  // empty: requests carry the protocol's model id
  bool simulated = false;    // k3lab's embedded mock

  nlohmann::json to_json() const;
  // "http://127.0.0.1:8089/v1 serving the protocol's model id" and the like.
  std::string describe() const;
  bool operator==(const EndpointIdentity&) const = default;
};

// The experiments that call a chat endpoint (their runs are bound to it).
bool calls_chat_endpoint(std::string_view experiment_id);

// options.served_model, or "" when absent. Throws std::invalid_argument when it is not a string, or
// is empty or whitespace-only.
std::string served_model_option(const nlohmann::json& options);

// The model a request carries: the served name when set, else the protocol's id.
std::string request_model(const nlohmann::json& options, const std::string& protocol_model);

EndpointIdentity identify_endpoint(const EndpointChoice& choice, const nlohmann::json& options);

// The identity a run's manifest recorded: options.endpoint, else (runs made before it was recorded)
// one built from options.base_url and options.served_model when base_url is there, else nullopt.
std::optional<EndpointIdentity> recorded_endpoint(const nlohmann::json& manifest_options);

// Why `run_dir` (whose manifest options are `manifest_options`) must not be resumed against
// `current`, naming both endpoints and the fix; nullopt when they agree or the run recorded none.
std::optional<std::string> endpoint_mismatch(const std::string& run_dir, const nlohmann::json& manifest_options,
                                             const EndpointIdentity& current);

// The sentence every page of a run with a served-model alias shows; nullopt without one.
std::optional<std::string> served_model_sentence(const nlohmann::json& manifest_options, const std::string& protocol_model);

// Throws std::invalid_argument when a --base-url value is empty or only whitespace (an unset shell
// variable must not silently fall back to another endpoint).
void check_base_url_text(const std::string& text);

}  // namespace k3lab::api
