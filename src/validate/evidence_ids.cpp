#include "k3lab/validate/evidence_ids.hpp"

#include <algorithm>
#include <stdexcept>

#include "detail/text.hpp"

namespace k3lab::validate {
namespace {

using detail::is_alnum;
using detail::is_digit;

std::string canonical_from_digits(std::string_view digits) {
  std::size_t first = 0;
  while (first + 1 < digits.size() && digits[first] == '0') ++first;
  const std::string_view significant = digits.substr(first);
  if (significant.size() > static_cast<std::size_t>(kEvidenceIdDigits)) return "E" + std::string(digits);
  std::string out = "E";
  out.append(static_cast<std::size_t>(kEvidenceIdDigits) - significant.size(), '0');
  out += significant;
  return out;
}

// Length of an id starting at `pos` ('E'/'e', optional '-', digits), or 0.
std::size_t id_length_at(std::string_view text, std::size_t pos, std::string_view& digits) {
  if (pos >= text.size() || (text[pos] != 'E' && text[pos] != 'e')) return 0;
  std::size_t i = pos + 1;
  if (i < text.size() && text[i] == '-') ++i;
  const std::size_t digit_begin = i;
  while (i < text.size() && is_digit(text[i])) ++i;
  if (i == digit_begin) return 0;
  if (i < text.size() && is_alnum(text[i])) return 0;
  digits = text.substr(digit_begin, i - digit_begin);
  return i - pos;
}

}  // namespace

std::string format_evidence_id(std::uint32_t number) {
  if (number >= kEvidenceIdSpace) {
    throw std::invalid_argument("format_evidence_id: " + std::to_string(number) + " is outside the id space 0.." +
                                std::to_string(kEvidenceIdSpace - 1));
  }
  return canonical_from_digits(std::to_string(number));
}

std::optional<std::string> canonical_evidence_id(std::string_view token) {
  token = detail::trim(token);
  if (token.size() >= 2 && token.front() == '[' && token.back() == ']') token = token.substr(1, token.size() - 2);
  std::string_view digits;
  if (id_length_at(token, 0, digits) != token.size()) return std::nullopt;
  return canonical_from_digits(digits);
}

std::vector<std::string> extract_evidence_ids(std::string_view text) {
  std::vector<std::string> ids;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (i > 0 && is_alnum(text[i - 1])) continue;
    std::string_view digits;
    const std::size_t length = id_length_at(text, i, digits);
    if (length == 0) continue;
    std::string id = canonical_from_digits(digits);
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(std::move(id));
    i += length - 1;
  }
  return ids;
}

EvidenceCoverage evidence_coverage(const std::vector<std::string>& required, const std::vector<std::string>& cited) {
  auto canonical_list = [](const std::vector<std::string>& ids) {
    std::vector<std::string> out;
    for (const auto& id : ids) {
      std::optional<std::string> canonical = canonical_evidence_id(id);
      std::string value = canonical ? *canonical : std::string(detail::trim(id));
      if (std::find(out.begin(), out.end(), value) == out.end()) out.push_back(std::move(value));
    }
    return out;
  };
  const std::vector<std::string> need = canonical_list(required);
  const std::vector<std::string> got = canonical_list(cited);
  EvidenceCoverage result;
  for (const auto& id : need) {
    if (std::find(got.begin(), got.end(), id) != got.end()) {
      result.cited_required.push_back(id);
    } else {
      result.missing_required.push_back(id);
    }
  }
  for (const auto& id : got) {
    if (std::find(need.begin(), need.end(), id) == need.end()) result.cited_other.push_back(id);
  }
  result.coverage = need.empty() ? 1.0
                                 : static_cast<double>(result.cited_required.size()) / static_cast<double>(need.size());
  return result;
}

}  // namespace k3lab::validate
