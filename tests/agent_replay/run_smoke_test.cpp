// agent-replay end to end through the generic runner (experiments::run_experiment) against the
// embedded mock: the smoke profile as the protocol defines it, and the smoke profile over the first
// five tasks, where every fault has a turn to act on (the protocol's two smoke tasks are single
// reads: no turn with two tool calls and no mutation). Also the report page and the privacy rule.
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>

#include "agent_replay/agent_replay_experiment.hpp"
#include "agent_replay/operation_record.hpp"
#include "agent_replay/units.hpp"
#include "k3lab/core/ledger.hpp"
#include "k3lab/core/run_dir.hpp"
#include "k3lab/experiments/report_builder.hpp"
#include "k3lab/experiments/runner.hpp"
#include "test_support.hpp"

namespace k3lab::agent_replay_test {
namespace {

// The catalog of a report built from this module alone.
experiments::Catalog one_module_catalog() {
  return {{"agent-replay"}, [](const std::string&) { return experiments::agent_replay::make_experiment(); }};
}


using nlohmann::json;
using experiments::RunRequest;

constexpr const char* kSimulated = "simulated endpoint: not evidence about Kimi K3";

RunRequest smoke_request(const std::filesystem::path& runs, ar::RunHooks hooks = {},
                         std::vector<std::string> overrides = {}) {
  RunRequest r;
  r.experiment_id = "agent-replay";
  r.profile = "smoke";
  r.runs_root = runs;
  r.unfrozen = true;  // tests run the working tree's protocol whether or not it is frozen
  r.set_overrides = std::move(overrides);
  r.protocol_file = protocol_file();
  r.experiment_factory = [hooks] { return std::make_unique<ar::AgentReplayExperiment>(hooks); };
  return r;
}

std::vector<json> terminal(const std::filesystem::path& run_dir) {
  experiments::RunRecords records{core::read_manifest(run_dir), core::read_ledger(run_dir), run_dir};
  return records.terminal_records();
}

// (arm, task) -> terminal record
std::map<std::pair<std::string, int>, json> by_arm_and_task(const std::vector<json>& records) {
  std::map<std::pair<std::string, int>, json> out;
  for (const auto& r : records) out[{r["spec"]["arm"].get<std::string>(), r["spec"]["task"].get<int>()}] = r;
  return out;
}

void expect_no_reasoning_stored(const std::filesystem::path& root, ReasoningLog& log) {
  const auto texts = log.snapshot();
  ASSERT_FALSE(texts.empty());
  std::set<std::string> needles;
  for (const auto& t : texts) needles.insert(t.substr(0, 40));
  for (const auto& n : needles) EXPECT_TRUE(files_containing(root, n).empty()) << n;
  EXPECT_TRUE(files_containing(root, std::string(mock::reasoning_filler()).substr(1, 40)).empty());
  EXPECT_TRUE(files_containing(root, "reasoning_content\":\"").empty());
}

TEST(AgentReplaySmoke, EveryFaultShowsItsEffectAndOnlyTheNoKeyArmDuplicatesAMutation) {
  CleanEnv env;
  ScratchDir dir;
  auto log = std::make_shared<ReasoningLog>();
  ar::RunHooks hooks;
  hooks.wrap_embedded_model = [log](api::MockModel inner) { return log->wrap(std::move(inner)); };
  const auto started = std::chrono::steady_clock::now();
  const auto summary = experiments::run_experiment(smoke_request(dir.path() / "runs", hooks));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::cout << "agent-replay smoke over 5 tasks x 7 arms: " << seconds << " s" << std::endl;
  ASSERT_EQ(summary.exit_code, 0) << summary.message;
  ASSERT_EQ(summary.planned, 35u);
  EXPECT_EQ(summary.results, 35u);

  const auto records = terminal(summary.run_dir);
  const auto at = by_arm_and_task(records);
  for (const auto& r : records) {
    EXPECT_EQ(r["labels"], json::array({kSimulated})) << r["unit"];
    EXPECT_EQ(r["data"]["endpoint"], "embedded-mock");
    EXPECT_TRUE(r["data"]["simulated"].get<bool>());
    const auto duplicates = r["data"]["metrics"]["duplicate_mutations"].get<int>();
    EXPECT_EQ(duplicates > 0, r["spec"]["arm"] == "no-idempotency-key" && r["spec"]["task"] == 5) << r["unit"];
  }
  for (int task = 1; task <= 5; ++task) {
    const json& control = at.at({"control", task})["data"];
    EXPECT_TRUE(control["success"].get<bool>()) << task;
    EXPECT_EQ(control["metrics"]["unmatched_tool_calls"], 0);

    const json& content_only = at.at({"content-only", task})["data"];
    EXPECT_EQ(content_only["stop"], "api_error") << task;
    EXPECT_GT(content_only["metrics"]["unmatched_tool_calls"].get<int>(), 0);

    const json& effort = at.at({"effort-change", task})["data"];
    EXPECT_TRUE(effort["success"].get<bool>());
    EXPECT_EQ(effort["effort_by_turn"][1], "low");
    EXPECT_LT(effort["reasoning_bytes_by_turn"][1].get<int>(), control["reasoning_bytes_by_turn"][1].get<int>());

    const json& cut = at.at({"truncated-completion", task})["data"];
    EXPECT_EQ(cut["metrics"]["finish_reasons"]["length"], 1) << task;
    EXPECT_EQ(cut["model_turns"].get<int>(), control["model_turns"].get<int>() + 1);

    const json& reordered = at.at({"reordered-tools", task})["data"];
    // The reversed declarations miss the cache from the first block on (each run starts with an empty one).
    EXPECT_LE(reordered["calls"][1]["cached_tokens"].get<int>(), control["calls"][1]["cached_tokens"].get<int>()) << task;
  }
  EXPECT_EQ(at.at({"reordered-tools", 1})["data"]["calls"][1]["cached_tokens"], 0);  // its first sight of the order
  // The omission needs a turn with two calls (T03, T04); the duplicate needs a mutation (T05).
  for (int task = 1; task <= 5; ++task) {
    const json& omitted = at.at({"omitted-tool-result", task})["data"];
    const bool parallel = task == 3 || task == 4;
    EXPECT_EQ(omitted["fault"]["applied"].get<bool>(), parallel) << task;
    EXPECT_EQ(omitted["stop"], parallel ? "api_error" : "answered") << task;
    const json& no_key = at.at({"no-idempotency-key", task})["data"];
    EXPECT_EQ(no_key["fault"]["applied"].get<bool>(), task == 5) << task;
    EXPECT_EQ(no_key["success"].get<bool>(), task != 5) << task;
  }

  const auto page = experiments::build_page(summary.run_dir, dir.path() / "runs", one_module_catalog());
  const auto folder = report::render_page(page, dir.path() / "report");
  const std::string md = read_file(folder / "index.md");
  EXPECT_NE(md.find(kSimulated), std::string::npos);
  EXPECT_NE(md.find("Interpretation boundary"), std::string::npos);
  EXPECT_NE(md.find("The simulated endpoint"), std::string::npos);
  EXPECT_EQ(md.find("The Kimi K3 API"), std::string::npos);
  EXPECT_NE(md.find("Assumptions of the simulated endpoint"), std::string::npos);
  for (const auto& arm : ar::arm_ids()) EXPECT_NE(md.find(arm), std::string::npos) << arm;
  EXPECT_TRUE(std::filesystem::exists(folder / "charts" / "task-success-by-arm.svg"));
  EXPECT_TRUE(std::filesystem::exists(folder / "tables" / "fault-vs-control.csv"));
  expect_no_reasoning_stored(dir.path(), *log);
}

TEST(AgentReplaySmoke, TheProtocolsSmokeProfileRunsReproduciblyAndTheControlSucceeds) {
  CleanEnv env;
  ScratchDir dir;
  auto log = std::make_shared<ReasoningLog>();
  ar::RunHooks hooks;
  hooks.wrap_embedded_model = [log](api::MockModel inner) { return log->wrap(std::move(inner)); };
  const auto a = experiments::run_experiment(smoke_request(dir.path() / "a", hooks));
  const auto b = experiments::run_experiment(smoke_request(dir.path() / "b"));
  ASSERT_EQ(a.exit_code, 0) << a.message;
  ASSERT_EQ(b.exit_code, 0) << b.message;
  const auto p = parameters("smoke");
  EXPECT_EQ(a.planned, static_cast<std::size_t>(p.task_count * p.repetitions) * ar::arm_ids().size());
  EXPECT_EQ(a.results, a.planned);
  const auto ra = terminal(a.run_dir);
  const auto rb = terminal(b.run_dir);
  ASSERT_EQ(ra.size(), rb.size());
  for (std::size_t i = 0; i < ra.size(); ++i) {
    EXPECT_EQ(core::deterministic_part(ra[i]), core::deterministic_part(rb[i])) << ra[i]["unit"];
    if (ra[i]["spec"]["arm"] == "control") {
      EXPECT_TRUE(ra[i]["data"]["success"].get<bool>()) << ra[i]["unit"];
    }
  }
  // One operation record per run, and a note with the simulated endpoint's assumptions.
  for (const auto& r : ra) {
    EXPECT_TRUE(std::filesystem::exists(a.run_dir / r["data"]["operation_record"].get<std::string>())) << r["unit"];
  }
  bool noted = false;
  for (const auto& r : core::read_ledger(a.run_dir).records) noted |= r.value("note", "") == "simulated-endpoint-assumptions";
  EXPECT_TRUE(noted);
  // Running the same command again resumes the complete run and does nothing.
  const auto again = experiments::run_experiment(smoke_request(dir.path() / "a", hooks));
  EXPECT_TRUE(again.already_complete);
  EXPECT_EQ(again.ran_now, 0u);
  expect_no_reasoning_stored(dir.path(), *log);
}

TEST(AgentReplaySmoke, AnEndpointThatKeepsDroppingInvalidatesTheWindow) {
  CleanEnv env;
  ScratchDir dir;
  ar::RunHooks hooks;
  hooks.embedded_faults.script = {api::FaultKind::server_error, api::FaultKind::server_error,
                                  api::FaultKind::server_error};
  const auto summary = experiments::run_experiment(smoke_request(dir.path() / "runs", hooks));
  // Two tasks x one repetition tolerate floor(0.05 x 2) = 0 invalid runs per arm: the first stops it.
  EXPECT_EQ(summary.exit_code, experiments::kExitWindowStopped) << summary.message;
  const auto records = terminal(summary.run_dir);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0]["kind"], "invalid");
  EXPECT_EQ(records[0]["reason"], "transport-exhausted");
  const auto page = experiments::build_page(summary.run_dir, dir.path() / "runs", one_module_catalog());
  const auto folder = report::render_page(page, dir.path() / "report");
  EXPECT_NE(read_file(folder / "index.md").find("This window is invalid"), std::string::npos);
}

