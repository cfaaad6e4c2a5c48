#include "agent_replay/agent_run.hpp"

#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

#include "agent_replay/arm_faults.hpp"
#include "agent_replay/operation_record.hpp"
#include "agent_replay/run_metrics.hpp"
#include "k3lab/api/error_class.hpp"
#include "k3lab/core/sha256.hpp"
#include "k3lab/validate/agent_tasks.hpp"
#include "k3lab/validate/agent_world.hpp"
#include "k3lab/validate/world_tools.hpp"

namespace k3lab::experiments::agent_replay {
namespace {

using nlohmann::json;

enum class Stop { answered, turn_limit, api_error, transport_exhausted, fatal_error, harness };

std::string to_string(Stop s) {
  switch (s) {
    case Stop::answered: return "answered";
    case Stop::turn_limit: return "turn_limit";
    case Stop::api_error: return "api_error";
    case Stop::transport_exhausted: return "transport_exhausted";
    case Stop::fatal_error: return "fatal_error";
    case Stop::harness: return "harness";
  }
  return "harness";
}

// Errors that end the whole window rather than being an outcome of the arm.
bool is_fatal(api::ErrorClass c) {
  return c == api::ErrorClass::auth || c == api::ErrorClass::quota || c == api::ErrorClass::not_found;
}

// Platform failures a retry may cure: transport, server, rate-limit and overload errors.
bool is_platform_failure(api::ErrorClass c) { return api::is_retryable(c); }

const validate::AgentTask& task_for(int task_number) {
  const auto& tasks = validate::agent_tasks();
  if (task_number < 1 || task_number > static_cast<int>(tasks.size())) {
    throw std::invalid_argument("agent-replay: unit task " + std::to_string(task_number) + " does not exist; there are " +
                                std::to_string(tasks.size()) + " frozen tasks (parameters.task_count must not exceed it)");
  }
  return tasks[static_cast<std::size_t>(task_number - 1)];
}

// Moves an earlier process's record aside; returns the abandoned records (oldest first).
std::vector<std::filesystem::path> set_aside_abandoned(const std::filesystem::path& path) {
  std::vector<std::filesystem::path> abandoned;
  const std::string stem = path.stem().string();
  for (int n = 1;; ++n) {
    auto candidate = path.parent_path() / (stem + ".abandoned-" + std::to_string(n) + ".jsonl");
    if (std::filesystem::exists(candidate)) {
      abandoned.push_back(candidate);
      continue;
    }
    if (std::filesystem::exists(path)) {
      std::filesystem::rename(path, candidate);
      abandoned.push_back(candidate);
    }
    break;
  }
  return abandoned;
}

struct Usage {
  std::int64_t prompt = 0, cached = 0, completion = 0;
  double cost = 0;
};

Usage usage_of_calls(const Parameters& p, const std::vector<json>& call_entries) {
  Usage u;
  for (const auto& e : call_entries) {
    const json& r = e.at("record");
    const auto prompt = r.value("prompt_tokens", std::int64_t{0});
    const auto cached = r.value("cached_tokens", std::int64_t{0});
    const auto completion = r.value("completion_tokens", std::int64_t{0});
    u.prompt += prompt;
    u.cached += cached;
    u.completion += completion;
    u.cost += call_cost_usd(p, prompt, cached, completion);
  }
  return u;
}

// What the ledger keeps of one call entry (data), and its wall-clock side (timing).
json call_data(const json& e, const json& r, const std::string& cls) {
  return {{"turn", e["turn"]},
          {"try", e["try"]},
          {"effort", e["effort"]},
          {"max_completion_tokens", e["max_completion_tokens"]},
          {"tools_reordered", e["tools_reordered"]},
          {"request_sha256", e["request_sha256"]},
          {"http_status", r["http_status"]},
          {"error_class", cls},
          {"model", r["model"]},
          {"system_fingerprint", r["system_fingerprint"]},
          {"finish_reason", r["finish_reason"]},
          {"usage_reported", r["usage_reported"]},
          {"prompt_tokens", r["prompt_tokens"]},
          {"cached_tokens", r["cached_tokens"]},
          {"completion_tokens", r["completion_tokens"]},
          {"reasoning_present", r["reasoning_present"]},
          {"reasoning_tokens", r["reasoning_tokens"]},
          {"reasoning_sha256", r["reasoning_sha256"]},
          {"reasoning_bytes", e["reasoning_bytes"]},
          {"tool_call_count", r["tool_call_count"]},
          {"attempts", r["attempts"]},
          {"overload_retries", r["overload_retries"]}};
}

json call_timing(const json& e, const json& r) {
  return {{"turn", e["turn"]},
          {"try", e["try"]},
          {"started_utc", r["started_utc"]},
          {"finished_utc", r["finished_utc"]},
          {"ttft_ms", r["ttft_ms"]},
          {"latency_ms", r["latency_ms"]},
          {"wall_ms", r["wall_ms"]},
          {"waited_ms", r["waited_ms"]},
          {"response_id", r["response_id"]},
          {"request_ids", r["request_ids"]},
          {"platform_headers", r["platform_headers"]}};
}

// The calls of one attempt, tallied for the unit's record.
struct CallSummary {
  json calls = json::array();
  json call_timing = json::array();
  std::map<std::string, int> error_classes;
  std::map<std::string, int> finish_reasons;
  json api_errors = json::array();
  json effort_by_turn = json::array();
  json reasoning_bytes_by_turn = json::array();
  int transport_retries = 0, overload_retries = 0;
  bool simulated = false;
  std::int64_t later_prompt = 0, later_cached = 0;  // of turns after the first
};

CallSummary summarize_calls(const std::vector<json>& call_entries) {
  CallSummary sum;
  for (const auto& e : call_entries) {
    const json& r = e.at("record");
    sum.simulated = sum.simulated || r.value("simulated", false);
    const std::string cls = r.value("error_class", "none");
    const bool ok = cls == "none";
    sum.overload_retries += r.value("overload_retries", 0);
    if (e.value("try", 0) > 0) ++sum.transport_retries;
    if (!ok) {
      ++sum.error_classes[cls];
      sum.api_errors.push_back({{"turn", e["turn"]},
                                {"try", e["try"]},
                                {"http_status", r["http_status"]},
                                {"error_class", cls},
                                {"message", r.value("error_message", "")}});
    } else {
      ++sum.finish_reasons[r.value("finish_reason", "")];
      sum.effort_by_turn.push_back(e["effort"]);
      sum.reasoning_bytes_by_turn.push_back(e["reasoning_bytes"]);
      if (e["turn"].get<int>() > 1) {
        sum.later_prompt += r.value("prompt_tokens", std::int64_t{0});
        sum.later_cached += r.value("cached_tokens", std::int64_t{0});
      }
    }
    sum.calls.push_back(call_data(e, r, cls));
    sum.call_timing.push_back(call_timing(e, r));
  }
  return sum;
}

// Tool dispatches of the run: how many, how many executed, how many injected as duplicates.
struct DispatchCounts {
  std::size_t dispatches = 0, executed = 0, injected = 0;
};

DispatchCounts count_dispatches(const RunState& s) {
  DispatchCounts n;
  for (const auto& [id, list] : s.dispatches) {
    for (const auto& d : list) {
      ++n.dispatches;
      n.executed += d.value("executed", false) ? 1 : 0;
      n.injected += d.value("injected_duplicate", false) ? 1 : 0;
    }
  }
  return n;
}

class UnitRun {
 public:
  UnitRun(const AgentRunSetup& setup, const Unit& unit, std::filesystem::path record_path)
      : setup_(setup),
        p_(setup.parameters),
        unit_(unit),
        task_(task_for(unit.spec.at("task").get<int>())),
        faults_(arm_from_id(unit.spec.at("arm").get<std::string>()), p_),
        path_(std::move(record_path)) {}

