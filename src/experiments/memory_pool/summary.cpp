#include "memory_pool/summary.hpp"

#include <cmath>
#include <functional>
#include <map>
#include <sstream>

#include "k3lab/sim/parameters.hpp"
#include "k3lab/sim/stats.hpp"

namespace k3lab::experiments::memory_pool {
namespace {

using nlohmann::json;

struct UnitResult {
  std::size_t trace_index = 0;
  json data;
};

struct Metric {
  std::string name;
  std::function<double(const json&)> value;
};

double num(const json& j) { return j.is_number() ? j.get<double>() : 0.0; }

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

std::string verdict_of(const sim::MeanInterval& diff) {
  if (diff.n < 2) return "not enough seeded traces";
  if (diff.low > 0) return "supported";
  if (diff.high < 0) return "refuted";
  return "unresolved";
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
    const auto config = sim::policy_config(p, p.policies[i]);
    const bool seed = i < protocol.arms.size() && protocol.arms[i].requested_by_seed;
    md << "- **" << p.policies[i].id << "** (" << (seed ? "requested by the seed" : "reference arm added by k3lab, not requested by the seed")
       << "): ";
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

report::Table policy_table(const std::string& mix, const std::string& policy, const std::vector<UnitResult>& results,
                           const std::vector<Metric>& metrics) {
  report::Table t;
  t.id = "memory-pool-" + mix + "-" + policy;
  t.title = "Mix " + mix + ", policy " + policy;
  t.columns = {"metric", "retained trace", "mean over seeded traces", "95% CI low", "95% CI high", "seeded traces"};
  const json* retained = nullptr;
  for (const auto& r : results) {
    if (r.trace_index == 0) retained = &r.data;
  }
  for (const auto& metric : metrics) {
    std::vector<double> values;
    for (const auto& r : results) {
      if (r.trace_index > 0) values.push_back(metric.value(r.data));
    }
    const sim::MeanInterval ci = sim::mean_ci95(values);
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

  // (mix, policy) -> results, from result records only; invalid and failed units are listed by the
  // caller in the failure log and the excluded-data section.
  std::map<std::pair<std::string, std::string>, std::vector<UnitResult>> by_cell;
  for (const auto& record : records.terminal_records()) {
    if (record.value("kind", "") != "result" || !record.contains("spec")) continue;
    const json& spec = record["spec"];
    by_cell[{spec.value("mix", ""), spec.value("policy", "")}].push_back(
        {spec.value("trace_index", std::size_t{0}), record.value("data", json::object())});
  }

  std::vector<std::string> policy_ids;
  for (const auto& p : params.policies) policy_ids.push_back(p.id);
  std::string fixed_id, unified_id;
  for (const auto& p : params.policies) {
    if (p.kind == sim::PolicyKind::FixedSplit && fixed_id.empty()) fixed_id = p.id;
    if (p.kind == sim::PolicyKind::Unified && unified_id.empty()) unified_id = p.id;
  }

  // The decision rule: paired over seeded traces, unified minus fixed split, admitted by the last arrival.
  report::Table decision;
  decision.id = "memory-pool-decision";
  decision.title = "Decision: does unified allocation admit more requests than fixed pools?";
  decision.columns = {"mix", "pairs", "admitted by last arrival: unified - fixed (mean)", "95% CI low", "95% CI high",
                      "verdict", "queue delay p99: unified - fixed, s (mean)", "unified bytes moved, GB (mean)",
                      "unified copy time, s (mean)"};
  for (const auto& mix : params.mixes) {
    std::map<std::size_t, const json*> fixed, unified;
    for (const auto& r : by_cell[{mix.id, fixed_id}]) fixed[r.trace_index] = &r.data;
    for (const auto& r : by_cell[{mix.id, unified_id}]) unified[r.trace_index] = &r.data;
    std::vector<double> admitted_diff, p99_diff, moved, copy;
    for (const auto& [trace, f] : fixed) {
      auto u = unified.find(trace);
      if (trace == 0 || u == unified.end()) continue;
      admitted_diff.push_back(num((*u->second)["counts"]["admitted_by_last_arrival"]) - num((*f)["counts"]["admitted_by_last_arrival"]));
      p99_diff.push_back(num((*u->second)["queue_delay_seconds"]["p99"]) - num((*f)["queue_delay_seconds"]["p99"]));
      moved.push_back(num((*u->second)["compaction"]["bytes_moved"]) / 1e9);
      copy.push_back(num((*u->second)["compaction"]["stall_seconds"]));
    }
    const auto d = sim::mean_ci95(admitted_diff);
    decision.rows.push_back({mix.id, d.n, report::Cell(d.mean, 5), report::Cell(d.low, 5), report::Cell(d.high, 5),
                             page.profile == "smoke" ? std::string("not evaluated (smoke)") : verdict_of(d),
                             report::Cell(sim::mean_ci95(p99_diff).mean, 5),
                             report::Cell(sim::mean_ci95(moved).mean, 5), report::Cell(sim::mean_ci95(copy).mean, 5)});
  }
  decision.caption = "Arms compared: " + unified_id + " vs " + fixed_id +
                     " (both requested by the seed), paired on the same seeded traces; Student-t 95% interval of the "
                     "mean paired difference. Supported: interval above zero, with compaction copies already charged "
                     "on the critical path; refuted: below zero; unresolved: contains zero. The seed's test case is "
                     "the mix that shifts from short to long requests. The padded-single-page reference arm enters no "
                     "verdict. A smoke run reads no verdict.";
  page.add_table(std::move(decision));

  for (const auto& mix : params.mixes) {
    page.add_text("### Mix " + mix.id + "\n\n" + mix.description);
    std::map<std::string, const json*> retained;
    for (std::size_t i = 0; i < params.policies.size(); ++i) {
      const auto& policy = params.policies[i];
      const auto& results = by_cell[{mix.id, policy.id}];
      for (const auto& r : results) {
        if (r.trace_index == 0) retained[policy.id] = &r.data;
      }
      std::vector<std::string> locations;
      const sim::PolicyConfig config = sim::policy_config(params, policy);
      if (config.kind == sim::PolicyKind::FixedSplit) locations = {"state-pool", "kv-pool"};
      else if (config.kind == sim::PolicyKind::Unified) locations = {"arena-gap", "kv-holes", "state-holes"};
      else locations = {"block-pool"};
      page.add_table(policy_table(mix.id, policy.id, results, metrics_for(locations)));
    }
    add_retained_charts(mix.id, policy_ids, retained, page);
  }

  page.add_text(
      "### Interpretation boundary\n\n"
      "The simulation can establish whether unified allocation improves admission for these traces and assumptions. "
      "It cannot establish GPU throughput, copy cost, allocator-lock contention, or network behavior without device "
      "measurements. (The seed's words. Every duration here is simulated time under the stated service model; the copy "
      "time is bytes moved divided by an assumed bandwidth.)");
}

}  // namespace k3lab::experiments::memory_pool
