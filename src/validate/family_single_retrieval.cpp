// Family 1, single retrieval: one exact fact at a controlled depth.
#include "detail/family_content.hpp"
#include "detail/prose_generator.hpp"
#include "k3lab/validate/placement_rule.hpp"

namespace k3lab::validate::detail {

FamilyContent build_single_retrieval(core::Rng& rng, int index) {
  std::vector<std::string> values;
  RetrievalFact fact;
  fact.attribute = std::string(pick(rng, retrieval_attributes()));
  const std::string name = invent_name(rng, 2, 3).text();  // separate statements: fixed draw order
  fact.subject = "the " + name + " " + std::string(pick(rng, retrieval_facilities()));
  fact.value = fresh_number(rng, 1000000, 9999999, values);

  FamilyContent content;
  content.evidence.push_back(
      {fact.sentence(), true, required_depths(FixtureFamily::single_retrieval, index, 1)[0], "target fact"});
  content.question = retrieval_question(fact);
  content.expected_answer = fact.value;
  content.derivation = "Section " + evidence_ref(0) + " states: \"" + fact.sentence() + "\" The question asks for the " +
                       fact.attribute + " of " + fact.subject + ", so the answer is " + fact.value + ".";
  content.details = {{"attribute", fact.attribute}, {"subject", fact.subject}};
  return content;
}

}  // namespace k3lab::validate::detail
