#include "k3lab/api/transport_options.hpp"

#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>

namespace k3lab::api {
namespace {

// The positive number under `key`, or nullopt when absent; throws naming the option otherwise.
std::optional<double> positive(const nlohmann::json& options, const char* key, const char* unit) {
  if (!options.is_object() || !options.contains(key)) return std::nullopt;
  const auto& value = options[key];
  if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() <= 0) {
    throw std::invalid_argument(std::string("option ") + key + " must be a positive number of " + unit + ", got " +
                                value.dump());
  }
  return value.get<double>();
}

void apply_seconds(const nlohmann::json& options, const char* key, std::chrono::milliseconds& target) {
  const auto seconds = positive(options, key, "seconds");
  if (!seconds) return;
  target = std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(*seconds * 1000.0)));
  if (target.count() == 0) target = std::chrono::milliseconds(1);
}

}  // namespace

void apply_transport_options(const nlohmann::json& options, ClientConfig& config) {
  apply_seconds(options, kConnectTimeoutOption, config.connect_timeout);
  apply_seconds(options, kStallTimeoutOption, config.stall_timeout);
  apply_seconds(options, kCallTimeoutOption, config.total_timeout);
  if (const auto rpm = positive(options, kRequestsPerMinuteOption, "requests per minute")) {
    config.requests_per_second = *rpm / 60.0;
  }
  if (const auto tpm = positive(options, kTokensPerMinuteOption, "tokens per minute")) config.tokens_per_minute = *tpm;
}

}  // namespace k3lab::api
