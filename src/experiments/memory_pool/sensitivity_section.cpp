#include "memory_pool/sensitivity_section.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "k3lab/sim/calibration.hpp"

namespace k3lab::experiments::memory_pool {
namespace {

double admitted_by_last(const nlohmann::json& d) { return data_number(d["counts"]["admitted_by_last_arrival"]); }
double mean_delay(const nlohmann::json& d) { return data_number(d["queue_delay_seconds"]["mean"]); }

SettingResults sorted_by_setting(SettingResults points) {
  std::stable_sort(points.begin(), points.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return points;
}

// A line series of `value` over the settings, and a flat reference series at `reference` (if any).
report::Chart setting_chart(std::string id, std::string title, std::string x_label, std::string y_label,
                            const SettingResults& points, double x_scale, const std::string& label,
                            double (*value)(const nlohmann::json&), const nlohmann::json* reference,
                            const std::string& reference_label) {
  report::Chart chart;
  chart.id = std::move(id);
  chart.title = std::move(title);
  chart.x_label = std::move(x_label);
  chart.y_label = std::move(y_label);
  chart.log_x = true;
  report::Series main{label, {}, {}, {}, {}};
  for (const auto& [x, data] : points) {
    main.x.push_back(x * x_scale);
    main.y.push_back(value(data));
  }
  chart.series.push_back(main);
  if (reference)
    chart.series.push_back({reference_label, main.x, std::vector<double>(main.x.size(), value(*reference)), {}, {}});
  return chart;
}

// Four significant digits below 1000, whole numbers above (126235, not 1.262e+05).
std::string four_digits(double value) {
  std::ostringstream out;
  if (std::abs(value) >= 1000) {
    out << std::fixed;
    out.precision(0);
  } else {
    out.precision(4);
  }
  out << value;
  return out.str();
}

// One sentence on where a gain over the tuned split (unified better when positive) is gone; `gains` are
// (bytes/s, gain) in ascending bandwidth.
std::string gain_sentence(const std::vector<std::pair<double, double>>& gains, const std::string& what) {
  const auto& [highest, gain_at_highest] = gains.back();
  if (gain_at_highest <= 0) {
    return "no " + what + " gain over the tuned fixed split even at " + sim::number_label(highest) + " B/s (gain " +
           four_digits(gain_at_highest) + "), so compaction has none to erase";
  }
  const auto gone = highest_bandwidth_without_gain(gains);
  if (!gone) {
    return "the " + what + " gain (" + four_digits(gain_at_highest) + " at " + sim::number_label(highest) +
           " B/s) is not gone at any tested bandwidth, down to " + sim::number_label(gains.front().first) + " B/s";
  }
  return "the " + what + " gain (" + four_digits(gain_at_highest) + " at " + sim::number_label(highest) +
         " B/s) is gone at " + sim::number_label(*gone) + " B/s (the highest tested bandwidth without it)";
}

}  // namespace

std::optional<double> highest_bandwidth_without_gain(const std::vector<std::pair<double, double>>& points) {
  std::optional<double> best;
  for (const auto& [bandwidth, gain] : points) {
    if (gain <= 0 && (!best || bandwidth > *best)) best = bandwidth;
  }
  return best;
}

void add_ratio_sensitivity(const sim::SimParameters& params, const RunResults& results, const DecisionArms& arms,
                           report::Page& page) {
  page.add_text(
      "### Ratio sensitivity\n\nThe fixed split at every candidate ratio on each mix's retained trace (its "
      "real mix, shift included), beside the unified arm on the same trace. It shows how much of the "
      "comparison rests on the split's sizing.");
  for (const auto& mix : params.mixes) {
    const auto it = results.ratio_sensitivity.find(mix.id);
    if (it == results.ratio_sensitivity.end() || it->second.empty()) continue;
    const SettingResults points = sorted_by_setting(it->second);
    const nlohmann::json* unified = results.retained(mix.id, arms.unified);
    const std::string reference = arms.unified + " (reference, retained trace)";
    report::Chart admitted = setting_chart(
        "memory-pool-" + mix.id + "-ratio-admitted",
        "Mix " + mix.id + ", retained trace: admitted by the last arrival vs fixed-split ratio", "state:KV ratio",
        "admitted by the last arrival", points, 1.0, arms.fixed, admitted_by_last, unified, reference);
    admitted.caption = "The fixed split's admissions at each ratio; the flat series is the unified arm's.";
    page.add_chart(std::move(admitted));
    report::Chart delay =
        setting_chart("memory-pool-" + mix.id + "-ratio-queue-delay",
                      "Mix " + mix.id + ", retained trace: mean queue delay vs fixed-split ratio", "state:KV ratio",
                      "mean queue delay, s", points, 1.0, arms.fixed, mean_delay, unified, reference);
    delay.caption = "Mean first-admission delay of admitted requests; the flat series is the unified arm's.";
    page.add_chart(std::move(delay));
    auto t = report::make_table("memory-pool-" + mix.id + "-ratio-sensitivity",
                                "Mix " + mix.id + ", retained trace: fixed split by ratio",
                                {"state:KV ratio", "admitted by last arrival", "mean queue delay, s",
                                 "queue delay p99, s", "memory rejections"});
    for (const auto& [ratio, d] : points) {
      t.rows.push_back({report::Cell(ratio, 6), report::Cell(admitted_by_last(d), 10), report::Cell(mean_delay(d), 5),
                        report::Cell(data_number(d["queue_delay_seconds"]["p99"]), 5),
                        report::Cell(data_number(d["counts"]["memory_rejections"]), 10)});
    }
    if (unified) {
      t.caption = "Unified arm on the same trace: admitted by last arrival " +
                  sim::number_label(admitted_by_last(*unified)) + ", mean queue delay " +
                  four_digits(mean_delay(*unified)) + " s.";
    }
    page.add_table(std::move(t));
  }
}

void add_compaction_sensitivity(const sim::SimParameters& params, const RunResults& results, const DecisionArms& arms,
                                report::Page& page) {
  std::ostringstream md;
  md << "### Compaction-bandwidth sensitivity\n\nThe unified arm on each mix's retained trace with its compaction "
        "copies charged at lower bandwidths (the protocol's is "
     << sim::number_label(params.copy_bytes_per_second)
     << " B/s), against the tuned fixed split on the same trace. The admission gain is unified minus fixed split, "
        "admitted by the last arrival; the queue-delay gain is fixed split minus unified, mean queue delay; a gain is "
        "gone where it is at most zero.\n\n";
  std::vector<std::pair<report::Chart, report::Table>> blocks;  // per mix, shown after the summary text
  for (const auto& mix : params.mixes) {
    const auto it = results.compaction_sensitivity.find(mix.id);
    if (it == results.compaction_sensitivity.end() || it->second.empty()) continue;
    const SettingResults points = sorted_by_setting(it->second);
    const nlohmann::json* fixed = results.retained(mix.id, arms.fixed);
    md << "- **" << mix.id << "**: ";
    if (!fixed) {
      md << "no tuned fixed-split result on the retained trace, so no gain is computed.\n";
    } else {
      std::vector<std::pair<double, double>> admit_gains, delay_gains;
      for (const auto& [bandwidth, d] : points) {
        admit_gains.emplace_back(bandwidth, admitted_by_last(d) - admitted_by_last(*fixed));
        delay_gains.emplace_back(bandwidth, mean_delay(*fixed) - mean_delay(d));
      }
      md << gain_sentence(admit_gains, "admission (admitted by the last arrival)") << "; "
         << gain_sentence(delay_gains, "queue-delay (mean, s)") << ".\n";
    }
    report::Chart chart =
        setting_chart("memory-pool-" + mix.id + "-compaction-admitted",
                      "Mix " + mix.id + ", retained trace: unified admitted by the last arrival vs copy bandwidth",
                      "compaction copy bandwidth, GB/s", "admitted by the last arrival", points, 1e-9, arms.unified,
                      admitted_by_last, fixed, arms.fixed + " at its tuned ratio (reference)");
    chart.caption =
        "Copy time (bytes moved / bandwidth) is charged on the critical path; the flat series is the tuned "
        "fixed split's.";
    auto t = report::make_table(
        "memory-pool-" + mix.id + "-compaction-sensitivity",
        "Mix " + mix.id + ", retained trace: unified arm by compaction bandwidth",
        {"copy bandwidth, B/s", "admitted by last arrival", "admission gain over tuned fixed split",
         "mean queue delay, s", "delay gain over tuned fixed split, s", "bytes moved, GB", "copy time, s"});
    for (const auto& [bandwidth, d] : points) {
      t.rows.push_back(
          {report::Cell(bandwidth, 4), report::Cell(admitted_by_last(d), 10),
           fixed ? report::Cell(admitted_by_last(d) - admitted_by_last(*fixed), 10) : report::Cell("no reference"),
           report::Cell(mean_delay(d), 5),
           fixed ? report::Cell(mean_delay(*fixed) - mean_delay(d), 5) : report::Cell("no reference"),
           report::Cell(data_number(d["compaction"]["bytes_moved"]) / 1e9, 6),
           report::Cell(data_number(d["compaction"]["stall_seconds"]), 6)});
    }
    blocks.emplace_back(std::move(chart), std::move(t));
  }
  page.add_text(md.str());
  for (auto& [chart, table] : blocks) {
    page.add_chart(std::move(chart));
    page.add_table(std::move(table));
  }
}

}  // namespace k3lab::experiments::memory_pool
