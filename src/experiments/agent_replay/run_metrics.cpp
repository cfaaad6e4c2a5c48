#include "agent_replay/run_metrics.hpp"

#include <map>
#include <set>
#include <stdexcept>
#include <string>

namespace k3lab::experiments::agent_replay {

std::size_t count_unmatched_tool_calls(const nlohmann::json& messages) {
  std::map<std::string, std::size_t> answers;  // tool_call_id -> tool messages
  std::set<std::string> called;
  std::size_t calls = 0;
  for (const auto& m : messages) {
    const std::string role = m.value("role", "");
    if (role == "assistant") {
      if (const auto tc = m.find("tool_calls"); tc != m.end() && tc->is_array()) {
        for (const auto& call : *tc) {
          called.insert(call.value("id", ""));
          ++calls;
        }
      }
    } else if (role == "tool") {
      ++answers[m.value("tool_call_id", "")];
    }
  }
  std::size_t unmatched = 0;
  for (const auto& id : called) {
    const auto it = answers.find(id);
    if (it == answers.end() || it->second != 1) ++unmatched;
  }
  // A repeated call id counts once per extra call.
  unmatched += calls - called.size();
  for (const auto& [id, n] : answers) {
    if (!called.count(id)) unmatched += n;
  }
  return unmatched;
}

std::size_t count_unexpected_tool_names(const nlohmann::json& messages, const nlohmann::json& tools) {
  std::set<std::string> declared;
  for (const auto& t : tools) {
    if (t.is_object() && t.contains("function")) declared.insert(t["function"].value("name", ""));
  }
  std::size_t unexpected = 0;
  for (const auto& m : messages) {
    if (m.value("role", "") != "assistant") continue;
    if (const auto tc = m.find("tool_calls"); tc != m.end() && tc->is_array()) {
      for (const auto& call : *tc) {
        const auto fn = call.find("function");
        const std::string name = fn != call.end() && fn->is_object() ? fn->value("name", "") : "";
        if (!declared.count(name)) ++unexpected;
      }
    }
  }
  return unexpected;
}

double call_cost_usd(const Parameters& p, std::int64_t prompt_tokens, std::int64_t cached_tokens,
                     std::int64_t completion_tokens) {
  if (prompt_tokens < 0 || cached_tokens < 0 || completion_tokens < 0 || cached_tokens > prompt_tokens) {
    throw std::invalid_argument("agent-replay: usage must have 0 <= cached_tokens <= prompt_tokens and "
                                "completion_tokens >= 0; got prompt " + std::to_string(prompt_tokens) + ", cached " +
                                std::to_string(cached_tokens) + ", completion " + std::to_string(completion_tokens));
  }
  return p.pricing.call_usd(prompt_tokens, cached_tokens, completion_tokens);
}

}  // namespace k3lab::experiments::agent_replay
