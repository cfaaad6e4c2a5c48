#include "k3lab/api/mock_model.hpp"

#include "k3lab/api/protocol_check.hpp"

namespace k3lab::api {

std::string message_text(const nlohmann::json& message) {
  const auto content = message.find("content");
  if (content == message.end() || content->is_null()) return {};
  if (content->is_string()) return content->get<std::string>();
  std::string text;
  if (content->is_array()) {
    for (const auto& part : *content) {
      if (part.is_object() && part.value("type", "") == "text" && part.contains("text") && part["text"].is_string()) {
        text += part["text"].get<std::string>();
      }
    }
  }
  return text;
}

MockModel echo_model() {
  return [](const nlohmann::json& request) {
    MockReply reply;
    const auto& messages = request.at("messages");
    for (auto it = messages.rbegin(); it != messages.rend(); ++it) {
      if (it->value("role", "") == "user") {
        reply.content = message_text(*it);
        break;
      }
    }
    if (thinking_enabled(request, true)) {
      reply.reasoning_content = "The conversation has " + std::to_string(messages.size()) +
                                " messages; I repeat the last user message.";
    }
    return reply;
  };
}

}  // namespace k3lab::api
