#include "k3lab/train/builtin_suite.hpp"

#include <algorithm>
#include <stdexcept>

#include "k3lab/core/rng.hpp"
#include "k3lab/core/sha256.hpp"
#include "k3lab/train/builtin_corpus.hpp"
#include "k3lab/train/byte_tokenizer.hpp"
#include "k3lab/train/dataset.hpp"

namespace k3lab::train {
namespace {

using Tokens = std::vector<std::int64_t>;

// Step 1: the loader's own validation split, so the suite cannot drift from what training excludes.
Tokens builtin_validation_bytes() {
  const auto data = load_dataset({kBuiltinTinyDataset, "bytes", kByteVocabSize, "unused"});
  return data.validation.slice(0, data.validation.size());
}

// Step 3: the ending's length within a passage that starts at `passage`.
std::int64_t suite_ending_length(const Tokens& v, std::int64_t passage, const BuiltinSuiteSpec& spec) {
  const std::int64_t start = passage + spec.context_bytes;
  for (std::int64_t length = spec.ending_max_bytes; length >= spec.ending_min_bytes; --length) {
    const auto last = v[static_cast<std::size_t>(start + length - 1)];
    if (last == ' ' || last == '\n') return length;
  }
  return spec.ending_max_bytes;
}

// Step 4 for item i: the candidates and the label.
MultipleChoiceItem suite_item(std::int64_t i, const std::vector<Tokens>& contexts, const std::vector<Tokens>& endings,
                              std::uint64_t seed) {
  const auto passages = static_cast<std::uint64_t>(endings.size());
  const auto& truth = endings[static_cast<std::size_t>(i)];
  core::Rng rng(core::stream_seed(seed, {static_cast<std::uint64_t>(i)}));
  std::vector<std::int64_t> drawn;
  std::vector<Tokens> candidates;
  for (std::uint64_t draws = 0; static_cast<std::int64_t>(candidates.size()) < kBuiltinSuiteCandidates - 1; ++draws) {
    // Far more draws than needed means too few distinct endings: fail instead of looping.
    if (draws > 64 * passages) {
      throw std::invalid_argument("builtin suite: item " + std::to_string(i) + " cannot draw " +
                                  std::to_string(kBuiltinSuiteCandidates - 1) +
                                  " distinct distractor endings; use longer endings or more passages");
    }
    const auto j = static_cast<std::int64_t>(rng.below(passages));
    const auto& ending = endings[static_cast<std::size_t>(j)];
    const bool repeated = std::find(drawn.begin(), drawn.end(), j) != drawn.end() ||
                          std::find(candidates.begin(), candidates.end(), ending) != candidates.end();
    if (j == i || repeated || ending == truth) continue;
    drawn.push_back(j);
    candidates.push_back(ending);
  }
  MultipleChoiceItem item;
  item.label = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(kBuiltinSuiteCandidates)));
  candidates.insert(candidates.begin() + item.label, truth);
  item.context = contexts[static_cast<std::size_t>(i)];
  item.endings = std::move(candidates);
  return item;
}

}  // namespace

void BuiltinSuiteSpec::validate() const {
  if (context_bytes < 1) throw std::invalid_argument("builtin suite: context_bytes must be at least 1");
  if (ending_min_bytes < 1 || ending_max_bytes < ending_min_bytes) {
    throw std::invalid_argument("builtin suite: need 1 <= ending_min_bytes <= ending_max_bytes (got " +
                                std::to_string(ending_min_bytes) + ", " + std::to_string(ending_max_bytes) + ")");
  }
}

std::string multiple_choice_items_sha256(const std::vector<MultipleChoiceItem>& items) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& item : items) {
    list.push_back({{"context", item.context}, {"endings", item.endings}, {"label", item.label}});
  }
  return core::sha256_hex(list.dump());
}

BuiltinSuite make_builtin_suite(const BuiltinSuiteSpec& spec) {
  spec.validate();
  const Tokens v = builtin_validation_bytes();
  const std::int64_t passage_bytes = spec.context_bytes + spec.ending_max_bytes;
  const std::int64_t passages = static_cast<std::int64_t>(v.size()) / passage_bytes;
  // Three distinct distractors need at least four passages.
  if (passages < kBuiltinSuiteCandidates) {
    throw std::invalid_argument("builtin suite: passages of " + std::to_string(passage_bytes) + " bytes give only " +
                                std::to_string(passages) + " passages from " + std::to_string(v.size()) +
                                " held-out bytes; shorten context_bytes or ending_max_bytes");
  }
  BuiltinSuite suite;
  suite.spec = spec;
  std::vector<Tokens> contexts, endings;
  for (std::int64_t p = 0; p < passages; ++p) {
    const std::int64_t start = p * passage_bytes;
    const auto at = [&](std::int64_t offset) { return v.begin() + static_cast<std::ptrdiff_t>(offset); };
    contexts.emplace_back(at(start), at(start + spec.context_bytes));
    const auto length = suite_ending_length(v, start, spec);
    endings.emplace_back(at(start + spec.context_bytes), at(start + spec.context_bytes + length));
    suite.passage_offsets.push_back(start);
  }
  for (std::int64_t i = 0; i < passages; ++i) suite.items.push_back(suite_item(i, contexts, endings, spec.seed));
  const std::string_view text = builtin_tiny_text();
  suite.validation_bytes = static_cast<std::int64_t>(v.size());
  suite.validation_offset = static_cast<std::int64_t>(text.size()) - suite.validation_bytes;
  suite.validation_sha256 = core::sha256_hex(text.substr(static_cast<std::size_t>(suite.validation_offset)));
  suite.items_sha256 = multiple_choice_items_sha256(suite.items);
  return suite;
}

nlohmann::json BuiltinSuite::derivation() const {
  return {{"suite", kBuiltinSuiteId},
          {"source",
           "validation bytes of dataset builtin-tiny (the last 10% of the embedded Jargon File 4.4.7 "
           "excerpt, fixtures/corpus/); training reads only the first 90%"},
          {"licence", "public domain"},
          {"corpus_sha256", std::string(kBuiltinTinySha256)},
          {"validation_offset", validation_offset},
          {"validation_bytes", validation_bytes},
          {"validation_sha256", validation_sha256},
          {"tokenizer", "bytes"},
          {"generator", "k3lab core::Rng (xoshiro256**), item i seeded with stream_seed(seed, {i})"},
          {"seed", spec.seed},
          {"context_bytes", spec.context_bytes},
          {"ending_min_bytes", spec.ending_min_bytes},
          {"ending_max_bytes", spec.ending_max_bytes},
          {"passage_bytes", spec.context_bytes + spec.ending_max_bytes},
          {"candidates", kBuiltinSuiteCandidates},
          {"items", static_cast<std::int64_t>(items.size())},
          {"chance", 1.0 / static_cast<double>(kBuiltinSuiteCandidates)},
          {"items_sha256", items_sha256}};
}

}  // namespace k3lab::train
