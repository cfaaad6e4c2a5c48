#include "k3lab/api/reasoning_echo.hpp"

namespace k3lab::api {

std::string scrub_reasoning_echo(std::string text, const nlohmann::json& messages) {
  if (!messages.is_array() || text.empty()) return text;
  static const std::string mark = "[reasoning removed]";
  for (const auto& m : messages) {
    const auto it = m.is_object() ? m.find("reasoning_content") : m.end();
    if (!m.is_object() || it == m.end() || !it->is_string()) continue;
    const auto& reasoning = it->get_ref<const std::string&>();
    if (reasoning.empty()) continue;
    if (reasoning.size() >= kReasoningNeedleBytes) {
      // Needles this long cannot match ordinary error text by chance.
      if (text.find(std::string_view(reasoning).substr(0, kReasoningNeedleBytes)) != std::string::npos) {
        return kReasoningEchoRemoved;
      }
      continue;
    }
    for (auto at = text.find(reasoning); at != std::string::npos; at = text.find(reasoning, at + mark.size())) {
      text.replace(at, reasoning.size(), mark);
    }
  }
  return text;
}

}  // namespace k3lab::api
