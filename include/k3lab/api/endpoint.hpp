#pragma once
// Which endpoints the client may talk to, and how. TLS certificate and host verification are always
// on; plain http is accepted only for loopback hosts (the local mock server).
#include <string>
#include <string_view>

namespace k3lab::api {

inline constexpr std::string_view kDefaultBaseUrl = "https://api.moonshot.ai/v1";

struct Endpoint {
  std::string base_url;  // normalized, no trailing '/'
  std::string scheme;    // "http" or "https"
  std::string host;      // without IPv6 brackets
  bool loopback = false;

  std::string chat_completions_url() const { return base_url + "/chat/completions"; }
  std::string models_url() const { return base_url + "/models"; }
};

// True for "localhost", 127.0.0.0/8 and ::1 (brackets optional). Nothing else: "localhost.example"
// and "127.0.0.1.nip.io" are not loopback.
bool is_loopback_host(std::string_view host);

// Parses and checks a base URL. Throws std::invalid_argument when the scheme is not http(s), when
// http is used for a non-loopback host, when the URL carries credentials (the key belongs in the
// environment), or when it has a query or fragment.
Endpoint parse_endpoint(std::string_view base_url);

}  // namespace k3lab::api
