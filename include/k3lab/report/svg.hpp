#pragma once
// The pieces under the SVG chart writer, public so tests and other renderers can reuse them:
// axis and tick choice, XML/HTML escaping and locale-free number formatting. Every function here is
// pure and deterministic (same input, same bytes), which is what makes the charts golden-testable.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace k3lab::report {

// One chart axis in data space. The ends sit on ticks, so the plot frame starts and stops on labels.
struct Axis {
  double lo = 0.0;
  double hi = 1.0;
  bool log = false;
  double step = 1.0;          // linear: tick spacing; log: decades between ticks (>= 1) or 0 for 1-2-5
  std::vector<double> ticks;  // ascending, lo and hi included
};

// A linear axis covering [lo, hi] with a 1-2-5 step (1, 2 or 5 times a power of ten) and at most
// max_ticks (>= 3) ticks. lo == hi widens by 10% of the value each way, never across zero: all-zero
// data gets [0, 1], a positive constant c gets [0.9c, 1.1c] rounded to ticks that stay >= 0.
// Throws on non-finite ends or lo > hi.
Axis linear_axis(double lo, double hi, int max_ticks = 6);

// A base-10 log axis covering [lo, hi] (both > 0), widened to whole decades. Ticks at 1, 2 and 5 times
// each power of ten when it spans one decade, at every decade up to ten decades, and at every
// second, third... decade beyond that (at most eleven ticks). Throws on non-positive or non-finite ends.
Axis log_axis(double lo, double hi);

// The label for one tick of `axis`: as many decimals as the step needs, exponent form ("1e+06",
// "2e-05") when the axis reaches very large or very small magnitudes. Labels of one axis share a
// style: the same decimals on a linear axis, all plain or all exponents on a log axis.
std::string tick_label(double value, const Axis& axis);

// Maps a data value onto [0, 1] along the axis (0 at lo, 1 at hi); log axes map log10(value).
double axis_fraction(double value, const Axis& axis);

// Escapes text for XML/HTML character data and attribute values (&, <, >, ", '). Control characters
// that XML 1.0 forbids become spaces and invalid UTF-8 bytes become U+FFFD, so the output is always
// well-formed whatever the input.
std::string xml_escape(std::string_view text);

// Fixed-point with `decimals` digits, trailing zeros (and a bare '.') trimmed, "-0" written as "0".
// Locale-independent (std::to_chars). Non-finite values give "NaN", "inf", "-inf".
std::string format_fixed(double value, int decimals);

// Like printf("%.*g", digits, value) but locale-independent; "-0" is written as "0".
std::string format_significant(double value, int digits);

// An integer with thousands separators: 1000000 -> "1,000,000", -12345 -> "-12,345".
std::string group_thousands(std::int64_t value);

// A number for a reader (Markdown tables): like format_significant, except that magnitudes from 10,000
// up to 10^15 are rounded to `digits` significant digits and written whole with thousands separators
// ("199,800" rather than "1.998e+05"). Exponents remain only for very small or very large values.
std::string format_for_reading(double value, int digits);

// The fixed palette used for series, in order (colour-blind-safe Okabe-Ito, black, grey).
const std::vector<std::string>& chart_palette();

}  // namespace k3lab::report
