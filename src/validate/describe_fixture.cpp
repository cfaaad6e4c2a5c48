#include "k3lab/validate/describe_fixture.hpp"

#include "k3lab/core/sha256.hpp"
#include "k3lab/validate/placement_rule.hpp"

namespace k3lab::validate {

nlohmann::json describe_fixture(const ContextFixture& fixture, const DescribeOptions& options) {
  nlohmann::json placements = nlohmann::json::array();
  for (const auto& p : fixture.placements) {
    placements.push_back({{"evidence_id", p.evidence_id},
                          {"required", p.required},
                          {"label", p.label},
                          {"text", p.text},
                          {"target_depth", p.target_depth},
                          {"depth", p.depth},
                          {"token_offset", p.token_offset},
                          {"byte_offset", p.byte_offset}});
  }
  nlohmann::json repository = nullptr;
  if (fixture.repository) {
    const RepositoryProvenance& r = *fixture.repository;
    repository = {{"synthetic", r.synthetic},
                  {"generator", r.generator},
                  {"generator_version", r.generator_version},
                  {"license", r.license},
                  {"sha256", r.sha256},
                  {"file_count", r.file_count},
                  {"snapshot_files_used", r.snapshot_files_used},
                  {"snapshot_root", r.snapshot_root.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.snapshot_root)},
                  {"snapshot_manifest", r.snapshot_manifest},
                  {"snapshot_sha256",
                   r.snapshot_sha256.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.snapshot_sha256)}};
  }
  nlohmann::json out = {
      {"generator_version", kContextFixtureGeneratorVersion},
      {"fixture", fixture.id},
      {"family", std::string(family_id(fixture.family))},
      {"index", fixture.index},
      {"seed", fixture.seed},
      {"target_tokens", fixture.target_tokens},
      {"prompt_tokens", fixture.prompt_tokens},
      {"estimator", fixture.estimator_name},
      {"prefix_id", fixture.prefix_id},
      {"cache_buster_line", fixture.cache_buster_line},
      {"prompt_bytes", fixture.prompt.size()},
      {"prompt_sha256", core::sha256_hex(fixture.prompt)},
      {"question", fixture.question},
      {"expected_answer", fixture.expected_answer},
      {"required_evidence", fixture.required_evidence},
      {"derivation", fixture.derivation},
      {"placement_rule",
       {{"spread", required_spread(fixture.index)},
        {"rule", "depth = body tokens before the section / body tokens; retrieval: 0.95 - 0.90*i/7; others: "
                 "evenly spaced over 0.5 +- spread/2 with spread = 0.10 + 0.80*i/7"}}},
      {"placements", placements},
      {"section_count", fixture.section_count},
      {"body_tokens", {{"begin", fixture.body_token_begin}, {"end", fixture.body_token_end}}},
      {"question_token_offset", fixture.question_token_offset},
      {"required_span_tokens", fixture.required_span_tokens},
      {"evidence_spread_tokens", fixture.evidence_spread_tokens},
      {"filler",
       {{"generator", fixture.filler.generator},
        {"generator_version", fixture.filler.generator_version},
        {"license", fixture.filler.license}}},
      {"repository", repository},
      {"family_details", fixture.family_details}};
  if (options.include_prompt) out["prompt"] = fixture.prompt;
  return out;
}

}  // namespace k3lab::validate
