// Assembles a context-probe fixture: family content + ids + filler + framing, fitted to the token
// target from below.
#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>
#include <stdexcept>

#include "detail/code_generator.hpp"
#include "detail/family_content.hpp"
#include "detail/filler_stream.hpp"
#include "detail/prose_generator.hpp"
#include "detail/repo_hash.hpp"
#include "detail/text.hpp"
#include "k3lab/core/rng.hpp"
#include "k3lab/validate/cache_buster.hpp"
#include "k3lab/validate/context_fixture.hpp"
#include "k3lab/validate/evidence_ids.hpp"
#include "k3lab/validate/prompt_format.hpp"

namespace k3lab::validate {
namespace {

using detail::FamilyContent;

// Stream coordinates under the fixture seed (never change them: they define the fixtures).
constexpr std::uint64_t kContentStream = 1;
constexpr std::uint64_t kIdStream = 2;
constexpr std::uint64_t kFillerStream = 3;
// Filler below this many tokens cannot place evidence at meaningful depths.
constexpr std::size_t kMinFillerTokens = 256;

FamilyContent build_content(const FixtureRequest& request, core::Rng& rng) {
  const int index = request.index;
  switch (request.family) {
    case FixtureFamily::single_retrieval: return detail::build_single_retrieval(rng, index);
    case FixtureFamily::distractor_retrieval: return detail::build_distractor_retrieval(rng, index);
    case FixtureFamily::multi_hop: return detail::build_multi_hop(rng, index);
    case FixtureFamily::order_state: return detail::build_order_state(rng, index);
    case FixtureFamily::repository:
      return request.repository_snapshot ? detail::build_pinned_repository(rng, index, *request.repository_snapshot)
                                         : detail::build_repository(rng, index);
  }
  throw std::invalid_argument("generate_context_fixture: unknown fixture family");
}

// Evidence ids are drawn from the id space; filler ids walk an affine bijection of the section
// ordinal (so ids look unordered) and skip the evidence ids. Both depend only on the fixture seed, so
// a fact keeps its id at every context length.
class IdAllocator {
 public:
  IdAllocator(core::Rng& rng, std::size_t evidence_count) {
    while (evidence_.size() < evidence_count) {
      const auto number = static_cast<std::uint32_t>(rng.below(kEvidenceIdSpace));
      if (std::find(evidence_.begin(), evidence_.end(), number) == evidence_.end()) evidence_.push_back(number);
    }
    do {
      stride_ = 1 + rng.below(kEvidenceIdSpace - 1);
    } while (stride_ % 2 == 0 || stride_ % 5 == 0);  // coprime with 10^5: a bijection
    offset_ = rng.below(kEvidenceIdSpace);
  }

  std::string evidence_id(std::size_t k) const { return format_evidence_id(evidence_[k]); }

  std::string next_filler_id() {
    for (;;) {
      if (ordinal_ >= kEvidenceIdSpace) {
        throw std::invalid_argument("generate_context_fixture: the document needs more than " +
                                    std::to_string(kEvidenceIdSpace) +
                                    " sections; lower target_tokens (at most kMaxFixtureTargetTokens)");
      }
      const auto number = static_cast<std::uint32_t>((stride_ * ordinal_ + offset_) % kEvidenceIdSpace);
      ++ordinal_;
      if (std::find(evidence_.begin(), evidence_.end(), number) == evidence_.end()) return format_evidence_id(number);
    }
  }