// Runs one chosen unit to its end, then stops the run before that unit's record is written, as a
// SIGKILL right after its last call would: the next process (a fresh embedded mock) finds the unit
// open with an operation record, sets that record aside and runs the unit again.
class AgentReplayStoppedInUnit : public ar::AgentReplayExperiment {
 public:
  explicit AgentReplayStoppedInUnit(std::string unit_id) : stop_in_(std::move(unit_id)) {}

  experiments::UnitOutcome run_unit(const experiments::Unit& unit, experiments::RunEnv& env) override {
    auto outcome = ar::AgentReplayExperiment::run_unit(unit, env);
    if (unit.id != stop_in_) return outcome;
    experiments::stop_flag().store(true);
    throw api::CallInterrupted("test: stopped after the run of " + unit.id + ", before its record");
  }

 private:
  std::string stop_in_;
};

// What the endpoint named each call of an operation record: call index, response id, request ids.
json call_identifiers(const std::filesystem::path& record) {
  json ids = json::array();
  const ar::OperationRecord opened(record);
  for (const auto& call : opened.state().calls) {
    const json& r = call.at("record");
    ids.push_back({r.at("call_index"), r.at("response_id"), r.at("request_ids")});
  }
  return ids;
}

TEST(AgentReplaySmoke, AResumedRunEqualsAnUninterruptedOneApartFromTheAbandonedAttempt) {
  CleanEnv env;
  ScratchDir dir;
  const auto straight = experiments::run_experiment(smoke_request(dir.path() / "straight"));
  ASSERT_EQ(straight.exit_code, 0) << straight.message;
  const auto reference = terminal(straight.run_dir);
  ASSERT_GT(reference.size(), 4u);

  // A later arm of the first task: in one process it follows runs that sent the same first turn.
  const std::string stopped_in = reference[3]["unit"].get<std::string>();
  auto interrupted = smoke_request(dir.path() / "resumed");
  interrupted.experiment_factory = [stopped_in] { return std::make_unique<AgentReplayStoppedInUnit>(stopped_in); };
  const auto first = experiments::run_experiment(interrupted);
  experiments::stop_flag().store(false);
  ASSERT_EQ(first.exit_code, experiments::kExitInterrupted) << first.message;
  ASSERT_EQ(first.results, 3u);
  const auto resumed = experiments::run_experiment(smoke_request(dir.path() / "resumed"));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.message;
  ASSERT_EQ(resumed.run_dir, first.run_dir);
  const auto records = terminal(resumed.run_dir);

  ASSERT_EQ(records.size(), reference.size());
  std::map<std::string, json> expected;
  for (const auto& r : reference) expected[r["unit"].get<std::string>()] = r;
  for (const auto& r : records) {
    const std::string unit = r["unit"].get<std::string>();
    ASSERT_TRUE(expected.count(unit)) << unit;
    const json& want = expected.at(unit);
    auto got = core::deterministic_part(r);
    // The fields a resume may change (README, "What a run guarantees"): the record set aside and the
    // cost of the attempt it holds.
    EXPECT_EQ(got["data"].contains("abandoned_records"), unit == stopped_in) << unit;
    if (unit == stopped_in) {
      const std::string name = ar::operation_record_name(unit);
      const std::string aside = name.substr(0, name.size() - 6) + ".abandoned-1.jsonl";
      EXPECT_EQ(got["data"]["abandoned_records"], json::array({"artifacts/agent-replay/" + aside}));
      // The abandoned attempt was the whole run, answered as in the uninterrupted one.
      EXPECT_DOUBLE_EQ(got["data"]["metrics"]["abandoned_attempt_cost_usd"].get<double>(),
                       want["data"]["metrics"]["cost_usd"].get<double>());
      EXPECT_EQ(call_identifiers(resumed.run_dir / "artifacts" / "agent-replay" / aside),
                call_identifiers(straight.run_dir / want["data"]["operation_record"].get<std::string>()));
      got["data"].erase("abandoned_records");
      got["data"]["metrics"]["abandoned_attempt_cost_usd"] = 0.0;
    }
    EXPECT_EQ(got, core::deterministic_part(want)) << unit;
    // The identifiers the embedded mock gave derive from the unit and the request, not the process.
    EXPECT_EQ(call_identifiers(resumed.run_dir / r["data"]["operation_record"].get<std::string>()),
              call_identifiers(straight.run_dir / want["data"]["operation_record"].get<std::string>()))
        << unit;
  }
}

}  // namespace
}  // namespace k3lab::agent_replay_test
