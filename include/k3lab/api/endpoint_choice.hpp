#pragma once
// Which endpoint a direct-API experiment run (context-probe, agent-replay) calls, decided once per
// run from the command line and the environment, in this order:
//   1. options.base_url (`k3lab run --base-url URL`)
//   2. $K3LAB_BASE_URL
//   3. the Kimi API (https://api.moonshot.ai/v1) when $MOONSHOT_API_KEY is set
//   4. k3lab's embedded mock server, started in-process on an ephemeral loopback port for the run.
// A run against the embedded mock is labelled on every record and page as simulated: it is not
// evidence about Kimi K3. The key itself is never read here, only whether it is set.
#include <cstddef>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace k3lab::api {

inline constexpr const char* kBaseUrlEnv = "K3LAB_BASE_URL";
inline constexpr const char* kSimulatedLabel = "simulated endpoint: not evidence about Kimi K3";

struct EndpointChoice {
  enum class Kind { EmbeddedMock, BaseUrl, KimiDefault };
  Kind kind = Kind::EmbeddedMock;
  std::string base_url;  // normalised; empty for the embedded mock (its port is chosen when it starts)
  std::string source;    // why this endpoint: "--base-url", "$K3LAB_BASE_URL", ...
  bool loopback = true;
  bool api_key_present = false;

  bool embedded() const { return kind == Kind::EmbeddedMock; }
  // What records show as the endpoint: the base URL, or "embedded-mock" (its port changes per run).
  std::string record_name() const;
  // One phrase for report sentences, e.g. "the Kimi API (https://api.moonshot.ai/v1)".
  std::string description() const;
};

// Throws std::invalid_argument with the fix, prefixed with the experiment id, when options.base_url
// is not a string, a URL is not acceptable to the client (see parse_endpoint), or a non-loopback
// endpoint is chosen while $MOONSHOT_API_KEY is unset.
EndpointChoice choose_endpoint(const nlohmann::json& options, std::string_view experiment_id);

// The labels every record and page of the run carries.
std::vector<std::string> endpoint_labels(const EndpointChoice& choice);

// `names` joined with ", " in set order, or `none` when there are none (endpoints, response models...).
std::string join_names(const std::set<std::string>& names, const std::string& none);

// How a results page names the endpoint a run called; a simulated endpoint is never called Kimi K3.
// `endpoints`: the record names its ledger shows; `simulated`: how many calls or runs a k3lab mock
// answered; `embedded_detail`: what the embedded mock ran, after "embedded mock server" (may be empty).
std::string endpoint_phrase(const std::set<std::string>& endpoints, std::size_t simulated,
                            std::string_view embedded_detail);

}  // namespace k3lab::api
