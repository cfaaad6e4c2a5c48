#include "context_probe/cell_runner.hpp"

#include <stdexcept>

#include "context_probe/cell_prompt.hpp"
#include "context_probe/units.hpp"
#include "k3lab/api/budget.hpp"
#include "k3lab/core/sha256.hpp"
#include "k3lab/validate/context_validator.hpp"
#include "k3lab/validate/fixture_family.hpp"

namespace k3lab::experiments::context_probe {
namespace {

const char* const kClockFields[] = {"started_utc", "finished_utc", "ttft_ms", "latency_ms", "wall_ms", "waited_ms"};

// The repository family's pin and the digest of the files this prompt shows (the seed: "record the commit").
nlohmann::json repository_summary(const validate::ContextFixture& f) {
  if (!f.repository || f.repository->synthetic) return nullptr;
  const validate::RepositoryProvenance& r = *f.repository;
  nlohmann::json pin = r.snapshot_manifest;
  return {{"package", pin.value("package", "")},
          {"version", pin.value("version", "")},
          {"upstream", pin.value("upstream", "")},
          {"license", r.license},
          {"files_sha256", pin.value("files_sha256", "")},
          {"document_files", r.file_count},
          {"document_sha256", r.sha256}};
}

nlohmann::json fixture_summary(const validate::ContextFixture& f) {
  nlohmann::json summary = {{"id", f.id},
          {"family", std::string(validate::family_id(f.family))},
          {"index", f.index},
          {"seed", f.seed},
          {"generator_version", validate::kContextFixtureGeneratorVersion},
          {"target_tokens", f.target_tokens},
          {"prompt_tokens_planned", f.prompt_tokens},
          {"estimator", f.estimator_name},
          {"prompt_bytes", f.prompt.size()},
          {"prompt_sha256", core::sha256_hex(f.prompt)},
          {"question", f.question},
          {"expected_answer", f.expected_answer},
          {"required_evidence", f.required_evidence},
          {"required_span_tokens", f.required_span_tokens},
          {"evidence_spread_tokens", f.evidence_spread_tokens}};
  if (auto repository = repository_summary(f); !repository.is_null()) summary["repository"] = std::move(repository);
  return summary;
}

UnitOutcome with_timing(UnitOutcome outcome, nlohmann::json timing) {
  outcome.timing = std::move(timing);
  return outcome;
}

std::string attempts_phrase(const api::CallRecord& r) {
  return std::to_string(r.attempts) + " attempt" + (r.attempts == 1 ? "" : "s") + " (" +
         std::to_string(r.transport_retries) + " transport retries, " + std::to_string(r.overload_retries) +
         " rate-limit/overload retries)";
}

}  // namespace

SplitCallRecord split_call_record(const api::CallRecord& record, const api::EndpointChoice& endpoint) {
  SplitCallRecord split;
  split.data = record.to_json();
  split.timing = nlohmann::json::object();
  for (const char* field : kClockFields) {
    split.timing[field] = split.data[field];
    split.data.erase(field);
  }
  split.timing["endpoint_url"] = record.endpoint;
  split.data["endpoint"] = endpoint.record_name();
  return split;
}

CellRunner::CellRunner(CellRunnerSetup setup, std::map<std::string, std::string> earlier_outcomes)
    : setup_(std::move(setup)), outcomes_(std::move(earlier_outcomes)) {
  if (!setup_.client) throw std::invalid_argument("CellRunner needs a chat client");
  if (!setup_.clock) throw std::invalid_argument("CellRunner needs a clock");
  const auto plan = enumerate_units(setup_.parameters);
  for (std::size_t i = 0; i < plan.size(); ++i) plan_position_[plan[i].id] = i;
}

api::ChatResult CellRunner::call(const nlohmann::json& request, const std::string& unit_id) {
  const auto position = plan_position_.find(unit_id);
  if (position == plan_position_.end()) {
    throw std::invalid_argument("context-probe: unit " + unit_id +
                                " is not in the frozen plan of these parameters; "
                                "run units of the run's own plan (k3lab plan context-probe lists them)");
  }
  auto result = setup_.client->complete(request, position->second);
  last_call_sha256_ = core::sha256_hex(request.dump());
  return result;
}

UnitOutcome CellRunner::run(const Unit& unit) {
  auto outcome = run_unit(unit);
  static const char* const kinds[] = {"result", "invalid", "failure"};
  outcomes_[unit.id] = kinds[static_cast<int>(outcome.kind)];
  return outcome;
}

UnitOutcome CellRunner::run_unit(const Unit& unit) {
  const auto& p = setup_.parameters;
  const auto& spec = unit.spec;
  const std::string role = spec.at("role").get<std::string>();
  const std::string stratum = spec.at("stratum").get<std::string>();
  const bool scored = role == "scored";
  const auto length = spec.at("length").get<std::int64_t>();

  nlohmann::json data = {{"endpoint", {{"kind", setup_.endpoint.record_name()}, {"source", setup_.endpoint.source}}},
                         {"token_counter", setup_.counter.to_json()}};
  nlohmann::json timing = {{"window_start_utc", api::format_utc(setup_.window.start)},
                           {"window_end_utc", api::format_utc(setup_.window.end())}};
  const std::string window_text = "the test window opened " + timing["window_start_utc"].get<std::string>() +
                                  " and closed " + timing["window_end_utc"].get<std::string>();

  if (!setup_.window.contains(setup_.clock->utc_now())) {
    return with_timing(UnitOutcome::invalid("window-expired", window_text + "; this unit was not sent. Rerun the "
                                                              "complete matrix in a new window (--fresh)",
                                            data),
                       timing);
  }

  CellPrompt cell;
  try {
    cell = build_cell_prompt(p, spec, setup_.window_id, setup_.counter.estimator);
  } catch (const api::BudgetExceeded& e) {
    return with_timing(UnitOutcome::failure("budget-exceeded", std::string(e.what()) + "; nothing was sent and "
                                                                   "nothing is truncated: lower the fixture size "
                                                                   "(framing_reserve_tokens) or raise the budget",
                                            data),
                       timing);
  }
  data["prefix_id"] = cell.prefix_id;
  data["fixture"] = fixture_summary(cell.fixture);
  data["budget"] = cell.budget.to_json();

  if (scored && stratum == kWarm) {
    if (auto unprimed = ensure_primed(spec, cell, data, timing)) return std::move(*unprimed);
  }

  const auto result = call(cell.request, unit.id);
  last_call_unit_ = unit.id;
  const auto& r = result.record;
  auto split = split_call_record(r, setup_.endpoint);
  data["call"] = split.data;
  timing["call"] = split.timing;
  data["cost_usd"] = p.pricing.call_usd(r.prompt_tokens, r.cached_tokens, r.completion_tokens);
  if (!result.ok()) {
    return with_timing(UnitOutcome::failure(std::string(api::to_string(r.error_class)),
                                            "the call failed after " + attempts_phrase(r) + ": " + r.error_message,
                                            data),
                       timing);
  }
  const auto planned = static_cast<double>(cell.budget.prompt_tokens);
  data["observed"] = {{"prompt_tokens", r.prompt_tokens},
                      {"cached_tokens", r.cached_tokens},
                      {"completion_tokens", r.completion_tokens},
                      {"prompt_tokens_over_planned", planned > 0 ? static_cast<double>(r.prompt_tokens) / planned : 0.0},
                      {"budget_used", r.prompt_tokens + p.max_completion_tokens}};
  data["content"] = result.response.content;
  const auto verdict = validate::context_verdict_json(validate::validate_context_answer(cell.fixture, result.response.content));
  if (!scored) {
    data["unscored_verdict"] = verdict;
    return UnitOutcome::result(data, timing);
  }
  data["verdict"] = verdict;
  return scored_outcome(stratum, length, r, window_text, std::move(data), std::move(timing));
}

std::optional<UnitOutcome> CellRunner::ensure_primed(const nlohmann::json& spec, const CellPrompt& cell,
                                                     nlohmann::json& data, nlohmann::json& timing) {
  const std::string request_sha = core::sha256_hex(cell.request.dump());
  const std::string prime = spec.at("primed_by").get<std::string>();
  const auto known = outcomes_.find(prime);
  if (known != outcomes_.end() && known->second != "result") {
    return with_timing(UnitOutcome::invalid("priming-failed",
                                            "its priming call " + prime + " ended as " + known->second +
                                                ", so no primed prefix exists; this warm cell was not sent",
                                            data),
                       timing);
  }
  if (last_call_unit_ == prime && last_call_sha256_ == request_sha) return std::nullopt;
  const std::string why = known == outcomes_.end()
                              ? "its priming unit has not run (a --unit or --shard subset)"
                              : "its priming call did not run directly before it in this process (resume)";
  auto primed = call(cell.request, prime);
  last_call_unit_ = prime;
  auto split = split_call_record(primed.record, setup_.endpoint);
  const auto& r = primed.record;
  data["reprime"] = {{"reason", why},
                     {"call", split.data},
                     {"cost_usd", setup_.parameters.pricing.call_usd(r.prompt_tokens, r.cached_tokens,
                                                r.completion_tokens)}};
  timing["reprime_call"] = split.timing;
  if (!primed.ok()) {
    return with_timing(UnitOutcome::invalid("priming-failed",
                                            "the repeated priming call failed after " + attempts_phrase(r) + ": " +
                                                std::string(api::to_string(r.error_class)) + ": " + r.error_message,
                                            data),
                       timing);
  }
  return std::nullopt;
}

UnitOutcome CellRunner::scored_outcome(const std::string& stratum, std::int64_t length, const api::CallRecord& r,
                                       const std::string& window_text, nlohmann::json data,
                                       nlohmann::json timing) const {
  const auto& p = setup_.parameters;
  if (!r.usage_reported) {
    return with_timing(UnitOutcome::invalid("usage-missing", "the response reported no usage, so the cache "
                                                             "condition of the " + stratum + " stratum cannot be checked",
                                            data),
                       timing);
  }
  if (stratum == kCold && r.cached_tokens != 0) {
    return with_timing(UnitOutcome::invalid("cold-cache-hit", "the response reported " + std::to_string(r.cached_tokens) +
                                                                  " cached tokens; a cold measurement needs "
                                                                  "usage.cached_tokens == 0",
                                            data),
                       timing);
  }
  if (stratum == kWarm && r.cached_tokens <= 0) {
    return with_timing(UnitOutcome::invalid("warm-cache-miss", "the response reported no cached tokens although "
                                                                   "its priming call sent the same prefix; a warm "
                                                                   "measurement needs usage.cached_tokens > 0",
                                            data),
                       timing);
  }
  if (r.prompt_tokens + p.max_completion_tokens > length) {
    return with_timing(UnitOutcome::invalid("over-budget-observed",
                                            "usage.prompt_tokens " + std::to_string(r.prompt_tokens) +
                                                " + max_completion_tokens " + std::to_string(p.max_completion_tokens) +
                                                " exceeds the cell budget " + std::to_string(length) +
                                                ": the token counter (" + setup_.counter.estimator.name +
                                                ") under-counted; configure the exact tokenizer vocabulary",
                                            data),
                       timing);
  }
  // Only the end matters here: the call started inside the window (checked before sending), and its
  // millisecond timestamp may read earlier than a window start taken within the same millisecond.
  if (!r.finished_utc.empty() && api::parse_utc(r.finished_utc) >= setup_.window.end()) {
    return with_timing(UnitOutcome::invalid("window-expired", window_text + "; this call finished after it", data),
                       timing);
  }
  return UnitOutcome::result(data, timing);
}

}  // namespace k3lab::experiments::context_probe
