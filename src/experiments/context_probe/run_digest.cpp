#include "context_probe/run_digest.hpp"

#include "context_probe/units.hpp"

namespace k3lab::experiments::context_probe {
namespace {

std::int64_t int_at(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<std::int64_t>() : 0;
}

double number_at(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

const nlohmann::json& object_at(const nlohmann::json& j, const char* key) {
  static const nlohmann::json empty = nlohmann::json::object();
  if (!j.is_object()) return empty;
  const auto it = j.find(key);
  return it != j.end() && it->is_object() ? *it : empty;
}

void keep_earliest(std::string& slot, const std::string& value) {
  if (!value.empty() && (slot.empty() || value < slot)) slot = value;
}
void keep_latest(std::string& slot, const std::string& value) {
  if (!value.empty() && value > slot) slot = value;
}

// An answered call whose response reported no usage (its tokens and cost are unknown).
bool usage_missing(const nlohmann::json& call) {
  return !call.empty() && call.value("error_class", "none") == "none" && !call.value("usage_reported", true);
}

// One call (a unit's own, or a re-prime): provenance, call totals. Returns its cost.
double count_call(RunDigest& d, CallTotals& totals, const nlohmann::json& call, const nlohmann::json& call_timing,
                  double cost) {
  if (call.empty()) return 0.0;
  ++d.calls;
  ++totals.calls;
  totals.prompt_tokens += int_at(call, "prompt_tokens");
  totals.cached_tokens += int_at(call, "cached_tokens");
  totals.completion_tokens += int_at(call, "completion_tokens");
  totals.cost_usd += cost;
  totals.usage_missing += usage_missing(call) ? 1 : 0;
  if (call.value("simulated", false)) ++d.simulated_calls;
  if (const auto e = call.value("endpoint", ""); !e.empty()) d.endpoints.insert(e);
  if (const auto m = call.value("model", ""); !m.empty()) d.response_models.insert(m);
  if (const auto f = call.value("system_fingerprint", ""); !f.empty()) d.system_fingerprints.insert(f);
  if (!object_at(call, "request_ids").empty()) ++d.calls_with_request_id;
  for (const auto& [name, value] : object_at(call, "platform_headers").items()) {
    if (name != "x-k3lab-mock" && value.is_string()) d.platform_headers[name].insert(value.get<std::string>());
  }
  keep_earliest(d.first_call_utc, call_timing.value("started_utc", ""));
  keep_latest(d.last_call_utc, call_timing.value("finished_utc", ""));
  return cost;
}

}  // namespace

RunDigest digest_run(const Parameters& p, const RunRecords& records) {
  RunDigest d;
  const auto units = enumerate_units(p);
  d.units_planned = units.size();
  for (const auto& u : units) {
    if (u.spec.at("role") != "scored") continue;
    ++d.groups[{u.spec.at("family"), u.spec.at("length"), u.spec.at("stratum")}].planned;
  }
  for (const auto& r : records.ledger.records) {
    if (r.value("kind", "") == "window" && r.value("stop", false)) d.window_stops.push_back(r.value("reason", ""));
  }
  for (const auto& record : records.terminal_records()) {
    ++d.units_finished;
    const auto& spec = object_at(record, "spec");
    if (spec.empty()) continue;
    const auto& data = object_at(record, "data");
    const auto& timing = object_at(record, "timing");
    const std::string kind = record.value("kind", "");
    const std::string role = spec.value("role", "");
    const std::string stratum = spec.value("stratum", "");
    const bool scored = role == "scored";
    GroupStats& g = d.groups[{spec.value("family", ""), spec.value("length", std::int64_t{0}), stratum}];

    keep_earliest(d.window_start_utc, timing.value("window_start_utc", ""));
    keep_latest(d.window_end_utc, timing.value("window_end_utc", ""));
    if (const auto& counter = object_at(data, "token_counter"); !counter.empty()) {
      d.token_counter = counter.value("name", "");
      d.exact_tokenizer = counter.value("exact", false);
    }

    if (const auto& repository = object_at(object_at(data, "fixture"), "repository"); !repository.empty()) {
      d.repositories.insert(repository.value("package", "") + " " + repository.value("version", "") + " (" +
                            repository.value("upstream", "") + "; " + repository.value("license", "") +
                            "), file list SHA-256 " + repository.value("files_sha256", ""));
    }

    const std::string role_name = scored ? stratum + " scored" : "priming";
    auto& totals = d.totals_by_role[role_name];
    ++totals.units;
    g.cost_usd += count_call(d, totals, object_at(data, "call"), object_at(timing, "call"), number_at(data, "cost_usd"));
    g.calls += object_at(data, "call").empty() ? 0 : 1;
    g.usage_missing += usage_missing(object_at(data, "call")) ? 1 : 0;
    if (const auto& reprime = object_at(data, "reprime"); !reprime.empty()) {
      auto& again = d.totals_by_role["re-priming"];
      ++again.units;
      g.cost_usd += count_call(d, again, object_at(reprime, "call"), object_at(timing, "reprime_call"),
                               number_at(reprime, "cost_usd"));
      ++g.calls;
      g.usage_missing += usage_missing(object_at(reprime, "call")) ? 1 : 0;
    }
    if (kind == "failure") ++d.failure_classes[record.value("reason", "")];
    if (!scored) continue;

    if (kind == "invalid") {
      ++g.invalid;
      ++d.invalid_reasons[record.value("reason", "")];
      continue;
    }
    if (kind == "failure") {
      ++g.failures;
      continue;
    }
    ++g.results;
    const auto& verdict = object_at(data, "verdict");
    g.passes += verdict.value("passed", false) ? 1 : 0;
    g.coverage.push_back(number_at(verdict, "evidence_coverage"));
    const auto& call_timing = object_at(timing, "call");
    if (call_timing.contains("ttft_ms") && call_timing["ttft_ms"].is_number()) {
      g.ttft_ms.push_back(call_timing["ttft_ms"].get<double>());
    }
    g.latency_ms.push_back(number_at(call_timing, "latency_ms"));
    const auto& observed = object_at(data, "observed");
    g.prompt_tokens.push_back(number_at(observed, "prompt_tokens"));
    g.cached_tokens.push_back(number_at(observed, "cached_tokens"));
    g.completion_tokens.push_back(number_at(observed, "completion_tokens"));
    g.prompt_over_planned.push_back(number_at(observed, "prompt_tokens_over_planned"));
  }
  return d;
}

}  // namespace k3lab::experiments::context_probe
