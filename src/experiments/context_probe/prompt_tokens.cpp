#include "context_probe/prompt_tokens.hpp"

#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "k3lab/api/bpe_tokenizer.hpp"
#include "k3lab/core/sha256.hpp"

namespace k3lab::experiments::context_probe {

nlohmann::json PromptTokenCounter::to_json() const {
  nlohmann::json j = {{"name", estimator.name}, {"exact", exact}};
  if (exact) {
    j["vocabulary"] = vocabulary;
    j["vocabulary_sha256"] = vocabulary_sha256;
  }
  return j;
}

std::optional<std::filesystem::path> configured_vocabulary(const Parameters& p, const nlohmann::json& options) {
  std::optional<std::filesystem::path> from_options;
  if (options.is_object() && options.contains("tokenizer_vocab")) {
    if (!options["tokenizer_vocab"].is_string()) {
      throw std::invalid_argument("context-probe: option tokenizer_vocab must be a file path string");
    }
    from_options = options["tokenizer_vocab"].get<std::string>();
  } else if (const char* env = std::getenv(kTokenizerVocabEnv); env && *env) {
    from_options = std::filesystem::path(env);
  }
  if (!p.tokenizer_vocab.empty()) {
    if (from_options && *from_options != std::filesystem::path(p.tokenizer_vocab)) {
      throw std::invalid_argument("context-probe: the protocol's parameters.tokenizer_vocab (" + p.tokenizer_vocab +
                                  ") and the run's tokenizer_vocab (" + from_options->string() +
                                  ") differ; the frozen protocol decides, so drop the option or $" +
                                  kTokenizerVocabEnv);
    }
    return std::filesystem::path(p.tokenizer_vocab);
  }
  return from_options;
}

PromptTokenCounter make_prompt_token_counter(const std::optional<std::filesystem::path>& vocabulary) {
  PromptTokenCounter counter;
  if (!vocabulary) {
    counter.estimator = validate::conservative_byte_estimator();
    return counter;
  }
  std::ifstream in(*vocabulary, std::ios::binary);
  if (!in) {
    throw std::invalid_argument("context-probe: cannot read the tokenizer vocabulary " + vocabulary->string() +
                                "; give a tiktoken-format file (Kimi's tiktoken.model) or none for the "
                                "conservative estimate");
  }
  std::ostringstream bytes;
  bytes << in.rdbuf();
  const std::string text = bytes.str();
  std::istringstream lines(text);
  auto tokenizer = std::make_shared<api::BpeTokenizer>(api::parse_tiktoken_ranks(lines, vocabulary->string()));
  counter.exact = true;
  counter.vocabulary = vocabulary->string();
  counter.vocabulary_sha256 = core::sha256_hex(text);
  counter.estimator = validate::custom_token_estimator(
      "tiktoken:" + vocabulary->filename().string() + "@" + counter.vocabulary_sha256.substr(0, 12),
      [tokenizer](std::string_view t) { return tokenizer->encode_ordinary(t).size(); });
  return counter;
}

}  // namespace k3lab::experiments::context_probe
