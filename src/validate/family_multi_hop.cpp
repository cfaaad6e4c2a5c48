// Family 3, multi-hop: person -> office -> city -> dialing prefix, three facts in distant sections
// whose document order is permuted per fixture index, with competing chains.
#include <array>
#include <set>

#include "detail/family_content.hpp"
#include "detail/prose_generator.hpp"
#include "k3lab/validate/placement_rule.hpp"

namespace k3lab::validate::detail {
namespace {

std::string unique_name(core::Rng& rng, std::set<std::string>& used, int min_syllables, int max_syllables) {
  for (;;) {
    std::string text = invent_name(rng, min_syllables, max_syllables).text();
    if (used.insert(text).second) return text;
  }
}

std::string directory_fact(const std::string& person, const std::string& office) {
  return "Staff directory: " + person + " works in the " + office + " office.";
}
std::string register_fact(const std::string& office, const std::string& city) {
  return "Facilities register: the " + office + " office is located in the city of " + city + ".";
}
std::string guide_fact(const std::string& city, const std::string& prefix) {
  return "Telephone guide: the dialing prefix for the city of " + city + " is " + prefix + ".";
}

// Which of the three ascending depth slots each hop takes, per fixture index: the document order of
// the hops is not the reasoning order.
constexpr std::array<std::array<int, 3>, 6> kHopSlots = {
    {{0, 1, 2}, {2, 1, 0}, {1, 2, 0}, {0, 2, 1}, {2, 0, 1}, {1, 0, 2}}};

}  // namespace

FamilyContent build_multi_hop(core::Rng& rng, int index) {
  std::set<std::string> used;
  auto person = [&] {
    const std::string first = unique_name(rng, used, 2, 2);  // separate statements: fixed draw order
    return first + " " + unique_name(rng, used, 2, 3);
  };
  const std::string person1 = person();
  const std::string person2 = person();
  const std::string office1 = unique_name(rng, used, 2, 3);
  const std::string office2 = unique_name(rng, used, 2, 3);
  const std::string office3 = unique_name(rng, used, 2, 3);
  const std::string city1 = unique_name(rng, used, 2, 3);
  const std::string city2 = unique_name(rng, used, 2, 3);
  const std::string city3 = unique_name(rng, used, 2, 3);
  std::vector<std::string> values;
  const std::string prefix1 = fresh_number(rng, 200, 989, values);
  const std::string prefix2 = fresh_number(rng, 200, 989, values);
  const std::string prefix3 = fresh_number(rng, 200, 989, values);

  const std::vector<double> slots = required_depths(FixtureFamily::multi_hop, index, 3);
  const auto& hop_slot = kHopSlots[static_cast<std::size_t>(index) % kHopSlots.size()];
  const std::vector<double> competitor = distractor_depths(FixtureFamily::multi_hop, 5);

  FamilyContent content;
  content.evidence.push_back({directory_fact(person1, office1), true, slots[hop_slot[0]], "hop 1 of 3"});
  content.evidence.push_back({register_fact(office1, city1), true, slots[hop_slot[1]], "hop 2 of 3"});
  content.evidence.push_back({guide_fact(city1, prefix1), true, slots[hop_slot[2]], "hop 3 of 3"});
  content.evidence.push_back({directory_fact(person2, office2), false, competitor[0], "competing chain: directory"});
  content.evidence.push_back({register_fact(office2, city2), false, competitor[1], "competing chain: register"});
  content.evidence.push_back({guide_fact(city2, prefix2), false, competitor[2], "competing chain: guide"});
  content.evidence.push_back({register_fact(office3, city3), false, competitor[3], "competing chain: register"});
  content.evidence.push_back({guide_fact(city3, prefix3), false, competitor[4], "competing chain: guide"});
  content.question = "What is the dialing prefix for the city in which the office of " + person1 +
                     " is located? Give the number only.";
  content.expected_answer = prefix1;
  content.derivation = "Section " + evidence_ref(0) + " says " + person1 + " works in the " + office1 + " office; " +
                       evidence_ref(1) + " says the " + office1 + " office is in the city of " + city1 + "; " +
                       evidence_ref(2) + " says the dialing prefix for " + city1 + " is " + prefix1 +
                       ". The other directory, register and guide entries belong to other people, offices and "
                       "cities. So the answer is " +
                       prefix1 + ".";
  content.details = {{"person", person1},
                     {"office", office1},
                     {"city", city1},
                     {"hop_depth_slots", {hop_slot[0], hop_slot[1], hop_slot[2]}},
                     {"competitor_prefixes", {prefix2, prefix3}}};
  return content;
}

}  // namespace k3lab::validate::detail
