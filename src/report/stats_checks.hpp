#pragma once
// Input checks shared by the statistics sources (private to src/report).
#include <cstddef>
#include <span>

namespace k3lab::report::detail {

// Throws std::invalid_argument naming `who` if there are fewer than `minimum` values or any is NaN/inf.
void check_values(std::span<const double> values, std::size_t minimum, const char* who);
// Throws unless 0 < confidence < 1.
void check_confidence(double confidence, const char* who);

}  // namespace k3lab::report::detail