  UnitOutcome run() {
    abandoned_ = set_aside_abandoned(path_);
    const auto now = setup_.clock->utc_now();
    timing_ = {{"window_start_utc", api::format_utc(setup_.window.start)}, {"unit_start_utc", api::format_utc(now)}};
    if (!setup_.window.contains(now)) {
      auto out = UnitOutcome::invalid("outside-test-window",
                                  "the unit would start at " + api::format_utc(now) + ", outside the test window " +
                                      api::format_utc(setup_.window.start) + " + " +
                                      std::to_string(p_.test_window_hours) + " h; no call was made",
                                  base_data());
      out.timing = timing_;
      return out;
    }
    record_.emplace(path_);
    record_->append({{"op", "start"}, {"unit", unit_.id}, {"task_id", task_.id}, {"arm", arm_id(faults_.arm())}});
    record_->append({{"op", "message"}, {"message", {{"role", "system"}, {"content", validate::agent_system_prompt()}}}});
    record_->append({{"op", "message"}, {"message", {{"role", "user"}, {"content", task_.instruction}}}});
    loop();
    return outcome();
  }

 private:
  void loop() {
    std::map<int, int> tries;  // model turn -> failed tries so far
    for (;;) {
      const RunState& s = record_->state();
      if (const auto call = s.next_unsettled_call()) {
        settle(*call);
        continue;
      }
      if (s.model_turns > 0 && s.last_calls.empty() && s.last_finish_reason != "length") {
        stop_ = Stop::answered;
        return;
      }
      if (s.model_turns >= p_.max_model_turns) {
        stop_ = Stop::turn_limit;
        return;
      }
      const int turn = s.model_turns + 1;
      const int attempt = tries[turn];
      const json request = build_request(turn);
      // Once this arm's fault is in the conversation, a refusal of it is the designed outcome, not breakage.
      const std::string expected = fault_turn_ ? "fault arm " + std::string(arm_id(faults_.arm())) : std::string();
      const api::ChatResult result = setup_.client->complete(request, call_index_++, expected);
      const api::CallRecord& call = result.record;
      record_->append({{"op", "call"},
                       {"turn", turn},
                       {"try", attempt},
                       {"request_sha256", core::sha256_hex(request.dump())},
                       {"effort", faults_.effort_at(turn)},
                       {"max_completion_tokens", faults_.max_completion_tokens_at(turn)},
                       {"tools_reordered", faults_.tools_reordered_at(turn)},
                       {"reasoning_bytes", result.response.has_reasoning ? result.response.reasoning_content.size() : 0},
                       {"record", call.to_json()}});
      if (result.ok()) {
        json message = result.response.assistant_message();
        if (result.response.has_reasoning) vault_.keep(result.response.reasoning_content);
        const RedactedAssistant redacted = redact_assistant(message);
        record_->append({{"op", "message"},
                         {"turn", turn},
                         {"finish_reason", result.response.finish_reason},
                         {"message", redacted.message},
                         {"reasoning", redacted.reasoning}});
        continue;
      }
      last_error_ = call.error_class;
      if (is_fatal(call.error_class)) {
        stop_ = Stop::fatal_error;
        return;
      }
      if (!is_platform_failure(call.error_class)) {
        stop_ = Stop::api_error;
        return;
      }
      const int sends = ++tries[turn];
      if (!setup_.retry.may_retry(call.error_class, sends)) {
        stop_ = Stop::transport_exhausted;
        return;
      }
      const auto wait = backoff(call, sends);
      record_->append({{"op", "resume"},
                       {"turn", turn},
                       {"try", tries[turn]},
                       {"after", std::string(api::to_string(call.error_class))},
                       {"wait_ms", std::chrono::duration<double, std::milli>(wait).count()}});
      if (!setup_.clock->sleep_unless_stopped(wait, setup_.stop)) {
        throw api::CallInterrupted("agent-replay: stopped while waiting to resend model turn " + std::to_string(turn) +
                                   "; the unit stays open");
      }
      // Continue from the retained record, not from memory.
      record_.emplace(path_);
      if (!consistent()) {
        stop_ = Stop::harness;
        return;
      }
    }
  }

