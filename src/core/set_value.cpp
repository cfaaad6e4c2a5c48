#include "k3lab/core/set_value.hpp"

#include <stdexcept>

#include "k3lab/core/bounded_json.hpp"

namespace k3lab::core {

nlohmann::json parse_set_value(const std::string& text) {
  // A command-line value: small limits are plenty and keep the error close to the typo.
  constexpr JsonLimits kSetValueLimits{32, 1u << 20};
  try {
    return parse_json_bounded(text, "--set value \"" + text + "\"", kSetValueLimits);
  } catch (const JsonInputError& e) {
    if (e.kind() == JsonInputError::Kind::Syntax) return text;
    throw std::invalid_argument(e.what());
  }
}

}  // namespace k3lab::core
