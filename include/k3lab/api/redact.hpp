#pragma once
// Removes any echo of a secret (the API key) from text before it reaches a record, a log or an
// exception message.
#include <string>
#include <string_view>

namespace k3lab::api {

inline constexpr std::string_view kRedacted = "[REDACTED]";

// Replaces every full occurrence of `secret`, and every run of key-like characters
// ([A-Za-z0-9._-]) that shares 8 or more consecutive characters with it (servers often echo a
// masked key such as "sk-abcdef12****wxyz"), with [REDACTED]. Secrets shorter than 8 characters
// are only redacted as whole occurrences. An empty secret leaves the text unchanged.
std::string redact(std::string_view text, std::string_view secret);

}  // namespace k3lab::api
