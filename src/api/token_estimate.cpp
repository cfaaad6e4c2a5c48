#include "k3lab/api/token_estimate.hpp"

#include <stdexcept>
#include <string>

namespace k3lab::api {
namespace {

std::uint64_t string_bytes(const nlohmann::json& value) {
  return value.is_string() ? value.get_ref<const std::string&>().size() : 0;
}

std::uint64_t content_bytes(const nlohmann::json& content, std::size_t message_index) {
  if (content.is_null()) return 0;
  if (content.is_string()) return content.get_ref<const std::string&>().size();
  if (content.is_array()) {
    std::uint64_t bytes = 0;
    for (const auto& part : content) {
      if (part.is_object() && part.value("type", "") == "text") {
        bytes += string_bytes(part.value("text", nlohmann::json()));
      } else {
        throw std::invalid_argument("messages[" + std::to_string(message_index) +
                                    "].content has a non-text part; token bounds cover text only");
      }
    }
    return bytes;
  }
  throw std::invalid_argument("messages[" + std::to_string(message_index) +
                              "].content must be a string or an array of text parts");
}

std::uint64_t rendered_json_bound(const std::string& compact) {
  std::uint64_t bytes = 0;
  for (unsigned char c : compact) {
    if (c >= 0x80) {
      bytes += 3;
    } else {
      bytes += (c == ',' || c == ':') ? 2 : 1;
    }
  }
  return bytes;
}

}  // namespace

std::uint64_t approx_token_count(std::uint64_t bytes) {
  return (bytes + kApproxBytesPerToken - 1) / kApproxBytesPerToken;
}

std::uint64_t framing_upper_bound(std::uint64_t message_count) {
  return kFramingTokensPerRequest + kFramingTokensPerMessage * message_count;
}

RequestTokenBound request_token_upper_bound(const nlohmann::json& request) {
  const auto messages = request.find("messages");
  if (messages == request.end() || !messages->is_array()) {
    throw std::invalid_argument("request has no 'messages' array; cannot bound its tokens");
  }
  RequestTokenBound bound;
  for (std::size_t i = 0; i < messages->size(); ++i) {
    const auto& m = (*messages)[i];
    if (!m.is_object()) throw std::invalid_argument("messages[" + std::to_string(i) + "] must be an object");
    bound.text_tokens += content_bytes(m.value("content", nlohmann::json()), i);
    bound.text_tokens += string_bytes(m.value("reasoning_content", nlohmann::json()));
    bound.text_tokens += string_bytes(m.value("name", nlohmann::json()));
    bound.text_tokens += string_bytes(m.value("tool_call_id", nlohmann::json()));
    if (const auto calls = m.find("tool_calls"); calls != m.end() && calls->is_array()) {
      for (const auto& call : *calls) {
        // Ids, names and arguments, bounded by the whole call's rendered JSON.
        bound.text_tokens += rendered_json_bound(call.dump());
      }
    }
  }
  if (const auto tools = request.find("tools"); tools != request.end() && !tools->is_null()) {
    bound.text_tokens += rendered_json_bound(tools->dump());
  }
  bound.framing_tokens = framing_upper_bound(messages->size());
  return bound;
}

}  // namespace k3lab::api
