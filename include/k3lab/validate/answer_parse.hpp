#pragma once
// Parsing the model's answer format for the context probe:
//   ANSWER: <answer>
//   EVIDENCE: E01234, E04567
// Tolerated variations: any letter case; markdown decoration ("**Answer:**", "### Answer", "> ",
// "- "); "Final answer" for ANSWER; "Evidence ids", "Cited evidence", "Supporting evidence",
// "Citations", "Sources" for EVIDENCE; ':' '=' or '-' as separator; both on one line
// ("ANSWER: 42 EVIDENCE: E1"); the answer on the line after an empty "ANSWER:"; evidence listed on
// following lines or as bullets; bracketed or unpadded ids ("[E01234]", "e1234"). When a marker
// appears more than once, the last one wins (models sometimes restate a draft). Without an
// ANSWER marker the first non-empty line is taken as the answer; without an EVIDENCE marker, ids
// are collected from the whole text. The has_* flags record which case applied.
#include <string>
#include <string_view>
#include <vector>

namespace k3lab::validate {

struct ParsedAnswer {
  std::string answer;                     // trimmed, decoration removed
  std::vector<std::string> evidence_ids;  // canonical, de-duplicated, in order of mention
  bool has_answer_marker = false;
  bool has_evidence_marker = false;
};

ParsedAnswer parse_model_answer(std::string_view text);

}  // namespace k3lab::validate
