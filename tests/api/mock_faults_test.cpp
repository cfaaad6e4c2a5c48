// Fault injection through the real client against the mock: at most three sends of identical bytes
// whatever the error class, Retry-After honoured on a virtual clock, backoff between sends, auth never
// retried, and the key never in a record, an error message or a log line.
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <sstream>

#include "k3lab/api/call_pool.hpp"
#include "k3lab/api/chat_client.hpp"
#include "k3lab/api/mock_server.hpp"
#include "mock_test_support.hpp"

namespace k3lab::api {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::client_config_for;
using testing::ScopedEnv;
using testing::user_request;

constexpr const char* kKeyEnv = "K3LAB_TEST_FAULTS_KEY";

std::vector<FaultKind> faults_seen(const MockServer& server) {
  std::vector<FaultKind> out;
  for (const auto& r : server.received()) out.push_back(r.fault);
  return out;
}

// Routes spdlog's default logger into a string for the test's lifetime, at the most verbose level.
class CapturedLog {
 public:
  CapturedLog() : previous_(spdlog::default_logger()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(stream_);
    auto logger = std::make_shared<spdlog::logger>("captured", sink);
    logger->set_level(spdlog::level::trace);
    spdlog::set_default_logger(logger);
  }
  ~CapturedLog() { spdlog::set_default_logger(previous_); }
  std::string text() const { return stream_.str(); }

