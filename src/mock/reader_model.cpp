#include "k3lab/mock/reader_model.hpp"

#include <cstdio>

#include "k3lab/api/protocol_check.hpp"

namespace k3lab::mock {
namespace {

std::string last_user_text(const nlohmann::json& request) {
  const auto& messages = request.at("messages");
  for (auto it = messages.rbegin(); it != messages.rend(); ++it) {
    if (it->is_object() && it->value("role", "") == "user") return api::message_text(*it);
  }
  return {};
}

std::string reasoning_note(const validate::ReaderReply& reply, std::size_t prompt_bytes) {
  char probability[32];
  std::snprintf(probability, sizeof probability, "%.3f", reply.failure_probability);
  if (!reply.understood) {
    return "Reader notes: scanned " + std::to_string(prompt_bytes) +
           " bytes but found no document with a known question form.";
  }
  return "Reader notes: scanned " + std::to_string(prompt_bytes) + " bytes; the question is a " + reply.family +
         " question; the first needed section sits " + std::to_string(reply.distance_tokens) +
         " tokens before it; recall failure probability " + probability + "; recall " +
         (reply.recall_failed ? "slipped" : "held") + ".";
}

}  // namespace

api::MockModel context_reader_model(validate::ReaderConfig config) {
  // Checked once here rather than on every request (throws std::invalid_argument for a bad config).
  validate::reader_failure_probability(config, 0);
  return [config](const nlohmann::json& request) {
    const std::string prompt = last_user_text(request);
    api::MockReply reply;
    if (prompt.empty()) {
      reply.error = api::MockError{400, "invalid_request_error",
                                   "k3lab mock reader: the request has no user message with text to read"};
      return reply;
    }
    const auto read = validate::read_fixture_prompt(prompt, config);
    reply.content = read.text;
    if (api::thinking_enabled(request, /*default_on=*/true)) reply.reasoning_content = reasoning_note(read, prompt.size());
    return reply;
  };
}

}  // namespace k3lab::mock
