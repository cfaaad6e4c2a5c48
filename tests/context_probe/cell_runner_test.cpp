// One unit at a time through a real MockServer (loopback HTTP, SSE, prefix cache, fault injection):
// the cache rules of both strata, re-priming, the retry caps and Retry-After, and the window.
#include <gtest/gtest.h>

#include "context_probe/cell_runner.hpp"
#include "k3lab/mock/reader_model.hpp"
#include "k3lab/api/mock_server.hpp"
#include "test_support.hpp"

namespace k3lab::context_probe_test {
namespace {

namespace cp = experiments::context_probe;
using experiments::UnitOutcome;

const std::string kRunnerBlock = "family=single/fixture=1/length=16384";
const std::string kCold = kRunnerBlock + "/stratum=cold/rep=1";
const std::string kPrime = "prime/" + kRunnerBlock + "/rep=1";
const std::string kWarm = kRunnerBlock + "/stratum=warm/rep=1";

struct Harness {
  std::shared_ptr<api::ManualClock> clock = std::make_shared<api::ManualClock>();
  std::unique_ptr<api::MockServer> server;
  std::shared_ptr<const api::ChatClient> client;

  explicit Harness(api::FaultPlan faults = {}) {
    api::MockServerOptions options;
    options.model = mock::context_reader_model();
    options.faults = std::move(faults);
    server = std::make_unique<api::MockServer>(std::move(options));
    server->start(0);
    api::ClientConfig config;
    config.base_url = server->base_url();
    config.max_in_flight = 1;
    client = std::make_shared<const api::ChatClient>(config, clock);
  }

