#include "k3lab/api/endpoint_choice.hpp"

#include <cstdlib>
#include <stdexcept>

#include "k3lab/api/chat_client.hpp"
#include "k3lab/api/endpoint.hpp"

namespace k3lab::api {
namespace {

std::string env_value(const char* name) {
  const char* value = std::getenv(name);
  return value ? std::string(value) : std::string();
}

}  // namespace

std::string EndpointChoice::record_name() const { return embedded() ? std::string("embedded-mock") : base_url; }

std::string EndpointChoice::description() const {
  switch (kind) {
    case Kind::EmbeddedMock:
      return "the simulated endpoint (k3lab's embedded mock server)";
    case Kind::KimiDefault:
      return "the Kimi API (" + base_url + ")";
    case Kind::BaseUrl:
      break;
  }
  return "the endpoint " + base_url + " (from " + source + ")";
}

EndpointChoice choose_endpoint(const nlohmann::json& options, std::string_view experiment_id) {
  const std::string who(experiment_id);
  EndpointChoice choice;
  choice.api_key_present = !env_value(std::string(kApiKeyEnv).c_str()).empty();
  std::string url;
  if (options.is_object() && options.contains("base_url")) {
    if (!options["base_url"].is_string() ||
        options["base_url"].get<std::string>().find_first_not_of(" \t\r\n") == std::string::npos) {
      throw std::invalid_argument(who + ": option base_url must be a non-empty URL string such as "
                                  "http://127.0.0.1:8089/v1 (from --base-url)");
    }
    url = options["base_url"].get<std::string>();
    choice.source = "--base-url";
  } else if (const std::string from_env = env_value(kBaseUrlEnv); !from_env.empty()) {
    url = from_env;
    choice.source = std::string("$") + kBaseUrlEnv;
  } else if (choice.api_key_present) {
    url = std::string(kDefaultBaseUrl);
    choice.source = std::string("$") + std::string(kApiKeyEnv) + " is set";
    choice.kind = EndpointChoice::Kind::KimiDefault;
  } else {
    choice.kind = EndpointChoice::Kind::EmbeddedMock;
    choice.source = "no API key and no base URL";
    return choice;
  }
  if (choice.kind != EndpointChoice::Kind::KimiDefault) choice.kind = EndpointChoice::Kind::BaseUrl;
  Endpoint endpoint;
  try {
    endpoint = parse_endpoint(url);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(who + ": the base URL from " + choice.source + " is not usable: " + e.what());
  }
  choice.base_url = endpoint.base_url;
  choice.loopback = endpoint.loopback;
  if (!choice.loopback && !choice.api_key_present) {
    throw std::invalid_argument(who + ": " + std::string(kApiKeyEnv) + " is not set, so " + endpoint.host +
                                " cannot be called; export the key, or drop --base-url and $" + kBaseUrlEnv +
                                " to run against the embedded mock server");
  }
  return choice;
}

std::vector<std::string> endpoint_labels(const EndpointChoice& choice) {
  switch (choice.kind) {
    case EndpointChoice::Kind::EmbeddedMock:
      return {kSimulatedLabel};
    case EndpointChoice::Kind::BaseUrl:
      return {"endpoint " + choice.base_url + " (from " + choice.source +
              "): evidence about Kimi K3 only if it serves the Kimi API"};
    case EndpointChoice::Kind::KimiDefault:
      break;
  }
  return {};
}

std::string join_names(const std::set<std::string>& names, const std::string& none) {
  if (names.empty()) return none;
  std::string out;
  for (const auto& v : names) out += (out.empty() ? "" : ", ") + v;
  return out;
}

std::string endpoint_phrase(const std::set<std::string>& endpoints, std::size_t simulated,
                            std::string_view embedded_detail) {
  if (endpoints.count("embedded-mock") > 0) {
    return "The simulated endpoint (k3lab's embedded mock server" + std::string(embedded_detail) +
           "; not evidence about Kimi K3)";
  }
  if (simulated > 0) {
    return "The simulated endpoint at " + join_names(endpoints, "?") + " (k3lab's mock server; not evidence about Kimi K3)";
  }
  if (endpoints.size() == 1 && *endpoints.begin() == std::string(kDefaultBaseUrl)) {
    return "The Kimi K3 API (" + std::string(kDefaultBaseUrl) + ")";
  }
  return "The endpoint " + join_names(endpoints, "(no call)");
}

}  // namespace k3lab::api
