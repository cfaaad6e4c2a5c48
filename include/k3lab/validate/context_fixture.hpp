#pragma once
// Context-probe fixtures for experiment 1 ("useful context may end before the configured limit").
//
// A fixture is generated deterministically from (published seed, family, fixture index, target token
// size). Facts, question and answer depend only on (seed, family, index); the target size changes
// only the filler and therefore the distance between the evidence sections and the question.
//
// Prompt layout (the user message):
//   <cache-buster line, when a prefix id is given>
//   <instructions: answer format "ANSWER: ..." / "EVIDENCE: E01234, E04567">
//   === DOCUMENT START ===
//   [E01234] <section>            every section, filler or evidence, starts with a unique id
//   ...
//   === DOCUMENT END ===
//
//   QUESTION: <question>
// Filler is original neutral prose; the repository family's is source files: the pinned real
// repository's (repo_snapshot.hpp; what context-probe runs) or, without a snapshot, k3lab's synthetic
// pseudo-repository (fixture benchmarks and generator tests). See ContentProvenance. The prompt's estimated size never exceeds target_tokens and lands within one
// filler word of it (the tail filler section is trimmed word by word against the full-prompt
// estimate).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/validate/fixture_family.hpp"
#include "k3lab/validate/repo_snapshot.hpp"
#include "k3lab/validate/token_budget.hpp"

namespace k3lab::validate {

inline constexpr int kContextFixtureGeneratorVersion = 1;
// Upper bound on target_tokens: the evidence-id space (E00000-E99999) must hold every section.
inline constexpr std::size_t kMaxFixtureTargetTokens = 8u * 1024u * 1024u;

struct FixtureRequest {
  std::uint64_t seed = 0;  // the protocol's published seed
  FixtureFamily family = FixtureFamily::single_retrieval;
  int index = 0;                  // 0 .. kFixturesPerFamily-1
  std::size_t target_tokens = 0;  // prompt budget in estimator tokens (see prompt_token_budget())
  // Cache-buster source: a non-empty id puts cache_buster_line(prefix_id) first. Empty: no line.
  std::string prefix_id;
  TokenEstimator estimator = conservative_byte_estimator();
  // Repository family only: the pinned real repository its questions, evidence, decoys and filler come
  // from (family_pinned_repository.cpp); null: the synthetic pseudo-repository.
  std::shared_ptr<const RepositorySnapshot> repository_snapshot;
};

struct EvidencePlacement {
  std::string evidence_id;  // "E01234"
  bool required = false;    // needed for the answer (false: a competitor/distractor)
  std::string label;        // e.g. "hop 2 of 3", "near miss: similar name"
  std::string text;         // the section body after the id
  double target_depth = 0;  // from the placement rule
  double depth = 0;         // achieved: body tokens before the section / body tokens
  std::size_t token_offset = 0;  // estimated tokens from the prompt start to the section start
  std::size_t byte_offset = 0;
};

struct ContentProvenance {
  std::string generator;  // "k3lab-neutral-prose" or "k3lab-pseudo-repo"
  int generator_version = 0;
  std::string license;    // "MIT (original k3lab-generated text)"
};

struct RepositoryProvenance {
  bool synthetic = true;  // false for a pinned real repository
  std::string generator;  // "k3lab-pseudo-repo", or "<package> <version>" of the pinned repository
  int generator_version = 0;
  std::string license;
  std::string sha256;          // over every file section in document order (repository_files_sha256)
  std::size_t file_count = 0;  // file sections in the document
  std::size_t snapshot_files_used = 0;  // pinned: every file section
  std::string snapshot_root;       // pinned snapshot only
  nlohmann::json snapshot_manifest;  // pinned snapshot only: its pin (null otherwise)
  std::string snapshot_sha256;     // pinned snapshot only: repository_files_sha256 of all its files
};

struct ContextFixture {
  std::uint64_t seed = 0;
  FixtureFamily family = FixtureFamily::single_retrieval;
  int index = 0;
  std::string id;  // fixture_id(family, index)
  std::size_t target_tokens = 0;
  std::size_t prompt_tokens = 0;  // estimator(prompt) <= target_tokens
  std::string estimator_name;
  std::string prefix_id;
  std::string cache_buster_line;  // empty when no prefix id

  std::string prompt;
  std::string question;
  std::string expected_answer;
  std::vector<std::string> required_evidence;  // ids, in derivation order
  std::string derivation;
  std::vector<EvidencePlacement> placements;   // every fact section, in document order

  std::size_t section_count = 0;  // all sections (filler + facts)
  std::size_t body_token_begin = 0;  // estimated token offsets of the document body
  std::size_t body_token_end = 0;
  std::size_t question_token_offset = 0;
  // From the first required section to the question line: the distance the answer must bridge.
  std::size_t required_span_tokens = 0;
  // From the start of the first to the end of the last required section.
  std::size_t evidence_spread_tokens = 0;

  ContentProvenance filler;
  std::optional<RepositoryProvenance> repository;  // repository family only
  nlohmann::json family_details;  // family-specific ground truth (e.g. the state steps)
};

// Throws std::invalid_argument naming the field for an index outside 0..7, target_tokens above
// kMaxFixtureTargetTokens or too small to hold the fixture's fixed parts (the message says the
// minimum), an empty estimator, or a snapshot given to a family other than repository.
ContextFixture generate_context_fixture(const FixtureRequest& request);

}  // namespace k3lab::validate