  // The shared policy's wait (the server's Retry-After, else backoff with jitter) before the turn is
  // sent again, after `sends` sends of it.
  std::chrono::nanoseconds backoff(const api::CallRecord& call, int sends) const {
    std::optional<std::chrono::nanoseconds> retry_after;
    if (call.retry_after_ms) {
      retry_after = std::chrono::nanoseconds(static_cast<std::int64_t>(*call.retry_after_ms * 1e6));
    }
    return setup_.retry.wait_before_next(sends, retry_after, call.call_index);
  }

  // The messages as this arm sends them at `turn`, with reasoning re-attached from memory.
  json build_request(int turn) {
    const RunState& s = record_->state();
    json messages = json::array();
    for (std::size_t i = 0; i < s.messages.size(); ++i) {
      json m = s.messages[i];
      if (m.value("role", "") == "assistant") {
        const std::string& sha = s.reasoning_sha256[i];
        if (!sha.empty()) {
          const std::string* text = vault_.find(sha);
          if (!text) {
            throw std::logic_error("agent-replay: the reasoning of message " + std::to_string(i) +
                                   " is not in memory; an exact replay is impossible");
          }
          m["reasoning_content"] = *text;
        }
        json replayed = faults_.replayed(m);
        if (replayed != m && !fault_turn_) fault_turn_ = turn;
        m = std::move(replayed);
      }
      messages.push_back(std::move(m));
    }
    if (faults_.request_fault_at(turn) && !fault_turn_) fault_turn_ = turn;
    return {{"model", setup_.request_model.empty() ? p_.model : setup_.request_model},
            {"messages", std::move(messages)},
            {"tools", faults_.tools_at(turn)},
            {"reasoning_effort", faults_.effort_at(turn)},
            {"max_completion_tokens", faults_.max_completion_tokens_at(turn)},
            {"stream", true},
            {"stream_options", {{"include_usage", true}}}};
  }

