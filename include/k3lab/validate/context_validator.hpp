#pragma once
// Validators for context-probe answers: answer match and cited-evidence coverage.
//
// passed = normalized_match, or, when the expected answer is a single number, sole_number_match:
// the parsed answer contains exactly one number and it equals the expected one ("The catalogue
// number is 4829137." passes; "4829137 or 7731234" does not). exact_match is reported separately.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/validate/answer_parse.hpp"
#include "k3lab/validate/context_fixture.hpp"
#include "k3lab/validate/evidence_ids.hpp"

namespace k3lab::validate {

struct ContextVerdict {
  ParsedAnswer parsed;
  bool exact_match = false;
  bool normalized_match = false;
  bool sole_number_match = false;
  bool passed = false;
  EvidenceCoverage evidence;
};

// From stored ground truth (for example a ledger record) without regenerating the fixture.
ContextVerdict validate_context_answer(std::string_view expected_answer, const std::vector<std::string>& required_evidence,
                                       std::string_view model_text);
ContextVerdict validate_context_answer(const ContextFixture& fixture, std::string_view model_text);
// For ledger records: the flags, coverage, parsed answer and id lists.
nlohmann::json context_verdict_json(const ContextVerdict& verdict);

}  // namespace k3lab::validate
