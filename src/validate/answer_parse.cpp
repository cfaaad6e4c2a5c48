#include "k3lab/validate/answer_parse.hpp"

#include <array>
#include <optional>

#include "detail/text.hpp"
#include "k3lab/validate/evidence_ids.hpp"

namespace k3lab::validate {
namespace {

using detail::is_alpha;
using detail::istarts_with;
using detail::skip_decoration;
using detail::trim;

constexpr std::array<std::string_view, 2> kAnswerMarkers = {"final answer", "answer"};
constexpr std::array<std::string_view, 7> kEvidenceMarkers = {"supporting evidence", "cited evidence", "evidence ids",
                                                              "evidence id",         "evidence",       "citations",
                                                              "sources"};

std::string_view skip_emphasis(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && std::string_view(" \t*_").find(s[i]) != std::string_view::npos) ++i;
  return s.substr(i);
}

// If `text` starts with one of `markers` followed by a separator (':' '=' '-'), returns the rest.
template <std::size_t N>
std::optional<std::string_view> after_marker(std::string_view text, const std::array<std::string_view, N>& markers) {
  for (std::string_view marker : markers) {
    if (!istarts_with(text, marker)) continue;
    std::string_view rest = text.substr(marker.size());
    if (!rest.empty() && is_alpha(rest[0])) continue;  // "answers", "evidenced"
    rest = skip_emphasis(rest);
    if (rest.empty() || (rest[0] != ':' && rest[0] != '=' && rest[0] != '-')) continue;
    return skip_emphasis(rest.substr(1));
  }
  return std::nullopt;
}

// Position of an evidence marker inside a line (for "ANSWER: 42 EVIDENCE: E1"), or npos.
std::size_t inline_evidence_marker(std::string_view line) {
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (i > 0 && detail::is_alnum(line[i - 1])) continue;
    if (after_marker(line.substr(i), kEvidenceMarkers)) return i;
  }
  return std::string_view::npos;
}

std::string clean_answer(std::string_view answer) {
  answer = trim(answer);
  while (!answer.empty() && std::string_view("*_;,|(").find(answer.back()) != std::string_view::npos) {
    answer.remove_suffix(1);
    answer = trim(answer);
  }
  while (!answer.empty() && std::string_view("*_").find(answer.front()) != std::string_view::npos) {
    answer.remove_prefix(1);
  }
  return std::string(trim(answer));
}

}  // namespace

ParsedAnswer parse_model_answer(std::string_view text) {
  const std::vector<std::string_view> lines = detail::split_lines(text);
  ParsedAnswer parsed;
  std::optional<std::size_t> answer_line;
  std::string_view answer_rest;
  std::optional<std::size_t> evidence_line;
  std::string_view evidence_rest;

  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = skip_decoration(lines[i]);
    if (auto rest = after_marker(line, kAnswerMarkers)) {
      answer_line = i;
      answer_rest = *rest;
      const std::size_t inline_at = inline_evidence_marker(answer_rest);
      if (inline_at != std::string_view::npos) {
        evidence_line = i;
        evidence_rest = *after_marker(answer_rest.substr(inline_at), kEvidenceMarkers);
        answer_rest = answer_rest.substr(0, inline_at);
      }
      continue;
    }
    if (auto rest = after_marker(line, kEvidenceMarkers)) {
      evidence_line = i;
      evidence_rest = *rest;
    }
  }

  if (answer_line) {
    parsed.has_answer_marker = true;
    std::string answer = clean_answer(answer_rest);
    // "ANSWER:" alone on its line: the answer is the next non-empty line that is not a marker line.
    for (std::size_t i = *answer_line + 1; answer.empty() && i < lines.size(); ++i) {
      const std::string_view line = skip_decoration(lines[i]);
      if (trim(line).empty()) continue;
      if (after_marker(line, kEvidenceMarkers)) break;
      answer = clean_answer(line);
    }
    parsed.answer = std::move(answer);
  } else {
    for (std::string_view line : lines) {
      const std::string_view stripped = skip_decoration(line);
      if (trim(stripped).empty() || after_marker(stripped, kEvidenceMarkers)) continue;
      parsed.answer = clean_answer(stripped);
      break;
    }
  }

  if (evidence_line) {
    parsed.has_evidence_marker = true;
    std::string evidence_text(evidence_rest);
    // Ids may continue on the following lines (bullets), up to the next ANSWER marker.
    for (std::size_t i = *evidence_line + 1; i < lines.size(); ++i) {
      if (after_marker(skip_decoration(lines[i]), kAnswerMarkers)) break;
      evidence_text += '\n';
      evidence_text += lines[i];
    }
    parsed.evidence_ids = extract_evidence_ids(evidence_text);
  } else {
    parsed.evidence_ids = extract_evidence_ids(text);
  }
  return parsed;
}

}  // namespace k3lab::validate