  bool any_mutating_dispatch() const {
    for (const auto& [id, list] : record_->state().dispatches) {
      for (const auto& d : list) {
        if (d.value("mutating", false)) return true;
      }
    }
    return false;
  }

  json dispatch_entry(const RecordedCall& call, const std::string& arguments, const std::string& key_source,
                      const validate::ToolOutcome& outcome, bool injected_duplicate) const {
    return {{"op", "dispatch"},
            {"turn", record_->state().model_turns},
            {"tool_call_id", call.id},
            {"tool", call.name},
            {"arguments", arguments},
            {"key_source", key_source},
            {"mutating", outcome.mutating},
            {"executed", outcome.executed},
            {"replayed", outcome.replayed},
            {"is_error", outcome.is_error},
            {"injected_duplicate", injected_duplicate},
            {"content", outcome.content()}};
  }

  // Executes (at most once, apart from the injected duplicate) and answers one tool call.
  void settle(const RecordedCall& call) {
    const RunState& s = record_->state();
    std::size_t index = 0;
    while (index < s.last_calls.size() && s.last_calls[index].id != call.id) ++index;
    const bool omit = faults_.omitted_result(s.last_calls.size(), s.omitted_any) == std::optional<std::size_t>(index);
    std::string content;
    if (const auto done = s.dispatches.find(call.id); done != s.dispatches.end()) {
      // Dispatched before the result was settled: never again; answer with what it returned.
      content = done->second.back().at("content").get<std::string>();
    } else {
      content = dispatch(call);
    }
    if (omit) {
      record_->append({{"op", "omitted"}, {"turn", record_->state().model_turns}, {"tool_call_id", call.id}});
      if (!fault_turn_) fault_turn_ = record_->state().model_turns;
      return;
    }
    record_->append({{"op", "message"}, {"message", {{"role", "tool"}, {"tool_call_id", call.id}, {"content", content}}}});
  }

  std::string dispatch(const RecordedCall& call) {
    json arguments = json::parse(call.arguments, nullptr, false);
    if (arguments.is_discarded() || !arguments.is_object() || !validate::is_mutating_tool(call.name)) {
      const auto outcome = world_.call_with_arguments_text(call.name, call.arguments);
      record_->append(dispatch_entry(call, call.arguments, "none", outcome, false));
      return outcome.content();
    }
    const std::string key_field(validate::kIdempotencyKeyField);
    if (faults_.duplicates_first_mutation() && !record_->state().mutation_duplicated && !any_mutating_dispatch()) {
      arguments.erase(key_field);
      const std::string text = arguments.dump();
      const auto first = world_.call(call.name, arguments);
      record_->append(dispatch_entry(call, text, "stripped", first, false));
      const auto second = world_.call(call.name, arguments);
      record_->append(dispatch_entry(call, text, "stripped", second, true));
      if (!fault_turn_) fault_turn_ = record_->state().model_turns;
      return second.content();
    }
    std::string source = "model";
    if (!arguments.contains(key_field)) {
      arguments[key_field] = harness_idempotency_key(unit_.id, call.id);
      source = "harness";
    }
    const auto outcome = world_.call(call.name, arguments);
    record_->append(dispatch_entry(call, arguments.dump(), source, outcome, false));
    return outcome.content();
  }

