#include "k3lab/experiments/training/page_tables.hpp"

#include "k3lab/report/svg.hpp"

namespace k3lab::experiments::training {

std::string interval_text(const report::Interval& interval) {
  return "[" + report::format_significant(interval.low, 4) + ", " + report::format_significant(interval.high, 4) + "]";
}

std::string effect_text(const report::Interval& interval) {
  return report::format_significant(interval.estimate, 4) + " " + interval_text(interval);
}

std::string yes_no(bool value) { return value ? "yes" : "no"; }

void append_arm_summary(std::vector<report::Cell>& row, const std::vector<double>& values, bool count) {
  if (values.empty()) {
    row.insert(row.end(), {report::Cell(), report::Cell()});
    if (count) row.push_back(report::Cell(0));
    return;
  }
  row.push_back(report::Cell(report::mean(values)));
  row.push_back(values.size() >= 2 ? report::Cell(interval_text(report::t_interval_mean(values))) : report::Cell());
  if (count) row.push_back(report::Cell(values.size()));
}

report::Chart line_chart(std::string id, std::string title, std::string x_label, std::string y_label) {
  report::Chart chart;
  chart.id = std::move(id);
  chart.title = std::move(title);
  chart.x_label = std::move(x_label);
  chart.y_label = std::move(y_label);
  return chart;
}

report::Series seed_mean_series(std::string label, const std::vector<Curve>& curves) {
  report::Series series{std::move(label), {}, {}, {}, {}};
  if (curves.empty()) return series;
  for (std::size_t i = 0; i < curves.front().size(); ++i) {
    double sum = 0;
    std::size_t n = 0;
    for (const auto& curve : curves) {
      if (i < curve.size()) {
        sum += curve[i].second;
        ++n;
      }
    }
    series.x.push_back(curves.front()[i].first);
    series.y.push_back(sum / static_cast<double>(n));
  }
  return series;
}

Curve curve_of(const std::vector<std::pair<std::int64_t, double>>& points) {
  return curve_of(points, [](const auto& p) { return p.first; }, [](const auto& p) { return p.second; });
}

PairedComparisons::PairedComparisons(const std::string& title, std::vector<std::string> lead_columns,
                                     const Bootstrap& bootstrap)
    : bootstrap_(bootstrap) {
  table_.id = "paired-comparisons";
  table_.title = title + " (paired bootstrap " + report::format_significant(100 * bootstrap.confidence, 3) +
                 "% intervals)";
  table_.columns = std::move(lead_columns);
  table_.columns.insert(table_.columns.end(),
                        {"metric", "effect", "pairs", "mean effect", "interval", "interval excludes zero"});
}

report::Interval PairedComparisons::add(std::vector<report::Cell> lead, const std::string& metric,
                                        const std::string& effect, report::PairedEffect kind,
                                        const std::vector<double>& treatment, const std::vector<double>& control) {
  const auto interval = report::paired_bootstrap_interval(treatment, control, kind,
                                                          static_cast<std::size_t>(bootstrap_.bootstrap_resamples),
                                                          bootstrap_.bootstrap_seed, bootstrap_.confidence);
  auto row = std::move(lead);
  row.insert(row.end(), {metric, effect, report::Cell(treatment.size()), report::Cell(interval.estimate),
                         interval_text(interval), yes_no(interval.excludes_zero())});
  table_.rows.push_back(std::move(row));
  return interval;
}

report::Table PairedComparisons::finish(const std::string& block, const std::string& note) {
  table_.caption = "Percentile bootstrap of the mean per-seed effect: " + std::to_string(bootstrap_.bootstrap_resamples) +
                   " resamples of whole pairs, seed " + std::to_string(bootstrap_.bootstrap_seed) + " (parameters." +
                   block + ")." + (note.empty() ? "" : " " + note);
  return std::move(table_);
}

bool too_few_pairs(std::size_t pairs, const std::string& what, report::Page& page) {
  if (pairs >= 2) return false;
  page.add_text("Paired comparisons need at least two " + what + "; " + std::to_string(pairs) + " so far.");
  return true;
}

report::Table decision_table(std::string title) {
  return report::make_table("decision", std::move(title), {"question", "paired effect [interval]", "answer"});
}

}  // namespace k3lab::experiments::training
