#include "agent_replay/summary.hpp"

#include <map>
#include <set>

#include "k3lab/api/endpoint_binding.hpp"
#include "k3lab/api/endpoint_choice.hpp"
#include "k3lab/api/transport_options.hpp"
#include "agent_replay/parameters.hpp"
#include "agent_replay/run_digest.hpp"
#include "agent_replay/units.hpp"
#include "k3lab/api/endpoint.hpp"
#include "k3lab/report/stats.hpp"
#include "k3lab/report/svg.hpp"

namespace k3lab::experiments::agent_replay {
namespace {

using report::Cell;

Cell optional_cell(const std::optional<double>& v, int digits = 4) { return v ? Cell(*v, digits) : Cell(); }

std::string percent(double fraction) { return report::format_fixed(fraction * 100.0, 1) + "%"; }

std::string confidence_text(const Parameters& p) { return report::format_significant(p.confidence * 100.0, 3) + "%"; }

std::string classes_text(const std::map<std::string, std::size_t>& classes) {
  if (classes.empty()) return "none";
  std::string out;
  for (const auto& [cls, n] : classes) out += (out.empty() ? "" : ", ") + cls + " " + std::to_string(n);
  return out;
}

void add_record_counts(const RunDigest& d, report::Page& page) {
  auto table = report::make_table("terminal-records-by-arm", "Terminal records by arm",
                                  {"arm", "planned", "result", "invalid", "failure", "open"});
  for (const auto& a : d.arms) {
    const std::size_t done = a.results + a.invalid + a.failures;
    table.rows.push_back({a.arm, a.planned, a.results, a.invalid, a.failures,
                          static_cast<std::int64_t>(a.planned) - static_cast<std::int64_t>(done)});
  }
  table.caption = "One control and six single-fault arms. Invalid and failed runs are excluded from rates, never "
                  "dropped; if one arm exceeds its invalid limit, the whole window is invalidated.";
  page.add_table(std::move(table));
}

void add_success(const Parameters& p, const RunDigest& d, report::Page& page) {
  auto table = report::make_table("task-success-by-arm", "Task success and pass^k by arm",
                                  {"arm", "valid runs", "successes", "success rate", "Wilson low", "Wilson high"});
  for (int k = 1; k <= p.repetitions; ++k) table.columns.push_back("pass^" + std::to_string(k));
  table.columns.insert(table.columns.end(), {"answered", "turn limit", "API error", "mean model turns"});
  report::Chart chart;
  chart.id = "task-success-by-arm";
  chart.title = "Task success rate by arm";
  chart.kind = report::Chart::Kind::Bar;
  chart.x_label = "arm";
  chart.y_label = "validated task success";
  report::Series series;
  series.label = "success rate (" + confidence_text(p) + " Wilson interval)";
  for (const auto& a : d.arms) {
    std::vector<Cell> row = {a.arm, a.results, a.successes};
    if (a.results > 0) {
      const auto w = report::wilson_interval(a.successes, a.results, p.confidence);
      row.insert(row.end(), {Cell(w.estimate), Cell(w.low), Cell(w.high)});
      chart.categories.push_back(a.arm);
      series.x.push_back(static_cast<double>(chart.categories.size() - 1));
      series.y.push_back(w.estimate);
      series.y_low.push_back(w.low);
      series.y_high.push_back(w.high);
    } else {
      row.insert(row.end(), {Cell(), Cell(), Cell()});
    }
    std::vector<TaskTally> tallies;
    for (const auto& [task, tally] : a.tasks) tallies.push_back(tally);
    for (int k = 1; k <= p.repetitions; ++k) row.push_back(optional_cell(pass_hat_k(tallies, static_cast<std::size_t>(k))));
    auto stop = [&](const char* key) {
      const auto it = a.stops.find(key);
      return Cell(it == a.stops.end() ? std::size_t{0} : it->second);
    };
    row.insert(row.end(), {stop("answered"), stop("turn_limit"), stop("api_error"),
                           a.results > 0 ? Cell(static_cast<double>(a.model_turns) / static_cast<double>(a.results))
                                         : Cell()});
    table.rows.push_back(std::move(row));
  }
  table.caption = "Success: the task's hidden validator accepts the terminal answer and the final world state. "
                  "pass^k (tau-bench): mean over tasks of C(successes, k) / C(valid runs, k). An API rejection "
                  "provoked by a fault is an outcome of its arm (counted under API error), not an invalid run.";
  if (!series.y.empty()) {
    chart.series.push_back(std::move(series));
    chart.caption = "Valid runs only; bars are Wilson intervals.";
    page.add_table(std::move(table));
    page.add_chart(std::move(chart));
  } else {
    page.add_table(std::move(table));
  }
}

void add_protocol_metrics(const RunDigest& d, report::Page& page) {
  auto table = report::make_table(
      "protocol-metrics-by-arm", "Fault application, duplicate mutations, tool-call correlation and errors by arm",
      {"arm", "fault applied (runs)", "duplicate mutations", "runs with a duplicate", "unexpected tool names",
       "unmatched tool calls", "turns cut (finish length)", "transport retries", "overload retries", "error classes"});
  for (const auto& a : d.arms) {
    table.rows.push_back({a.arm, a.fault_applied, a.duplicate_mutations, a.runs_with_duplicates,
                          a.unexpected_tool_names, a.unmatched_tool_calls, a.finish_length, a.transport_retries,
                          a.overload_retries, classes_text(a.error_classes)});
  }
  table.caption = "Duplicate mutations, unexpected tool names, unmatched tool calls and cut turns are summed over "
                  "valid runs; retries and error classes over every run that made calls. Unmatched: tool-call ids "
                  "without exactly one tool result, and tool results without a call, in the history as replayed.";
  page.add_table(std::move(table));
}

void add_cost(const Parameters& p, const RunDigest& d, report::Page& page) {
  auto table = report::make_table(
      "tokens-cache-cost-by-arm", "Tokens, cached-token ratio and cost by arm",
      {"arm", "prompt tokens", "cached tokens", "completion tokens", "cached ratio", "cached ratio after turn 1",
       "cost (USD)", "completed tasks", "cost per completed task (USD)"});
  report::Chart chart;
  chart.id = "cached-token-ratio-by-arm";
  chart.title = "Cached-token ratio by arm";
  chart.kind = report::Chart::Kind::Bar;
  chart.x_label = "arm";
  chart.y_label = "cached / prompt tokens";
  report::Series all{"all calls", {}, {}, {}, {}};
  report::Series later{"calls after turn 1", {}, {}, {}, {}};
  for (const auto& a : d.arms) {
    // Calls without usage cost an unknown amount: a sum over the others would understate it.
    const bool known = a.usage_missing_calls == 0;
    table.rows.push_back({a.arm, a.prompt_tokens, a.cached_tokens, a.completion_tokens, optional_cell(a.cached_ratio()),
                          optional_cell(a.cached_ratio_after_turn_1()), known ? Cell(a.cost_usd, 6) : Cell("unknown"),
                          a.successes, known ? optional_cell(a.cost_per_completed_task(), 6) : Cell("unknown")});
    if (a.cached_ratio()) {
      chart.categories.push_back(a.arm);
      const double x = static_cast<double>(chart.categories.size() - 1);
      all.x.push_back(x);
      all.y.push_back(*a.cached_ratio());
      later.x.push_back(x);
      later.y.push_back(a.cached_ratio_after_turn_1().value_or(0.0));
    }
  }
  // The embedded mock starts every run with an empty cache (agent_replay_experiment.cpp); any other
  // endpoint keeps one cache for the whole window.
  const bool cache_per_run = d.endpoints == std::set<std::string>{"embedded-mock"};
  const std::string cache_note =
      cache_per_run
          ? "Each run starts with an empty prompt cache (the embedded mock), so a ratio counts only what a run "
            "reused of its own earlier turns; a fault's cache effect is the drop at the turn where it acts "
            "(turn-level numbers are in each run's ledger record)."
          : "Runs share the endpoint's prompt cache, and the arms of a task run one after another: turn 1 is the "
            "same request in every arm, and later turns repeat an earlier arm's request until a fault changes "
            "it, so later arms find more of their prompt cached. Read the ratios as what this window's cache "
            "did, not as a clean per-arm effect; a fault's own cache effect is the drop at the turn where it "
            "acts (turn-level numbers are in each run's ledger record).";
  table.caption = "Prices: the protocol's table (USD per million tokens: cache hit " +
                  report::format_significant(p.pricing.cache_hit, 4) + ", cache miss " +
                  report::format_significant(p.pricing.cache_miss, 4) + ", output " +
                  report::format_significant(p.pricing.output, 4) +
                  "). Cost counts every call, failed and abandoned attempts included; a completed task is a "
                  "validated success. " +
                  cache_note;
  std::size_t usage_missing = 0;
  for (const auto& a : d.arms) usage_missing += a.usage_missing_calls;
  if (usage_missing > 0) {
    table.caption += " usage-missing: " + std::to_string(usage_missing) +
                     " successful call(s) reported no usage, so their tokens are not counted and the cost of "
                     "their arms is unknown (a server that reports usage only with stream_options.include_usage, "
                     "or not at all; docs/endpoints.md).";
  }
  page.add_table(std::move(table));
  if (!all.y.empty()) {
    chart.series = {all, later};
    chart.caption = "A reordered tools array changes the serialized request from its first byte, so the prompt "
                    "cache misses from that turn on.";
    page.add_chart(std::move(chart));
  }
}

void add_errors(const RunDigest& d, report::Page& page) {
  auto table = report::make_table("api-errors-observed", "API errors observed in this window",
                                  {"arm", "error class (HTTP status: message)", "runs"});
  for (const auto& a : d.arms) {
    for (const auto& [message, n] : a.error_messages) table.rows.push_back({a.arm, message, n});
  }
  if (table.rows.empty()) return;
  table.caption = "What this endpoint answered in this test window. The symptom of a protocol fault is not a "
                  "documented contract: another API version or window may answer differently.";
  page.add_table(std::move(table));
}

void add_comparison(const Parameters& p, const RunDigest& d, report::Page& page) {
  const auto comparisons = compare_with_control(p, d);
  auto table = report::make_table(
      "fault-vs-control", "Each fault arm against the control, paired by task",
      {"arm", "tasks paired", "success difference (fault - control)", "success difference low",
       "success difference high", "fewer successes than control", "duplicate mutations per run difference",
       "duplicate difference low", "duplicate difference high", "more duplicates than control"});
  for (const auto& c : comparisons) {
    table.rows.push_back({c.arm, c.tasks, optional_cell(c.success_difference), optional_cell(c.success_low),
                          optional_cell(c.success_high), c.tasks ? Cell(c.success_supports ? "yes" : "no") : Cell(),
                          optional_cell(c.duplicate_difference), optional_cell(c.duplicate_low),
                          optional_cell(c.duplicate_high),
                          c.tasks ? Cell(c.duplicates_support ? "yes" : "no") : Cell()});
  }
  table.caption = "Per task, each arm's repetitions are averaged; the interval is the paired bootstrap over tasks (" +
                  std::to_string(p.bootstrap_resamples) + " resamples, seed " + std::to_string(p.bootstrap_seed) +
                  ", " + confidence_text(p) +
                  "). The hypothesis holds for a fault when the control succeeds more often and the interval "
                  "excludes zero, or when the fault arm has more duplicate mutations and the interval excludes zero.";
  page.add_table(std::move(table));
}

void add_window(const RunDigest& d, report::Page& page) {
  auto table = report::make_table("api-window", "The API window these results belong to", {"field", "observed"});
  table.rows.push_back({"endpoint", api::join_names(d.endpoints, "(no call)")});
  table.rows.push_back({"response model field", api::join_names(d.response_models, "(none)")});
  table.rows.push_back({"system_fingerprint", api::join_names(d.system_fingerprints, "(none sent)")});
  table.rows.push_back({"platform version headers", api::join_names(d.platform_versions, "(none sent)")});
  table.rows.push_back({"first call (UTC)", d.first_call_utc.empty() ? std::string("(none)") : d.first_call_utc});
  table.rows.push_back({"last call (UTC)", d.last_call_utc.empty() ? std::string("(none)") : d.last_call_utc});
  table.caption = "Results are reported per API window. Without a platform version identifier the deployed "
                  "backend is an uncontrolled source of drift between windows.";
  page.add_table(std::move(table));
}

void add_assumptions(const RunDigest& d, report::Page& page) {
  if (!d.assumptions.is_array() || d.assumptions.empty()) return;
  auto table = report::make_table("simulated-endpoint-assumptions", "Assumptions of the simulated endpoint",
                                  {"behaviour", "simulated as", "documented by Kimi"});
  for (const auto& a : d.assumptions) {
    table.rows.push_back({a.value("behaviour", ""), a.value("simulated_as", ""), a.value("documented", "")});
  }
  table.caption = "Recorded in the ledger when the run used the embedded mock. Where the documentation is silent the "
                  "mock's behaviour is an assumption, so the fault arms' effects here are mechanics of the harness, "
                  "not observations of Kimi K3.";
  page.add_table(std::move(table));
}

void add_boundary(const Parameters& p, const RunDigest& d, report::Page& page) {
  const std::string window = d.first_call_utc.empty() ? std::string("(no call made)")
                                                      : d.first_call_utc + " to " + d.last_call_utc;
  const auto comparisons = compare_with_control(p, d);
  const ArmDigest* control = d.arm("control");
  std::string text = "## Interpretation boundary\n\n";
  if (!d.window_stop_reason.empty()) {
    text += "**This window is invalid** (" + d.window_stop_reason +
            "): the seed invalidates the whole test window rather than dropping an arm. Rerun the complete matrix "
            "in a new window; nothing below supports a conclusion.\n\n";
  }
  const std::string who = api::endpoint_phrase(d.endpoints, d.simulated_runs, " with a scripted agent");
  text += "What this run can say, filled in from the data: " + who + ", in test window " + window +
          " (responses named " + api::join_names(d.response_models, "nothing") + "), with model " + p.model +
          ", reasoning_effort " + p.reasoning_effort + " and max_completion_tokens " +
          std::to_string(p.max_completion_tokens) + ", on these " + std::to_string(p.task_count) + " fixtures";
  if (control && control->results > 0) {
    text += ": the control completed " + std::to_string(control->successes) + " of " +
            std::to_string(control->results) + " valid runs (" +
            percent(static_cast<double>(control->successes) / static_cast<double>(control->results)) + ").";
  } else {
    text += ": the control has no valid run, so no fault can be compared.";
  }
  text += "\n\n";
  for (const auto& c : comparisons) {
    const ArmDigest* a = d.arm(c.arm);
    text += "- " + c.arm + ": ";
    if (!a || a->results == 0 || c.tasks == 0) {
      text += "no valid run paired with the control; nothing can be said.\n";
      continue;
    }
    const std::size_t ran = a->results + a->invalid + a->failures;
    if (a->fault_applied == 0) {
      text += "the fault never took effect in its " + std::to_string(ran) +
              " runs (no turn where it could act on these tasks), so nothing can be said about it.\n";
      continue;
    }
    text += "the fault took effect in " + std::to_string(a->fault_applied) + " of " + std::to_string(ran) +
            " runs; " + std::to_string(a->successes) + " of " + std::to_string(a->results) + " valid runs succeeded";
    if (c.success_difference) {
      text += " (paired success difference " + report::format_fixed(*c.success_difference, 3) + ", " +
              confidence_text(p) + " interval " + report::format_fixed(*c.success_low, 3) + " to " +
              report::format_fixed(*c.success_high, 3) + ")";
    }
    text += "; " + std::to_string(a->duplicate_mutations) + " duplicate mutations (control " +
            std::to_string(control->duplicate_mutations) + ")";
    if (a->cached_ratio_after_turn_1() && control->cached_ratio_after_turn_1()) {
      text += "; cached-token ratio after turn 1 " + report::format_fixed(*a->cached_ratio_after_turn_1(), 3) +
              " (control " + report::format_fixed(*control->cached_ratio_after_turn_1(), 3) + ")";
    }
    if (a->error_messages.empty()) {
      text += "; no API error";
    } else {
      text += "; the endpoint answered with " + classes_text(a->error_classes);
    }
    text += std::string(". ") +
            (c.success_supports || c.duplicates_support ? "This fault cost reliability in this window."
                                                        : "No reliability cost was detected for this fault here.") +
            "\n";
  }
  text += "\nIt cannot say: that the API has one permanent error for a contract violation (observed answers are "
          "reported per API window, not as a contract); anything about the model's causal internals; or anything "
          "that justifies publishing raw reasoning_content, which this run never stored (records keep its "
          "presence, byte count, token counts and SHA-256 only).";
  page.add_text(std::move(text));
}

}  // namespace

void summarise_run(const core::Protocol& protocol, const RunRecords& records, report::Page& page) {
  if (!records.manifest.contains("parameters")) {
    page.add_text(protocol.id + ": the manifest holds no parameters, so this run cannot be summarised.");
    return;
  }
  const Parameters p = parse_parameters(records.manifest.at("parameters"));
  const RunDigest d = digest_run(p, records.terminal_records(), records.ledger.records);
  if (const auto served = api::served_model_sentence(records.manifest.value("options", nlohmann::json()), p.model)) {
    page.add_text(*served);
  }
  if (const auto deviation = api::transport_deviation_sentence(records.manifest.value("options", nlohmann::json()),
                                                               records.manifest.at("parameters"))) {
    page.add_text(*deviation);
  }
  page.add_text("Each run sends the conversation with the declared tools, executes every tool call against a "
                "reset local world, stops after " + std::to_string(p.max_model_turns) +
                " model turns or one validated terminal answer, and is judged by the task's hidden validator. The "
                "control replays complete assistant messages; every other arm injects exactly one protocol fault. "
                "Raw reasoning_content is never written to the ledger, artifacts or logs.");
  add_record_counts(d, page);
  add_success(p, d, page);
  add_protocol_metrics(d, page);
  add_cost(p, d, page);
  add_errors(d, page);
  add_comparison(p, d, page);
  add_window(d, page);
  add_assumptions(d, page);
  add_boundary(p, d, page);
}

}  // namespace k3lab::experiments::agent_replay
