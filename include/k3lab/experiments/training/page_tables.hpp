#pragma once
// The tables and charts the proxy experiments' result pages share: per-arm seed means with a Student-t
// 95% interval, seed-mean curves, paired-bootstrap comparisons by seed and the decision table.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <type_traits>
#include <string>
#include <utility>
#include <vector>

#include "k3lab/experiments/training/arm_runs.hpp"
#include "k3lab/experiments/training/parameters.hpp"
#include "k3lab/report/page.hpp"
#include "k3lab/report/stats.hpp"

namespace k3lab::experiments::training {

// "[low, high]" at 4 significant digits.
std::string interval_text(const report::Interval& interval);
// "estimate [low, high]" at 4 significant digits.
std::string effect_text(const report::Interval& interval);
std::string yes_no(bool value);

// ---- Per-arm seed means.

template <class M>
struct ArmMetric {
  std::string name;
  std::function<std::optional<double>(const M&)> extract;  // nullopt: the run does not have it
};

// A metric every run has.
template <class M>
ArmMetric<M> metric_of(std::string name, std::function<double(const M&)> extract) {
  return {std::move(name), [extract = std::move(extract)](const M& m) { return std::optional<double>(extract(m)); }};
}

// Appends mean, 95% CI (two or more values) and, with `count`, n; empty cells (n = 0) without values.
void append_arm_summary(std::vector<report::Cell>& row, const std::vector<double>& values, bool count);

// One row per metric; per arm (columns "<arm> mean", "<arm> 95% CI" and with `count` "<arm> n") the
// mean over the arm's runs that have a finite value.
template <class M>
report::Table arm_mean_table(std::string id, std::string title, const std::vector<std::string>& arms,
                             const std::map<std::string, std::vector<M>>& by_arm, const std::vector<ArmMetric<M>>& metrics,
                             bool count) {
  report::Table table;
  table.id = std::move(id);
  table.title = std::move(title);
  table.columns = {"metric"};
  for (const auto& arm : arms) {
    table.columns.insert(table.columns.end(), {arm + " mean", arm + " 95% CI"});
    if (count) table.columns.push_back(arm + " n");
  }
  for (const auto& metric : metrics) {
    std::vector<report::Cell> row = {metric.name};
    for (const auto& arm : arms) {
      std::vector<double> values;
      if (by_arm.count(arm)) {
        for (const auto& run : by_arm.at(arm)) {
          if (auto v = metric.extract(run); v && std::isfinite(*v)) values.push_back(*v);
        }
      }
      append_arm_summary(row, values, count);
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

// ---- Seed-mean curves.

// A line chart with its labels and no series yet.
report::Chart line_chart(std::string id, std::string title, std::string x_label, std::string y_label);

using Curve = std::vector<std::pair<double, double>>;  // (x, y) points of one run

// At each point of the first curve: the mean over the curves that have that point.
report::Series seed_mean_series(std::string label, const std::vector<Curve>& curves);

template <class M, class CurveOfRun>
report::Series seed_mean_series(std::string label, const std::vector<M>& runs, CurveOfRun curve) {
  std::vector<Curve> curves;
  for (const auto& run : runs) curves.push_back(curve(run));
  return seed_mean_series(std::move(label), curves);
}

// A curve from points whose x is an integer count (tokens, updates).
template <class Points, class X, class Y>
Curve curve_of(const Points& points, X x, Y y) {
  Curve curve;
  for (const auto& point : points) curve.emplace_back(static_cast<double>(x(point)), y(point));
  return curve;
}
Curve curve_of(const std::vector<std::pair<std::int64_t, double>>& points);

// For every arm with runs, in `arms` order, the seed-mean series of a curve of its runs: a member
// (tokens or updates, value) or a function of a run returning a Curve. The series are the arms' names.
template <class M, class CurveOf>
void add_arm_curves(report::Chart& chart, const std::vector<std::string>& arms,
                    const std::map<std::string, std::vector<M>>& by_arm, CurveOf curve) {
  for (const auto& arm : arms) {
    if (!by_arm.count(arm)) continue;
    chart.series.push_back(seed_mean_series(arm, by_arm.at(arm), [&curve](const M& run) {
      if constexpr (std::is_member_object_pointer_v<CurveOf>) {
        return curve_of(run.*curve);
      } else {
        return curve(run);
      }
    }));
  }
}

// ---- Paired comparisons by seed.

// A table of treatment-against-control effects with paired-bootstrap intervals (resampling seeds).
class PairedComparisons {
 public:
  // title: what is compared, e.g. "SiTU-GLU against SwiGLU, paired by seed"; lead_columns come before
  // "metric" (e.g. the baseline arm).
  PairedComparisons(const std::string& title, std::vector<std::string> lead_columns, const Bootstrap& bootstrap);

  // Appends one row and returns its interval.
  report::Interval add(std::vector<report::Cell> lead, const std::string& metric, const std::string& effect,
                       report::PairedEffect kind, const std::vector<double>& treatment,
                       const std::vector<double>& control);
  bool empty() const { return table_.rows.empty(); }
  // "Percentile bootstrap ... (parameters.<block>)." then `note`.
  report::Table finish(const std::string& block, const std::string& note = "");

 private:
  report::Table table_;
  Bootstrap bootstrap_;
};

// One paired comparison: `extract` of the treatment arm's runs against the control arm's, by seed.
template <class M>
struct Comparison {
  std::string metric;
  std::string effect;  // how the effect reads, e.g. "difference situ - swiglu"
  report::PairedEffect kind;
  std::function<double(const M&)> extract;
};

// Adds a row per comparison (treatment and control: runs paired by seed, in pair order) and returns
// the intervals by metric.
template <class M>
std::map<std::string, report::Interval> compare(PairedComparisons& table, const std::vector<Comparison<M>>& comparisons,
                                                const std::vector<M>& treatment, const std::vector<M>& control) {
  auto values = [](const std::vector<M>& runs, const std::function<double(const M&)>& extract) {
    std::vector<double> v;
    for (const auto& run : runs) v.push_back(extract(run));
    return v;
  };
  std::map<std::string, report::Interval> intervals;
  for (const auto& c : comparisons) {
    intervals[c.metric] = table.add({}, c.metric, c.effect, c.kind, values(treatment, c.extract), values(control, c.extract));
  }
  return intervals;
}

// With fewer than two pairs: says so on the page ("Paired comparisons need at least two <pairs>; <n> so
// far.") and returns true.
bool too_few_pairs(std::size_t pairs, const std::string& what, report::Page& page);

// The decision table: "question", "paired effect [interval]", "answer".
report::Table decision_table(std::string title);

}  // namespace k3lab::experiments::training
