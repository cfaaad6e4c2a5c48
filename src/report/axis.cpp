// Axis ranges and tick positions for the SVG charts: 1-2-5 steps on linear axes, decades on log axes.
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <string>

#include "k3lab/report/svg.hpp"

namespace k3lab::report {

namespace {

// Tolerance for "this value already sits on a tick", relative to the step.
constexpr double kOnTick = 1e-9;

// m * 10^exponent computed so that short decimals (0.1, 0.2, 0.5) are the closest doubles.
double scaled_power_of_ten(double m, int exponent) {
  return exponent >= 0 ? m * std::pow(10.0, exponent) : m / std::pow(10.0, -exponent);
}

int decimal_exponent(double positive) { return static_cast<int>(std::floor(std::log10(positive) + kOnTick)); }

std::string pad_decimals(std::string text, int decimals) {
  if (decimals <= 0) return text;
  std::size_t dot = text.find('.');
  if (dot == std::string::npos) {
    text += '.';
    dot = text.size() - 1;
  }
  const std::size_t have = text.size() - dot - 1;
  text.append(static_cast<std::size_t>(decimals) - std::min<std::size_t>(have, decimals), '0');
  return text;
}

// "1e+06", "2.5e-05": exponent form whatever the magnitude (printf's %.*e, locale-free).
std::string scientific(double value, int decimals) {
  if (value == 0.0) return "0";
  std::array<char, 64> buffer{};
  const auto result =
      std::to_chars(buffer.data(), buffer.data() + buffer.size(), value, std::chars_format::scientific, decimals);
  return std::string(buffer.data(), result.ptr);
}

}  // namespace

Axis linear_axis(double lo, double hi, int max_ticks) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) {
    throw std::invalid_argument("linear_axis: range ends must be finite, got " + format_significant(lo, 6) +
                                " .. " + format_significant(hi, 6));
  }
  if (lo > hi) {
    throw std::invalid_argument("linear_axis: lo (" + format_significant(lo, 6) + ") is above hi (" +
                                format_significant(hi, 6) + "); pass the smaller end first");
  }
  if (max_ticks < 3) {
    // Two ticks cannot cover a range that straddles zero (-step, 0 and step are all needed).
    throw std::invalid_argument("linear_axis: max_ticks must be at least 3, got " + std::to_string(max_ticks));
  }
  if (lo == hi) {
    // Widening never crosses zero: all-zero or all-positive data (counts, accuracies, rates) keeps a
    // non-negative axis, as all-negative data keeps a non-positive one.
    const double pad = lo == 0.0 ? 1.0 : std::fabs(lo) * 0.1;
    const bool non_negative = lo >= 0.0, non_positive = hi <= 0.0;
    lo = non_negative && lo == 0.0 ? 0.0 : lo - pad;
    hi = non_positive && hi == 0.0 ? 0.0 : hi + pad;
    if (lo == hi) hi = 1.0;  // all zero: [0, 1]
  }
  const double raw_step = (hi - lo) / (max_ticks - 1);
  const int first_exponent = decimal_exponent(raw_step) - 1;
  static constexpr double kMantissas[] = {1.0, 2.0, 5.0};
  // A step as large as the range always fits in three ticks, so this ends within a few decades.
  for (int exponent = first_exponent; exponent <= first_exponent + 8; ++exponent) {
    for (const double m : kMantissas) {
      const double step = scaled_power_of_ten(m, exponent);
      const double first = std::floor(lo / step + kOnTick);
      const double last = std::ceil(hi / step - kOnTick);
      if (last - first + 1 > max_ticks) continue;
      Axis axis;
      axis.log = false;
      axis.step = step;
      for (double i = first; i <= last; i += 1.0) {
        // i * m / 10^-e rather than i * step keeps 0.3 as 0.3 instead of 0.30000000000000004.
        axis.ticks.push_back(scaled_power_of_ten(i * m, exponent));
      }
      axis.lo = axis.ticks.front();
      axis.hi = axis.ticks.back();
      return axis;
    }
  }
  throw std::runtime_error("internal error: linear_axis found no step for range " + format_significant(lo, 17) +
                           " .. " + format_significant(hi, 17));
}

Axis log_axis(double lo, double hi) {
  if (!std::isfinite(lo) || !std::isfinite(hi) || lo <= 0.0 || hi <= 0.0) {
    throw std::invalid_argument("log_axis: range ends must be finite and positive, got " +
                                format_significant(lo, 6) + " .. " + format_significant(hi, 6) +
                                "; drop non-positive values or use a linear axis");
  }
  if (lo > hi) {
    throw std::invalid_argument("log_axis: lo (" + format_significant(lo, 6) + ") is above hi (" +
                                format_significant(hi, 6) + "); pass the smaller end first");
  }
  int first = static_cast<int>(std::floor(std::log10(lo) + kOnTick));
  int last = static_cast<int>(std::ceil(std::log10(hi) - kOnTick));
  if (first == last) {  // one value exactly on a decade: centre it
    --first;
    ++last;
  }
  Axis axis;
  axis.log = true;
  const int decades = last - first;
  if (decades <= 2) {
    axis.step = 0.0;
    for (int e = first; e < last; ++e) {
      for (const double m : {1.0, 2.0, 5.0}) axis.ticks.push_back(scaled_power_of_ten(m, e));
    }
    axis.ticks.push_back(scaled_power_of_ten(1.0, last));
  } else {
    const int stride = (decades + 9) / 10;
    last = first + ((decades + stride - 1) / stride) * stride;
    axis.step = stride;
    for (int e = first; e <= last; e += stride) axis.ticks.push_back(scaled_power_of_ten(1.0, e));
  }
  axis.lo = axis.ticks.front();
  axis.hi = axis.ticks.back();
  return axis;
}

std::string tick_label(double value, const Axis& axis) {
  if (axis.log) {
    // One style per axis: plain decimals while every tick fits them, exponents otherwise.
    const bool plain = decimal_exponent(axis.lo) >= -4 && decimal_exponent(axis.hi) <= 5;
    if (plain) return format_fixed(value, std::max(0, -decimal_exponent(value)));
    return scientific(value, 0);
  }
  const int step_exponent = decimal_exponent(axis.step);
  const double magnitude = std::max(std::fabs(axis.lo), std::fabs(axis.hi));
  if (magnitude >= 1e6 || magnitude < 1e-4) {
    const int digits = std::clamp(decimal_exponent(magnitude) - step_exponent + 1, 1, 17);
    return scientific(value, digits - 1);
  }
  const int decimals = std::max(0, -step_exponent);
  return pad_decimals(format_fixed(value, decimals), decimals);
}

double axis_fraction(double value, const Axis& axis) {
  if (axis.log) {
    const double lo = std::log10(axis.lo);
    return (std::log10(value) - lo) / (std::log10(axis.hi) - lo);
  }
  return (value - axis.lo) / (axis.hi - axis.lo);
}

}  // namespace k3lab::report
