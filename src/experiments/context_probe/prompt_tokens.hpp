#pragma once
// How context-probe counts prompt tokens, both to size fixtures and to check budgets before a call.
//
// With a tiktoken-format vocabulary (Kimi ships tiktoken.model), the count is exact: fixtures are
// fitted against the real tokenizer. Without one it is validate's conservative byte estimator
// (3 bytes per token). That estimator over-counts k3lab's generated fixture text (lower-case English
// and ids run about 5-6 bytes per token in large BPE vocabularies), so it bounds OUR prompts, not
// arbitrary text. The api layer's universal bound (1 token per byte) is deliberately not used: at
// that bound the 1,048,576-token arm would carry about a quarter of its budget in real tokens and
// the experiment would not probe the context length it names. Observed usage.prompt_tokens are
// recorded beside the planned count so a paid window can confirm the bound held (a cell whose
// observed tokens break its budget is invalid).
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "context_probe/parameters.hpp"
#include "k3lab/validate/token_budget.hpp"

namespace k3lab::experiments::context_probe {

struct PromptTokenCounter {
  validate::TokenEstimator estimator;
  bool exact = false;
  std::string vocabulary;         // the file, when exact
  std::string vocabulary_sha256;  // of its bytes, when exact

  nlohmann::json to_json() const;
};

inline constexpr const char* kTokenizerVocabEnv = "K3LAB_TOKENIZER_VOCAB";

// The vocabulary to use: parameters.tokenizer_vocab (part of the frozen design) when set, else
// options.tokenizer_vocab, else $K3LAB_TOKENIZER_VOCAB, else none. Throws std::invalid_argument when
// the protocol and the options name different files, or an option is not a string.
std::optional<std::filesystem::path> configured_vocabulary(const Parameters& p, const nlohmann::json& options);

// Throws std::invalid_argument naming the file when it cannot be read or parsed.
PromptTokenCounter make_prompt_token_counter(const std::optional<std::filesystem::path>& vocabulary);

}  // namespace k3lab::experiments::context_probe
