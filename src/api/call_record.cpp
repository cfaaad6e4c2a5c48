#include "k3lab/api/call_record.hpp"

namespace k3lab::api {

nlohmann::json CallRecord::to_json() const {
  nlohmann::json j = {
      {"call_index", call_index},
      {"endpoint", endpoint},
      {"simulated", simulated},
      {"streamed", streamed},
      {"model_requested", model_requested},
      {"model", model},
      {"response_id", response_id},
      {"system_fingerprint", system_fingerprint},
      {"request_ids", request_ids},
      {"platform_headers", platform_headers},
      {"started_utc", started_utc},
      {"finished_utc", finished_utc},
      {"http_status", http_status},
      {"finish_reason", finish_reason},
      {"usage_reported", usage_reported},
      {"prompt_tokens", prompt_tokens},
      {"cached_tokens", cached_tokens},
      {"completion_tokens", completion_tokens},
      {"reasoning_present", reasoning_present},
      {"reasoning_tokens", reasoning_tokens ? nlohmann::json(*reasoning_tokens) : nlohmann::json()},
      {"reasoning_sha256", reasoning_sha256},
      {"tool_call_count", tool_call_count},
      {"ttft_ms", ttft_ms ? nlohmann::json(*ttft_ms) : nlohmann::json()},
      {"latency_ms", latency_ms},
      {"wall_ms", wall_ms},
      {"attempts", attempts},
      {"transport_retries", transport_retries},
      {"overload_retries", overload_retries},
      {"waited_ms", waited_ms},
      {"error_class", std::string(to_string(error_class))},
      {"error_message", error_message},
      {"attempt_errors", attempt_errors},
  };
  // Only when a server sent one, so records of calls that never met Retry-After keep their shape.
  if (retry_after_ms) j["retry_after_ms"] = *retry_after_ms;
  return j;
}

}  // namespace k3lab::api
