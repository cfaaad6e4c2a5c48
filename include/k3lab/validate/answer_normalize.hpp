#pragma once
// Answer normalisation for deterministic validators (context probe and agent replay).
//
// normalize_answer():
//   1. ASCII letters are lower-cased; non-ASCII bytes are kept unchanged.
//   2. ',', '_' and '\'' between two digits are removed (thousands separators: "1,250" -> "1250").
//   3. '.' between two digits is kept (decimal point); '-' is kept between two letters/digits
//      ("acc-102") and before a digit at the start of a word (a sign: "-5").
//   4. Every other ASCII punctuation character and all whitespace become a space.
//   5. Runs of spaces collapse to one; leading and trailing spaces are removed.
// So "  **4,829,137.** " -> "4829137", "$1,250.00" -> "1250.00", "Esme Varga." -> "esme varga".
#include <string>
#include <string_view>
#include <vector>

namespace k3lab::validate {

std::string normalize_answer(std::string_view text);
// Byte-equal after trimming outer whitespace.
bool exact_answer_match(std::string_view expected, std::string_view answer);
// Equal after normalize_answer(); an empty normalised expectation never matches.
bool normalized_answer_match(std::string_view expected, std::string_view answer);
// Whether normalize_answer(phrase) occurs in normalize_answer(text) as whole words.
bool contains_normalized_phrase(std::string_view text, std::string_view phrase);
// The number tokens of normalize_answer(text) ("-5", "1250.00", "42"), in order.
std::vector<std::string> number_tokens(std::string_view text);

}  // namespace k3lab::validate
