#pragma once
// An error message that quotes the request's reasoning_content must not carry it into a log line or
// a record (raw reasoning is never stored). The client scrubs every error message with the messages
// it sent, before it logs or records it.
#include <string>

#include <nlohmann/json.hpp>

namespace k3lab::api {

inline constexpr const char* kReasoningEchoRemoved = "[error message removed: it quoted reasoning_content]";

// `messages`: the request's messages array. A reasoning text of at least kReasoningNeedleBytes
// whose first kReasoningNeedleBytes bytes occur in `text` replaces the whole text with
// kReasoningEchoRemoved (an echo may be cut anywhere after that); shorter reasoning texts are
// replaced where they occur whole by "[reasoning removed]".
inline constexpr std::size_t kReasoningNeedleBytes = 48;
std::string scrub_reasoning_echo(std::string text, const nlohmann::json& messages);

}  // namespace k3lab::api
