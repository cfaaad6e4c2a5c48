#include "k3lab/api/preflight.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace k3lab::api {
namespace {

nlohmann::json short_request(const PreflightOptions& o, nlohmann::json messages) {
  nlohmann::json request = {{"model", o.model},
                            {"messages", std::move(messages)},
                            {"max_completion_tokens", o.max_completion_tokens},
                            {"stream", true},
                            {"stream_options", {{"include_usage", true}}}};
  if (!o.reasoning_effort.empty()) request["reasoning_effort"] = o.reasoning_effort;
  return request;
}

nlohmann::json user(const std::string& text) { return {{"role", "user"}, {"content", text}}; }

void count(PreflightReport& report, const ChatResult& r) {
  ++report.calls;
  report.prompt_tokens += r.record.prompt_tokens;
  report.completion_tokens += r.record.completion_tokens;
}

PreflightCheck check_models(const ChatClient& client, const std::string& model) {
  PreflightCheck c{"models", false, "", ""};
  try {
    const auto ids = client.list_models();
    c.ok = std::find(ids.begin(), ids.end(), model) != ids.end();
    std::string listed;
    for (const auto& id : ids) listed += (listed.empty() ? "" : ", ") + id;
    c.detail = "the server lists: " + (listed.empty() ? std::string("(nothing)") : listed);
    if (!c.ok) {
      c.fix = "request a listed model with --served-model NAME, or serve the weights as \"" + model +
              "\" (vLLM/SGLang --served-model-name)";
    }
  } catch (const std::exception& e) {
    c.detail = e.what();
    c.fix = "check --base-url (it ends in /v1 for most servers) and the key; docs/endpoints.md";
  }
  return c;
}

PreflightCheck check_usage(const ChatResult& r, PreflightReport& report) {
  PreflightCheck c{"usage", false, "", ""};
  report.round_trip_ms = r.record.latency_ms;
  if (!r.ok()) {
    c.detail = "the probe call failed (" + std::string(to_string(r.record.error_class)) + "): " + r.record.error_message;
    c.fix = "fix what the error names before a window; docs/endpoints.md";
    return c;
  }
  c.ok = r.record.usage_reported;
  c.detail = c.ok ? "prompt_tokens " + std::to_string(r.record.prompt_tokens) + ", completion_tokens " +
                        std::to_string(r.record.completion_tokens)
                  : "the response reported no usage";
  if (!c.ok) c.fix = "the server must send usage with stream_options.include_usage (every call would be usage-missing)";
  return c;
}

PreflightCheck check_cache(const ChatClient& client, const PreflightOptions& o, PreflightReport& report) {
  PreflightCheck c{"cache", false, "", ""};
  std::string prefix = "k3lab pre-flight cache probe. ";
  while (prefix.size() < 8192) prefix += "The quick brown fox jumps over the lazy dog near the river bank. ";
  const auto request = short_request(o, {{{"role", "system"}, {"content", prefix}}, user("Reply with OK.")});
  const ChatResult first = client.complete(request);
  count(report, first);
  const ChatResult second = client.complete(request);
  count(report, second);
  if (!first.ok() || !second.ok()) {
    c.detail = "a cache probe call failed: " + (first.ok() ? second.record.error_message : first.record.error_message);
    c.fix = "fix what the error names; docs/endpoints.md";
    return c;
  }
  c.ok = second.record.cached_tokens > 0;
  c.detail = "the repeated prompt reported cached_tokens " + std::to_string(second.record.cached_tokens) + " of " +
             std::to_string(second.record.prompt_tokens);
  if (!c.ok) {
    c.fix = "enable prefix caching and its report (vLLM: --enable-prefix-caching --enable-prompt-tokens-details; "
            "SGLang: --enable-cache-report); without it every warm cell is warm-cache-miss";
  }
  return c;
}

PreflightCheck check_tool_call(const ChatClient& client, const PreflightOptions& o, PreflightReport& report) {
  PreflightCheck c{"tool-call", false, "", ""};
  const nlohmann::json lookup = {
      {"type", "function"},
      {"function",
       {{"name", "get_order_status"},
        {"description", "Look up the status of an order by its id."},
        {"parameters",
         {{"type", "object"}, {"properties", {{"order_id", {{"type", "string"}}}}}, {"required", {"order_id"}}}}}}};
  nlohmann::json messages = o.probe_messages.is_array() && !o.probe_messages.empty()
                                ? o.probe_messages
                                : nlohmann::json::array({user("What is the status of order A-17? Use the tool.")});
  auto request = short_request(o, messages);
  request["tools"] = o.probe_tools.is_array() && !o.probe_tools.empty() ? o.probe_tools : nlohmann::json::array({lookup});
  const ChatResult first = client.complete(request);
  count(report, first);
  if (!first.ok() || first.response.tool_calls.empty()) {
    c.detail = first.ok() ? "the model answered without calling the declared tool (finish_reason " +
                                first.response.finish_reason + ")"
                          : "the tool-call probe failed: " + first.record.error_message;
    c.fix = "the server must accept `tools` and return tool_calls (vLLM: --enable-auto-tool-choice with the "
            "model's --tool-call-parser)";
    return c;
  }
  messages.push_back(first.response.assistant_message());
  for (const auto& call : first.response.tool_calls) {
    const std::string result = o.answer_tool ? o.answer_tool(call) : std::string("{\"status\": \"shipped\"}");
    messages.push_back({{"role", "tool"}, {"tool_call_id", call.id}, {"content", result}});
  }
  request["messages"] = messages;
  const ChatResult second = client.complete(request);
  count(report, second);
  c.ok = second.ok();
  c.detail = c.ok ? "tool called and answered after its result (finish_reason " + second.response.finish_reason + ")"
                  : "the call carrying the tool result failed: " + second.record.error_message;
  if (!c.ok) c.fix = "the server must accept the assistant message (with reasoning_content) and tool results back";
  return c;
}

// The price table's date and age, and a warning when it is stale or undated.
void note_price_table(const PreflightOptions& o, PreflightReport& report) {
  report.price_table_as_of = o.price_table_as_of;
  if (o.price_table_as_of.empty()) return;
  report.price_table_age_days = days_since(o.price_table_as_of, o.clock->utc_now());
  const std::string where = "parameters.pricing (usd_per_million_tokens and as_of) in " +
                            (o.price_table_file.empty() ? std::string("the protocol file") : o.price_table_file);
  if (!report.price_table_age_days) {
    report.warnings.push_back("the price table's as_of \"" + o.price_table_as_of +
                              "\" is not a YYYY-MM-DD date, so its age is unknown: check the prices and update " +
                              where + ", with the date you checked them");
  } else if (*report.price_table_age_days > kStalePriceTableDays) {
    report.warnings.push_back("the price table is " + std::to_string(*report.price_table_age_days) +
                              " days old (more than " + std::to_string(kStalePriceTableDays) +
                              "): costs may be wrong; check the prices and update " + where);
  }
}

std::string age_text(std::int64_t days) {
  if (days < 0) return "dated " + std::to_string(-days) + " days after today";
  return std::to_string(days) + (days == 1 ? " day old" : " days old");
}

}  // namespace