 private:
  std::vector<std::uint32_t> evidence_;
  std::uint64_t stride_ = 1;
  std::uint64_t offset_ = 0;
  std::uint64_t ordinal_ = 0;
};

std::string section_text(std::string_view id, std::string_view body) {
  std::string text;
  text.reserve(body.size() + id.size() + 5);
  text += '[';
  text += id;
  text += "] ";
  text += body;
  text += (!body.empty() && body.back() == '\n') ? "\n" : "\n\n";
  return text;
}

struct Section {
  std::string text;
  int evidence = -1;  // index into FamilyContent::evidence, -1 for filler
};

void validate_request(const FixtureRequest& request) {
  fixture_id(request.family, request.index);  // throws for a bad index
  if (!request.estimator.count) {
    throw std::invalid_argument("FixtureRequest.estimator has no counting function; use "
                                "conservative_byte_estimator() or custom_token_estimator()");
  }
  if (request.target_tokens > kMaxFixtureTargetTokens) {
    throw std::invalid_argument("FixtureRequest.target_tokens = " + std::to_string(request.target_tokens) +
                                " exceeds the maximum " + std::to_string(kMaxFixtureTargetTokens) +
                                " (the evidence-id space); lower it");
  }
  if (request.repository_snapshot && request.family != FixtureFamily::repository) {
    throw std::invalid_argument("FixtureRequest.repository_snapshot is set for family '" +
                                std::string(family_id(request.family)) +
                                "'; only the repository family uses a snapshot, leave it empty");
  }
}

std::string join_sections(const std::vector<Section>& sections, std::size_t begin, std::size_t end) {
  std::size_t bytes = 0;
  for (std::size_t i = begin; i < end; ++i) bytes += sections[i].text.size();
  std::string out;
  out.reserve(bytes);
  for (std::size_t i = begin; i < end; ++i) out += sections[i].text;
  return out;
}

// Trims the tail filler section so that the whole prompt lands on the target from below.
class TailFitter {
 public:
  TailFitter(const TokenEstimator& estimator, std::size_t target, const detail::FillerStream& filler, std::string id)
      : estimator_(estimator), target_(target), filler_(filler), id_(std::move(id)) {}

