#include "memory_pool/summary.hpp"

#include <cmath>
#include <functional>
#include <map>
#include <sstream>

#include "k3lab/sim/calibration.hpp"
#include "k3lab/sim/parameters.hpp"
#include "memory_pool/mean_interval.hpp"
#include "memory_pool/decision.hpp"
#include "memory_pool/run_results.hpp"
#include "memory_pool/sensitivity_section.hpp"
#include "memory_pool/tuned_split_section.hpp"
#include "memory_pool/units.hpp"

namespace k3lab::experiments::memory_pool {
namespace {

using nlohmann::json;

struct Metric {
  std::string name;
  std::function<double(const json&)> value;
};

double num(const json& j) { return data_number(j); }

std::vector<Metric> metrics_for(const std::vector<std::string>& locations) {
  std::vector<Metric> m = {
      {"admitted requests", [](const json& d) { return num(d["counts"]["admitted"]); }},
      {"admitted by the last arrival", [](const json& d) { return num(d["counts"]["admitted_by_last_arrival"]); }},
      {"misses (queued at the drain deadline)", [](const json& d) { return num(d["counts"]["misses"]); }},
      {"dropped: can never fit", [](const json& d) { return num(d["counts"]["dropped_too_large"]) + num(d["counts"]["dropped_at_decode"]); }},
      {"memory-related rejections", [](const json& d) { return num(d["counts"]["memory_rejections"]); }},
      {"requests deferred for memory", [](const json& d) { return num(d["counts"]["requests_deferred"]); }},
      {"preemptions", [](const json& d) { return num(d["counts"]["preemptions"]); }},
      {"stranded free GB, time-weighted", [](const json& d) { return num(d["stranded_bytes"]["time_weighted"]) / 1e9; }},
  };
  for (const auto& loc : locations) {
    m.push_back({"  of which in " + loc, [loc](const json& d) {
                   return num(d["stranded_bytes"]["time_weighted_by_location"][loc]) / 1e9;
                 }});
  }
  m.push_back({"stranded free GB at a rejection, mean", [](const json& d) { return num(d["stranded_bytes"]["at_rejection"]["mean"]) / 1e9; }});
  for (const auto& loc : locations) {
    m.push_back({"  of which in " + loc, [loc](const json& d) {
                   return num(d["stranded_bytes"]["at_rejection"]["mean_by_location"][loc]) / 1e9;
                 }});
  }
  m.push_back({"rejections with stranded bytes", [](const json& d) { return num(d["stranded_bytes"]["at_rejection"]["rejections_with_stranded"]); }});
  m.push_back({"queue delay p50, s", [](const json& d) { return num(d["queue_delay_seconds"]["p50"]); }});
  m.push_back({"queue delay p90, s", [](const json& d) { return num(d["queue_delay_seconds"]["p90"]); }});
  m.push_back({"queue delay p99, s", [](const json& d) { return num(d["queue_delay_seconds"]["p99"]); }});
  m.push_back({"queue delay mean, s", [](const json& d) { return num(d["queue_delay_seconds"]["mean"]); }});
  m.push_back({"bytes moved by compaction, GB", [](const json& d) { return num(d["compaction"]["bytes_moved"]) / 1e9; }});
  m.push_back({"compaction copy time, s", [](const json& d) { return num(d["compaction"]["stall_seconds"]); }});
  m.push_back({"used GB, time-weighted", [](const json& d) { return num(d["occupancy"]["used_bytes_time_weighted"]) / 1e9; }});
  m.push_back({"running requests, time-weighted", [](const json& d) { return num(d["occupancy"]["running_time_weighted"]); }});
  m.push_back({"drain deadline reached (share of traces)", [](const json& d) { return d["horizon"].value("deadline_hit", false) ? 1.0 : 0.0; }});
  return m;
}

std::string gb(double bytes) {
  std::ostringstream out;
  out.precision(4);
  out << bytes / 1e9 << " GB";
  return out.str();
}

void add_sizes_text(const sim::SimParameters& p, const core::Protocol& protocol, report::Page& page) {
  std::ostringstream md;
  md << "### Model, memory and policies\n\n"
     << "Sizes are derived from the " << p.model.name << " config at tensor parallelism " << p.model.tensor_parallel
     << " (KDA state sharded by heads, MLA latent replicated): one request's KDA state is "
     << p.model.state_bytes_per_request() << " B, MLA KV is " << p.model.mla_bytes_per_token() << " B per token, a "
     << p.page_tokens << "-token page is " << p.model.mla_bytes_per_token() * p.page_tokens << " B; the state equals "
     << static_cast<double>(p.model.state_bytes_per_request()) / static_cast<double>(p.model.mla_bytes_per_token())
     << " tokens of MLA KV. Cache budget per GPU: " << gb(static_cast<double>(p.budget_bytes))
     << " (assumption: an H200 after weights and activations).\n\n";
  for (std::size_t i = 0; i < p.policies.size(); ++i) {
    const bool seed = i < protocol.arms.size() && protocol.arms[i].requested_by_seed;
    md << "- **" << p.policies[i].id << "** (" << (seed ? "requested by the seed" : "reference arm added by k3lab, not requested by the seed")
       << "): ";
    if (p.policies[i].tuned_ratio) {
      md << "two pools split at start-up at a state:KV ratio tuned per mix on its pre-shift calibration traces, "
            "from the candidates";
      for (double ratio : p.fixed_split_tuning->ratios) md << " " << sim::number_label(ratio);
      md << " (see the tuned fixed split below).\n";
      continue;
    }
    const auto config = sim::policy_config(p, p.policies[i]);
    switch (config.kind) {
      case sim::PolicyKind::FixedSplit:
        md << config.fixed.state_slots << " state slots (" << gb(static_cast<double>(config.fixed.state_pool_bytes()))
           << ") and " << config.fixed.kv_pages << " KV pages (" << gb(static_cast<double>(config.fixed.kv_pool_bytes()))
           << "), split at start-up with state:KV ratio " << p.policies[i].state_to_kv_ratio << ".\n";
        break;
      case sim::PolicyKind::Unified:
        md << "one " << gb(static_cast<double>(config.unified.total_bytes)) << " arena, compaction "
           << sim::compaction_mode_name(config.unified.compaction) << ", copies charged at "
           << p.copy_bytes_per_second / 1e12 << " TB/s on the critical path (assumption).\n";
        break;
      case sim::PolicyKind::PaddedSinglePage:
        md << config.padded.total_blocks << " blocks of " << config.padded.block_bytes << " B (" << config.padded.block_tokens
           << " tokens per attention block); a request's state takes " << config.padded.state_blocks << " blocks ("
           << gb(static_cast<double>(config.padded.state_blocks) * static_cast<double>(config.padded.block_bytes))
           << " for a " << gb(static_cast<double>(p.model.state_bytes_per_request())) << " state).\n";
        break;
    }
  }
  md << "\nService model (assumption): every running request produces one token per iteration of "
     << p.decode_step_seconds << " s and prefills " << p.prefill_tokens_per_step
     << " prompt tokens per iteration; memory is the only shared resource. Admission is FCFS with head-of-line "
        "blocking and a watermark of "
     << p.watermark_fraction * 100 << "% of KV-capable memory; a request that cannot grow preempts the newest "
        "running request (recompute). See docs/memory-pool.md for the stranded-bytes definition and the "
        "compaction cost model.\n";
  page.add_text(md.str());
}

report::Table policy_table(const std::string& mix, const std::string& policy, const std::string& label,
                           const std::vector<UnitResult>& results, const std::vector<Metric>& metrics) {
  auto t = report::make_table(
      "memory-pool-" + mix + "-" + policy, "Mix " + mix + ", policy " + label,
      {"metric", "retained trace", "mean over seeded traces", "95% CI low", "95% CI high", "seeded traces"});
  const json* retained = nullptr;
  for (const auto& r : results) {
    if (r.trace_index == 0) retained = &r.data;
  }
  for (const auto& metric : metrics) {
    std::vector<double> values;
    for (const auto& r : results) {
      if (r.trace_index > 0) values.push_back(metric.value(r.data));
    }
    const MeanInterval ci = mean_ci95(values);
    std::vector<report::Cell> row = {metric.name};
    row.push_back(retained ? report::Cell(metric.value(*retained), 5) : report::Cell("missing"));
    if (values.empty()) {
      row.insert(row.end(), {report::Cell("no result"), report::Cell(""), report::Cell(""), report::Cell(std::size_t{0})});
    } else {
      row.insert(row.end(), {report::Cell(ci.mean, 5), report::Cell(ci.low, 5), report::Cell(ci.high, 5), report::Cell(ci.n)});
    }
    t.rows.push_back(std::move(row));
  }
  t.caption = "Mean and Student-t 95% interval over the seeded traces (the retained trace is shown apart and is not "
              "in the interval). Stranded bytes: free bytes while the queue head waits for memory although, pooled, "
              "they would cover its state, prompt pages and watermark.";
  return t;
}

std::vector<double> as_doubles(const json& array, double scale = 1.0) {
  std::vector<double> out;
  if (!array.is_array()) return out;
  for (const auto& v : array) out.push_back(num(v) * scale);
  return out;
}

void add_retained_charts(const std::string& mix, const std::vector<std::string>& policy_ids,
                         const std::map<std::string, const json*>& retained, report::Page& page) {
  double span = 0;
  for (const auto& [policy, data] : retained) {
    if (data->contains("time_series")) span = std::max(span, num((*data)["time_series"]["t_seconds"].back()));
  }
  const bool hours = span > 7200;
  const double t_scale = hours ? 1.0 / 3600.0 : 1.0;
  const std::string t_label = hours ? "simulated time, h" : "simulated time, s";
  struct Spec {
    std::string suffix, title, y_label, key;
    double scale;
  };
  const std::vector<Spec> specs = {
      {"admitted", "admitted requests (cumulative)", "admitted requests", "admitted", 1.0},
      {"queue", "queue length", "queued requests", "queued", 1.0},
      {"stranded", "stranded free bytes", "stranded GB", "stranded_bytes", 1e-9},
  };
  for (const auto& spec : specs) {
    report::Chart chart;
    chart.id = "memory-pool-" + mix + "-retained-" + spec.suffix;
    chart.title = "Mix " + mix + ", retained trace: " + spec.title + " vs time";
    chart.x_label = t_label;
    chart.y_label = spec.y_label;
    for (const auto& policy : policy_ids) {
      auto it = retained.find(policy);
      if (it == retained.end() || !it->second->contains("time_series")) continue;
      const json& ts = (*it->second)["time_series"];
      chart.series.push_back({policy, as_doubles(ts["t_seconds"], t_scale), as_doubles(ts[spec.key], spec.scale), {}, {}});
    }
    if (chart.series.empty()) continue;
    chart.caption = "Sampled at equal simulated-time intervals over the arrival window and through the drain.";
    page.add_chart(std::move(chart));
  }
}

}  // namespace

void summarise_run(const core::Protocol& protocol, const RunRecords& records, report::Page& page) {
  json raw;
  if (records.manifest.contains("parameters")) raw = records.manifest["parameters"];
  else raw = protocol.parameters_for(records.manifest.value("profile", std::string("full")));
  sim::SimParameters params;
  try {
    params = sim::parse_parameters(raw);
  } catch (const std::exception& e) {
    page.add_text(std::string("The run's parameters could not be read, so no table is shown: ") + e.what());
    return;
  }
  add_sizes_text(params, protocol, page);

  // Result records only; invalid and failed units are listed by the caller in the failure log and the
  // excluded-data section.
  const RunResults results = collect_results(records.terminal_records());
  std::vector<std::string> policy_ids;
  for (const auto& p : params.policies) policy_ids.push_back(p.id);
  DecisionArms arms;
  if (const auto* fixed = first_policy_of(params, sim::PolicyKind::FixedSplit)) arms.fixed = fixed->id;
  if (const auto* unified = first_policy_of(params, sim::PolicyKind::Unified)) arms.unified = unified->id;

  const bool smoke = page.profile == "smoke";
  const bool tuned = params.fixed_split_tuning.has_value();
  std::map<std::string, SplitChoice> splits;
  if (tuned) {
    splits = split_choices(params, results);
    page.add_table(co_primary_decision_table(params, results, arms, splits, smoke));
    add_tuned_split_section(params, splits, page);
  } else {
    page.add_table(admission_decision_table(params, results, arms, smoke));
  }

  for (const auto& mix : params.mixes) {
    page.add_text("### Mix " + mix.id + "\n\n" + mix.description);
    std::map<std::string, const json*> retained;
    for (const auto& policy : params.policies) {
      const auto cell = results.decision.find({mix.id, policy.id});
      const std::vector<UnitResult> empty;
      const auto& cell_results = cell == results.decision.end() ? empty : cell->second;
      if (const json* r = results.retained(mix.id, policy.id)) retained[policy.id] = r;
      std::vector<std::string> locations;
      if (policy.kind == sim::PolicyKind::FixedSplit)
        locations = {"state-pool", "kv-pool"};
      else if (policy.kind == sim::PolicyKind::Unified)
        locations = {"arena-gap", "kv-holes", "state-holes"};
      else locations = {"block-pool"};
      std::string label = policy.id;
      const auto split = splits.find(mix.id);
      if (policy.tuned_ratio && split != splits.end() && split->second.chosen) {
        label += " (tuned ratio " + sim::number_label(split->second.ratio) + ")";
      }
      page.add_table(policy_table(mix.id, policy.id, label, cell_results, metrics_for(locations)));
    }
    add_retained_charts(mix.id, policy_ids, retained, page);
  }
  if (tuned) add_ratio_sensitivity(params, results, arms, page);
  if (!params.sensitivity_copy_bytes_per_second.empty()) add_compaction_sensitivity(params, results, arms, page);

  page.add_text(
      "### Interpretation boundary\n\n"
      "The simulation can establish whether unified allocation improves admission for these traces and assumptions. "
      "It cannot establish GPU throughput, copy cost, allocator-lock contention, or network behavior without device "
      "measurements. (The seed's words. Every duration here is simulated time under the stated service model; the copy "
      "time is bytes moved divided by an assumed bandwidth.)");
}

}  // namespace k3lab::experiments::memory_pool
