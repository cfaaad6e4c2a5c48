#include "detail/family_content.hpp"

#include <algorithm>

namespace k3lab::validate::detail {
namespace {

const std::vector<std::string_view> kAttributes = {"catalogue number", "registry number", "inventory tag",
                                                   "service number",   "archive reference", "permit number",
                                                   "survey mark",      "dock number"};
const std::vector<std::string_view> kFacilities = {"observatory",    "greenhouse",    "ferry terminal", "weather station",
                                                   "library annex",  "pottery studio", "lighthouse",    "seed bank",
                                                   "clock tower",    "boat house",    "rail depot",     "printing house"};

}  // namespace

std::string evidence_ref(std::size_t n) { return "{ev:" + std::to_string(n) + "}"; }

std::string RetrievalFact::sentence() const {
  return "Records show that the " + attribute + " of " + subject + " is " + value + ".";
}

std::string retrieval_question(const RetrievalFact& fact) {
  return "What is the " + fact.attribute + " of " + fact.subject + "? Give the number only.";
}

const std::vector<std::string_view>& retrieval_attributes() { return kAttributes; }
const std::vector<std::string_view>& retrieval_facilities() { return kFacilities; }

std::string fresh_number(core::Rng& rng, long long low, long long high, std::vector<std::string>& taken) {
  for (;;) {
    const long long value = low + static_cast<long long>(rng.below(static_cast<std::uint64_t>(high - low + 1)));
    std::string text = std::to_string(value);
    if (std::find(taken.begin(), taken.end(), text) == taken.end()) {
      taken.push_back(text);
      return text;
    }
  }
}

}  // namespace k3lab::validate::detail
