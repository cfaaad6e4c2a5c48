#pragma once
// The value half of `--set key=value`: JSON when it parses as JSON (numbers, true/false, null, arrays,
// objects, quoted strings), otherwise the text itself as a string (so `--set policy=unified` works).
#include <string>

#include <nlohmann/json.hpp>

namespace k3lab::core {

// Throws std::invalid_argument (a usage error, exit 2) for text that looks like JSON but cannot be
// represented: a number beyond the range of a double (1e400), nesting or length beyond the limits.
nlohmann::json parse_set_value(const std::string& text);

}  // namespace k3lab::core
