#include "k3lab/api/configuration_error.hpp"

#include "ascii_lower.hpp"

namespace k3lab::api {

std::optional<std::string> configuration_error(std::string_view error_class, int http_status, std::string_view message) {
  if (error_class == "auth" || error_class == "not_found") {
    return "HTTP " + std::to_string(http_status) + " (" + std::string(error_class) + ")";
  }
  if (error_class != "transport" || http_status != 0) return std::nullopt;
  // libcurl's wording (curl_easy_strerror and its error buffer) for failures before any response.
  const std::string text = ascii_lower(message);
  for (const char* marker : {"couldn't connect", "could not connect", "connection refused", "failed to connect"}) {
    if (text.find(marker) != std::string::npos) return std::string("connection refused");
  }
  for (const char* marker : {"couldn't resolve", "could not resolve"}) {
    if (text.find(marker) != std::string::npos) return std::string("unknown host");
  }
  for (const char* marker : {"ssl", "tls", "certificate"}) {
    if (text.find(marker) != std::string::npos) return std::string("TLS failure");
  }
  return std::nullopt;
}

std::string ConfigurationFailure::stop_reason() const {
  return "configuration error (" + label + ") in unit " + unit + ": " + message +
         ". The endpoint is misconfigured, not measured; fix it (docs/endpoints.md) and start a new run with --fresh";
}

nlohmann::json ConfigurationFailure::to_json() const {
  return {{"unit", unit}, {"label", label}, {"message", message}};
}

}  // namespace k3lab::api
