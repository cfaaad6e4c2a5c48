#pragma once
// Evidence ids ("E01234") and cited-evidence coverage.
//
// Parsing is tolerant: "E01234", "[E01234]", "e1234" and "E-01234" all name section
// 1234; the canonical form is "E" + 5 zero-padded digits. A token with more than 5 digits is kept
// as "E" + its digits and matches nothing.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace k3lab::validate {

inline constexpr int kEvidenceIdDigits = 5;
inline constexpr std::uint32_t kEvidenceIdSpace = 100000;

// "E" + zero-padded number. Throws std::invalid_argument for number >= kEvidenceIdSpace.
std::string format_evidence_id(std::uint32_t number);
// Canonical id of one token such as "[e1234]"; nullopt when the token is not an id.
std::optional<std::string> canonical_evidence_id(std::string_view token);
// Every evidence id mentioned in `text`, canonical, de-duplicated, in order of first mention.
// An id must not be glued to a preceding letter or digit ("ORE123" is not an id).
std::vector<std::string> extract_evidence_ids(std::string_view text);

struct EvidenceCoverage {
  double coverage = 0.0;  // |cited ∩ required| / |required|; 1.0 when nothing is required
  std::vector<std::string> cited_required;
  std::vector<std::string> missing_required;
  std::vector<std::string> cited_other;  // cited but not required (precision diagnostics)
};

// Ids are compared in canonical form; both lists may be in any form canonical_evidence_id accepts.
EvidenceCoverage evidence_coverage(const std::vector<std::string>& required, const std::vector<std::string>& cited);

}  // namespace k3lab::validate
