#pragma once
// The built-in downstream suite "builtin-tiny-next-passage": choose the true continuation of a
// held-out passage among four, scored by multiple_choice.hpp. Licensed like its source (the Jargon
// File excerpt, public domain) and generated, never stored, from held-out text only.
//
// Derivation (published in docs/downstream.md; derivation() records every input and the result's hash):
//   1. V = the validation bytes of dataset builtin-tiny exactly as load_dataset returns them (the
//      last 10% of the embedded excerpt); training reads only the first 90%, so it never sees them.
//   2. Passages: P = context_bytes + ending_max_bytes; passage p = V[p*P, (p+1)*P) for every whole
//      passage (the remainder of V after the last one is unused). Passages do not overlap.
//   3. Passage p's context = its first context_bytes bytes. Its ending = the next L_p bytes, where
//      L_p is the largest L in [ending_min_bytes, ending_max_bytes] whose ending's last byte is a
//      space or a newline (so endings stop at word boundaries and differ in length), else
//      ending_max_bytes.
//   4. Item i = passage i. Its generator is core::Rng(core::stream_seed(seed, {i})). Three
//      distractors: draw j = below(passages) until j is not i, not already drawn, and passage j's
//      ending differs byte for byte from the true ending and from every distractor drawn so far;
//      the distractor is passage j's ending. Then label = below(4); the candidates are the
//      distractors in draw order with the true ending inserted at index label.
//   5. Tokens are bytes (vocabulary 256). items_sha256 = SHA-256 of the compact JSON array of the
//      items, each {"context": [...], "endings": [[...], ...], "label": n} (keys sorted).
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/train/multiple_choice_item.hpp"

namespace k3lab::train {

inline constexpr const char* kBuiltinSuiteId = "builtin-tiny-next-passage";
inline constexpr std::int64_t kBuiltinSuiteCandidates = 4;

struct BuiltinSuiteSpec {
  std::uint64_t seed = 20261214;  // the generator seed a protocol freezes
  // Short passages: a model of a few thousand parameters uses only a few bytes of context, and
  // short endings keep the boundary with the context (what a model must judge) a large share of
  // each score; 138 items from the 4,425 held-out bytes.
  std::int64_t context_bytes = 24;
  std::int64_t ending_min_bytes = 4;
  std::int64_t ending_max_bytes = 8;
  // Throws std::invalid_argument naming the field and the fix.
  void validate() const;
};

struct BuiltinSuite {
  BuiltinSuiteSpec spec;
  std::vector<MultipleChoiceItem> items;
  std::vector<std::int64_t> passage_offsets;  // item i's passage starts at V[passage_offsets[i]]
  std::int64_t validation_offset = 0;         // V's first byte within the embedded excerpt
  std::int64_t validation_bytes = 0;          // |V|
  std::string validation_sha256;
  std::string items_sha256;
  // Suite id, source, licence, generator, seed, sizes, item count, chance and the hashes: what a
  // protocol freezes and a page cites.
  nlohmann::json derivation() const;
};

// Deterministic: the same spec and build give the same items and items_sha256.
BuiltinSuite make_builtin_suite(const BuiltinSuiteSpec& spec = {});

// The hash of step 5 for any items (the HellaSwag file is frozen by its file hash instead).
std::string multiple_choice_items_sha256(const std::vector<MultipleChoiceItem>& items);

}  // namespace k3lab::train
