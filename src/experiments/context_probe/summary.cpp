#include "context_probe/summary.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "context_probe/decision.hpp"
#include "k3lab/api/endpoint_binding.hpp"
#include "k3lab/api/endpoint_choice.hpp"
#include "k3lab/api/transport_options.hpp"
#include "context_probe/parameters.hpp"
#include "context_probe/run_digest.hpp"
#include "context_probe/units.hpp"
#include "k3lab/api/endpoint.hpp"
#include "k3lab/report/stats.hpp"
#include "k3lab/report/svg.hpp"

namespace k3lab::experiments::context_probe {
namespace {

std::string with_commas(std::int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(static_cast<std::size_t>(i), ",");
  return (n < 0 ? "-" : "") + digits;
}

std::string percent(double fraction) { return report::format_fixed(fraction * 100.0, 1) + "%"; }

report::Cell median_or_blank(const std::vector<double>& values, double scale = 1.0) {
  if (values.empty()) return {};
  return report::Cell(report::median(values) * scale, 4);
}

report::Cell mean_or_blank(const std::vector<double>& values) {
  if (values.empty()) return {};
  return report::Cell(report::mean(values), 6);
}

std::string confidence_text(const Parameters& p) { return report::format_significant(p.decision_confidence * 100.0, 3) + "%"; }

// The terminal records against the plan, by stratum and role.
void add_record_counts(const Parameters& p, const RunRecords& records, report::Page& page) {
  struct Row {
    std::int64_t planned = 0, result = 0, invalid = 0, failure = 0;
  };
  std::map<std::string, Row> rows;
  std::vector<std::string> order;
  auto label = [](const nlohmann::json& spec) {
    const std::string stratum = spec.value("stratum", "?");
    return spec.value("role", "") == "prime" ? stratum + " (priming calls)" : stratum + " (scored cells)";
  };
  for (const auto& u : enumerate_units(p)) {
    const auto l = label(u.spec);
    if (!rows.count(l)) order.push_back(l);
    ++rows[l].planned;
  }
  for (const auto& record : records.terminal_records()) {
    auto& r = rows[label(record.value("spec", nlohmann::json::object()))];
    const std::string kind = record.value("kind", "");
    r.result += kind == "result";
    r.invalid += kind == "invalid";
    r.failure += kind == "failure";
  }
  auto table = report::make_table("terminal-records", "Terminal records by cache stratum and role",
                                  {"stratum", "planned", "result", "invalid", "failure", "open"});
  for (const auto& l : order) {
    const auto& r = rows[l];
    table.rows.push_back({l, r.planned, r.result, r.invalid, r.failure, r.planned - r.result - r.invalid - r.failure});
  }
  table.caption = "Priming calls are not scored; a failed priming call makes its warm cell invalid.";
  page.add_table(std::move(table));
}

void add_pass_rate_table(const Parameters& p, const RunDigest& d, report::Page& page) {
  auto table = report::make_table("pass-rate", "Validator pass rate by family x budget x stratum",
                                  {"family",
                                   "budget",
                                   "stratum",
                                   "planned",
                                   "valid",
                                   "invalid",
                                   "failed",
                                   "passes",
                                   "pass rate",
                                   "wilson low",
                                   "wilson high",
                                   "evidence coverage",
                                   "median ttft s",
                                   "median latency s",
                                   "mean prompt tokens",
                                   "mean cached tokens",
                                   "mean completion tokens",
                                   "prompt tokens / planned",
                                   "cost usd",
                                   "cost per success usd"});
  for (const auto& family : p.families) {
    for (const auto length : p.lengths) {
      for (const std::string stratum : {kCold, kWarm}) {
        const auto it = d.groups.find({family, length, stratum});
        if (it == d.groups.end()) continue;
        const auto& g = it->second;
        std::vector<report::Cell> row = {family, length, stratum, g.planned, g.results, g.invalid, g.failures};
        if (g.results > 0) {
          const auto w = report::wilson_interval(g.passes, g.results, p.decision_confidence);
          row.insert(row.end(), {g.passes, report::Cell(w.estimate, 3), report::Cell(w.low, 3), report::Cell(w.high, 3),
                                 mean_or_blank(g.coverage)});
        } else {
          row.insert(row.end(), {report::Cell(), report::Cell(), report::Cell(), report::Cell(), report::Cell()});
        }
        row.insert(row.end(), {median_or_blank(g.ttft_ms, 1e-3), median_or_blank(g.latency_ms, 1e-3),
                               mean_or_blank(g.prompt_tokens), mean_or_blank(g.cached_tokens),
                               mean_or_blank(g.completion_tokens), mean_or_blank(g.prompt_over_planned)});
        if (g.usage_missing > 0) {  // a sum without those calls would understate the cost
          row.insert(row.end(), {report::Cell("unknown"), report::Cell("unknown")});
        } else {
          row.push_back(report::Cell(g.cost_usd, 4));
          row.push_back(g.passes > 0 ? report::Cell(g.cost_usd / static_cast<double>(g.passes), 4)
                                     : report::Cell("no success"));
        }
        table.rows.push_back(std::move(row));
      }
    }
  }
  table.caption = "Cold and warm are separate strata and are never averaged together. Pass rate, Wilson interval (" +
                  confidence_text(p) + "), coverage, latency and tokens are over valid measurements only; cost " +
                  "counts every call of the group (scored, its priming calls and any re-primes, valid or not), so " +
                  "cost per success = cost / passes. Prices: " + p.pricing.model + " table as of " + p.pricing.as_of +
                  " (USD per 1M tokens: cache hit " + report::format_significant(p.pricing.cache_hit, 4) +
                  ", miss " + report::format_significant(p.pricing.cache_miss, 4) + ", output " +
                  report::format_significant(p.pricing.output, 4) + ").";
  page.add_table(std::move(table));
}

void add_charts(const Parameters& p, const RunDigest& d, report::Page& page) {
  for (const auto& family : p.families) {
    report::Chart chart;
    chart.id = "pass-rate-" + family;
    chart.title = family + ": validator pass rate vs request budget";
    chart.x_label = "total request budget (tokens)";
    chart.y_label = "validator pass rate";
    chart.kind = report::Chart::Kind::Line;
    chart.log_x = true;
    for (const std::string stratum : {kCold, kWarm}) {
      report::Series s;
      s.label = stratum;
      for (const auto length : p.lengths) {
        const auto it = d.groups.find({family, length, stratum});
        if (it == d.groups.end() || it->second.results == 0) continue;
        const auto w = report::wilson_interval(it->second.passes, it->second.results, p.decision_confidence);
        s.x.push_back(static_cast<double>(length));
        s.y.push_back(w.estimate);
        s.y_low.push_back(w.low);
        s.y_high.push_back(w.high);
      }
      if (!s.x.empty()) chart.series.push_back(std::move(s));
    }
    if (chart.series.empty()) continue;
    chart.caption = "Cold and warm strata as separate series (never averaged); bars are " + confidence_text(p) +
                    " Wilson intervals over valid measurements.";
    page.add_chart(std::move(chart));
  }
}

void add_call_totals(const RunDigest& d, report::Page& page) {
  auto table =
      report::make_table("calls-and-cost", "Calls, tokens and cost by role",
                         {"role", "units", "calls", "prompt tokens", "cached tokens", "completion tokens", "cost usd"});
  CallTotals all;
  for (const std::string role : {"cold scored", "priming", "warm scored", "re-priming"}) {
    const auto it = d.totals_by_role.find(role);
    if (it == d.totals_by_role.end()) continue;
    const auto& t = it->second;
    table.rows.push_back({role, t.units, t.calls, t.prompt_tokens, t.cached_tokens, t.completion_tokens,
                          t.usage_missing > 0 ? report::Cell("unknown") : report::Cell(t.cost_usd, 6)});
    all.calls += t.calls;
    all.usage_missing += t.usage_missing;
    all.prompt_tokens += t.prompt_tokens;
    all.cached_tokens += t.cached_tokens;
    all.completion_tokens += t.completion_tokens;
    all.cost_usd += t.cost_usd;
  }
  table.rows.push_back({"all", report::Cell(), all.calls, all.prompt_tokens, all.cached_tokens, all.completion_tokens,
                        all.usage_missing > 0 ? report::Cell("unknown") : report::Cell(all.cost_usd, 6)});
  table.caption = "Priming tokens and cost are counted (seed). Re-priming repeats a warm cell's priming request when "
                  "the cell did not directly follow its priming call (resume, unit subsets).";
  if (all.usage_missing > 0) {
    table.caption += " usage-missing: " + std::to_string(all.usage_missing) +
                     " answered call(s) reported no usage, so their tokens are not counted and the cost of their "
                     "roles is unknown (docs/endpoints.md: servers that send usage only with "
                     "stream_options.include_usage, or never).";
  }
  page.add_table(std::move(table));
}

void add_provenance(const RunDigest& d, report::Page& page) {
  std::string headers;
  for (const auto& [name, values] : d.platform_headers) {
    headers += (headers.empty() ? "" : "; ") + name + " = " + api::join_names(values, "");
  }
  auto table = report::make_table("provenance", "Test window and serving provenance", {"item", "value"});
  table.rows = {{"test window (UTC)", d.window_start_utc.empty() ? std::string("(no unit ran)")
                                                                 : d.window_start_utc + " to " + d.window_end_utc},
                {"first call started / last call finished (UTC)",
                 d.first_call_utc.empty() ? std::string("(no call)") : d.first_call_utc + " / " + d.last_call_utc},
                {"endpoint", api::join_names(d.endpoints, "(no call)")},
                {"response model field", api::join_names(d.response_models, "(none reported)")},
                {"system_fingerprint", api::join_names(d.system_fingerprints, "(none reported)")},
                {"platform version headers", headers.empty() ? std::string("(none reported)") : headers},
                {"calls with a request id", std::to_string(d.calls_with_request_id) + " of " + std::to_string(d.calls)},
                {"calls answered by k3lab's mock server", std::to_string(d.simulated_calls) + " of " + std::to_string(d.calls)},
                {"prompt token counter", d.token_counter.empty() ? std::string("(no unit ran)")
                                                                 : d.token_counter + (d.exact_tokenizer ? " (exact)" : " (estimate)")},
                {"repository family snapshot", api::join_names(d.repositories, "(no repository unit ran)")}};
  table.caption = "Request ids and every response header that identifies the call are kept per call in the ledger "
                  "(data.call). Raw reasoning_content is never stored: only its presence, token count and SHA-256.";
  page.add_table(std::move(table));
}

void add_decision(const Parameters& p, const std::vector<StratumDecision>& decisions, report::Page& page) {
  auto table =
      report::make_table("decision", "Decision rule per family and stratum",
                         {"family", "stratum", "base budget pass rate", "loss detected at", "retained through"});
  for (const auto& d : decisions) {
    std::string base = "not measured";
    if (d.base_measured) {
      const auto& b = d.rates.front();
      base = std::to_string(b.passes) + "/" + std::to_string(b.valid) + " (" + percent(b.wilson.estimate) + ")";
    }
    table.rows.push_back({d.family, d.stratum, base, d.loss_at ? report::Cell(*d.loss_at) : report::Cell("none"),
                          d.retained_through ? report::Cell(*d.retained_through) : report::Cell("not established")});
  }
  table.caption = "A loss at budget L: the pass rate at L is lower than at the smallest budget (" +
                  with_commas(p.lengths.front()) + ") and their " + confidence_text(p) +
                  " Wilson intervals do not overlap. Retained through Z: every budget up to Z was measured and none "
                  "shows a loss.";
  page.add_table(std::move(table));
}

void add_invalid_reasons(const RunDigest& d, report::Page& page) {
  if (d.invalid_reasons.empty() && d.failure_classes.empty()) return;
  auto table = report::make_table("invalid-and-failed", "Why units have no valid measurement",
                                  {"outcome", "reason or class", "units"});
  for (const auto& [reason, n] : d.invalid_reasons) table.rows.push_back({"invalid (scored)", reason, n});
  for (const auto& [cls, n] : d.failure_classes) table.rows.push_back({"failure", cls, n});
  table.caption = "Invalid cells keep their reason and data in the ledger; they are excluded from pass rates, "
                  "never dropped or patched.";
  page.add_table(std::move(table));
}

void add_boundary(const Parameters& p, const RunDigest& d, const std::vector<StratumDecision>& decisions,
                  report::Page& page) {
  const std::string window = d.window_start_utc.empty() ? std::string("(no unit ran)")
                                                        : d.window_start_utc + " to " + d.window_end_utc;
  const std::string settings = "model " + p.model + " (responses named " + api::join_names(d.response_models, "nothing") +
                               "), reasoning_effort " + p.reasoning_effort + ", max_completion_tokens " +
                               with_commas(p.max_completion_tokens);
  const std::string who = api::endpoint_phrase(d.endpoints, d.simulated_calls, "");
  std::string text = "## Interpretation boundary\n\nWhat this run can say (one sentence per family and stratum, "
                     "filled in from the data):\n\n";
  for (const auto& s : decisions) {
    text += "- ";
    if (!s.base_measured) {
      text += s.family + ", " + s.stratum + " stratum: no valid measurement at the smallest budget (" +
              with_commas(p.lengths.front()) + "), so nothing can be said.\n";
      continue;
    }
    const auto& base = s.rates.front();
    const auto through = std::find_if(s.rates.begin(), s.rates.end(),
                                      [&](const RateAt& r) { return r.length == *s.retained_through; });
    text += who + " in test window " + window + " retained " + s.family + " validator pass rate (" + s.stratum +
            "-prefix stratum: no drop below its " + with_commas(base.length) + "-token level of " +
            std::to_string(base.passes) + "/" + std::to_string(base.valid) + " with non-overlapping " +
            confidence_text(p) + " Wilson intervals; " + std::to_string(through->passes) + "/" +
            std::to_string(through->valid) + " at " + with_commas(through->length) +
            ") on these fixtures through context length " + with_commas(*s.retained_through) +
            " under these settings: " + settings + ".";
    if (s.loss_at) {
      const auto loss = std::find_if(s.rates.begin(), s.rates.end(), [&](const RateAt& r) { return r.length == *s.loss_at; });
      text += " Its pass rate fell at " + with_commas(loss->length) + " (" + std::to_string(loss->passes) + "/" +
              std::to_string(loss->valid) + "): on these fixtures useful context for this family ended before " +
              with_commas(loss->length) + " tokens.";
    }
    text += "\n";
  }
  const std::string verdict = page.profile == "smoke" ? "not evaluated" : hypothesis_verdict(decisions);
  text += "\nHypothesis (a family loses validator pass rate before the configured limit): **" + verdict + "**";
  if (verdict == "not evaluated") {
    text += ": a smoke run checks the pipeline on toy fixtures; no verdict is read from it.";
  } else if (verdict == "supported") {
    std::string where;
    for (const auto& s : decisions) {
      if (s.loss_at) where += (where.empty() ? "" : "; ") + s.family + " (" + s.stratum + ") at " + with_commas(*s.loss_at);
    }
    text += " (loss detected: " + where + ").";
  } else if (verdict == "not supported") {
    std::int64_t largest = 0;
    for (const auto& s : decisions) {
      if (s.retained_through) largest = std::max(largest, *s.retained_through);
    }
    text += ": no loss detected through " + with_commas(largest) + " tokens on these fixtures.";
  } else {
    text += ": no family has a valid measurement at the smallest budget.";
  }
  text += "\n\nWhat it cannot say:\n\n";
  text += "- That Kimi K3 (or this endpoint) has that many useful tokens for every workload: only these fixtures, "
          "settings and test window were measured.\n";
  text += "- That KDA, MLA or any other named mechanism caused the recall observed: a direct API test observes "
          "serving, not causes.\n";
  if (d.simulated_calls > 0 || d.endpoints.count("embedded-mock") > 0) {
    text += "- Anything about Kimi K3 at all: the answers came from k3lab's deterministic reader, whose recall loss "
            "with distance is a simulation parameter.\n";
  }
  std::set<std::string> backend = d.system_fingerprints;
  backend.erase("k3lab-mock");
  if (backend.empty() && d.platform_headers.empty()) {
    text += "- That the result holds for a later backend: no backend revision was reported (no platform version "
            "header, no system_fingerprint), so the test window is an uncontrolled source of drift.\n";
  } else {
    text += "- That the result holds for a later backend: identifiers reported were " + api::join_names(backend, "none") +
            (d.platform_headers.empty() ? std::string() : " plus platform headers (see provenance)") +
            "; a different deployment may differ.\n";
  }
  if (p.lengths.back() < 1048576) {
    text += "- Anything above " + with_commas(p.lengths.back()) + " tokens: this profile's largest budget (the "
            "seed's matrix goes to 1,048,576).\n";
  }
  if (!d.exact_tokenizer && !d.token_counter.empty()) {
    text += "- Exact prompt sizes: fixtures were fitted with " + d.token_counter + ", a conservative estimate, not "
            "the Kimi tokenizer; see prompt tokens / planned in the pass-rate table.\n";
  }
  std::size_t excluded = 0;
  for (const auto& [key, g] : d.groups) excluded += g.invalid + g.failures;
  if (excluded > 0) {
    text += "- Anything about the " + std::to_string(excluded) + " scored cells without a valid measurement "
            "(reasons below); they are excluded, never patched.\n";
  }
  if (!d.window_stops.empty()) {
    text += "- Anything as a complete test window: the window rule stopped it (" + d.window_stops.back() +
            "). This window is invalid; rerun the complete matrix in a new window.\n";
  } else if (d.units_finished < d.units_planned) {
    text += "- A final decision: only " + std::to_string(d.units_finished) + " of " + std::to_string(d.units_planned) +
            " planned units have finished.\n";
  }
  page.add_text(text);
}

}  // namespace

void summarise_run(const core::Protocol& protocol, const RunRecords& records, report::Page& page) {
  if (!records.manifest.contains("parameters")) {
    page.add_text("The manifest holds no parameters, so the " + protocol.id +
                  " plan cannot be rebuilt; this run directory is damaged. Start a new run with --fresh.");
    return;
  }
  const Parameters p = parse_parameters(records.manifest.at("parameters"));
  const RunDigest d = digest_run(p, records);
  const auto decisions = decide(p, d);
  if (const auto served = api::served_model_sentence(records.manifest.value("options", nlohmann::json()), p.model)) {
    page.add_text(*served);
  }
  if (const auto deviation = api::transport_deviation_sentence(records.manifest.value("options", nlohmann::json()),
                                                               records.manifest.at("parameters"))) {
    page.add_text(*deviation);
  }

  const bool simulated = d.simulated_calls > 0 || d.endpoints.count("embedded-mock") > 0;
  if (simulated && std::find(page.labels.begin(), page.labels.end(), api::kSimulatedLabel) == page.labels.end()) {
    page.labels.push_back(api::kSimulatedLabel);
  }
  std::string status = d.window_stops.empty()
                           ? (d.units_finished < d.units_planned ? "in progress (" + std::to_string(d.units_finished) +
                                                                       " of " + std::to_string(d.units_planned) + " units)"
                                                                 : "complete")
                           : "STOPPED by the window rule, so this test window is invalid: " + d.window_stops.back();
  page.add_text("Test window: " + status + ". Cold-prefix and warm-prefix cells answer different questions and are "
                "reported separately; a warm cell counts only with usage.cached_tokens > 0, a cold cell only with "
                "usage.cached_tokens == 0.");
  add_boundary(p, d, decisions, page);
  add_pass_rate_table(p, d, page);
  add_charts(p, d, page);
  add_decision(p, decisions, page);
  add_call_totals(d, page);
  add_record_counts(p, records, page);
  add_invalid_reasons(d, page);
  add_provenance(d, page);
}

}  // namespace k3lab::experiments::context_probe
