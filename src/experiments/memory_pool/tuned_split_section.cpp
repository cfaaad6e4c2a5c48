#include "memory_pool/tuned_split_section.hpp"

#include <sstream>
#include <stdexcept>
#include <vector>

#include "k3lab/sim/calibration.hpp"

namespace k3lab::experiments::memory_pool {
namespace {

// How the rule decided: outright on admissions, or which tie-break, against which ratios and by how much.
std::string how_chosen(const SplitChoice& choice) {
  const CalibrationRow* chosen = nullptr;
  for (const auto& row : choice.rows) {
    if (row.ratio == choice.ratio) chosen = &row;
  }
  std::vector<const CalibrationRow*> tied;
  for (const auto& row : choice.rows) {
    if (&row != chosen && row.admitted_sum == chosen->admitted_sum) tied.push_back(&row);
  }
  if (tied.empty()) return "the highest admissions outright";
  std::ostringstream out;
  out.precision(3);
  out << "tied on admissions with ratio" << (tied.size() > 1 ? "s " : " ");
  double closest = -1;
  bool equal_delay = false;
  for (const auto* row : tied) {
    out << (row == tied.front() ? "" : ", ") << sim::number_label(row->ratio);
    const double gap = row->queue_delay_mean_seconds - chosen->queue_delay_mean_seconds;
    if (gap == 0)
      equal_delay = true;
    else if (closest < 0 || gap < closest)
      closest = gap;
  }
  if (equal_delay) {
    out << ", then on mean queue delay; the smaller ratio decided";
  } else {
    out << "; the lower mean queue delay decided, by " << closest << " s or more";
  }
  return out.str();
}

}  // namespace

std::map<std::string, SplitChoice> split_choices(const sim::SimParameters& params, const RunResults& results) {
  std::map<std::string, SplitChoice> out;
  for (const auto& mix : params.mixes) {
    try {
      out[mix.id] = choose_split_ratio(params, mix.id, results.calibration);
    } catch (const std::invalid_argument&) {
      out[mix.id].mix = mix.id;  // a malformed calibration record: shown as not chosen
    }
  }
  return out;
}

void add_tuned_split_section(const sim::SimParameters& params, const std::map<std::string, SplitChoice>& splits,
                             report::Page& page) {
  const auto& tuning = *params.fixed_split_tuning;
  std::ostringstream md;
  md << "### Tuned fixed split (the operator's start-up guess)\n\n"
     << "The fixed split's ratio is chosen per mix, before any decision trace is run, on "
     << tuning.calibration_traces_per_mix << " calibration trace(s) of " << tuning.arrivals_per_calibration_trace
     << " arrivals that use only the mix's first (pre-shift) phase and a seed stream of their own. Best: the highest "
        "admitted-by-last-arrival count summed over the calibration traces; ties go to the lower mean queue delay, "
        "then to the smaller ratio.\n\n";
  for (const auto& mix : params.mixes) {
    const auto it = splits.find(mix.id);
    if (it == splits.end() || !it->second.chosen) {
      md << "- **" << mix.id << "**: not chosen (" << (it == splits.end() ? std::size_t{0} : it->second.missing.size())
         << " calibration unit(s) without a result).\n";
    } else {
      md << "- **" << mix.id << "**: state:KV ratio " << sim::number_label(it->second.ratio) << ": "
         << how_chosen(it->second) << ".\n";
    }
  }
  page.add_text(md.str());
  for (const auto& mix : params.mixes) {
    const auto it = splits.find(mix.id);
    if (it == splits.end()) continue;
    auto t = report::make_table("memory-pool-" + mix.id + "-calibration",
                                "Mix " + mix.id + ": fixed-split ratio sweep on the pre-shift calibration traces",
                                {"state:KV ratio", "calibration traces with a result", "admitted by last arrival (sum)",
                                 "mean queue delay, s (mean over traces)", "chosen"});
    for (const auto& row : it->second.rows) {
      const bool chosen = it->second.chosen && row.ratio == it->second.ratio;
      t.rows.push_back({report::Cell(row.ratio, 6), row.admitted_by_last_arrival.size(),
                        report::Cell(row.admitted_sum, 10), report::Cell(row.queue_delay_mean_seconds, 9),
                        chosen ? "yes" : ""});
    }
    t.caption =
        "Each row: the fixed split at that ratio on every calibration trace of the mix (its first phase "
        "only). The chosen ratio is the one every fixed-split decision unit of this mix runs at.";
    page.add_table(std::move(t));
  }
}

}  // namespace k3lab::experiments::memory_pool