  // The world (in memory) and the reopened record must tell the same story.
  bool consistent() const {
    std::size_t executed = 0;
    for (const auto& [id, list] : record_->state().dispatches) {
      for (const auto& d : list) executed += d.value("executed", false) ? 1 : 0;
    }
    return executed == world_.mutation_log().size();
  }

  json base_data() const {
    json data = {{"task_id", task_.id},
                 {"task_tags", task_.tags},
                 {"arm", arm_id(faults_.arm())},
                 {"endpoint", setup_.endpoint_name},
                 {"operation_record", "artifacts/agent-replay/" + path_.filename().string()}};
    if (!abandoned_.empty()) {
      json names = json::array();
      for (const auto& a : abandoned_) names.push_back("artifacts/agent-replay/" + a.filename().string());
      data["abandoned_records"] = names;
    }
    return data;
  }

  UnitOutcome outcome() {
    const RunState& s = record_->state();
    json data = base_data();
    json timing = timing_;

    // Calls of this attempt and of abandoned ones (their tokens were spent too).
    std::vector<json> abandoned_calls;
    for (const auto& a : abandoned_) {
      const OperationRecord old(a);
      for (const auto& c : old.state().calls) abandoned_calls.push_back(c);
    }
    const Usage u = usage_of_calls(p_, s.calls);
    const Usage ua = usage_of_calls(p_, abandoned_calls);
    CallSummary sum = summarize_calls(s.calls);

    // The history as it was (or would next be) sent: the measure of unmatched tool calls.
    json final_history = json::array();
    for (std::size_t i = 0; i < s.messages.size(); ++i) {
      final_history.push_back(s.messages[i].value("role", "") == "assistant" ? faults_.replayed(s.messages[i])
                                                                             : s.messages[i]);
    }
    const DispatchCounts dispatched = count_dispatches(s);
    std::size_t tool_calls = 0;
    json every_message = json::array();
    for (const auto& m : s.messages) {
      every_message.push_back(m);
      if (m.value("role", "") == "assistant" && m.contains("tool_calls")) tool_calls += m["tool_calls"].size();
    }

    const std::string final_answer =
        stop_ == Stop::answered && !s.messages.empty() ? s.messages.back().value("content", std::string()) : std::string();
    const validate::TaskVerdict verdict = validate::validate_agent_task(task_.id, world_, final_answer);
    const bool success = stop_ == Stop::answered && verdict.passed;

    data["simulated"] = sum.simulated;
    data["stop"] = to_string(stop_);
    data["success"] = success;
    data["verdict"] = validate::task_verdict_json(verdict);
    data["model_turns"] = s.model_turns;
    data["tool_calls"] = tool_calls;
    data["fault"] = {{"applied", fault_turn_.has_value()},
                     {"turn", fault_turn_ ? json(*fault_turn_) : json()},
                     {"omitted_results", s.omitted_any ? 1 : 0},
                     {"injected_duplicate_dispatches", dispatched.injected}};
    data["metrics"] = {
        {"duplicate_mutations", world_.duplicate_mutations()},
        {"mutations_executed", dispatched.executed},
        {"tool_dispatches", dispatched.dispatches},
        {"unexpected_tool_names", count_unexpected_tool_names(every_message, declared_tools())},
        {"unmatched_tool_calls", count_unmatched_tool_calls(final_history)},
        {"transport_retries", sum.transport_retries},
        {"overload_retries", sum.overload_retries},
        {"resumes_from_record", s.resumes},
        {"error_classes", sum.error_classes},
        {"finish_reasons", sum.finish_reasons},
        {"prompt_tokens", u.prompt},
        {"cached_tokens", u.cached},
        {"completion_tokens", u.completion},
        {"cached_token_ratio", u.prompt > 0 ? json(static_cast<double>(u.cached) / static_cast<double>(u.prompt)) : json()},
        {"prompt_tokens_after_turn_1", sum.later_prompt},
        {"cached_tokens_after_turn_1", sum.later_cached},
        {"cost_usd", u.cost},
        {"abandoned_attempt_cost_usd", ua.cost},
    };
    data["effort_by_turn"] = sum.effort_by_turn;
    data["reasoning_bytes_by_turn"] = sum.reasoning_bytes_by_turn;
    data["api_errors"] = sum.api_errors;
    data["calls"] = sum.calls;
    timing["calls"] = sum.call_timing;
    return terminal_outcome(std::move(data), std::move(timing), sum.api_errors);
  }

