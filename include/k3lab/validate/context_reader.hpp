#pragma once
// A deterministic stand-in model for the context probe (the mock server answers with it).
//
// The reader gets only the prompt text. It parses the document sections and the question, resolves
// the question by reading the facts (retrieval, the person -> office -> city -> prefix chain, the
// ledger events, the import chain of the repository), and answers in the fixture format
// ("ANSWER: ..." / "EVIDENCE: ..."). It never sees the fixture's ground truth.
//
// Loss of recall: let d be the estimated tokens from the first section the correct resolution uses
// to the question. The reader fails with probability
//   p(d) = base_failure + (max_failure - base_failure) * (1 - exp(-d / distance_scale_tokens)),
// decided by one draw from k3lab's generator seeded with (seed, FNV-1a of the prompt): the same
// prompt always gets the same reply, a different cache buster gets a fresh draw. A failing reader
// behaves like a confused model: it takes a competing fact in place of the farthest piece of evidence
// it needed (a near-miss fact, another hop, it forgets the earliest ledger event, or it resolves a
// constant from the wrong module), or answers "not found" when no competitor exists. The defaults are
// simulation parameters chosen to show degradation; they are not a claim about any real model.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "k3lab/validate/token_budget.hpp"

namespace k3lab::validate {

struct ReaderConfig {
  std::uint64_t seed = 0;
  double base_failure = 0.02;
  double max_failure = 0.60;
  double distance_scale_tokens = 393216.0;
  TokenEstimator estimator = conservative_byte_estimator();
};

struct ReaderReply {
  std::string text;                 // the model's reply
  bool understood = false;          // a document and a known question form were found
  std::string family;               // family id inferred from the question, "" when not understood
  std::size_t distance_tokens = 0;  // first evidence used by the correct resolution -> question
  double failure_probability = 0.0;
  bool recall_failed = false;
};

// Throws std::invalid_argument naming the field unless 0 <= base_failure <= max_failure <= 1 and
// distance_scale_tokens > 0.
double reader_failure_probability(const ReaderConfig& config, std::size_t distance_tokens);
ReaderReply read_fixture_prompt(std::string_view prompt, const ReaderConfig& config);

}  // namespace k3lab::validate