 private:
  std::ostringstream stream_;
  std::shared_ptr<spdlog::logger> previous_;
};

// Exact backoff (no jitter), so waits can be compared with hand values.
ClientConfig without_jitter() {
  ClientConfig config;
  config.retry.jitter = 0;
  return config;
}

struct Rig {
  explicit Rig(MockServerOptions options, ClientConfig overrides = without_jitter()) : server(std::move(options)) {
    server.start(0);
    ClientConfig config = client_config_for(server, kKeyEnv);
    config.retry = overrides.retry;
    config.requests_per_second = overrides.requests_per_second;
    config.tokens_per_minute = overrides.tokens_per_minute;
    config.token_burst = overrides.token_burst;
    client = std::make_unique<ChatClient>(config, clock);
  }
  std::shared_ptr<ManualClock> clock = std::make_shared<ManualClock>();
  MockServer server;
  std::unique_ptr<ChatClient> client;
};

MockServerOptions scripted(std::vector<FaultKind> script, int retry_after_seconds = 1) {
  MockServerOptions options;
  options.faults.script = std::move(script);
  options.faults.retry_after_seconds = retry_after_seconds;
  return options;
}

TEST(MockFaults, TransportRetriesStopAtTwoWithIdenticalRequests) {
  ScopedEnv key(kKeyEnv, nullptr);
  for (bool stream : {true, false}) {
    Rig rig(scripted({FaultKind::drop_mid_stream, FaultKind::drop_mid_stream, FaultKind::drop_mid_stream}));
    const ChatResult r = rig.client->complete(user_request("drop me", stream));
    EXPECT_EQ(r.record.error_class, ErrorClass::transport) << r.record.error_message;
    EXPECT_EQ(r.record.attempts, 3);
    EXPECT_EQ(r.record.transport_retries, 2);
    EXPECT_EQ(r.record.overload_retries, 0);
    EXPECT_EQ(r.record.attempt_errors, (std::vector<std::string>{"transport", "transport", "transport"}));
    const auto received = rig.server.received();
    ASSERT_EQ(received.size(), 3u);
    for (std::size_t i = 0; i < received.size(); ++i) {
      EXPECT_EQ(received[i].body_hash, received[0].body_hash) << "attempt " << i << " changed the request";
      EXPECT_EQ(received[i].attempt, static_cast<int>(i));
    }
    // Without Retry-After: exponential backoff from 1 s, on the virtual clock.
    EXPECT_EQ(rig.clock->sleeps(), (std::vector<std::chrono::nanoseconds>{seconds(1), seconds(2)}));
    EXPECT_TRUE(r.response.content.empty());
  }
}

TEST(MockFaults, TwoDropsThenSuccess) {
  ScopedEnv key(kKeyEnv, nullptr);
  Rig rig(scripted({FaultKind::drop_mid_stream, FaultKind::server_error}));
  const ChatResult r = rig.client->complete(user_request("eventually", true));
  ASSERT_TRUE(r.ok()) << r.record.error_message;
  EXPECT_EQ(r.response.content, "eventually");
  EXPECT_EQ(r.record.transport_retries, 2);
  EXPECT_EQ(r.record.attempt_errors, (std::vector<std::string>{"transport", "server"}));
  EXPECT_EQ(faults_seen(rig.server),
            (std::vector<FaultKind>{FaultKind::drop_mid_stream, FaultKind::server_error, FaultKind::none}));
}

TEST(MockFaults, EveryErrorClassCountsAgainstOneCapOfThreeSends) {
  ScopedEnv key(kKeyEnv, nullptr);
  Rig rig(scripted({FaultKind::rate_limit, FaultKind::overload, FaultKind::unavailable, FaultKind::drop_mid_stream}, 3));
  const ChatResult r = rig.client->complete(user_request("patience", true));
  EXPECT_EQ(r.record.error_class, ErrorClass::overload) << r.record.error_message;
  EXPECT_EQ(r.record.attempts, 3);
  EXPECT_EQ(rig.server.received().size(), 3u) << "a fourth send broke the cap";
  EXPECT_EQ(r.record.attempt_errors, (std::vector<std::string>{"rate_limit", "overload", "overload"}));
  EXPECT_EQ(r.record.overload_retries, 2);
  // Two Retry-After waits of 3 s; no wait after the last send.
  EXPECT_EQ(rig.clock->sleeps(), (std::vector<std::chrono::nanoseconds>{seconds(3), seconds(3)}));
  EXPECT_DOUBLE_EQ(r.record.waited_ms, 6'000.0);
  ASSERT_TRUE(r.record.retry_after_ms.has_value());
  EXPECT_DOUBLE_EQ(*r.record.retry_after_ms, 3'000.0);
}

TEST(MockFaults, RetryAfterThenBackoffAcrossClasses) {
  ScopedEnv key(kKeyEnv, nullptr);
  Rig rig(scripted({FaultKind::rate_limit, FaultKind::drop_mid_stream}, 3));
  const ChatResult r = rig.client->complete(user_request("patience", true));
  ASSERT_TRUE(r.ok()) << r.record.error_message;
  EXPECT_EQ(r.record.overload_retries, 1);
  EXPECT_EQ(r.record.transport_retries, 1);
  // Retry-After 3 s, then the backoff after two sends: 1 s * 2.
  EXPECT_EQ(rig.clock->sleeps(), (std::vector<std::chrono::nanoseconds>{seconds(3), seconds(2)}));
}

TEST(MockFaults, RetryAfterIsCapped) {
  ScopedEnv key(kKeyEnv, nullptr);
  ClientConfig limits = without_jitter();
  limits.retry.retry_after_cap = milliseconds(2500);
  Rig rig(scripted({FaultKind::rate_limit}, 1152), limits);
  const ChatResult r = rig.client->complete(user_request("tpd", false));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(rig.clock->sleeps(), (std::vector<std::chrono::nanoseconds>{milliseconds(2500)}));
}

TEST(MockFaults, ASmallerCapSendsLess) {
  ScopedEnv key(kKeyEnv, nullptr);
  ClientConfig limits = without_jitter();
  limits.retry.max_sends = 2;
  Rig rig(scripted({FaultKind::overload, FaultKind::overload, FaultKind::overload, FaultKind::overload}), limits);
  const ChatResult r = rig.client->complete(user_request("busy", true));
  EXPECT_EQ(r.record.error_class, ErrorClass::overload);
  EXPECT_EQ(r.record.http_status, 429);
  EXPECT_EQ(r.record.attempts, 2);
  EXPECT_EQ(r.record.overload_retries, 1);
  EXPECT_EQ(r.record.transport_retries, 0);
  EXPECT_EQ(rig.server.received().size(), 2u);
}

TEST(MockFaults, JitteredBackoffStaysInItsBandAndRepeatsWithTheSeed) {
  ScopedEnv key(kKeyEnv, nullptr);
  auto sleeps_with_seed = [](std::uint64_t seed) {
    ClientConfig limits;  // jitter 0.5: waits in [b/2, b]
    limits.retry.seed = seed;
    Rig rig(scripted({FaultKind::server_error, FaultKind::server_error}), limits);
    EXPECT_TRUE(rig.client->complete(user_request("jitter", false)).ok());
    return rig.clock->sleeps();
  };
  const auto a = sleeps_with_seed(7);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_GE(a[0], milliseconds(500));
  EXPECT_LE(a[0], seconds(1));
  EXPECT_GE(a[1], seconds(1));
  EXPECT_LE(a[1], seconds(2));
  EXPECT_EQ(sleeps_with_seed(7), a);
  EXPECT_NE(sleeps_with_seed(8), a);
}

TEST(MockFaults, AuthErrorIsNotRetriedAndTheKeyNeverLeaks) {
  const std::string real_key = "sk-k3lab-test-0123456789abcdefWXYZ";
  const std::string wrong_key = "sk-k3lab-wrong-9876543210fedcbaQRST";
  MockServerOptions options;
  options.required_api_key = real_key;
  CapturedLog log;
  {
    ScopedEnv key(kKeyEnv, wrong_key.c_str());
    Rig rig(options);
    const ChatResult r = rig.client->complete(user_request("who am i", true));
    EXPECT_EQ(r.record.error_class, ErrorClass::auth);
    EXPECT_EQ(r.record.http_status, 401);
    EXPECT_EQ(r.record.attempts, 1);
    EXPECT_TRUE(rig.clock->sleeps().empty());
    ASSERT_EQ(rig.server.received().size(), 1u);
    EXPECT_TRUE(rig.server.received()[0].had_authorization);
    // The mock echoed the presented key; the client must have redacted it.
    EXPECT_NE(r.record.error_message.find("[REDACTED]"), std::string::npos) << r.record.error_message;
    const std::string record = r.record.to_json().dump();
    EXPECT_EQ(record.find(wrong_key), std::string::npos);
    EXPECT_EQ(record.find(wrong_key.substr(0, 12)), std::string::npos);
    EXPECT_EQ(r.record.error_message.find(wrong_key.substr(10, 10)), std::string::npos);
  }
  {
    ScopedEnv key(kKeyEnv, real_key.c_str());
    Rig rig(options);
    const ChatResult ok = rig.client->complete(user_request("who am i", true));
    ASSERT_TRUE(ok.ok()) << ok.record.error_message;
    EXPECT_EQ(ok.record.to_json().dump().find(real_key), std::string::npos);
    const ChatResult dropped_then_ok = rig.client->complete(user_request("again", false));
    ASSERT_TRUE(dropped_then_ok.ok());
  }
  const std::string logged = log.text();
  EXPECT_FALSE(logged.empty()) << "the client logged nothing at trace level; the leak check would be vacuous";
  EXPECT_NE(logged.find("auth"), std::string::npos) << logged;
  EXPECT_EQ(logged.find(wrong_key), std::string::npos) << logged;
  EXPECT_EQ(logged.find(wrong_key.substr(3, 16)), std::string::npos) << logged;
  EXPECT_EQ(logged.find(real_key), std::string::npos) << logged;
}

TEST(MockFaults, SeededFaultsAreDeterministic) {
  ScopedEnv key(kKeyEnv, nullptr);
  auto run = [](std::uint64_t seed) {
    MockServerOptions options;
    options.faults.seed = seed;
    options.faults.rate_limit = 0.2;
    options.faults.server_error = 0.2;
    options.faults.drop_mid_stream = 0.2;
    options.faults.retry_after_seconds = 0;
    Rig rig(options);
    std::vector<json> requests;
    for (int i = 0; i < 16; ++i) requests.push_back(user_request("r" + std::to_string(i), i % 2 == 0));
    const auto results = run_calls(*rig.client, requests, 4);
    std::vector<std::vector<std::string>> per_call;
    for (const auto& r : results) {
      EXPECT_TRUE(r.ok()) << r.record.error_message;  // max_faulted_attempts = 2 fits the retry budgets
      per_call.push_back(r.record.attempt_errors);
    }
    return per_call;
  };
  const auto a = run(11);
  const auto b = run(11);
  const auto c = run(12);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  std::size_t faulted = 0;
  for (const auto& errors : a) faulted += errors.size();
  EXPECT_GT(faulted, 0u);
}

TEST(MockFaults, ClientRequestRateLimitWaitsOnTheClock) {
  ScopedEnv key(kKeyEnv, nullptr);
  ClientConfig limits;
  limits.requests_per_second = 4;  // burst 1: every call after the first waits 250 ms
  Rig rig(MockServerOptions{}, limits);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(rig.client->complete(user_request("tick", false)).ok());
  EXPECT_EQ(rig.clock->sleeps(), (std::vector<std::chrono::nanoseconds>{milliseconds(250), milliseconds(250)}));
}

TEST(MockFaults, ClientTokenRateLimitChargesPromptAndCompletion) {
  ScopedEnv key(kKeyEnv, nullptr);
  ClientConfig limits;
  limits.tokens_per_minute = 60'000;  // 1000 per second
  limits.token_burst = 2048;          // one call's max_completion_tokens alone is 2048
  Rig rig(MockServerOptions{}, limits);
  ASSERT_TRUE(rig.client->complete(user_request("tokens", false)).ok());
  ASSERT_TRUE(rig.client->complete(user_request("tokens", false)).ok());
  const auto sleeps = rig.clock->sleeps();
  ASSERT_EQ(sleeps.size(), 2u);  // first call: body tokens beyond the burst; second: the whole cost
  const json body = user_request("tokens", false);
  const double cost = static_cast<double>((body.dump().size() + 3) / 4 + 2048);
  EXPECT_NEAR(std::chrono::duration<double>(sleeps[0]).count(), (cost - 2048) / 1000.0, 1e-6);
  EXPECT_NEAR(std::chrono::duration<double>(sleeps[1]).count(), cost / 1000.0, 1e-6);
}

}  // namespace
}  // namespace k3lab::api
