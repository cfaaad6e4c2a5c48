#pragma once
// ASCII string helpers shared by the fixture generators, parsers and the scripted models.
// Everything here is locale-independent on purpose: results must not depend on the host.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace k3lab::validate::detail {

inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
inline bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
inline bool is_alnum(char c) { return is_digit(c) || is_alpha(c); }
inline bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
inline char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }
inline char upper(char c) { return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c; }

std::string_view trim(std::string_view text);
std::string to_lower(std::string_view text);
std::string to_upper(std::string_view text);
bool iequals(std::string_view a, std::string_view b);
bool istarts_with(std::string_view text, std::string_view prefix);
// Case-insensitive find; npos when absent.
std::size_t ifind(std::string_view haystack, std::string_view needle, std::size_t from = 0);
// Splits on '\n'; a trailing '\r' is removed from each line.
std::vector<std::string_view> split_lines(std::string_view text);
std::string join(const std::vector<std::string>& parts, std::string_view separator);
// Replaces every occurrence of `from` by `to`.
std::string replace_all(std::string text, std::string_view from, std::string_view to);
// Parses a non-negative or negative decimal integer occupying the whole (trimmed) text.
bool parse_int64(std::string_view text, long long& out);
std::string capitalize(std::string_view word);
// `text` without its leading blanks and Markdown decoration (# * > _ -).
std::string_view skip_decoration(std::string_view text);

}  // namespace k3lab::validate::detail
