#include "k3lab/api/protocol_check.hpp"

#include <set>
#include <vector>

namespace k3lab::api {
namespace {

using Kind = ProtocolViolation::Kind;

std::string join_ids(const std::vector<std::string>& ids) {
  std::string out;
  for (const auto& id : ids) out += (out.empty() ? "" : ", ") + id;
  return out;
}

bool has_reasoning(const nlohmann::json& message) {
  const auto it = message.find("reasoning_content");
  return it != message.end() && it->is_string() && !it->get_ref<const std::string&>().empty();
}

}  // namespace

bool thinking_enabled(const nlohmann::json& request, bool default_on) {
  const auto thinking = request.find("thinking");
  if (thinking != request.end() && thinking->is_object()) {
    const std::string type = thinking->value("type", "");
    if (type == "enabled") return true;
    if (type == "disabled") return false;
  }
  return default_on;
}

std::optional<ProtocolViolation> check_replay_protocol(const nlohmann::json& messages, bool thinking,
                                                       bool strict_tool_messages) {
  if (!messages.is_array()) {
    return ProtocolViolation{Kind::malformed, 0, "Invalid request: 'messages' must be an array"};
  }
  // Ids of the most recent assistant tool_calls still waiting for their tool message, in order.
  std::vector<std::string> pending;
  std::set<std::string> open_ids;      // ids of that assistant message
  std::set<std::string> answered_ids;  // of those, already answered
  bool in_tool_block = false;
  std::size_t block_start = 0;

  auto unanswered = [&](std::size_t index) -> std::optional<ProtocolViolation> {
    std::vector<std::string> missing;
    for (const auto& id : pending) {
      if (!answered_ids.count(id)) missing.push_back(id);
    }
    if (missing.empty()) return std::nullopt;
    return ProtocolViolation{
        Kind::unanswered_tool_call, index,
        "Invalid request: an assistant message with 'tool_calls' must be followed by tool messages responding "
        "to each 'tool_call_id'. The following tool_call_ids did not have response messages: " +
            join_ids(missing)};
  };

  for (std::size_t i = 0; i < messages.size(); ++i) {
    const auto& m = messages[i];
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string()) {
      return ProtocolViolation{Kind::malformed, i,
                               "Invalid request: messages[" + std::to_string(i) + "] must have a string 'role'"};
    }
    const std::string role = m["role"].get<std::string>();
    if (role == "tool") {
      const auto id_it = m.find("tool_call_id");
      const std::string id = (id_it != m.end() && id_it->is_string()) ? id_it->get<std::string>() : "";
      if (!in_tool_block || !open_ids.count(id) || answered_ids.count(id)) {
        if (!strict_tool_messages) continue;
        const std::string why = !in_tool_block ? "there is no preceding message with 'tool_calls'"
                                : !open_ids.count(id) ? "its tool_call_id '" + id + "' is not among them"
                                                      : "tool_call_id '" + id + "' was already answered";
        return ProtocolViolation{Kind::unknown_tool_call_id, i,
                                 "Invalid request: messages with role 'tool' must be a response to a preceding "
                                 "message with 'tool_calls'; at index " +
                                     std::to_string(i) + " " + why};
      }
      answered_ids.insert(id);
      continue;
    }
    if (in_tool_block) {
      if (auto v = unanswered(block_start)) return v;
      in_tool_block = false;
    }
    if (role == "assistant") {
      const auto calls = m.find("tool_calls");
      if (calls != m.end() && calls->is_array() && !calls->empty()) {
        if (thinking && !has_reasoning(m)) {
          return ProtocolViolation{Kind::missing_reasoning, i,
                                   "thinking is enabled but reasoning_content is missing in assistant tool call "
                                   "message at index " +
                                       std::to_string(i)};
        }
        pending.clear();
        open_ids.clear();
        answered_ids.clear();
        for (const auto& call : *calls) {
          const std::string id = call.is_object() ? call.value("id", "") : "";
          if (id.empty()) {
            return ProtocolViolation{Kind::malformed, i,
                                     "Invalid request: a tool call in messages[" + std::to_string(i) + "] has no id"};
          }
          pending.push_back(id);
          open_ids.insert(id);
        }
        in_tool_block = true;
        block_start = i;
      }
    }
  }
  if (in_tool_block) {
    if (auto v = unanswered(block_start)) return v;
  }
  return std::nullopt;
}

}  // namespace k3lab::api