  // The unit's terminal kind follows from why the run stopped.
  UnitOutcome terminal_outcome(json data, json timing, const json& api_errors) const {
    switch (stop_) {
      case Stop::answered:
      case Stop::turn_limit:
      case Stop::api_error:
        return UnitOutcome::result(std::move(data), std::move(timing));
      case Stop::transport_exhausted: {
        auto out = UnitOutcome::invalid("transport-exhausted",
                                        "a platform failure (" + std::string(api::to_string(last_error_)) +
                                            ") persisted after " + std::to_string(p_.transport_retries) +
                                            " retries resumed from the operation record",
                                        std::move(data));
        out.timing = std::move(timing);
        return out;
      }
      case Stop::harness: {
        auto out = UnitOutcome::invalid("harness-inconsistent",
                                        "the reopened operation record and the world disagree about executed mutations",
                                        std::move(data));
        out.timing = std::move(timing);
        return out;
      }
      case Stop::fatal_error: break;
    }
    std::string detail = "the endpoint refused the run (" + std::string(api::to_string(last_error_)) + ")";
    if (!api_errors.empty()) detail += ": " + api_errors.back().value("message", "");
    auto out = UnitOutcome::failure(std::string(api::to_string(last_error_)), detail, std::move(data));
    out.timing = std::move(timing);
    return out;
  }

  const AgentRunSetup& setup_;
  const Parameters& p_;
  const Unit& unit_;
  const validate::AgentTask& task_;
  ArmFaults faults_;
  std::filesystem::path path_;
  std::vector<std::filesystem::path> abandoned_;
  std::optional<OperationRecord> record_;
  validate::World world_;
  ReasoningVault vault_;
  std::size_t call_index_ = 0;
  std::optional<int> fault_turn_;
  Stop stop_ = Stop::harness;
  api::ErrorClass last_error_ = api::ErrorClass::none;
  json timing_;
};

}  // namespace

std::string operation_record_name(const std::string& unit_id) {
  std::string name;
  for (char c : unit_id) {
    if (c == '/') name += '_';
    else if (c == '=') name += '-';
    else if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') name += c;
    else name += 'x';
  }
  return name + ".jsonl";
}

std::filesystem::path operation_record_path(const std::filesystem::path& artifacts_dir, const std::string& unit_id) {
  return artifacts_dir / "agent-replay" / operation_record_name(unit_id);
}

std::string harness_idempotency_key(const std::string& unit_id, const std::string& tool_call_id) {
  return "k3lab-" + core::sha256_hex(unit_id + "\n" + tool_call_id).substr(0, 24);
}

AgentRunner::AgentRunner(AgentRunSetup setup) : setup_(std::move(setup)) {
  if (!setup_.client) throw std::invalid_argument("AgentRunner needs a client");
  if (!setup_.clock) setup_.clock = api::system_clock();
  if (setup_.client->config().retry.max_sends != 1) {
    throw std::invalid_argument("AgentRunner: build the client with retry.max_sends = 1; the run resends failed "
                                "turns itself (setup.retry), resuming from its operation record");
  }
  setup_.retry.check();
}

UnitOutcome AgentRunner::run(const Unit& unit, const std::filesystem::path& artifacts_dir) {
  UnitRun run(setup_, unit, operation_record_path(artifacts_dir, unit.id));
  return run.run();
}

}  // namespace k3lab::experiments::agent_replay
