#include "k3lab/api/transport_options.hpp"

#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace k3lab::api {
namespace {

// One transport field: its key (protocol field and manifest option alike), the run option that
// overrides it, how pages name it and its unit.
struct FieldInfo {
  const char* key;
  const char* flag;
  const char* label;
  const char* unit;
  double TransportSettings::*member;
  bool zero_means_none;  // rate limits: 0 in the protocol is "no limit"
};

constexpr FieldInfo kFields[] = {
    {kConnectTimeoutOption, "--connect-timeout", "connect timeout", "s", &TransportSettings::connect_timeout_s, false},
    {kStallTimeoutOption, "--stall-timeout", "stall timeout", "s", &TransportSettings::stall_timeout_s, false},
    {kCallTimeoutOption, "--call-timeout", "call timeout", "s", &TransportSettings::call_timeout_s, false},
    {kRequestsPerMinuteOption, "--requests-per-minute", "request rate limit", "per minute",
     &TransportSettings::requests_per_minute, true},
    {kTokensPerMinuteOption, "--tokens-per-minute", "token rate limit", "tokens per minute",
     &TransportSettings::tokens_per_minute, true},
};

std::string number_text(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

std::string value_text(const FieldInfo& field, double value) {
  if (field.zero_means_none && value == 0) return "none";
  return number_text(value) + " " + field.unit;
}

std::shared_ptr<core::Schema> make_transport_schema() {
  const TransportSettings defaults;
  auto s = std::make_shared<core::Schema>();
  s->number(kConnectTimeoutOption,
            "seconds one send may take to connect (default " + number_text(defaults.connect_timeout_s) + ")")
      .optional()
      .above(0);
  s->number(kStallTimeoutOption,
            "seconds a send may go without a payload byte (SSE keep-alive comments do not "
            "count) before it fails as a transport error (default " +
                number_text(defaults.stall_timeout_s) + ")")
      .optional()
      .above(0);
  s->number(kCallTimeoutOption,
            "seconds one send may take in all (default " + number_text(defaults.call_timeout_s) + ")")
      .optional()
      .above(0);
  s->number(kRequestsPerMinuteOption, "client-side request rate limit, to keep 429s rare; 0: none (default 0)")
      .optional()
      .at_least(0);
  s->number(kTokensPerMinuteOption,
            "client-side token rate limit (prompt estimate + output cap per send); 0: none (default 0)")
      .optional()
      .at_least(0);
  return s;
}

// The positive number under `key` of the run options, or nullopt when absent; throws naming the option.
std::optional<double> positive_option(const nlohmann::json& options, const FieldInfo& field) {
  if (!options.is_object() || !options.contains(field.key)) return std::nullopt;
  const auto& value = options[field.key];
  if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() <= 0) {
    throw std::invalid_argument(std::string("option ") + field.key + " (" + field.flag + ") must be a positive " +
                                "number (" + field.unit + "), got " + value.dump());
  }
  return value.get<double>();
}

std::chrono::milliseconds milliseconds_of(double seconds) {
  const auto ms = std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(seconds * 1000.0)));
  return ms.count() > 0 ? ms : std::chrono::milliseconds(1);
}

}  // namespace

std::shared_ptr<core::Schema> transport_schema() {
  static const std::shared_ptr<core::Schema> schema = make_transport_schema();
  return schema;
}

TransportSettings protocol_transport(const nlohmann::json& parameters) {
  TransportSettings settings;
  if (!parameters.is_object() || !parameters.contains(kTransportSection)) return settings;
  const auto& section = parameters[kTransportSection];
  const auto issues = transport_schema()->validate(section, std::string("parameters.") + kTransportSection);
  core::throw_schema_issues("the protocol's transport section is invalid:", issues);
  for (const auto& field : kFields) {
    if (section.contains(field.key)) settings.*field.member = section[field.key].get<double>();
  }
  return settings;
}

TransportSettings run_transport(const nlohmann::json& parameters, const nlohmann::json& options) {
  TransportSettings settings = protocol_transport(parameters);
  for (const auto& field : kFields) {
    if (const auto value = positive_option(options, field)) settings.*field.member = *value;
  }
  return settings;
}

void apply_transport_options(const nlohmann::json& parameters, const nlohmann::json& options, ClientConfig& config) {
  const TransportSettings t = run_transport(parameters, options);
  config.connect_timeout = milliseconds_of(t.connect_timeout_s);
  config.stall_timeout = milliseconds_of(t.stall_timeout_s);
  config.total_timeout = milliseconds_of(t.call_timeout_s);
  config.requests_per_second = t.requests_per_minute / 60.0;
  config.tokens_per_minute = t.tokens_per_minute;
}

std::vector<std::string> transport_deviations(const nlohmann::json& parameters, const nlohmann::json& options) {
  const TransportSettings frozen = protocol_transport(parameters);
  const TransportSettings used = run_transport(parameters, options);
  std::vector<std::string> lines;
  for (const auto& field : kFields) {
    if (!options.is_object() || !options.contains(field.key) || used.*field.member == frozen.*field.member) continue;
    lines.push_back(std::string(field.label) + " " + value_text(field, used.*field.member) + " (" + field.flag +
                    "; the protocol's is " + value_text(field, frozen.*field.member) + ")");
  }
  return lines;
}

std::optional<std::string> transport_deviation_sentence(const nlohmann::json& manifest_options,
                                                        const nlohmann::json& parameters) {
  const auto lines = transport_deviations(parameters, manifest_options);
  if (lines.empty()) return std::nullopt;
  std::string joined;
  for (const auto& line : lines) joined += (joined.empty() ? "" : "; ") + line;
  return "Transport deviates from the frozen protocol: " + joined +
         ". These settings bound how long a call may take and how fast calls are sent, so a call that failed or "
         "waited under them might not have under the protocol's.";
}

nlohmann::json transport_plan(const TransportSettings& transport, const RetryPolicy& retry, double requests,
                              double window_hours) {
  const double sends = requests * retry.max_sends;
  const double waits = requests * (retry.max_sends - 1);
  const double retry_after_cap_s = std::chrono::duration<double>(retry.retry_after_cap).count();
  const double worst_hours = (sends * transport.call_timeout_s + waits * retry_after_cap_s) / 3600.0;
  nlohmann::json plan = {{kConnectTimeoutOption, transport.connect_timeout_s},
                         {kStallTimeoutOption, transport.stall_timeout_s},
                         {kCallTimeoutOption, transport.call_timeout_s},
                         {kRequestsPerMinuteOption, transport.requests_per_minute},
                         {kTokensPerMinuteOption, transport.tokens_per_minute},
                         {"most_sends", sends},
                         {"worst_case_hours", std::round(worst_hours * 100.0) / 100.0},
                         {"worst_case_fits_window", worst_hours <= window_hours}};
  plan["least_hours_at_request_rate_limit"] =
      transport.requests_per_minute > 0
          ? nlohmann::json(std::round(requests / transport.requests_per_minute / 60.0 * 100.0) / 100.0)
          : nlohmann::json(nullptr);
  return plan;
}

}  // namespace k3lab::api
