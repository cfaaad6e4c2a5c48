#include "agent_replay/run_digest.hpp"

#include "agent_replay/units.hpp"
#include "k3lab/report/stats.hpp"

namespace k3lab::experiments::agent_replay {
namespace {

using nlohmann::json;

std::int64_t int_at(const json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
}

void add_calls(ArmDigest& a, RunDigest& d, const json& data, const json& timing) {
  const json metrics = data.value("metrics", json::object());
  a.transport_retries += int_at(metrics, "transport_retries");
  a.overload_retries += int_at(metrics, "overload_retries");
  // Bind before items(): the proxy refers to its json, which must outlive the loop.
  const json error_classes = metrics.value("error_classes", json::object());
  for (const auto& [cls, n] : error_classes.items()) {
    a.error_classes[cls] += n.get<std::size_t>();
  }
  a.prompt_tokens += int_at(metrics, "prompt_tokens");
  a.cached_tokens += int_at(metrics, "cached_tokens");
  a.completion_tokens += int_at(metrics, "completion_tokens");
  a.prompt_after_turn_1 += int_at(metrics, "prompt_tokens_after_turn_1");
  a.cached_after_turn_1 += int_at(metrics, "cached_tokens_after_turn_1");
  a.cost_usd += metrics.value("cost_usd", 0.0) + metrics.value("abandoned_attempt_cost_usd", 0.0);
  std::set<std::string> messages;
  for (const auto& e : data.value("api_errors", json::array())) {
    // The client's message already starts with "HTTP <status>: " when the endpoint answered.
    const std::string message = e.value("message", "");
    const std::string status = "HTTP " + std::to_string(e.value("http_status", 0));
    messages.insert(e.value("error_class", "") + " (" + (message.rfind(status, 0) == 0 ? message : status + ": " + message) +
                    ")");
  }
  for (const auto& m : messages) ++a.error_messages[m];
  for (const auto& c : data.value("calls", json::array())) {
    if (c.value("error_class", "none") != "none") continue;
    if (!c.value("usage_reported", true)) ++a.usage_missing_calls;
    if (c.contains("model") && c["model"].is_string()) d.response_models.insert(c["model"].get<std::string>());
    if (c.contains("system_fingerprint") && c["system_fingerprint"].is_string() &&
        !c["system_fingerprint"].get<std::string>().empty()) {
      d.system_fingerprints.insert(c["system_fingerprint"].get<std::string>());
    }
  }
  for (const auto& c : timing.value("calls", json::array())) {
    const std::string started = c.value("started_utc", "");
    const std::string finished = c.value("finished_utc", "");
    if (!started.empty() && (d.first_call_utc.empty() || started < d.first_call_utc)) d.first_call_utc = started;
    if (!finished.empty() && finished > d.last_call_utc) d.last_call_utc = finished;
    const json platform_headers = c.value("platform_headers", json::object());
    for (const auto& [name, value] : platform_headers.items()) {
      if (value.is_string()) d.platform_versions.insert(name + ": " + value.get<std::string>());
    }
  }
}

}  // namespace

std::optional<double> ArmDigest::cached_ratio() const {
  if (prompt_tokens <= 0) return std::nullopt;
  return static_cast<double>(cached_tokens) / static_cast<double>(prompt_tokens);
}

std::optional<double> ArmDigest::cached_ratio_after_turn_1() const {
  if (prompt_after_turn_1 <= 0) return std::nullopt;
  return static_cast<double>(cached_after_turn_1) / static_cast<double>(prompt_after_turn_1);
}

std::optional<double> ArmDigest::cost_per_completed_task() const {
  if (successes == 0) return std::nullopt;
  return cost_usd / static_cast<double>(successes);
}

const ArmDigest* RunDigest::arm(const std::string& id) const {
  for (const auto& a : arms) {
    if (a.arm == id) return &a;
  }
  return nullptr;
}

RunDigest digest_run(const Parameters& p, const std::vector<json>& terminal_records, const std::vector<json>& all_records) {
  RunDigest d;
  std::map<std::string, std::size_t> index;
  for (const auto& id : arm_ids()) {
    index[id] = d.arms.size();
    d.arms.push_back({});
    d.arms.back().arm = id;
  }
  for (const auto& u : enumerate_units(p)) ++d.arms[index.at(u.spec.at("arm").get<std::string>())].planned;

  for (const auto& r : terminal_records) {
    const json spec = r.value("spec", json::object());
    const auto it = index.find(spec.value("arm", ""));
    if (it == index.end()) continue;
    ArmDigest& a = d.arms[it->second];
    const std::string kind = r.value("kind", "");
    const json data = r.value("data", json::object());
    const json timing = r.value("timing", json::object());
    a.results += kind == "result";
    a.invalid += kind == "invalid";
    a.failures += kind == "failure";
    if (data.contains("endpoint")) d.endpoints.insert(data["endpoint"].get<std::string>());
    if (data.value("simulated", false)) ++d.simulated_runs;
    if (data.contains("fault") && data["fault"].value("applied", false)) ++a.fault_applied;
    if (data.contains("metrics")) add_calls(a, d, data, timing);
    if (kind != "result") continue;
    const json metrics = data.value("metrics", json::object());
    const bool success = data.value("success", false);
    a.successes += success;
    ++a.stops[data.value("stop", "?")];
    const std::int64_t duplicates = int_at(metrics, "duplicate_mutations");
    a.duplicate_mutations += duplicates;
    a.runs_with_duplicates += duplicates > 0;
    a.unexpected_tool_names += int_at(metrics, "unexpected_tool_names");
    a.unmatched_tool_calls += int_at(metrics, "unmatched_tool_calls");
    a.model_turns += int_at(data, "model_turns");
    a.finish_length += int_at(metrics.value("finish_reasons", json::object()), "length");
    const std::string task = data.value("task_id", "T" + std::to_string(spec.value("task", 0)));
    auto& tally = a.tasks[task];
    ++tally.runs;
    tally.successes += success;
    a.task_duplicates[task] += duplicates;
  }
  for (const auto& r : all_records) {
    if (r.value("kind", "") == "window" && r.value("stop", false)) d.window_stop_reason = r.value("reason", "");
    if (r.value("kind", "") == "note" && r.value("note", "") == "simulated-endpoint-assumptions" && d.assumptions.is_null()) {
      d.assumptions = r.value("assumptions", json());
    }
  }
  return d;
}

std::vector<PairedComparison> compare_with_control(const Parameters& p, const RunDigest& d) {
  std::vector<PairedComparison> out;
  const ArmDigest* control = d.arm("control");
  if (!control) return out;
  for (const auto& a : d.arms) {
    if (a.arm == "control") continue;
    PairedComparison c;
    c.arm = a.arm;
    std::vector<double> fault_success, control_success, fault_dups, control_dups;
    for (const auto& [task, tally] : a.tasks) {
      const auto base = control->tasks.find(task);
      if (base == control->tasks.end() || tally.runs == 0 || base->second.runs == 0) continue;
      fault_success.push_back(static_cast<double>(tally.successes) / static_cast<double>(tally.runs));
      control_success.push_back(static_cast<double>(base->second.successes) / static_cast<double>(base->second.runs));
      fault_dups.push_back(static_cast<double>(a.task_duplicates.at(task)) / static_cast<double>(tally.runs));
      control_dups.push_back(static_cast<double>(control->task_duplicates.at(task)) /
                             static_cast<double>(base->second.runs));
    }
    c.tasks = fault_success.size();
    if (c.tasks > 0) {
      const auto resamples = static_cast<std::size_t>(p.bootstrap_resamples);
      const auto s = report::paired_bootstrap_interval(fault_success, control_success, report::PairedEffect::Difference,
                                                       resamples, p.bootstrap_seed, p.confidence);
      c.success_difference = s.estimate;
      c.success_low = s.low;
      c.success_high = s.high;
      c.success_supports = s.estimate < 0 && s.excludes_zero();
      const auto m = report::paired_bootstrap_interval(fault_dups, control_dups, report::PairedEffect::Difference,
                                                       resamples, p.bootstrap_seed, p.confidence);
      c.duplicate_difference = m.estimate;
      c.duplicate_low = m.low;
      c.duplicate_high = m.high;
      c.duplicates_support = m.estimate > 0 && m.excludes_zero();
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace k3lab::experiments::agent_replay
