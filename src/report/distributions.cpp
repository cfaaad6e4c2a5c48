// Normal and Student-t distribution functions and quantiles. The t distribution goes through the
// regularized incomplete beta function (continued fraction, modified Lentz), and quantiles invert the
// upper tail by bisection, so any df works and no table of critical values is needed.
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "k3lab/report/stats.hpp"

namespace k3lab::report {

namespace {

constexpr double kTiny = 1e-300;
constexpr double kEpsilon = 1e-16;
constexpr int kMaxFractionTerms = 200000;
// Beyond this df the t distribution equals the normal to better than 1e-10.
constexpr double kNormalLimitDf = 1e10;

// Continued fraction of I_x(a, b), converging fast for x < (a + 1) / (a + b + 2).
double beta_continued_fraction(double a, double b, double x) {
  const double a_plus_b = a + b;
  double c = 1.0;
  double d = 1.0 - a_plus_b * x / (a + 1.0);
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1.0 / d;
  double h = d;
  for (int m = 1; m <= kMaxFractionTerms; ++m) {
    const double m2 = 2.0 * m;
    // Even term d_{2m} = m (b - m) x / ((a + 2m - 1)(a + 2m)).
    double term = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2));
    d = 1.0 + term * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1.0 + term / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    h *= d * c;
    // Odd term d_{2m+1} = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)).
    term = -(a + m) * (a_plus_b + m) * x / ((a + m2) * (a + m2 + 1.0));
    d = 1.0 + term * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1.0 + term / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1.0) < kEpsilon) return h;
  }
  throw std::runtime_error("incomplete beta continued fraction did not converge for a=" + std::to_string(a) +
                           " b=" + std::to_string(b) + " x=" + std::to_string(x));
}

// Regularized incomplete beta I_x(a, b) with y = 1 - x passed separately to keep its precision.
double regularized_incomplete_beta(double a, double b, double x, double y) {
  if (x <= 0.0) return 0.0;
  if (y <= 0.0) return 1.0;
  const double log_front = a * std::log(x) + b * std::log(y) - (std::lgamma(a) + std::lgamma(b) - std::lgamma(a + b));
  if (x < (a + 1.0) / (a + b + 2.0)) return std::exp(log_front) * beta_continued_fraction(a, b, x) / a;
  return 1.0 - std::exp(log_front) * beta_continued_fraction(b, a, y) / b;
}

double normal_upper_tail(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

// P(T > t) for t >= 0.
double student_t_upper_tail(double t, double df) {
  if (df > kNormalLimitDf) return normal_upper_tail(t);
  const double t2 = t * t;
  const double x = df / (df + t2);       // 0 when t2 is infinite
  const double y = 1.0 / (1.0 + df / t2);  // 1 when t2 is infinite, 0 when t is 0
  return 0.5 * regularized_incomplete_beta(df / 2.0, 0.5, x, y);
}

void check_df(double df) {
  if (!(df > 0.0)) {
    throw std::invalid_argument("Student t needs degrees of freedom > 0, got " + std::to_string(df) +
                                " (a t interval needs at least two values)");
  }
}

void check_probability(double p, const char* who) {
  if (!(p > 0.0 && p < 1.0)) {
    throw std::invalid_argument(std::string(who) + ": probability must lie strictly between 0 and 1, got " +
                                std::to_string(p));
  }
}

// The t >= 0 with upper_tail(t) == target (0 < target <= 0.5), by bracketing and bisection.
template <typename UpperTail>
double invert_upper_tail(UpperTail upper_tail, double target) {
  double lo = 0.0;
  double hi = 1.0;
  while (upper_tail(hi) > target) {
    lo = hi;
    hi *= 2.0;
    if (hi > 1e300) return std::numeric_limits<double>::infinity();
  }
  for (int i = 0; i < 2000 && hi - lo > 1e-15 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (mid <= lo || mid >= hi) break;
    (upper_tail(mid) > target ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

}  // namespace

double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

double normal_quantile(double p) {
  check_probability(p, "normal_quantile");
  if (p == 0.5) return 0.0;
  const double target = p < 0.5 ? p : 1.0 - p;
  const double z = invert_upper_tail(normal_upper_tail, target);
  return p < 0.5 ? -z : z;
}

double student_t_cdf(double t, double df) {
  check_df(df);
  if (std::isnan(t)) throw std::invalid_argument("student_t_cdf: t is NaN");
  if (std::isinf(df)) return normal_cdf(t);
  const double tail = student_t_upper_tail(std::fabs(t), df);
  return t >= 0.0 ? 1.0 - tail : tail;
}

double student_t_quantile(double p, double df) {
  check_df(df);
  check_probability(p, "student_t_quantile");
  if (std::isinf(df)) return normal_quantile(p);
  if (p == 0.5) return 0.0;
  const double target = p < 0.5 ? p : 1.0 - p;
  const double t = invert_upper_tail([df](double v) { return student_t_upper_tail(v, df); }, target);
  return p < 0.5 ? -t : t;
}

}  // namespace k3lab::report