  // Returns the tail section text ("" for none) such that estimator(head + tail + foot) <= target,
  // maximal in words. `head_fits` must already hold: estimator(head + foot) <= target.
  std::string fit(const std::string& head, const std::string& foot) {
    head_ = &head;
    foot_ = &foot;
    const std::size_t fixed = estimator_(head) + estimator_(foot);
    const std::size_t local_budget = fixed < target_ ? target_ - fixed : 0;
    const double bytes_per_token =
        std::max(1.0, static_cast<double>(head.size() + foot.size()) / static_cast<double>(std::max<std::size_t>(1, fixed)));
    std::size_t want_bytes = static_cast<std::size_t>(static_cast<double>(local_budget + 16) * bytes_per_token * 1.25) + 64;
    candidate_ = filler_.tail(want_bytes);
    std::size_t units = local_fit(local_budget);
    // Newton-like steps on the whole-prompt estimate, then a galloping/bisecting search.
    std::size_t lo = 0;
    std::size_t hi = 0;  // 0: no known failing size
    for (int step = 0; step < 4; ++step) {
      const std::size_t total = whole(units);
      if (total <= target_) {
        lo = std::max(lo, units);
        const std::size_t deficit = target_ - total;
        if (deficit == 0) break;
        const std::size_t next = local_fit(tail_tokens(units) + deficit);
        if (next <= units) break;
        units = next;
      } else {
        hi = hi == 0 ? units : std::min(hi, units);
        const std::size_t excess = total - target_;
        const std::size_t current = tail_tokens(units);
        const std::size_t next = local_fit(current > excess ? current - excess : 0);
        if (next >= units) {
          units = units - 1;
        } else {
          units = next;
        }
      }
    }
    // Find a failing upper bound above lo.
    if (hi == 0) {
      std::size_t step = 1;
      for (;;) {
        const std::size_t probe = lo + step;
        ensure_units(probe);
        if (probe <= candidate_.cuts.size() && whole(probe) <= target_) {
          lo = probe;
          step *= 2;
        } else {
          hi = probe;
          break;
        }
      }
    }
    while (hi - lo > 1) {
      const std::size_t mid = lo + (hi - lo) / 2;
      if (mid <= candidate_.cuts.size() && whole(mid) <= target_) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    return section(lo);
  }

 private:
  std::string section(std::size_t units) const {
    return units == 0 ? std::string() : section_text(id_, candidate_.body(units));
  }
  std::size_t tail_tokens(std::size_t units) const { return units == 0 ? 0 : estimator_(section(units)); }
  std::size_t whole(std::size_t units) const {
    const std::string tail = section(units);
    std::string full;
    full.reserve(head_->size() + tail.size() + foot_->size());
    full += *head_;
    full += tail;
    full += *foot_;
    return estimator_(full);
  }
  void ensure_units(std::size_t units) {
    while (!candidate_.complete && candidate_.cuts.size() < units)
      candidate_ = filler_.tail(candidate_.text.size() * 2 + 64);
  }
  // Largest word count whose tail section alone fits `budget` tokens.
  std::size_t local_fit(std::size_t budget) {
    if (budget == 0) return 0;
    while (tail_tokens(candidate_.cuts.size()) <= budget) {
      if (candidate_.complete) return candidate_.cuts.size();  // the whole candidate fits
      candidate_ = filler_.tail(candidate_.text.size() * 2 + 64);
    }
    std::size_t lo = 0;
    std::size_t hi = candidate_.cuts.size();  // fails
    while (hi - lo > 1) {
      const std::size_t mid = lo + (hi - lo) / 2;
      if (tail_tokens(mid) <= budget) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  const TokenEstimator& estimator_;
  std::size_t target_;
  const detail::FillerStream& filler_;
  std::string id_;
  detail::TailCandidate candidate_;
  const std::string* head_ = nullptr;
  const std::string* foot_ = nullptr;
};

std::string fill_derivation(std::string derivation, const std::vector<std::string>& ids) {
  for (std::size_t k = 0; k < ids.size(); ++k)
    derivation = detail::replace_all(derivation, detail::evidence_ref(k), ids[k]);
  return derivation;
}

// What the prompt says before and after the document body.
struct Framing {
  std::string header;
  std::string trailer;
};

Framing prompt_framing(const std::string& cache_buster, const std::string& question) {
  Framing framing;
  if (!cache_buster.empty()) framing.header += cache_buster + "\n";
  framing.header += kPromptInstructions;
  framing.header += "\n";
  framing.header += kDocumentStartMarker;
  framing.header += "\n";
  framing.trailer = std::string(kDocumentEndMarker) + "\n\n" + std::string(kQuestionMarker) + " " + question + "\n";
  return framing;
}

// The fixture's identity and the fields copied from its request and content.
ContextFixture fixture_record(const FixtureRequest& request, const FamilyContent& content) {
  ContextFixture fixture;
  fixture.seed = request.seed;
  fixture.family = request.family;
  fixture.index = request.index;
  fixture.id = fixture_id(request.family, request.index);
  fixture.target_tokens = request.target_tokens;
  fixture.estimator_name = request.estimator.name;
  fixture.prefix_id = request.prefix_id;
  if (!request.prefix_id.empty()) fixture.cache_buster_line = cache_buster_line(request.prefix_id);
  fixture.question = content.question;
  fixture.expected_answer = content.expected_answer;
  return fixture;
}

// The evidence sections, indexed like FamilyContent::evidence.
struct EvidenceSections {
  std::vector<std::string> ids;
  std::vector<std::string> texts;
  std::vector<std::size_t> tokens;
  std::size_t total_tokens = 0;
};

EvidenceSections evidence_sections(const FamilyContent& content, const IdAllocator& ids,
                                   const TokenEstimator& estimate) {
  const std::size_t m = content.evidence.size();
  EvidenceSections evidence;
  evidence.ids.resize(m);
  evidence.texts.resize(m);
  evidence.tokens.resize(m);
  for (std::size_t k = 0; k < m; ++k) {
    evidence.ids[k] = ids.evidence_id(k);
    evidence.texts[k] = section_text(evidence.ids[k], content.evidence[k].body);
    evidence.tokens[k] = estimate(evidence.texts[k]);
    evidence.total_tokens += evidence.tokens[k];
  }
  return evidence;
}

void require_filler_room(const FixtureRequest& request, const std::string& id, std::size_t fixed) {
  if (request.target_tokens < fixed + kMinFillerTokens) {
    std::ostringstream msg;
    msg << "FixtureRequest.target_tokens = " << request.target_tokens << " is too small for fixture " << id
        << ": its fixed parts take " << fixed << " tokens and at least " << kMinFillerTokens
        << " filler tokens are needed; use target_tokens >= " << fixed + kMinFillerTokens;
    throw std::invalid_argument(msg.str());
  }
}

// Body sections in prompt order, before the tail filler is fitted.
struct Body {
  std::vector<Section> sections;
  std::size_t tail_position = 0;  // where the fitted tail filler goes
};

// Main pass: whole filler sections; evidence goes in once the body reaches its target depth.
Body lay_out_body(const FamilyContent& content, const EvidenceSections& evidence, std::size_t filler_budget,
                  detail::FillerStream& filler, IdAllocator& ids, const TokenEstimator& estimate) {
  const std::size_t m = content.evidence.size();
  const double body_total = static_cast<double>(filler_budget + evidence.total_tokens);
  std::vector<std::size_t> order(m);
  for (std::size_t k = 0; k < m; ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return content.evidence[a].target_depth < content.evidence[b].target_depth;
  });

  Body body;
  std::vector<Section>& sections = body.sections;
  std::size_t body_tokens = 0;
  std::size_t filler_used = 0;
  std::size_t next = 0;
  for (;;) {
    while (next < m && content.evidence[order[next]].target_depth * body_total <= static_cast<double>(body_tokens)) {
      sections.push_back({evidence.texts[order[next]], static_cast<int>(order[next])});
      body_tokens += evidence.tokens[order[next]];
      ++next;
    }
    detail::FillerPiece piece = filler.next();
    std::string id = ids.next_filler_id();
    std::string text = section_text(id, piece.body);
    const std::size_t tokens = estimate(text);
    if (filler_used + tokens > filler_budget) break;
    sections.push_back({std::move(text), -1});
    body_tokens += tokens;
    filler_used += tokens;
  }
  body.tail_position = sections.size();
  for (; next < m; ++next) sections.push_back({evidence.texts[order[next]], static_cast<int>(order[next])});
  return body;
}

// The tail section fills what is left; whole-prompt estimates make the fit exact from below even
// when the estimator is not additive over sections.
void insert_fitted_tail(Body& body, const Framing& framing, const FixtureRequest& request,
                        const detail::FillerStream& filler, IdAllocator& ids) {
  const TokenEstimator& estimate = request.estimator;
  std::vector<Section>& sections = body.sections;
  std::size_t split = body.tail_position;
  std::string head;
  std::string foot;
  for (;;) {
    head = framing.header + join_sections(sections, 0, split);
    foot = join_sections(sections, split, sections.size()) + framing.trailer;
    if (estimate(head + foot) <= request.target_tokens) break;
    // Only possible with a non-additive estimator: drop the last whole filler section and retry.
    std::size_t drop = split;
    while (drop > 0 && sections[drop - 1].evidence >= 0) --drop;
    if (drop == 0) {
      throw std::logic_error("generate_context_fixture: the estimator '" + estimate.name +
                             "' counts more tokens for the fixed parts than their separate estimates allow; "
                             "check that it is monotone in the text length");
    }
    sections.erase(sections.begin() + static_cast<std::ptrdiff_t>(drop - 1));
    --split;  // the erased section sat before the split point
  }
  TailFitter fitter(estimate, request.target_tokens, filler, ids.next_filler_id());
  std::string tail = fitter.fit(head, foot);
  if (!tail.empty())
    sections.insert(sections.begin() + static_cast<std::ptrdiff_t>(split), Section{std::move(tail), -1});
}

// Byte offsets into the assembled prompt.
struct PromptOffsets {
  std::size_t body_begin = 0;
  std::size_t body_end = 0;
  std::size_t question = 0;
  std::vector<std::size_t> sections;
};

PromptOffsets assemble_prompt(std::string& prompt, const Framing& framing, const std::vector<Section>& sections) {
  PromptOffsets offsets;
  std::size_t total_bytes = framing.header.size() + framing.trailer.size();
  for (const auto& section : sections) total_bytes += section.text.size();
  prompt.reserve(total_bytes);
  prompt += framing.header;
  offsets.body_begin = prompt.size();
  offsets.sections.reserve(sections.size());
  for (const auto& section : sections) {
    offsets.sections.push_back(prompt.size());
    prompt += section.text;
  }
  offsets.body_end = prompt.size();
  prompt += framing.trailer;
  offsets.question = prompt.rfind(kQuestionMarker);
  return offsets;
}

// Token counts of the whole prompt and of its body and question boundaries.
void measure_prompt(ContextFixture& fixture, const PromptOffsets& offsets, std::size_t section_count,
                    const FixtureRequest& request) {
  const TokenEstimator& estimate = request.estimator;
  const std::string_view view(fixture.prompt);
  fixture.prompt_tokens = estimate(view);
  if (fixture.prompt_tokens > request.target_tokens) {
    throw std::logic_error("generate_context_fixture: internal error, prompt estimate " +
                           std::to_string(fixture.prompt_tokens) + " exceeds the target " +
                           std::to_string(request.target_tokens));
  }
  fixture.section_count = section_count;
  fixture.body_token_begin = estimate(view.substr(0, offsets.body_begin));
  fixture.body_token_end = estimate(view.substr(0, offsets.body_end));
  fixture.question_token_offset = estimate(view.substr(0, offsets.question));
}

// Where each evidence section landed, and the spans the required evidence covers.
void record_placements(ContextFixture& fixture, const std::vector<Section>& sections, const PromptOffsets& offsets,
                       const FamilyContent& content, const std::vector<std::string>& evidence_ids,
                       const TokenEstimator& estimate) {
  const std::string_view view(fixture.prompt);
  const double body_span =
      static_cast<double>(std::max<std::size_t>(1, fixture.body_token_end - fixture.body_token_begin));
  std::size_t first_required_begin = std::string::npos;
  std::size_t last_required_end = 0;
  for (std::size_t s = 0; s < sections.size(); ++s) {
    if (sections[s].evidence < 0) continue;
    const auto k = static_cast<std::size_t>(sections[s].evidence);
    EvidencePlacement placement;
    placement.evidence_id = evidence_ids[k];
    placement.required = content.evidence[k].required;
    placement.label = content.evidence[k].label;
    placement.text = content.evidence[k].body;
    placement.target_depth = content.evidence[k].target_depth;
    placement.byte_offset = offsets.sections[s];
    placement.token_offset = estimate(view.substr(0, offsets.sections[s]));
    placement.depth = static_cast<double>(placement.token_offset - fixture.body_token_begin) / body_span;
    if (placement.required) {
      first_required_begin = std::min(first_required_begin, placement.token_offset);
      last_required_end =
          std::max(last_required_end, estimate(view.substr(0, offsets.sections[s] + sections[s].text.size())));
    }
    fixture.placements.push_back(std::move(placement));
  }
  for (std::size_t k = 0; k < content.evidence.size(); ++k) {
    if (content.evidence[k].required) fixture.required_evidence.push_back(evidence_ids[k]);
  }
  fixture.required_span_tokens = fixture.question_token_offset - first_required_begin;
  fixture.evidence_spread_tokens = last_required_end - first_required_begin;
}

// The repository's digest over its file sections in document order, and what of a snapshot it used.
RepositoryProvenance repository_provenance(const std::vector<Section>& sections, const FixtureRequest& request) {
  RepositoryProvenance repo;
  core::Sha256 hasher;
  for (const auto& section : sections) {
    const std::size_t body_start = section.text.find("] ") + 2;
    const std::string_view body = std::string_view(section.text).substr(body_start);
    const std::size_t newline = body.find('\n');
    const std::string_view path = body.substr(6, newline - 6);  // after "FILE: "
    std::string_view file_content = body.substr(newline + 1);
    file_content.remove_suffix(1);  // the blank separator line
    detail::hash_repository_file(hasher, path, file_content);
    ++repo.file_count;
  }
  repo.sha256 = hasher.hex_digest();
  if (const auto& snapshot = request.repository_snapshot) {
    repo.synthetic = false;
    repo.snapshot_files_used = repo.file_count;
    repo.generator = snapshot->manifest.is_object() ? snapshot->manifest.value("package", std::string()) + " " +
                                                          snapshot->manifest.value("version", std::string())
                                                    : std::string("unpinned snapshot");
    repo.license = snapshot->license;
    repo.snapshot_root = snapshot->root;
    repo.snapshot_manifest = snapshot->manifest;
    repo.snapshot_sha256 = snapshot->sha256;
  } else {
    repo.generator = std::string(detail::kPseudoRepoGeneratorName);
    repo.generator_version = detail::kPseudoRepoGeneratorVersion;
    repo.license = std::string(detail::kGeneratedContentLicense);
  }
  return repo;
}

void record_filler_provenance(ContextFixture& fixture, const FamilyContent& content,
                              const std::vector<Section>& sections, const FixtureRequest& request) {
  if (!content.code_filler) {
    fixture.filler = {std::string(detail::kProseGeneratorName), detail::kProseGeneratorVersion,
                      std::string(detail::kGeneratedContentLicense)};
    return;
  }
  fixture.repository = repository_provenance(sections, request);
  if (request.repository_snapshot) {
    fixture.filler = {fixture.repository->generator, 0, fixture.repository->license};
  } else {
    fixture.filler = {std::string(detail::kPseudoRepoGeneratorName), detail::kPseudoRepoGeneratorVersion,
                      std::string(detail::kGeneratedContentLicense)};
  }
}

}  // namespace

ContextFixture generate_context_fixture(const FixtureRequest& request) {
  validate_request(request);
  const TokenEstimator& estimate = request.estimator;
  const std::uint64_t fixture_seed = core::stream_seed(
      request.seed, {static_cast<std::uint64_t>(request.family), static_cast<std::uint64_t>(request.index)});
  core::Rng content_rng(core::stream_seed(fixture_seed, {kContentStream}));
  FamilyContent content = build_content(request, content_rng);
  core::Rng id_rng(core::stream_seed(fixture_seed, {kIdStream}));
  IdAllocator ids(id_rng, content.evidence.size());

  const std::set<std::string> reserved(content.reserved_paths.begin(), content.reserved_paths.end());
  const std::uint64_t filler_seed = core::stream_seed(fixture_seed, {kFillerStream});
  std::unique_ptr<detail::FillerStream> filler =
      request.repository_snapshot ? detail::make_pinned_code_filler(request.repository_snapshot, reserved)
      : content.code_filler       ? detail::make_code_filler(filler_seed, reserved)
                                  : detail::make_prose_filler(filler_seed);

  ContextFixture fixture = fixture_record(request, content);
  const Framing framing = prompt_framing(fixture.cache_buster_line, content.question);
  std::size_t fixed = estimate(framing.header) + estimate(framing.trailer);
  const EvidenceSections evidence = evidence_sections(content, ids, estimate);
  fixed += evidence.total_tokens;
  require_filler_room(request, fixture.id, fixed);
  const std::size_t filler_budget = request.target_tokens - fixed;

  Body body = lay_out_body(content, evidence, filler_budget, *filler, ids, estimate);
  insert_fitted_tail(body, framing, request, *filler, ids);

  const PromptOffsets offsets = assemble_prompt(fixture.prompt, framing, body.sections);
  measure_prompt(fixture, offsets, body.sections.size(), request);
  record_placements(fixture, body.sections, offsets, content, evidence.ids, estimate);
  fixture.derivation = fill_derivation(content.derivation, evidence.ids);
  fixture.family_details = content.details;
  record_filler_provenance(fixture, content, body.sections, request);
  return fixture;
}

}  // namespace k3lab::validate
