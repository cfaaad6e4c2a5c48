// Bounded and interruptible calls through the real client against the mock's keep-alive stall: SSE
// comment lines do not keep a stalled call alive, and a stop request ends an in-flight call and a
// Retry-After wait with CallInterrupted instead of a recorded failure.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "k3lab/api/chat_client.hpp"
#include "k3lab/api/mock_server.hpp"
#include "mock_test_support.hpp"

namespace k3lab::api {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::client_config_for;
using testing::ScopedEnv;
using testing::user_request;

constexpr const char* kInterruptKeyEnv = "K3LAB_TEST_INTERRUPT_KEY";

MockServerOptions stalling(std::vector<FaultKind> script, int retry_after_seconds = 1) {
  MockServerOptions options;
  options.faults.script = std::move(script);
  options.faults.retry_after_seconds = retry_after_seconds;
  options.faults.keepalive_interval = milliseconds(50);  // far more often than the stall timeout
  options.faults.stall_limit = seconds(60);
  return options;
}

// Sets `flag` once `server` has received `requests` requests (or after 30 s, so a broken test ends).
std::thread stop_after_requests(const MockServer& server, std::size_t requests, std::atomic<bool>& flag,
                                milliseconds extra = milliseconds(0)) {
  return std::thread([&server, requests, &flag, extra] {
    const auto give_up = std::chrono::steady_clock::now() + seconds(30);
    while (server.received().size() < requests && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(milliseconds(10));
    }
    std::this_thread::sleep_for(extra);
    flag.store(true);
  });
}

TEST(Interruption, KeepAliveCommentsDoNotHideAStall) {
  ScopedEnv key(kInterruptKeyEnv, nullptr);
  MockServer server(stalling({FaultKind::stall_keepalive}));
  server.start(0);
  ClientConfig config = client_config_for(server, kInterruptKeyEnv);
  config.stall_timeout = milliseconds(700);  // the mock sends a comment every 50 ms
  config.retry.jitter = 0;
  auto clock = std::make_shared<ManualClock>();
  ChatClient client(config, clock);
  const ChatResult r = client.complete(user_request("stall once", true));
  ASSERT_TRUE(r.ok()) << r.record.error_message;
  EXPECT_EQ(r.record.attempts, 2);
  EXPECT_EQ(r.record.attempt_errors, (std::vector<std::string>{"transport"}));
  ASSERT_EQ(server.received().size(), 2u);
  EXPECT_EQ(server.received()[0].fault, FaultKind::stall_keepalive);
  EXPECT_EQ(clock->sleeps(), (std::vector<std::chrono::nanoseconds>{seconds(1)}));
}

TEST(Interruption, AStalledSendIsReportedAsAStall) {
  ScopedEnv key(kInterruptKeyEnv, nullptr);
  MockServer server(stalling({FaultKind::stall_keepalive, FaultKind::stall_keepalive, FaultKind::stall_keepalive}));
  server.start(0);
  ClientConfig config = client_config_for(server, kInterruptKeyEnv);
  config.stall_timeout = milliseconds(500);
  ChatClient client(config, std::make_shared<ManualClock>());
  const ChatResult r = client.complete(user_request("stall always", true));
  EXPECT_EQ(r.record.error_class, ErrorClass::transport);
  EXPECT_EQ(r.record.attempts, 3);
  EXPECT_NE(r.record.error_message.find("stalled"), std::string::npos) << r.record.error_message;
}

TEST(Interruption, StopEndsAnInFlightCall) {
  ScopedEnv key(kInterruptKeyEnv, nullptr);
  MockServer server(stalling({FaultKind::stall_keepalive}));
  server.start(0);
  std::atomic<bool> stop{false};
  ClientConfig config = client_config_for(server, kInterruptKeyEnv);
  config.stop = &stop;  // stall timeout stays at its default of 600 s: only the stop can end the call
  ChatClient client(config, std::make_shared<ManualClock>());
  std::thread stopper = stop_after_requests(server, 1, stop, milliseconds(200));
  auto call = std::async(std::launch::async, [&] { return client.complete(user_request("stop me", true)); });
  // Far above the one-second promise; a call that ignored the flag would wait 60 s for the mock.
  ASSERT_EQ(call.wait_for(seconds(20)), std::future_status::ready) << "the stop flag did not end the call";
  stopper.join();
  EXPECT_THROW(call.get(), CallInterrupted);
  EXPECT_EQ(server.received().size(), 1u) << "an interrupted call must not be sent again";
}

TEST(Interruption, StopEndsARetryAfterWait) {
  ScopedEnv key(kInterruptKeyEnv, nullptr);
  MockServer server(stalling({FaultKind::rate_limit}, 3600));
  server.start(0);
  std::atomic<bool> stop{false};
  ClientConfig config = client_config_for(server, kInterruptKeyEnv);
  config.stop = &stop;
  config.retry.retry_after_cap = seconds(3600);
  ChatClient client(config, system_clock());  // a real wait of an hour unless the flag ends it
  std::thread stopper = stop_after_requests(server, 1, stop, milliseconds(200));
  auto call = std::async(std::launch::async, [&] { return client.complete(user_request("wait", false)); });
  ASSERT_EQ(call.wait_for(seconds(20)), std::future_status::ready) << "the stop flag did not end the wait";
  stopper.join();
  EXPECT_THROW(call.get(), CallInterrupted);
  EXPECT_EQ(server.received().size(), 1u);
}

TEST(Interruption, AStopBeforeTheCallSendsNothing) {
  ScopedEnv key(kInterruptKeyEnv, nullptr);
  MockServer server;
  server.start(0);
  std::atomic<bool> stop{true};
  ClientConfig config = client_config_for(server, kInterruptKeyEnv);
  config.stop = &stop;
  ChatClient client(config, std::make_shared<ManualClock>());
  EXPECT_THROW(client.complete(user_request("never", false)), CallInterrupted);
  EXPECT_TRUE(server.received().empty());
}

}  // namespace
}  // namespace k3lab::api
