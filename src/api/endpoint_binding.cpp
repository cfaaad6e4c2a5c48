#include "k3lab/api/endpoint_binding.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "k3lab/api/endpoint.hpp"

namespace k3lab::api {
namespace {

bool blank(const std::string& text) {
  return std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isspace(c) != 0; });
}

}  // namespace

nlohmann::json EndpointIdentity::to_json() const {
  return {{"base_url", base_url}, {"served_model", served_model}, {"simulated", simulated}};
}

std::string EndpointIdentity::describe() const {
  const std::string where = simulated && base_url == "embedded-mock" ? "the embedded mock server" : base_url;
  return where + (served_model.empty() ? " with the protocol's model id" : " with served model \"" + served_model + "\"");
}

bool calls_chat_endpoint(std::string_view experiment_id) {
  return experiment_id == "context-probe" || experiment_id == "agent-replay";
}

std::string served_model_option(const nlohmann::json& options) {
  if (!options.is_object() || !options.contains("served_model")) return {};
  const auto& value = options["served_model"];
  if (!value.is_string() || blank(value.get<std::string>())) {
    throw std::invalid_argument("--served-model must name the model as the server lists it (GET /v1/models), e.g. "
                                "--served-model kimi-k3-awq; got " + value.dump());
  }
  return value.get<std::string>();
}

std::string request_model(const nlohmann::json& options, const std::string& protocol_model) {
  const std::string served = served_model_option(options);
  return served.empty() ? protocol_model : served;
}

EndpointIdentity identify_endpoint(const EndpointChoice& choice, const nlohmann::json& options) {
  return {choice.record_name(), served_model_option(options), choice.embedded()};
}

std::optional<EndpointIdentity> recorded_endpoint(const nlohmann::json& manifest_options) {
  if (!manifest_options.is_object()) return std::nullopt;
  if (const auto it = manifest_options.find("endpoint"); it != manifest_options.end() && it->is_object()) {
    return EndpointIdentity{it->value("base_url", ""), it->value("served_model", ""), it->value("simulated", false)};
  }
  const auto url = manifest_options.find("base_url");
  if (url == manifest_options.end() || !url->is_string()) return std::nullopt;
  EndpointIdentity identity;
  try {
    identity.base_url = parse_endpoint(url->get<std::string>()).base_url;
  } catch (const std::invalid_argument&) {
    identity.base_url = url->get<std::string>();
  }
  identity.served_model = manifest_options.value("served_model", "");
  return identity;
}

std::optional<std::string> endpoint_mismatch(const std::string& run_dir, const nlohmann::json& manifest_options,
                                             const EndpointIdentity& current) {
  const auto recorded = recorded_endpoint(manifest_options);
  if (!recorded || *recorded == current) return std::nullopt;
  return "refusing to resume " + run_dir + ": it was started against " + recorded->describe() +
         ", and this command would call " + current.describe() +
         "; one window must not pool two endpoints. Resume it with the same endpoint (--base-url " +
         (recorded->simulated ? std::string("unset, no $K3LAB_BASE_URL") : recorded->base_url) +
         (recorded->served_model.empty() ? "" : ", --served-model " + recorded->served_model) +
         "), or start a separate run with --fresh";
}

std::optional<std::string> served_model_sentence(const nlohmann::json& manifest_options,
                                                 const std::string& protocol_model) {
  if (!manifest_options.is_object()) return std::nullopt;
  const auto it = manifest_options.find("served_model");
  if (it == manifest_options.end() || !it->is_string() || it->get<std::string>().empty()) return std::nullopt;
  return "Served model: requests named the model \"" + it->get<std::string>() +
         "\" (--served-model), the endpoint's name for the protocol's model " + protocol_model +
         "; the design, prices and every comparison are the protocol's, and the results are evidence about " +
         protocol_model + " only if that name serves it.";
}

void check_base_url_text(const std::string& text) {
  if (blank(text)) {
    throw std::invalid_argument("--base-url is empty (an unset shell variable?); give the endpoint, e.g. --base-url "
                                "http://127.0.0.1:8000/v1, or leave the option out to use $K3LAB_BASE_URL, the "
                                "Kimi API or the embedded mock (docs/endpoints.md)");
  }
}

}  // namespace k3lab::api
