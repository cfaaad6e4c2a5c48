#pragma once
// The regex pre-tokenizer of a tiktoken-style BPE (PCRE2 with UTF and UCP).
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace k3lab::api {

// Kimi K2/K3's pat_str (tokenization_kimi.py; identical in both), translated to PCRE2. The original
// uses class intersection `[\p{Lu}...\p{M}&&[^\p{Han}]]`, which PCRE2 lacks; `(?:(?!\p{Han})[...])`
// expresses the same set. Alternatives, in order: Han runs; cased words (letters minus Han) with an
// optional leading non-letter/digit and English contractions; 1-3 digit groups; punctuation runs
// with trailing newlines; newline runs; trailing whitespace; whitespace.
// Kimi's Python wrapper also slices inputs longer than 400,000 characters and whitespace runs
// longer than 25,000 before encoding; that slicing is not reproduced (it only matters at those
// boundaries).
inline constexpr std::string_view kKimiPretokenizePattern =
    R"([\p{Han}]+)"
    R"(|[^\r\n\p{L}\p{N}]?(?:(?!\p{Han})[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}])*(?:(?!\p{Han})[\p{Ll}\p{Lm}\p{Lo}\p{M}])+(?i:'s|'t|'re|'ve|'m|'ll|'d)?)"
    R"(|[^\r\n\p{L}\p{N}]?(?:(?!\p{Han})[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}])+(?:(?!\p{Han})[\p{Ll}\p{Lm}\p{Lo}\p{M}])*(?i:'s|'t|'re|'ve|'m|'ll|'d)?)"
    R"(|\p{N}{1,3})"
    R"(| ?[^\s\p{L}\p{N}]+[\r\n]*)"
    R"(|\s*[\r\n]+)"
    R"(|\s+(?!\S))"
    R"(|\s+)";

class PreTokenizer {
 public:
  // Compiles the pattern; std::invalid_argument with PCRE2's message and offset when it is invalid.
  explicit PreTokenizer(std::string pattern = std::string(kKimiPretokenizePattern));
  ~PreTokenizer();
  PreTokenizer(PreTokenizer&&) noexcept;
  PreTokenizer& operator=(PreTokenizer&&) noexcept;

  // The successive matches, which must tile the text: a gap the pattern does not match is an error
  // (tiktoken would drop it silently). Throws std::invalid_argument for invalid UTF-8.
  // Thread-safe.
  std::vector<std::string_view> split(std::string_view text) const;

  const std::string& pattern() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace k3lab::api
