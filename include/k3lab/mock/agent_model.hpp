#pragma once
// The simulated endpoint's agent "model" for agent-replay traffic (requests that declare tools): the
// deterministic scripted agent of the validator library (validate::scripted_agent_reply) behind
// api::MockServer. The server itself enforces the documented replay contract (api/protocol_check.hpp:
// 400 for a tool-call message without reasoning_content, 400 for an unanswered tool_call_id), cuts
// completions at max_completion_tokens (finish_reason "length") and caches prefixes of the serialized
// request, so a reordered tools array misses the cache.
//
// What the Kimi documentation does not fix is an assumption of this model, configurable here and
// written to the ledger (agent_mock_assumptions) whenever a run uses the embedded mock.
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "k3lab/api/mock_model.hpp"

namespace k3lab::mock {

struct AgentMockOptions {
  // Reasoning length per reasoning_effort, in approximate tokens (4 bytes each). ASSUMPTION: K3
  // reasons longer at higher effort; the documentation gives no numbers. The scripted reasoning is
  // padded with a fixed sentence up to this length, so a low output cap can cut it.
  std::int64_t reasoning_tokens_low = 64;
  std::int64_t reasoning_tokens_high = 384;
  std::int64_t reasoning_tokens_max = 768;
  // ASSUMPTION (observed by a third party, api.md 1.2): an unknown or missing reasoning_effort is
  // silently served at the default effort, "max".
  std::string default_effort = "max";
  // ASSUMPTION (not confirmed on Kimi): the endpoint rejects a tool message without an open
  // tool_call_id (MockServerOptions::strict_tool_messages).
  bool strict_tool_messages = true;
};

// Throws std::invalid_argument when a length is negative or the default effort is not low|high|max.
api::MockModel agent_mock_model(AgentMockOptions options = {});

// The assumptions behind the simulated agent endpoint (this model and the mock server's fixed
// behaviour), one object per behaviour: {"behaviour", "simulated_as", "documented"}.
nlohmann::json agent_mock_assumptions(const AgentMockOptions& options);

// The sentence that pads simulated reasoning (privacy tests search run directories for it).
std::string_view reasoning_filler();

// The padded reasoning text for a scripted reasoning and an effort (exposed for tests).
std::string padded_reasoning(const std::string& scripted, const std::string& effort, const AgentMockOptions& options);

}  // namespace k3lab::mock
