#include "k3lab/validate/context_validator.hpp"

#include "k3lab/validate/answer_normalize.hpp"

namespace k3lab::validate {

ContextVerdict validate_context_answer(std::string_view expected_answer, const std::vector<std::string>& required_evidence,
                                       std::string_view model_text) {
  ContextVerdict verdict;
  verdict.parsed = parse_model_answer(model_text);
  verdict.exact_match = exact_answer_match(expected_answer, verdict.parsed.answer);
  verdict.normalized_match = normalized_answer_match(expected_answer, verdict.parsed.answer);
  const std::vector<std::string> expected_numbers = number_tokens(expected_answer);
  const bool expected_is_number = expected_numbers.size() == 1 && normalize_answer(expected_answer) == expected_numbers[0];
  if (expected_is_number) {
    const std::vector<std::string> got = number_tokens(verdict.parsed.answer);
    verdict.sole_number_match = got.size() == 1 && got[0] == expected_numbers[0];
  }
  verdict.passed = verdict.normalized_match || verdict.sole_number_match;
  verdict.evidence = evidence_coverage(required_evidence, verdict.parsed.evidence_ids);
  return verdict;
}

ContextVerdict validate_context_answer(const ContextFixture& fixture, std::string_view model_text) {
  return validate_context_answer(fixture.expected_answer, fixture.required_evidence, model_text);
}

nlohmann::json context_verdict_json(const ContextVerdict& verdict) {
  return {{"passed", verdict.passed},
          {"exact_match", verdict.exact_match},
          {"normalized_match", verdict.normalized_match},
          {"sole_number_match", verdict.sole_number_match},
          {"parsed_answer", verdict.parsed.answer},
          {"has_answer_marker", verdict.parsed.has_answer_marker},
          {"has_evidence_marker", verdict.parsed.has_evidence_marker},
          {"cited_evidence", verdict.parsed.evidence_ids},
          {"evidence_coverage", verdict.evidence.coverage},
          {"cited_required", verdict.evidence.cited_required},
          {"missing_required", verdict.evidence.missing_required},
          {"cited_other", verdict.evidence.cited_other}};
}

}  // namespace k3lab::validate
