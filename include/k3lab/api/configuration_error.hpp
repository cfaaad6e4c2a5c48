#pragma once
// Whether a failed call shows a misconfigured endpoint rather than a busy or flaky one: the server
// could not be reached at all (connection refused, unknown host), TLS failed (http/https mix-up,
// certificate), the key was refused (401/403), or the model or path does not exist (404). Such a
// failure says nothing about the model; the window rules stop on it and the user starts a new run
// (--fresh) once the endpoint is fixed (docs/endpoints.md).
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace k3lab::api {

// A short label ("connection refused", "TLS failure", "HTTP 401 (auth)", "HTTP 404 (not_found)"),
// or nullopt. `error_class` is to_string(ErrorClass); `message` the record's error message.
std::optional<std::string> configuration_error(std::string_view error_class, int http_status, std::string_view message);

// A failed call of one unit that shows a misconfigured endpoint, as a window rule reports it.
struct ConfigurationFailure {
  std::string unit, label, message;

  // "configuration error (<label>) in unit <unit>: <message>. The endpoint is misconfigured, ...": the stop
  // reason, with the fix.
  std::string stop_reason() const;
  // {unit, label, message}: the window verdict's "configuration_error".
  nlohmann::json to_json() const;
};

}  // namespace k3lab::api
