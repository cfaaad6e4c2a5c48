// AgentRunner against an in-process MockServer with the scripted agent: the control, each fault
// arm's expected effect on a task where the fault can occur, transport retries resumed from the
// operation record (never repeating a mutation), restarts after a lost process, and the privacy rule.
#include <gtest/gtest.h>

#include "agent_replay/arm_faults.hpp"
#include "agent_replay/operation_record.hpp"
#include "agent_replay/units.hpp"
#include "k3lab/api/chat_client.hpp"
#include "k3lab/core/sha256.hpp"
#include "k3lab/validate/world_tools.hpp"
#include "test_support.hpp"

namespace k3lab::agent_replay_test {
namespace {

using nlohmann::json;

struct UnitRun {
  experiments::UnitOutcome outcome;
  std::vector<json> ops;  // the operation record's entries
};

UnitRun run_unit(const ar::Parameters& p, AgentServer& server, int task, const std::string& arm, const ScratchDir& dir,
             std::shared_ptr<api::Clock> clock = nullptr) {
  auto runner = make_runner(p, server, clock);
  const auto unit = unit_for(p, task, arm);
  UnitRun run{runner.run(unit, dir.path() / "artifacts"), {}};
  const auto path = ar::operation_record_path(dir.path() / "artifacts", unit.id);
  if (std::filesystem::exists(path)) run.ops = ar::OperationRecord(path).entries();
  return run;
}

const json& metrics(const UnitRun& r) { return r.outcome.data.at("metrics"); }

std::vector<json> ops_of(const UnitRun& r, const std::string& op) {
  std::vector<json> out;
  for (const auto& e : r.ops) {
    if (e["op"] == op) out.push_back(e);
  }
  return out;
}

TEST(AgentRun, ControlSolvesAMutatingTaskWithOneExecutionAndAMatchedHistory) {
  ScratchDir dir;
  AgentServer server;
  const auto p = parameters();
  const UnitRun r = run_unit(p, server, 5, "control", dir);  // T05: transfer 25.00 from ACC-101 to ACC-102
  ASSERT_EQ(r.outcome.kind, experiments::UnitOutcome::Kind::Result) << r.outcome.detail;
  const auto& d = r.outcome.data;
  EXPECT_EQ(d["task_id"], "T05");
  EXPECT_EQ(d["stop"], "answered");
  EXPECT_TRUE(d["success"].get<bool>()) << d["verdict"].dump();
  EXPECT_EQ(d["model_turns"], 2);
  EXPECT_EQ(metrics(r)["duplicate_mutations"], 0);
  EXPECT_EQ(metrics(r)["mutations_executed"], 1);
  EXPECT_EQ(metrics(r)["unmatched_tool_calls"], 0);
  EXPECT_EQ(metrics(r)["unexpected_tool_names"], 0);
  EXPECT_EQ(metrics(r)["transport_retries"], 0);
  EXPECT_TRUE(d["api_errors"].empty());
  EXPECT_FALSE(d["fault"]["applied"].get<bool>());
  // The scripted agent keyed its mutation itself; the harness added nothing.
  const auto dispatches = ops_of(r, "dispatch");
  ASSERT_EQ(dispatches.size(), 1u);
  EXPECT_EQ(dispatches[0]["key_source"], "model");
  // Turn 2 repeats turn 1's prompt as its prefix, so the cache reports hits.
  EXPECT_GT(d["calls"][1]["cached_tokens"].get<int>(), 0);
  // Cost = the price table applied to each call's usage, summed (hand check of the formula).
  double cost = 0;
  for (const auto& c : d["calls"]) {
    const double prompt = c["prompt_tokens"], cached = c["cached_tokens"], completion = c["completion_tokens"];
    cost += (cached * p.pricing.cache_hit + (prompt - cached) * p.pricing.cache_miss +
             completion * p.pricing.output) / 1e6;
  }
  EXPECT_NEAR(metrics(r)["cost_usd"].get<double>(), cost, 1e-12);
}

TEST(AgentRun, ContentOnlyDropsReasoningAndToolCallsSoTheEndpointRejectsTheOrphanToolMessage) {
  ScratchDir dir;
  AgentServer server;
  const UnitRun r = run_unit(parameters(), server, 1, "content-only", dir);
  ASSERT_EQ(r.outcome.kind, experiments::UnitOutcome::Kind::Result) << r.outcome.detail;
  const auto& d = r.outcome.data;
  EXPECT_EQ(d["stop"], "api_error");
  EXPECT_FALSE(d["success"].get<bool>());
  EXPECT_TRUE(d["fault"]["applied"].get<bool>());
  EXPECT_EQ(d["fault"]["turn"], 2);
  ASSERT_EQ(d["api_errors"].size(), 1u);
  EXPECT_EQ(d["api_errors"][0]["http_status"], 400);
  EXPECT_EQ(d["api_errors"][0]["error_class"], "invalid_request");
  EXPECT_NE(d["api_errors"][0]["message"].get<std::string>().find("role 'tool'"), std::string::npos);
  // The replayed history has one tool message answering a call that is no longer there.
  EXPECT_EQ(metrics(r)["unmatched_tool_calls"], 1);
  // What turn 2 sent: the assistant message reduced to its content.
  const auto bodies = server.server->received();
  ASSERT_EQ(bodies.size(), 2u);
  const json assistant = bodies[1].body["messages"][2];
  EXPECT_EQ(assistant, json({{"role", "assistant"}, {"content", ""}}));
}

TEST(AgentRun, EffortChangeSendsTheOtherEffortFromItsTurnOnAndReasoningShrinks) {
  ScratchDir dir;
  AgentServer server;
  const auto p = parameters();
  // T10: find_account then get_account then the answer: three turns.
  const UnitRun r = run_unit(p, server, 10, "effort-change", dir);
  ASSERT_EQ(r.outcome.kind, experiments::UnitOutcome::Kind::Result) << r.outcome.detail;
  const auto& d = r.outcome.data;
  EXPECT_TRUE(d["success"].get<bool>());
  EXPECT_EQ(d["effort_by_turn"], json({"high", "low", "low"}));
  EXPECT_EQ(d["fault"]["turn"], p.faults.effort_change_from_turn);
  const auto bytes = d["reasoning_bytes_by_turn"];
  EXPECT_GT(bytes[0].get<int>(), bytes[1].get<int>());
  const auto bodies = server.server->received();
  EXPECT_EQ(bodies[0].body["reasoning_effort"], "high");
  EXPECT_EQ(bodies[1].body["reasoning_effort"], "low");
}

TEST(AgentRun, OmittedToolResultLeavesOneCallUnansweredAndTheEndpointSaysWhich) {
  ScratchDir dir;
  AgentServer server;
  // T03 reads two accounts in one turn (parallel calls); the protocol omits the second result.
  const UnitRun r = run_unit(parameters(), server, 3, "omitted-tool-result", dir);
  ASSERT_EQ(r.outcome.kind, experiments::UnitOutcome::Kind::Result) << r.outcome.detail;
  const auto& d = r.outcome.data;
  EXPECT_EQ(d["stop"], "api_error");
  EXPECT_EQ(d["fault"]["omitted_results"], 1);
  EXPECT_EQ(metrics(r)["unmatched_tool_calls"], 1);
  ASSERT_EQ(d["api_errors"].size(), 1u);
  const std::string message = d["api_errors"][0]["message"];
  const auto omitted = ops_of(r, "omitted");
  ASSERT_EQ(omitted.size(), 1u);
  EXPECT_NE(message.find("did not have response messages: " + omitted[0]["tool_call_id"].get<std::string>()),
            std::string::npos)
      << message;
  // Both calls ran against the world; only the history lacks one result.
  EXPECT_EQ(ops_of(r, "dispatch").size(), 2u);
}

TEST(AgentRun, OmittedToolResultDoesNotFireWithoutATurnOfTwoCalls) {
  ScratchDir dir;
  AgentServer server;
  const UnitRun r = run_unit(parameters(), server, 1, "omitted-tool-result", dir);
  EXPECT_FALSE(r.outcome.data["fault"]["applied"].get<bool>());
  EXPECT_TRUE(r.outcome.data["success"].get<bool>());
}

TEST(AgentRun, TruncatedCompletionCutsItsTurnAndTheAgentRecoversOneTurnLater) {
  ScratchDir dir;
  AgentServer server;
  const auto p = parameters();
  const UnitRun r = run_unit(p, server, 1, "truncated-completion", dir);
  ASSERT_EQ(r.outcome.kind, experiments::UnitOutcome::Kind::Result) << r.outcome.detail;
  const auto& d = r.outcome.data;
  EXPECT_EQ(metrics(r)["finish_reasons"]["length"], 1);
  EXPECT_EQ(d["calls"][0]["finish_reason"], "length");
  EXPECT_EQ(d["calls"][0]["max_completion_tokens"], p.faults.truncated_completion_tokens);
  EXPECT_LE(d["calls"][0]["completion_tokens"].get<std::int64_t>(), p.faults.truncated_completion_tokens);
  EXPECT_EQ(d["calls"][0]["tool_call_count"], 0);
  EXPECT_EQ(d["model_turns"], 3);  // the cut turn, the repeated tool call, the answer
  EXPECT_TRUE(d["success"].get<bool>());
  // The cut turn was replayed as returned: with its (cut) reasoning, without tool calls.
  const auto bodies = server.server->received();
  const json cut = bodies[1].body["messages"][2];
  EXPECT_EQ(cut["content"], "");
  EXPECT_FALSE(cut.contains("tool_calls"));
  EXPECT_EQ(core::sha256_hex(cut["reasoning_content"].get<std::string>()), d["calls"][0]["reasoning_sha256"]);
}

TEST(AgentRun, NoIdempotencyKeyInjectsExactlyOneDuplicateAgainstAFreshWorld) {
  ScratchDir dir;
  AgentServer server;
  const auto p = parameters();
  const UnitRun faulted = run_unit(p, server, 5, "no-idempotency-key", dir);
  ASSERT_EQ(faulted.outcome.kind, experiments::UnitOutcome::Kind::Result) << faulted.outcome.detail;
  EXPECT_EQ(metrics(faulted)["duplicate_mutations"], 1);
  EXPECT_EQ(metrics(faulted)["mutations_executed"], 2);
  EXPECT_EQ(faulted.outcome.data["fault"]["injected_duplicate_dispatches"], 1);
  EXPECT_FALSE(faulted.outcome.data["verdict"]["state_ok"].get<bool>());  // 25.00 moved twice
  EXPECT_FALSE(faulted.outcome.data["success"].get<bool>());
  const auto dispatches = ops_of(faulted, "dispatch");
  ASSERT_EQ(dispatches.size(), 2u);
  for (const auto& d : dispatches) {
    EXPECT_EQ(d["key_source"], "stripped");
    EXPECT_EQ(json::parse(d["arguments"].get<std::string>()).count(std::string(validate::kIdempotencyKeyField)), 0u);
  }
  // The next run gets a reset world: the control of the same task succeeds.
  const UnitRun control = run_unit(p, server, 5, "control", dir);
  EXPECT_TRUE(control.outcome.data["success"].get<bool>());
  EXPECT_EQ(metrics(control)["duplicate_mutations"], 0);
}

TEST(AgentRun, ReorderedToolsMissTheCacheFromTheirTurn) {
  const auto p = parameters();
  auto turn2_cached = [&](const std::string& arm) {
    ScratchDir dir;
    AgentServer server;  // a fresh cache per arm
    const UnitRun r = run_unit(p, server, 12, arm, dir);  // T12: transfer, read, answer
    EXPECT_TRUE(r.outcome.data["success"].get<bool>()) << arm;
    return std::make_pair(r.outcome.data["calls"][1]["cached_tokens"].get<std::int64_t>(),
                          r.outcome.data["calls"][2]["cached_tokens"].get<std::int64_t>());
  };
  const auto control = turn2_cached("control");
  const auto reordered = turn2_cached("reordered-tools");
  EXPECT_GT(control.first, 0);
  EXPECT_EQ(reordered.first, 0);   // turn 2 sends the tools reversed: the first block differs
  EXPECT_GT(reordered.second, 0);  // turn 3 keeps the new order, so turn 2's prefix is cached
}

TEST(AgentRun, ATransportRetryResumesFromTheRecordAndNeverRepeatsTheMutation) {
  ScratchDir dir;
  api::FaultPlan drops;
  drops.script = {api::FaultKind::drop_mid_stream};  // the first attempt of every distinct request is cut
  AgentServer server(drops);
  const auto p = parameters();
  const UnitRun r = run_unit(p, server, 5, "control", dir);
  ASSERT_EQ(r.outcome.kind, experiments::UnitOutcome::Kind::Result) << r.outcome.detail;
  const auto& d = r.outcome.data;
  EXPECT_TRUE(d["success"].get<bool>()) << d.dump();
  EXPECT_EQ(metrics(r)["transport_retries"], 2);
  EXPECT_EQ(metrics(r)["resumes_from_record"], 2);
  EXPECT_EQ(metrics(r)["error_classes"]["transport"], 2);
  EXPECT_EQ(metrics(r)["mutations_executed"], 1);
  EXPECT_EQ(metrics(r)["duplicate_mutations"], 0);
  EXPECT_EQ(ops_of(r, "dispatch").size(), 1u);
  // The dropped request after the transfer (turn 2, carrying its result) was resent byte for byte.
  const auto& calls = d["calls"];
  ASSERT_EQ(calls.size(), 4u);
  EXPECT_EQ(calls[2]["turn"], 2);
  EXPECT_EQ(calls[2]["error_class"], "transport");
  EXPECT_EQ(calls[3]["try"], 1);
  EXPECT_EQ(calls[2]["request_sha256"], calls[3]["request_sha256"]);
  // The mock saw each distinct request twice, and the transfer's result once in each turn-2 request.
  const auto received = server.server->received();
  ASSERT_EQ(received.size(), 4u);
  EXPECT_EQ(received[2].body_hash, received[3].body_hash);
  EXPECT_EQ(received[3].attempt, 1);
}

TEST(AgentRun, TransportFailuresBeyondTheRetryLimitMakeTheRunInvalid) {
  ScratchDir dir;
  api::FaultPlan drops;
  drops.script = {api::FaultKind::server_error, api::FaultKind::drop_mid_stream, api::FaultKind::server_error};
  AgentServer server(drops);
  const UnitRun r = run_unit(parameters(), server, 1, "control", dir);
  EXPECT_EQ(r.outcome.kind, experiments::UnitOutcome::Kind::Invalid);
  EXPECT_EQ(r.outcome.reason, "transport-exhausted");
  EXPECT_EQ(r.outcome.data["calls"].size(), 3u);  // one try and two retries
}

TEST(AgentRun, AResendWaitsTheSharedBackoffOrTheServersRetryAfter) {
  ScratchDir dir;
  api::FaultPlan faults;
  faults.script = {api::FaultKind::server_error};
  AgentServer server(faults);
  auto clock = std::make_shared<api::ManualClock>();
  const auto p = parameters();
  auto runner = make_runner(p, server, clock);
  const auto out = runner.run(unit_for(p, 1, "control"), dir.path() / "artifacts");
  ASSERT_EQ(out.kind, experiments::UnitOutcome::Kind::Result) << out.detail;
  // Every distinct request fails once with a 500: one wait per turn, each 1 s with up to half off.
  const auto sleeps = clock->sleeps();
  ASSERT_EQ(sleeps.size(), out.data["model_turns"].get<std::size_t>());
  for (const auto wait : sleeps) {
    EXPECT_GE(wait, std::chrono::milliseconds(500));
    EXPECT_LE(wait, std::chrono::seconds(1));
  }

  ScratchDir dir2;
  api::FaultPlan limited;
  limited.script = {api::FaultKind::rate_limit};
  limited.retry_after_seconds = 7;
  AgentServer server2(limited);
  auto clock2 = std::make_shared<api::ManualClock>();
  auto runner2 = make_runner(p, server2, clock2);
  const auto out2 = runner2.run(unit_for(p, 1, "control"), dir2.path() / "artifacts");
  ASSERT_EQ(out2.kind, experiments::UnitOutcome::Kind::Result) << out2.detail;
  for (const auto wait : clock2->sleeps()) EXPECT_EQ(wait, std::chrono::seconds(7));
}

TEST(AgentRun, OverloadsCountAgainstTheSameCapOfThreeSends) {
  ScratchDir dir;
  api::FaultPlan faults;
  faults.script = {api::FaultKind::overload, api::FaultKind::unavailable, api::FaultKind::rate_limit,
                   api::FaultKind::overload};
  faults.retry_after_seconds = 1;
  AgentServer server(faults);
  const UnitRun r = run_unit(parameters(), server, 1, "control", dir);
  EXPECT_EQ(r.outcome.kind, experiments::UnitOutcome::Kind::Invalid);
  EXPECT_EQ(r.outcome.reason, "transport-exhausted");
  EXPECT_EQ(server.server->received().size(), 3u) << "a fourth send of one turn broke the seed's cap";
}

TEST(AgentRun, TheHarnessKeysAMutationTheModelLeftUnkeyedSoRetriesStayIdempotent) {
  ScratchDir dir;
  api::FaultPlan drops;
  drops.script = {api::FaultKind::drop_mid_stream};
  // A model that transfers without an idempotency key, then answers once it sees the result.
  auto keyless = [](api::MockModel) -> api::MockModel {
    return [](const json& request) {
      api::MockReply reply;
      reply.reasoning_content = "Plan: one transfer, then report.";
      for (const auto& m : request["messages"]) {
        if (m["role"] == "tool") {
          reply.content = "Transferred 25.00.\nRESULT: DONE";
          return reply;
        }
      }
      api::ToolCall call;
      call.id = "functions.transfer_funds:0";
      call.name = "transfer_funds";
      call.arguments = R"({"from_account_id":"ACC-101","to_account_id":"ACC-102","amount_cents":2500})";
      reply.tool_calls.push_back(call);
      return reply;
    };
  };
  AgentServer server(drops, {}, keyless);
  const auto p = parameters();
  const UnitRun r = run_unit(p, server, 5, "control", dir);
  EXPECT_TRUE(r.outcome.data["success"].get<bool>()) << r.outcome.data.dump();
  EXPECT_EQ(metrics(r)["transport_retries"], 2);
  const auto dispatches = ops_of(r, "dispatch");
  ASSERT_EQ(dispatches.size(), 1u);
  EXPECT_EQ(dispatches[0]["key_source"], "harness");
  const json args = json::parse(dispatches[0]["arguments"].get<std::string>());
  EXPECT_EQ(args[std::string(validate::kIdempotencyKeyField)],
            ar::harness_idempotency_key(unit_for(p, 5, "control").id, "functions.transfer_funds:0"));
  EXPECT_EQ(metrics(r)["duplicate_mutations"], 0);
  EXPECT_EQ(metrics(r)["mutations_executed"], 1);
}

TEST(AgentRun, ARecordLeftByALostProcessIsSetAsideAndTheRunStartsOverOnAFreshWorld) {
  ScratchDir dir;
  AgentServer server;
  const auto p = parameters();
  const auto unit = unit_for(p, 5, "control");
  const auto path = ar::operation_record_path(dir.path() / "artifacts", unit.id);
  {
    // What a process that died after its first call and dispatch leaves behind.
    ar::OperationRecord old(path);
    old.append({{"op", "start"}, {"unit", unit.id}});
    old.append({{"op", "call"}, {"turn", 1}, {"try", 0},
                {"record", {{"prompt_tokens", 1000}, {"cached_tokens", 0}, {"completion_tokens", 100}}}});
  }
  const UnitRun r = run_unit(p, server, 5, "control", dir);
  EXPECT_TRUE(r.outcome.data["success"].get<bool>());
  EXPECT_EQ(r.outcome.data["abandoned_records"], json({"artifacts/agent-replay/" + path.stem().string() + ".abandoned-1.jsonl"}));
  EXPECT_TRUE(std::filesystem::exists(path.parent_path() / (path.stem().string() + ".abandoned-1.jsonl")));
  EXPECT_NEAR(r.outcome.data["metrics"]["abandoned_attempt_cost_usd"].get<double>(),
              (1000 * p.pricing.cache_miss + 100 * p.pricing.output) / 1e6, 1e-12);
  EXPECT_EQ(r.outcome.data["metrics"]["mutations_executed"], 1);
}

TEST(AgentRun, NoFileOfTheRunHoldsRawReasoning) {
  ScratchDir dir;
  AgentServer server;
  const auto p = parameters();
  for (const auto& arm : ar::arm_ids()) {
    const UnitRun r = run_unit(p, server, 11, arm, dir);
    EXPECT_FALSE(ar::contains_reasoning_content(r.outcome.data)) << arm;
    EXPECT_FALSE(ar::contains_reasoning_content(r.outcome.timing)) << arm;
    const std::string data = r.outcome.data.dump() + r.outcome.timing.dump();
    for (const auto& text : server.reasoning.snapshot()) EXPECT_EQ(data.find(text.substr(0, 40)), std::string::npos);
  }
  const auto texts = server.reasoning.snapshot();
  ASSERT_FALSE(texts.empty());
  for (const auto& text : texts) {
    EXPECT_TRUE(files_containing(dir.path(), text.substr(0, 40)).empty()) << text.substr(0, 40);
  }
  EXPECT_TRUE(files_containing(dir.path(), std::string(mock::reasoning_filler()).substr(1, 40)).empty());
  EXPECT_TRUE(files_containing(dir.path(), "Request: ").empty());
}

TEST(AgentRun, AnErrorMessageThatQuotesReasoningIsScrubbedBeforeItIsRecorded) {
  ScratchDir dir;
  // A careless endpoint that quotes the replayed reasoning back in its 400.
  auto quoting = [](api::MockModel inner) -> api::MockModel {
    return [inner](const json& request) {
      for (const auto& m : request["messages"]) {
        if (m["role"] == "assistant" && m.contains("reasoning_content")) {
          api::MockReply reply;
          reply.error = api::MockError{400, "invalid_request_error",
                                       "cannot accept: " + m["reasoning_content"].get<std::string>()};
          return reply;
        }
      }
      return inner(request);
    };
  };
  AgentServer server({}, {}, quoting);
  const UnitRun r = run_unit(parameters(), server, 1, "control", dir);
  ASSERT_EQ(r.outcome.data["api_errors"].size(), 1u);
  const std::string message = r.outcome.data["api_errors"][0]["message"];
  EXPECT_NE(message.find("quoted reasoning_content"), std::string::npos) << message;
  const auto texts = server.reasoning.snapshot();
  ASSERT_FALSE(texts.empty());
  EXPECT_TRUE(files_containing(dir.path(), texts[0].substr(0, 40)).empty());
  EXPECT_EQ(r.outcome.data.dump().find(texts[0].substr(0, 40)), std::string::npos);
}

TEST(AgentRun, AnAuthRefusalIsAFailureThatEndsTheWindow) {
  ScratchDir dir;
  api::MockServerOptions options;
  options.model = mock::agent_mock_model();
  options.required_api_key = "sk-k3lab-expected-key-0000";
  api::MockServer keyed(options);
  keyed.start(0);
  ScopedEnv key("MOONSHOT_API_KEY", "sk-k3lab-other-key-1111");
  const auto p = parameters();
  auto clock = std::make_shared<api::ManualClock>();
  api::ClientConfig config;
  config.base_url = keyed.base_url();
  config.retry.max_sends = 1;
  ar::AgentRunSetup setup;
  setup.parameters = p;
  setup.client = std::make_shared<const api::ChatClient>(config, clock);
  setup.clock = clock;
  setup.window.start = clock->utc_now();
  ar::AgentRunner runner(setup);
  const auto out = runner.run(unit_for(p, 1, "control"), dir.path() / "artifacts");
  EXPECT_EQ(out.kind, experiments::UnitOutcome::Kind::Failure);
  EXPECT_EQ(out.reason, "auth");
  EXPECT_TRUE(files_containing(dir.path(), "sk-k3lab-other-key-1111").empty());
}

TEST(AgentRun, AUnitOutsideTheTestWindowMakesNoCallAndIsInvalid) {
  ScratchDir dir;
  AgentServer server;
  const auto p = parameters();
  auto clock = std::make_shared<api::ManualClock>();
  auto runner = make_runner(p, server, clock);
  clock->advance(std::chrono::hours(25));
  const auto out = runner.run(unit_for(p, 1, "control"), dir.path() / "artifacts");
  EXPECT_EQ(out.kind, experiments::UnitOutcome::Kind::Invalid);
  EXPECT_EQ(out.reason, "outside-test-window");
  EXPECT_TRUE(server.server->received().empty());
}

TEST(AgentRun, AClientWithItsOwnTransportRetriesIsRefused) {
  AgentServer server;
  api::ClientConfig config;
  config.base_url = server.server->base_url();
  ar::AgentRunSetup setup;
  setup.parameters = parameters();
  setup.client = std::make_shared<const api::ChatClient>(config);
  EXPECT_THROW(ar::AgentRunner{setup}, std::invalid_argument);
}

}  // namespace
}  // namespace k3lab::agent_replay_test
