// Locale-free number formatting and XML escaping shared by every renderer in src/report.
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

#include "k3lab/report/svg.hpp"

namespace k3lab::report {

namespace {

std::string non_finite_text(double value) {
  if (std::isnan(value)) return "NaN";
  return value > 0 ? "inf" : "-inf";
}

std::string to_chars_text(double value, std::chars_format format, int precision) {
  std::array<char, 512> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value, format, precision);
  if (result.ec != std::errc()) {
    throw std::runtime_error("internal error: number formatting overflowed its buffer");
  }
  return std::string(buffer.data(), result.ptr);
}

bool is_negative_zero_text(const std::string& text) {
  if (text.empty() || text[0] != '-') return false;
  for (std::size_t i = 1; i < text.size(); ++i) {
    const char c = text[i];
    if (c == 'e' || c == 'E') break;  // "-0e+00" is still zero
    if (c != '0' && c != '.') return false;
  }
  return true;
}

bool is_continuation(unsigned char byte) { return (byte & 0xC0u) == 0x80u; }

// Length of the valid UTF-8 sequence starting at text[i] that XML allows, or 0 if it is invalid.
std::size_t valid_utf8_length(std::string_view text, std::size_t i) {
  const auto at = [&](std::size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const std::size_t left = text.size() - i;
  const unsigned char lead = at(0);
  if (lead >= 0xC2 && lead <= 0xDF) {
    return left >= 2 && is_continuation(at(1)) ? 2 : 0;
  }
  if (lead >= 0xE0 && lead <= 0xEF) {
    if (left < 3 || !is_continuation(at(1)) || !is_continuation(at(2))) return 0;
    if (lead == 0xE0 && at(1) < 0xA0) return 0;  // overlong
    if (lead == 0xED && at(1) > 0x9F) return 0;  // UTF-16 surrogates
    if (lead == 0xEF && at(1) == 0xBF && (at(2) == 0xBE || at(2) == 0xBF)) return 0;  // U+FFFE/F
    return 3;
  }
  if (lead >= 0xF0 && lead <= 0xF4) {
    if (left < 4 || !is_continuation(at(1)) || !is_continuation(at(2)) || !is_continuation(at(3))) {
      return 0;
    }
    if (lead == 0xF0 && at(1) < 0x90) return 0;  // overlong
    if (lead == 0xF4 && at(1) > 0x8F) return 0;  // beyond U+10FFFF
    return 4;
  }
  return 0;
}

}  // namespace

std::string format_fixed(double value, int decimals) {
  if (!std::isfinite(value)) return non_finite_text(value);
  if (decimals < 0 || decimals > 17) {
    throw std::invalid_argument("format_fixed: decimals must be 0..17, got " + std::to_string(decimals));
  }
  std::string text = to_chars_text(value, std::chars_format::fixed, decimals);
  if (text.find('.') != std::string::npos) {
    while (text.back() == '0') text.pop_back();
    if (text.back() == '.') text.pop_back();
  }
  if (is_negative_zero_text(text)) return "0";
  return text;
}

std::string format_significant(double value, int digits) {
  if (!std::isfinite(value)) return non_finite_text(value);
  if (digits < 1 || digits > 17) {
    throw std::invalid_argument("format_significant: digits must be 1..17, got " + std::to_string(digits));
  }
  std::string text = to_chars_text(value, std::chars_format::general, digits);
  if (is_negative_zero_text(text)) return "0";
  return text;
}

std::string group_thousands(std::int64_t value) {
  const std::string digits = std::to_string(value);
  const std::size_t sign = value < 0 ? 1 : 0;
  std::string out = digits.substr(0, sign);
  for (std::size_t i = sign; i < digits.size(); ++i) {
    if (i > sign && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string format_for_reading(double value, int digits) {
  const double magnitude = std::fabs(value);
  if (!std::isfinite(value) || magnitude < 1e4 || magnitude >= 1e15) return format_significant(value, digits);
  // A whole number (a count) is exact: printed in full, never rounded to look like another exact count.
  if (value == std::floor(value)) return group_thousands(static_cast<std::int64_t>(value));
  // Round to `digits` significant digits via the decimal text, then print the whole number grouped.
  const std::string text = to_chars_text(value, std::chars_format::scientific, digits - 1);
  double rounded = value;
  std::from_chars(text.data(), text.data() + text.size(), rounded);
  return group_thousands(static_cast<std::int64_t>(std::llround(rounded)));
}

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  std::size_t i = 0;
  while (i < text.size()) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x80) {
      switch (byte) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&apos;"; break;
        case '\t':
        case '\n':
        case '\r': out += static_cast<char>(byte); break;
        default: out += byte < 0x20 ? ' ' : static_cast<char>(byte);
      }
      ++i;
      continue;
    }
    const std::size_t length = valid_utf8_length(text, i);
    if (length == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
      ++i;
    } else {
      out.append(text.substr(i, length));
      i += length;
    }
  }
  return out;
}

const std::vector<std::string>& chart_palette() {
  static const std::vector<std::string> palette = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                                   "#E69F00", "#56B4E9", "#000000", "#999999"};
  return palette;
}

}  // namespace k3lab::report
