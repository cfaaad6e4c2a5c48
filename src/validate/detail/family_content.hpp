#pragma once
// What a fixture family contributes to a context-probe fixture: the evidence sections (with their
// target depths), the question, the exact expected answer and a derivation. The assembler adds the
// filler, the evidence ids and the framing, and fits the whole to the token budget.
//
// Every builder draws only from the rng it is given, which is seeded from (seed, family, index) and
// never from the target size: the same fixture has the same facts, question and answer at every
// context length.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/core/rng.hpp"
#include "k3lab/validate/repo_snapshot.hpp"

namespace k3lab::validate::detail {

struct EvidenceSpec {
  std::string body;      // section body after the "[Exxxxx] " prefix
  bool required = false; // the answer needs it (competitors are not required)
  double target_depth = 0.0;
  std::string label;     // e.g. "target fact", "hop 2 of 3", "event 4 of 5", "decoy file"
};

struct FamilyContent {
  std::vector<EvidenceSpec> evidence;
  std::string question;
  std::string expected_answer;
  // Human-readable explanation; "{ev:N}" stands for the id of evidence[N] (filled in by the assembler).
  std::string derivation;
  nlohmann::json details = nlohmann::json::object();
  bool code_filler = false;  // repository family: filler sections are source files
  std::vector<std::string> reserved_paths;  // repository family: paths the filler must not reuse
};

// Placeholder for the id of evidence number `n` inside a derivation.
std::string evidence_ref(std::size_t n);

FamilyContent build_single_retrieval(core::Rng& rng, int index);
FamilyContent build_distractor_retrieval(core::Rng& rng, int index);
FamilyContent build_multi_hop(core::Rng& rng, int index);
FamilyContent build_order_state(core::Rng& rng, int index);
FamilyContent build_repository(core::Rng& rng, int index);
// The repository family on a pinned real repository (family_pinned_repository.cpp).
FamilyContent build_pinned_repository(core::Rng& rng, int index, const RepositorySnapshot& snapshot);
// Evidence budget of that family, fixed so that a fixture's facts never depend on its context length:
// the files on the import path total at most this many bytes, and each decoy file at most the second.
inline constexpr std::size_t kMaxTracedRepositoryBytes = 24000;
inline constexpr std::size_t kMaxRepositoryDecoyBytes = 6000;

// Shared by the two retrieval families.
struct RetrievalFact {
  std::string attribute;  // "catalogue number"
  std::string subject;    // "the Veltmar observatory"
  std::string value;      // "4829137"
  std::string sentence() const;  // "Records show that the <attribute> of <subject> is <value>."
};
std::string retrieval_question(const RetrievalFact& fact);
const std::vector<std::string_view>& retrieval_attributes();
const std::vector<std::string_view>& retrieval_facilities();
// A 7-digit value (first digit non-zero) that is not in `taken`; it is added to `taken`.
std::string fresh_number(core::Rng& rng, long long low, long long high, std::vector<std::string>& taken);

}  // namespace k3lab::validate::detail
