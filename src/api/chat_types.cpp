#include "k3lab/api/chat_types.hpp"

#include <stdexcept>

namespace k3lab::api {
namespace {

std::int64_t read_count(const nlohmann::json& object, const char* key, const char* where) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return 0;
  if (!it->is_number_integer() || it->get<std::int64_t>() < 0) {
    throw std::runtime_error(std::string("usage field ") + where + key +
                             " must be a non-negative integer, got " + it->dump());
  }
  return it->get<std::int64_t>();
}

std::string read_string(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return {};
  if (!it->is_string()) {
    throw std::runtime_error(std::string("response field '") + key + "' must be a string, got " +
                             it->dump());
  }
  return it->get<std::string>();
}

}  // namespace

Usage parse_usage(const nlohmann::json& usage) {
  if (!usage.is_object()) throw std::runtime_error("usage must be an object, got " + usage.dump());
  Usage u;
  u.prompt_tokens = read_count(usage, "prompt_tokens", "");
  u.completion_tokens = read_count(usage, "completion_tokens", "");
  u.total_tokens = read_count(usage, "total_tokens", "");
  if (usage.contains("cached_tokens") && !usage["cached_tokens"].is_null()) {
    u.cached_tokens = read_count(usage, "cached_tokens", "");
  } else if (const auto d = usage.find("prompt_tokens_details"); d != usage.end() && d->is_object()) {
    u.cached_tokens = read_count(*d, "cached_tokens", "prompt_tokens_details.");
  }
  if (const auto d = usage.find("completion_tokens_details"); d != usage.end() && d->is_object()) {
    if (d->contains("reasoning_tokens") && !(*d)["reasoning_tokens"].is_null()) {
      u.reasoning_tokens = read_count(*d, "reasoning_tokens", "completion_tokens_details.");
    }
  }
  return u;
}

nlohmann::json ChatResponse::assistant_message() const {
  nlohmann::json message = {{"role", "assistant"}, {"content", content}};
  if (has_reasoning) message["reasoning_content"] = reasoning_content;
  if (!tool_calls.empty()) {
    auto calls = nlohmann::json::array();
    for (const auto& call : tool_calls) {
      calls.push_back({{"id", call.id},
                       {"type", call.type},
                       {"function", {{"name", call.name}, {"arguments", call.arguments}}}});
    }
    message["tool_calls"] = std::move(calls);
  }
  return message;
}

ChatResponse parse_chat_completion(const nlohmann::json& body) {
  if (!body.is_object()) throw std::runtime_error("chat completion body must be a JSON object");
  ChatResponse r;
  r.id = read_string(body, "id");
  r.model = read_string(body, "model");
  r.system_fingerprint = read_string(body, "system_fingerprint");
  const auto choices = body.find("choices");
  if (choices == body.end() || !choices->is_array() || choices->empty()) {
    throw std::runtime_error("chat completion body has no 'choices' array");
  }
  if (choices->size() > 1) {
    throw std::runtime_error("chat completion returned " + std::to_string(choices->size()) +
                             " choices; k3lab sends n=1 and reads one choice");
  }
  const auto& choice = (*choices)[0];
  const auto message = choice.find("message");
  if (message == choice.end() || !message->is_object()) {
    throw std::runtime_error("choices[0] has no 'message' object");
  }
  r.content = read_string(*message, "content");
  if (message->contains("reasoning_content") && !(*message)["reasoning_content"].is_null()) {
    r.reasoning_content = read_string(*message, "reasoning_content");
    r.has_reasoning = true;
  }
  if (const auto calls = message->find("tool_calls"); calls != message->end() && !calls->is_null()) {
    if (!calls->is_array()) throw std::runtime_error("message.tool_calls must be an array");
    for (const auto& c : *calls) {
      ToolCall call;
      call.id = read_string(c, "id");
      if (auto t = read_string(c, "type"); !t.empty()) call.type = t;
      const auto fn = c.find("function");
      if (fn == c.end() || !fn->is_object()) {
        throw std::runtime_error("tool call '" + call.id + "' has no 'function' object");
      }
      call.name = read_string(*fn, "name");
      call.arguments = read_string(*fn, "arguments");
      r.tool_calls.push_back(std::move(call));
    }
  }
  r.finish_reason = read_string(choice, "finish_reason");
  if (const auto u = body.find("usage"); u != body.end() && !u->is_null()) {
    r.usage = parse_usage(*u);
  } else if (const auto cu = choice.find("usage"); cu != choice.end() && !cu->is_null()) {
    r.usage = parse_usage(*cu);
  }
  return r;
}

}  // namespace k3lab::api