  cp::CellRunner runner(const std::string& window_id, std::map<std::string, std::string> earlier = {}) const {
    cp::CellRunnerSetup s;
    s.parameters = smoke_parameters();
    s.client = client;
    s.counter = cp::make_prompt_token_counter(std::nullopt);
    s.endpoint.kind = api::EndpointChoice::Kind::BaseUrl;
    s.endpoint.base_url = server->base_url();
    s.endpoint.source = "test";
    s.window_id = window_id;
    s.window = {clock->utc_now(), 24};
    s.clock = clock;
    return cp::CellRunner(std::move(s), std::move(earlier));
  }
};

TEST(CellRunner, ColdPrimeWarmFollowTheCacheRules) {
  Harness h;
  auto cells = h.runner("w1");
  const auto cold = cells.run(smoke_unit(kCold));
  const auto prime = cells.run(smoke_unit(kPrime));
  const auto warm = cells.run(smoke_unit(kWarm));
  ASSERT_EQ(cold.kind, UnitOutcome::Kind::Result) << cold.reason << ": " << cold.detail;
  ASSERT_EQ(prime.kind, UnitOutcome::Kind::Result) << prime.detail;
  ASSERT_EQ(warm.kind, UnitOutcome::Kind::Result) << warm.reason << ": " << warm.detail;
  EXPECT_EQ(cold.data["call"]["cached_tokens"], 0);
  EXPECT_GT(warm.data["call"]["cached_tokens"].get<int>(), 0);
  EXPECT_FALSE(warm.data.contains("reprime"));
  EXPECT_EQ(cold.data["prefix_id"], "w1/cp-single-f1-L16384-r1-cold");
  EXPECT_EQ(warm.data["prefix_id"], prime.data["prefix_id"]);
  EXPECT_TRUE(cold.data["verdict"].contains("passed"));
  EXPECT_TRUE(prime.data.contains("unscored_verdict"));
  EXPECT_FALSE(prime.data.contains("verdict"));
  // The mock counts ceil(rendered bytes / 4) prompt tokens; the plan counted ceil(prompt bytes / 3).
  const double ratio = cold.data["observed"]["prompt_tokens_over_planned"].get<double>();
  EXPECT_GT(ratio, 0.7);
  EXPECT_LT(ratio, 0.8);
  // The reasoning is kept as presence and hash only; clock fields live in timing.
  EXPECT_TRUE(cold.data["call"]["reasoning_present"].get<bool>());
  EXPECT_EQ(cold.data["call"]["reasoning_sha256"].get<std::string>().size(), 64u);
  EXPECT_EQ(cold.data.dump().find("Reader notes"), std::string::npos);
  EXPECT_FALSE(cold.data["call"].contains("latency_ms"));
  EXPECT_TRUE(cold.timing["call"].contains("latency_ms"));
  EXPECT_EQ(h.server->received().size(), 3u);
}

TEST(CellRunner, ColdCellThatHitsTheCacheIsInvalid) {
  Harness h;
  auto first = h.runner("same-window");
  ASSERT_EQ(first.run(smoke_unit(kCold)).kind, UnitOutcome::Kind::Result);
  // The same prefix id sent again (a window id reused) finds the prefix cached.
  auto second = h.runner("same-window");
  const auto again = second.run(smoke_unit(kCold));
  EXPECT_EQ(again.kind, UnitOutcome::Kind::Invalid);
  EXPECT_EQ(again.reason, "cold-cache-hit");
  EXPECT_GT(again.data["call"]["cached_tokens"].get<int>(), 0);
  EXPECT_TRUE(again.data.contains("verdict"));  // kept with its reason, never dropped
}

TEST(CellRunner, WarmCellNotDirectlyAfterItsPrimingCallIsPrimedAgain) {
  Harness h;
  // Resume: the priming unit finished in an earlier process.
  auto resumed = h.runner("w2", {{kPrime, "result"}});
  const auto warm = resumed.run(smoke_unit(kWarm));
  ASSERT_EQ(warm.kind, UnitOutcome::Kind::Result) << warm.reason << ": " << warm.detail;
  ASSERT_TRUE(warm.data.contains("reprime"));
  EXPECT_EQ(warm.data["reprime"]["call"]["cached_tokens"], 0);
  EXPECT_GT(warm.data["reprime"]["cost_usd"].get<double>(), 0.0);
  EXPECT_GT(warm.data["call"]["cached_tokens"].get<int>(), 0);
  EXPECT_EQ(h.server->received().size(), 2u);

  // Another call between the priming call and its warm cell also forces a re-prime.
  auto cells = h.runner("w3");
  cells.run(smoke_unit(kPrime));
  cells.run(smoke_unit("family=order-state/fixture=1/length=16384/stratum=cold/rep=1"));
  EXPECT_TRUE(cells.run(smoke_unit(kWarm)).data.contains("reprime"));
}

TEST(CellRunner, WarmCellAfterAFailedPrimingCallIsInvalidAndNotSent) {
  Harness h;
  auto cells = h.runner("w4", {{kPrime, "failure"}});
  const auto warm = cells.run(smoke_unit(kWarm));
  EXPECT_EQ(warm.kind, UnitOutcome::Kind::Invalid);
  EXPECT_EQ(warm.reason, "priming-failed");
  EXPECT_TRUE(h.server->received().empty());
}

TEST(CellRunner, TransportRetriesAreCappedAtTwo) {
  api::FaultPlan faults;
  faults.script = {api::FaultKind::server_error, api::FaultKind::drop_mid_stream, api::FaultKind::server_error,
                   api::FaultKind::server_error, api::FaultKind::server_error};
  Harness h(faults);
  auto cells = h.runner("w5");
  const auto cold = cells.run(smoke_unit(kCold));
  EXPECT_EQ(cold.kind, UnitOutcome::Kind::Failure);
  EXPECT_EQ(cold.reason, "server");
  EXPECT_EQ(cold.data["call"]["attempts"], 3);
  EXPECT_EQ(cold.data["call"]["transport_retries"], 2);
  EXPECT_EQ(cold.data["call"]["attempt_errors"], nlohmann::json({"server", "transport", "server"}));
  const auto received = h.server->received();
  ASSERT_EQ(received.size(), 3u);  // the fourth scripted fault is never reached
  for (const auto& r : received) EXPECT_EQ(r.body_hash, received[0].body_hash);  // the identical request
}

TEST(CellRunner, RetryAfterIsHonouredOnRateLimits) {
  api::FaultPlan faults;
  faults.script = {api::FaultKind::rate_limit};
  faults.retry_after_seconds = 7;
  Harness h(faults);
  auto cells = h.runner("w6");
  const auto cold = cells.run(smoke_unit(kCold));
  ASSERT_EQ(cold.kind, UnitOutcome::Kind::Result) << cold.reason << ": " << cold.detail;
  EXPECT_EQ(cold.data["call"]["overload_retries"], 1);
  EXPECT_EQ(cold.data["call"]["transport_retries"], 0);
  const auto sleeps = h.clock->sleeps();
  ASSERT_EQ(sleeps.size(), 1u);
  EXPECT_EQ(sleeps[0], std::chrono::seconds(7));
  EXPECT_DOUBLE_EQ(cold.timing["call"]["waited_ms"].get<double>(), 7000.0);
}

TEST(CellRunner, ACallFinishingInTheMillisecondTheWindowOpenedIsInside) {
  Harness h;
  h.clock->advance(std::chrono::microseconds(500));  // the window opens at .000500; records say .000
  auto cells = h.runner("w8");
  const auto cold = cells.run(smoke_unit(kCold));
  EXPECT_EQ(cold.kind, UnitOutcome::Kind::Result) << cold.reason << ": " << cold.detail;
}

TEST(CellRunner, ACallFinishingAfterTheWindowClosedIsInvalid) {
  api::FaultPlan faults;
  faults.script = {api::FaultKind::rate_limit};
  faults.retry_after_seconds = 30;  // the Retry-After wait carries the call past the window's end
  Harness h(faults);
  auto cells = h.runner("w9");  // the window opens now
  h.clock->advance(std::chrono::hours(24) - std::chrono::seconds(10));
  const auto late = cells.run(smoke_unit(kCold));
  EXPECT_EQ(late.kind, UnitOutcome::Kind::Invalid);
  EXPECT_EQ(late.reason, "window-expired");
  EXPECT_TRUE(late.data.contains("call"));  // it was sent, and is kept with its reason
  EXPECT_EQ(late.timing["call"]["finished_utc"], "2026-01-02T00:00:20.000Z");
}

TEST(CellRunner, UnitsAfterTheWindowClosedAreRefusedWithoutACall) {
  Harness h;
  auto cells = h.runner("w7");
  h.clock->advance(std::chrono::hours(24));
  const auto late = cells.run(smoke_unit(kCold));
  EXPECT_EQ(late.kind, UnitOutcome::Kind::Invalid);
  EXPECT_EQ(late.reason, "window-expired");
  EXPECT_TRUE(h.server->received().empty());
  EXPECT_EQ(late.timing["window_start_utc"], "2026-01-01T00:00:00.000Z");
  EXPECT_EQ(late.timing["window_end_utc"], "2026-01-02T00:00:00.000Z");
}

}  // namespace
}  // namespace k3lab::context_probe_test