std::optional<std::int64_t> days_since(const std::string& as_of, std::chrono::system_clock::time_point now) {
  int y = 0;
  unsigned m = 0, d = 0;
  int consumed = 0;
  if (as_of.size() < 10 || std::sscanf(as_of.c_str(), "%4d-%2u-%2u%n", &y, &m, &d, &consumed) != 3 || consumed != 10) {
    return std::nullopt;
  }
  const std::chrono::year_month_day date{std::chrono::year(y), std::chrono::month(m), std::chrono::day(d)};
  if (!date.ok()) return std::nullopt;
  const auto today = std::chrono::floor<std::chrono::days>(now);
  return (today - std::chrono::sys_days(date)).count();
}

bool PreflightReport::ok() const {
  return std::all_of(checks.begin(), checks.end(), [](const PreflightCheck& c) { return c.ok; });
}

nlohmann::json PreflightReport::to_json() const {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& c : checks) list.push_back({{"check", c.name}, {"ok", c.ok}, {"detail", c.detail}, {"fix", c.fix}});
  return {{"ok", ok()},
          {"model", model},
          {"price_table_as_of", price_table_as_of},
          {"price_table_age_days", price_table_age_days ? nlohmann::json(*price_table_age_days) : nlohmann::json()},
          {"warnings", warnings},
          {"checks", list},
          {"round_trip_ms", round_trip_ms},
          {"calls", calls},
          {"prompt_tokens", prompt_tokens},
          {"completion_tokens", completion_tokens}};
}

std::string PreflightReport::text() const {
  std::ostringstream out;
  out << "  model requested: \"" << model << "\"\n";
  for (const auto& c : checks) {
    out << (c.ok ? "  ok    " : "  FAIL  ") << c.name << ": " << c.detail << "\n";
    if (!c.ok) out << "        fix: " << c.fix << "\n";
  }
  if (!price_table_as_of.empty()) {
    out << "  price table: as of " << price_table_as_of << " ("
        << (price_table_age_days ? age_text(*price_table_age_days) : std::string("age unknown"))
        << "; costs are priced with it)\n";
  }
  out << "  round trip of the first call: " << static_cast<long long>(round_trip_ms) << " ms; " << calls
      << " calls, " << prompt_tokens << " prompt and " << completion_tokens << " completion tokens\n";
  for (const auto& warning : warnings) out << "  warning: " << warning << "\n";
  return out.str();
}

PreflightReport run_preflight(const ChatClient& client, const PreflightOptions& options) {
  PreflightReport report;
  report.model = options.model;
  note_price_table(options, report);
  report.checks.push_back(check_models(client, options.model));
  const ChatResult probe = client.complete(short_request(options, {user("Reply with OK.")}));
  count(report, probe);
  report.checks.push_back(check_usage(probe, report));
  if (!probe.ok()) return report;
  if (options.need_cache_hit) report.checks.push_back(check_cache(client, options, report));
  if (options.need_tool_call) report.checks.push_back(check_tool_call(client, options, report));
  return report;
}

}  // namespace k3lab::api
