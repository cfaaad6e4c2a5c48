#include "k3lab/validate/answer_normalize.hpp"

#include "detail/text.hpp"

namespace k3lab::validate {
namespace {

using detail::is_alnum;
using detail::is_digit;

bool is_ascii_punct(unsigned char c) { return c < 128 && ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126)); }

}  // namespace

std::string normalize_answer(std::string_view text) {
  std::string spaced;
  spaced.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const char prev = i > 0 ? text[i - 1] : ' ';
    const char next = i + 1 < text.size() ? text[i + 1] : ' ';
    if ((c == ',' || c == '_' || c == '\'') && is_digit(prev) && is_digit(next)) continue;
    if (c == '.' && is_digit(prev) && is_digit(next)) {
      spaced += c;
      continue;
    }
    if (c == '-' && ((is_alnum(prev) && is_alnum(next)) || (!is_alnum(prev) && is_digit(next)))) {
      spaced += c;
      continue;
    }
    if (detail::is_space(c) || is_ascii_punct(static_cast<unsigned char>(c))) {
      spaced += ' ';
      continue;
    }
    spaced += detail::lower(c);
  }
  std::string out;
  out.reserve(spaced.size());
  for (char c : spaced) {
    if (c == ' ' && (out.empty() || out.back() == ' ')) continue;
    out += c;
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

bool exact_answer_match(std::string_view expected, std::string_view answer) {
  return detail::trim(expected) == detail::trim(answer);
}

bool normalized_answer_match(std::string_view expected, std::string_view answer) {
  const std::string want = normalize_answer(expected);
  return !want.empty() && want == normalize_answer(answer);
}

bool contains_normalized_phrase(std::string_view text, std::string_view phrase) {
  const std::string haystack = normalize_answer(text);
  const std::string needle = normalize_answer(phrase);
  if (needle.empty()) return false;
  std::size_t pos = 0;
  while ((pos = haystack.find(needle, pos)) != std::string::npos) {
    const bool starts = pos == 0 || haystack[pos - 1] == ' ';
    const bool ends = pos + needle.size() == haystack.size() || haystack[pos + needle.size()] == ' ';
    if (starts && ends) return true;
    ++pos;
  }
  return false;
}

std::vector<std::string> number_tokens(std::string_view text) {
  const std::string normalized = normalize_answer(text);
  std::vector<std::string> numbers;
  std::size_t i = 0;
  while (i < normalized.size()) {
    std::size_t j = normalized.find(' ', i);
    if (j == std::string::npos) j = normalized.size();
    const std::string_view word = std::string_view(normalized).substr(i, j - i);
    std::size_t k = word.empty() || word[0] != '-' ? 0 : 1;
    bool numeric = k < word.size();
    bool seen_point = false;
    for (; k < word.size() && numeric; ++k) {
      if (word[k] == '.' && !seen_point) {
        seen_point = true;
      } else if (!is_digit(word[k])) {
        numeric = false;
      }
    }
    if (numeric) numbers.emplace_back(word);
    i = j + 1;
  }
  return numbers;
}

}  // namespace k3lab::validate
