#include "k3lab/mock/agent_model.hpp"

#include <stdexcept>

#include "k3lab/api/token_estimate.hpp"
#include "k3lab/validate/scripted_agent.hpp"

namespace k3lab::mock {
namespace {

bool known_effort(const std::string& effort) { return effort == "low" || effort == "high" || effort == "max"; }

std::int64_t reasoning_tokens_for(const std::string& effort, const AgentMockOptions& o) {
  if (effort == "low") return o.reasoning_tokens_low;
  if (effort == "high") return o.reasoning_tokens_high;
  return o.reasoning_tokens_max;
}

void check_options(const AgentMockOptions& o) {
  if (o.reasoning_tokens_low < 0 || o.reasoning_tokens_high < 0 || o.reasoning_tokens_max < 0) {
    throw std::invalid_argument("AgentMockOptions: reasoning_tokens_low/high/max must be >= 0");
  }
  if (!known_effort(o.default_effort)) {
    throw std::invalid_argument("AgentMockOptions.default_effort '" + o.default_effort + "' is not one of low, high, max");
  }
}

api::MockReply bad_request(const std::string& message) {
  api::MockReply reply;
  reply.error = api::MockError{400, "invalid_request_error", "Invalid request: " + message};
  return reply;
}

}  // namespace

std::string_view reasoning_filler() {
  return " Re-checking the plan against the declared tools and the results so far before acting.";
}

std::string padded_reasoning(const std::string& scripted, const std::string& effort, const AgentMockOptions& options) {
  const auto target_bytes = static_cast<std::size_t>(reasoning_tokens_for(effort, options)) * api::kApproxBytesPerToken;
  std::string text = scripted;
  while (text.size() < target_bytes) text += reasoning_filler();
  return text;
}

api::MockModel agent_mock_model(AgentMockOptions options) {
  check_options(options);
  return [options](const nlohmann::json& request) {
    const auto messages = request.find("messages");
    const auto tools = request.find("tools");
    if (messages == request.end() || tools == request.end() || !tools->is_array()) {
      return bad_request("the agent model needs 'messages' and a 'tools' array");
    }
    std::string effort = options.default_effort;
    if (const auto e = request.find("reasoning_effort"); e != request.end() && e->is_string() && known_effort(e->get<std::string>())) {
      effort = e->get<std::string>();
    }
    validate::AgentTurn turn;
    try {
      turn = validate::scripted_agent_reply(*messages, *tools, {effort});
    } catch (const std::invalid_argument& e) {
      return bad_request(e.what());
    }
    api::MockReply reply;
    reply.content = turn.message.value("content", std::string());
    reply.reasoning_content = padded_reasoning(turn.message.value("reasoning_content", std::string()), effort, options);
    if (const auto calls = turn.message.find("tool_calls"); calls != turn.message.end()) {
      for (const auto& call : *calls) {
        api::ToolCall tc;
        tc.id = call.at("id").get<std::string>();
        tc.name = call.at("function").at("name").get<std::string>();
        tc.arguments = call.at("function").at("arguments").get<std::string>();
        reply.tool_calls.push_back(std::move(tc));
      }
    }
    reply.finish_reason = turn.finish_reason;
    return reply;
  };
}

nlohmann::json agent_mock_assumptions(const AgentMockOptions& o) {
  auto item = [](const char* behaviour, std::string simulated, const char* documented) {
    return nlohmann::json{{"behaviour", behaviour}, {"simulated_as", std::move(simulated)}, {"documented", documented}};
  };
  return nlohmann::json::array({
      item("the model", "k3lab's deterministic scripted agent (validate::scripted_agent_reply); it plans from the "
                        "conversation and the declared tools and never reads the hidden validators",
           "not applicable: a stand-in for the hosted model"),
      item("reasoning length by effort",
           "about " + std::to_string(o.reasoning_tokens_low) + " / " + std::to_string(o.reasoning_tokens_high) + " / " +
               std::to_string(o.reasoning_tokens_max) + " tokens at low / high / max (scripted text padded with a fixed "
               "sentence)",
           "no: K3 documents the effort values, not reasoning lengths"),
      item("unknown or missing reasoning_effort", "served at effort " + o.default_effort,
           "no: a third party observed K3 silently ignoring unknown values (api.md 1.2)"),
      item("reasoning_effort changed inside a tool loop", "accepted; later turns reason at the new effort",
           "no: the symptom of an effort change mid-run is not documented"),
      item("assistant tool-call message without reasoning_content (thinking on)",
           "HTTP 400 invalid_request_error with Kimi's observed wording", "yes (observed wording, api.md 1.8)"),
      item("tool_call_id without a tool message", "HTTP 400 invalid_request_error with the observed wording",
           "yes (observed wording, api.md 1.8)"),
      item("tool message without a preceding tool call, or answering an id twice",
           o.strict_tool_messages ? "HTTP 400 invalid_request_error (the mock applies it strictly)"
                                  : "ignored (the mock is set to lenient)",
           "no: seen on other OpenAI-compatible providers, not confirmed on Kimi"),
      item("a turn cut by max_completion_tokens",
           "reasoning is cut first, then content; the tool calls of a cut turn are dropped; finish_reason length",
           "partly: finish_reason length is documented, what a cut turn keeps is not"),
      item("a cut assistant turn replayed in the history", "accepted; the agent plans again from the tool results",
           "no"),
      item("prompt caching",
           "automatic prefix cache over the serialized request (tools JSON first, then messages), "
           "whole 1 KiB blocks; a reordered tools array misses from its first block; empty at the "
           "start of every agent run, so no run hits what another one cached",
           "partly: byte-exact prefix matching is stated by Moonshot staff; block size and the serialization are not"),
      item("token counts", "about 4 bytes per token for prompt, reasoning, content and tool calls",
           "no: a stand-in for Kimi's tokenizer"),
  });
}

}  // namespace k3lab::mock
