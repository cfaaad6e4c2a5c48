#pragma once
// Shared pieces of the client-against-mock tests: a deterministic agent model, request builders,
// an environment variable set for one test, and a client pointed at a running mock.
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "k3lab/api/chat_client.hpp"
#include "k3lab/api/mock_server.hpp"

namespace k3lab::api::testing {

// Sets (or unsets, with nullptr) an environment variable for the lifetime of the object.
class ScopedEnv {
 public:
  ScopedEnv(std::string name, const char* value) : name_(std::move(name)) {
    if (const char* old = std::getenv(name_.c_str())) old_ = old;
    if (value) {
      ::setenv(name_.c_str(), value, 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }

 private:
  std::string name_;
  std::optional<std::string> old_;
};

// Calls `lookup` with {"city": ...} until a tool result is in the history, then answers with it.
// Reasoning and arguments contain multi-byte UTF-8 so that stream splitting is exercised.
inline MockModel agent_model() {
  return [](const nlohmann::json& request) {
    MockReply reply;
    const auto& messages = request.at("messages");
    const auto& last = messages.back();
    if (last.value("role", "") == "tool") {
      reply.reasoning_content = "The tool answered; I report it. \xE2\x9C\x93";
      reply.content = "Result: " + last.value("content", std::string());
    } else {
      reply.reasoning_content = "I need the weather for Z\xC3\xBCrich \xF0\x9F\x8C\xA6 and Tokyo.";
      reply.content = "";
      reply.tool_calls = {{"", "function", "lookup", R"({"city":"Z\u00fcrich","unit":"\u00b0C"})"},
                          {"", "function", "lookup", "{\"city\":\"\xE6\x9D\xB1\xE4\xBA\xAC\"}"}};
    }
    return reply;
  };
}

inline nlohmann::json user_request(const std::string& text, bool stream, const std::string& model = "kimi-k3") {
  return {{"model", model},
          {"stream", stream},
          {"max_completion_tokens", 2048},
          {"messages", {{{"role", "system"}, {"content", "You are terse."}}, {{"role", "user"}, {"content", text}}}}};
}

inline ClientConfig client_config_for(const MockServer& server, const std::string& key_env) {
  ClientConfig config;
  config.base_url = server.base_url();
  config.api_key_env = key_env;
  config.connect_timeout = std::chrono::milliseconds(5000);
  config.total_timeout = std::chrono::milliseconds(30000);
  return config;
}

}  // namespace k3lab::api::testing
