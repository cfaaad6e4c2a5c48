#pragma once
// The ground truth of a context-probe fixture as JSON, for inspection (the CLI prints it) and for
// ledger records.
#include <nlohmann/json.hpp>

#include "k3lab/validate/context_fixture.hpp"

namespace k3lab::validate {

struct DescribeOptions {
  bool include_prompt = false;  // the full prompt text (large: about 3 MB at 1M tokens)
};

// Keys: generator_version, fixture, family, index, seed, target_tokens, prompt_tokens, estimator,
// prefix_id, cache_buster_line, prompt_bytes, prompt_sha256, question, expected_answer,
// required_evidence, derivation, placement_rule, placements[], section_count, body_tokens,
// question_token_offset, required_span_tokens, evidence_spread_tokens, filler, repository (or null),
// family_details, and prompt when requested.
nlohmann::json describe_fixture(const ContextFixture& fixture, const DescribeOptions& options = {});

}  // namespace k3lab::validate
