#include "k3lab/experiments/training/downstream_page.hpp"

#include "k3lab/experiments/training/arm_runs.hpp"
#include "k3lab/experiments/training/page_tables.hpp"
#include "k3lab/report/svg.hpp"

namespace k3lab::experiments::training {

namespace {

struct DownstreamRun : RunIdentity {
  double acc = 0;
  double acc_norm = 0;
  double metric = 0;  // the protocol's
  double chance = 0;
  Curve curve;  // (tokens, metric) at every scoring point
};

std::string key(const std::string& treatment, const std::string& control) { return treatment + " - " + control; }

std::optional<DownstreamRun> read_run(const nlohmann::json& record, const std::string& key) {
  RunIdentity identity;
  const auto* data = result_data(record, {"arm", "seed"}, identity);
  if (!data || !data->contains(key)) return std::nullopt;
  const auto& quality = data->at(key);
  if (!quality.value("measured", false) || !quality.contains("final")) return std::nullopt;
  const auto metric = quality.value("metric", std::string("acc_norm"));
  const auto& final = quality.at("final");
  DownstreamRun run;
  static_cast<RunIdentity&>(run) = identity;
  run.acc = final.at("acc").get<double>();
  run.acc_norm = final.at("acc_norm").get<double>();
  run.metric = final.at(metric).get<double>();
  run.chance = final.at("chance").get<double>();
  for (const auto& point : quality.at("points")) {
    run.curve.emplace_back(point.at("tokens").get<double>(), point.at(metric).get<double>());
  }
  return run;
}

// "suite `id` (N items, chance c; source, licence)" from the first run that scored it.
std::string suite_line(const std::vector<nlohmann::json>& terminal, const std::string& key) {
  for (const auto& record : terminal) {
    const auto& quality = record.value("data", nlohmann::json::object()).value(key, nlohmann::json());
    if (!quality.is_object() || !quality.contains("suite")) continue;
    const auto& s = quality.at("suite");
    std::string line = "suite `" + s.value("suite", std::string("?")) + "` (" +
                       std::to_string(s.value("items", std::int64_t{0})) + " items, chance " +
                       report::format_significant(s.value("chance", 0.0), 4) + "; " + s.value("source", std::string()) +
                       "; licence " + s.value("licence", std::string("not stated"));
    if (s.contains("items_sha256")) line += "; items sha256 `" + s.value("items_sha256", "") + "`";
    if (s.contains("sha256")) line += "; file sha256 `" + s.value("sha256", "") + "`";
    return line + ")";
  }
  return "";
}

report::Table arm_table(const std::vector<std::string>& arms, const ArmRuns<DownstreamRun>& runs) {
  const std::vector<ArmMetric<DownstreamRun>> metrics = {
      metric_of<DownstreamRun>("acc", [](const DownstreamRun& r) { return r.acc; }),
      metric_of<DownstreamRun>("acc_norm", [](const DownstreamRun& r) { return r.acc_norm; }),
      metric_of<DownstreamRun>("random-chance accuracy", [](const DownstreamRun& r) { return r.chance; }),
  };
  auto table = arm_mean_table("downstream", "Downstream task quality at the budget (mean over seeds, Student-t 95% interval)",
                              arms, runs.by_arm, metrics, true);
  table.caption = "acc: the candidate with the highest summed log-likelihood is the true one; acc_norm: the highest "
                  "per-token mean (docs/downstream.md). Random-chance accuracy is the mean of 1 / candidates per item.";
  return table;
}

report::Chart metric_chart(const std::vector<std::string>& arms, const ArmRuns<DownstreamRun>& runs,
                           const std::string& metric) {
  auto chart = line_chart("downstream-by-tokens", "Downstream " + metric + " at each scoring point (seed mean)",
                          "training tokens", metric);
  add_arm_curves(chart, arms, runs.by_arm, [](const DownstreamRun& run) { return run.curve; });
  return chart;
}

void compare_arms(const DownstreamSection& section, const ArmRuns<DownstreamRun>& runs, DownstreamResults& results,
                  report::Page& page) {
  const auto& metric = results.metric;
  PairedComparisons paired("Downstream " + metric + ", paired by seed at the budget", {"comparison"}, section.bootstrap);
  std::size_t most_pairs = 0;
  for (const auto& c : section.comparisons) {
    const auto [treatment, control] = runs.pairs(c.treatment, c.control);
    most_pairs = std::max(most_pairs, treatment.size());
    if (treatment.size() < 2) continue;
    std::vector<double> t, k;
    for (std::size_t i = 0; i < treatment.size(); ++i) {
      t.push_back(treatment[i].metric);
      k.push_back(control[i].metric);
    }
    results.differences[key(c.treatment, c.control)] =
        paired.add({key(c.treatment, c.control)}, metric, "difference " + key(c.treatment, c.control),
                   report::PairedEffect::Difference, t, k);
  }
  if (paired.empty()) {
    too_few_pairs(most_pairs, "seed pairs with downstream scores", page);
    return;
  }
  auto table = paired.finish(section.bootstrap_block, "Chance is the same for both arms of a pair (one suite), so it cancels.");
  table.id = "downstream-paired";
  page.add_table(std::move(table));
}

}  // namespace

std::optional<report::Interval> DownstreamResults::difference(const std::string& treatment,
                                                              const std::string& control) const {
  const auto it = differences.find(key(treatment, control));
  if (it == differences.end()) return std::nullopt;
  return it->second;
}

std::string DownstreamResults::answer(const std::string& treatment, const std::string& control, bool lower) const {
  if (!declared) return "not measured (no suite declared)";
  const auto d = difference(treatment, control);
  if (!d) return "not yet (fewer than two seed pairs)";
  return yes_no(d->excludes_zero() && (lower ? d->estimate < 0 : d->estimate > 0));
}

std::string DownstreamResults::effect(const std::string& treatment, const std::string& control) const {
  if (!declared) return "not measured";
  const auto d = difference(treatment, control);
  return d ? effect_text(*d) : "fewer than two seed pairs";
}

DownstreamResults add_downstream_results(const nlohmann::json& parameters, const std::vector<nlohmann::json>& terminal,
                                         const DownstreamSection& section, report::Page& page) {
  DownstreamResults results;
  const auto& spec = parameters.value("downstream", nlohmann::json());
  if (!spec.is_object()) {
    page.add_text("**Downstream task quality: not measured.** This run's protocol version declares no downstream suite "
                  "(parameters.downstream); choosing one after the freeze would not be predeclared.");
    return results;
  }
  results.declared = true;
  results.metric = spec.value("metric", std::string("acc_norm"));
  const auto runs = group_by_arm<DownstreamRun>(
      terminal, [&section](const nlohmann::json& r) { return read_run(r, section.record_key); }, section.counts);
  std::string intro = "**Downstream task quality** (" + results.metric + " decides; scored at training tokens " +
                      spec.value("at_tokens", nlohmann::json::array()).dump() + ", " +
                      std::to_string(spec.value("batch_rows", 0)) + " candidate rows per forward)";
  const auto suite = suite_line(terminal, section.record_key);
  page.add_text(intro + (suite.empty() ? ": no run has scored the suite yet." : ": " + suite + "."));
  if (runs.results == 0) return results;
  page.add_table(arm_table(section.arms, runs));
  page.add_chart(metric_chart(section.arms, runs, results.metric));
  compare_arms(section, runs, results, page);
  return results;
}

}  // namespace k3lab::experiments::training
