#include "common/ledger_compare.hpp"

#include <algorithm>
#include <sstream>

namespace k3lab::testing {
namespace {

std::string describe(const nlohmann::json& record) {
  return "kind " + record.value("kind", std::string("?")) + ", unit " + record.value("unit", std::string("-"));
}

// The first operations of the JSON patch from `a` to `b`, one per line, values cut short.
std::string patch_summary(const nlohmann::json& a, const nlohmann::json& b) {
  constexpr std::size_t kOperations = 20, kValueChars = 200;
  const auto patch = nlohmann::json::diff(a, b);
  std::ostringstream out;
  for (std::size_t i = 0; i < std::min(patch.size(), kOperations); ++i) {
    const auto& op = patch[i];
    out << "  " << op.at("op").get<std::string>() << " " << op.at("path").get<std::string>();
    if (op.contains("value")) {
      std::string value = op.at("value").dump();
      if (value.size() > kValueChars) value = value.substr(0, kValueChars) + "...";
      out << " -> " << value;
    }
    if (a.contains(nlohmann::json::json_pointer(op.at("path").get<std::string>())) && op.at("op") != "add") {
      std::string before = a.at(nlohmann::json::json_pointer(op.at("path").get<std::string>())).dump();
      if (before.size() > kValueChars) before = before.substr(0, kValueChars) + "...";
      out << " (was " << before << ")";
    }
    out << "\n";
  }
  if (patch.size() > kOperations) out << "  ... " << patch.size() - kOperations << " more\n";
  return out.str();
}

}  // namespace

nlohmann::json deterministic_part(const nlohmann::json& record) {
  nlohmann::json copy = record;
  for (const char* key : {"t", "seq", "timing", "worker", "hardware"}) copy.erase(key);
  return copy;
}

std::string ledger_difference(const std::vector<nlohmann::json>& expected, const std::vector<nlohmann::json>& actual) {
  const std::size_t shared = std::min(expected.size(), actual.size());
  for (std::size_t i = 0; i < shared; ++i) {
    const auto a = deterministic_part(expected[i]);
    const auto b = deterministic_part(actual[i]);
    if (a == b) continue;
    return "record " + std::to_string(i) + " differs (expected " + describe(a) + "; actual " + describe(b) +
           "); patch from expected to actual:\n" + patch_summary(a, b);
  }
  if (expected.size() != actual.size()) {
    const auto& longer = expected.size() > actual.size() ? expected : actual;
    return "expected " + std::to_string(expected.size()) + " records, got " + std::to_string(actual.size()) +
           "; the first extra one (" + (expected.size() > actual.size() ? "expected" : "actual") + ") is " +
           describe(longer[shared]);
  }
  return "";
}

}  // namespace k3lab::testing
