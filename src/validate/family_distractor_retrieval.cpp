// Family 2, distractor retrieval: the target fact competes with near misses that share its
// attribute, its subject's name, its facility, or its wording.
#include "detail/family_content.hpp"
#include "detail/prose_generator.hpp"
#include "k3lab/validate/placement_rule.hpp"

namespace k3lab::validate::detail {

FamilyContent build_distractor_retrieval(core::Rng& rng, int index) {
  std::vector<std::string> values;
  const std::string attribute(pick(rng, retrieval_attributes()));
  std::string other_attribute(pick(rng, retrieval_attributes()));
  while (other_attribute == attribute) other_attribute = std::string(pick(rng, retrieval_attributes()));
  const std::string facility(pick(rng, retrieval_facilities()));
  std::string other_facility(pick(rng, retrieval_facilities()));
  while (other_facility == facility) other_facility = std::string(pick(rng, retrieval_facilities()));
  const InventedName name = invent_name(rng, 2, 3);
  const InventedName miss_a = near_miss(name, rng);
  InventedName miss_b = near_miss(name, rng);
  while (miss_b.text() == miss_a.text()) miss_b = near_miss(name, rng);

  const std::string subject = "the " + name.text() + " " + facility;
  const RetrievalFact target{attribute, subject, fresh_number(rng, 1000000, 9999999, values)};
  const RetrievalFact similar_name{attribute, "the " + miss_a.text() + " " + facility,
                                   fresh_number(rng, 1000000, 9999999, values)};
  const RetrievalFact same_name_other_facility{attribute, "the " + name.text() + " " + other_facility,
                                               fresh_number(rng, 1000000, 9999999, values)};
  const RetrievalFact other_attribute_fact{other_attribute, subject, fresh_number(rng, 1000000, 9999999, values)};
  const RetrievalFact second_similar_name{attribute, "the " + miss_b.text() + " " + facility,
                                          fresh_number(rng, 1000000, 9999999, values)};
  const std::string rejected_value = fresh_number(rng, 1000000, 9999999, values);
  const std::string rejected = "A rejected proposal would have changed the " + attribute + " of " + subject + " to " +
                               rejected_value + ".";

  FamilyContent content;
  const double target_depth = required_depths(FixtureFamily::distractor_retrieval, index, 1)[0];
  const std::vector<double> competitor_depths = distractor_depths(FixtureFamily::distractor_retrieval, 5);
  content.evidence.push_back({target.sentence(), true, target_depth, "target fact"});
  content.evidence.push_back({similar_name.sentence(), false, competitor_depths[0], "near miss: similar name"});
  content.evidence.push_back({same_name_other_facility.sentence(), false, competitor_depths[1],
                              "near miss: same name, other facility"});
  content.evidence.push_back({other_attribute_fact.sentence(), false, competitor_depths[2],
                              "near miss: same subject, other attribute"});
  content.evidence.push_back({second_similar_name.sentence(), false, competitor_depths[3], "near miss: similar name"});
  content.evidence.push_back({rejected, false, competitor_depths[4], "near miss: rejected proposal"});
  content.question = retrieval_question(target);
  content.expected_answer = target.value;
  content.derivation =
      "Section " + evidence_ref(0) + " states: \"" + target.sentence() + "\" It is the only section that gives the " +
      attribute + " of " + subject + ". The competitors do not answer the question: " + evidence_ref(1) + " is about " +
      similar_name.subject + ", " + evidence_ref(2) + " is about " + same_name_other_facility.subject + ", " +
      evidence_ref(3) + " gives the " + other_attribute + " instead, " + evidence_ref(4) + " is about " +
      second_similar_name.subject + ", and " + evidence_ref(5) +
      " reports a proposal that was rejected. So the answer is " + target.value + ".";
  content.details = {{"attribute", attribute},
                     {"subject", subject},
                     {"competitor_values",
                      {similar_name.value, same_name_other_facility.value, other_attribute_fact.value,
                       second_similar_name.value, rejected_value}}};
  return content;
}

}  // namespace k3lab::validate::detail
