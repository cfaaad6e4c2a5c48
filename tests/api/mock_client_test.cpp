// The real client against the in-process mock server: streamed and non-streamed calls agree, usage
// and the prefix cache are accounted as documented, protocol violations come back as 400s, and the
// pool keeps call order and the in-flight bound.
#include <gtest/gtest.h>

#include <thread>

#include "k3lab/api/call_pool.hpp"
#include "k3lab/api/chat_client.hpp"
#include "k3lab/api/mock_server.hpp"
#include "k3lab/core/sha256.hpp"
#include "k3lab/api/token_estimate.hpp"
#include "mock_test_support.hpp"

namespace k3lab::api {
namespace {

using nlohmann::json;
using testing::agent_model;
using testing::client_config_for;
using testing::ScopedEnv;
using testing::user_request;

constexpr const char* kNoKeyEnv = "K3LAB_TEST_UNSET_KEY";

TEST(MockClient, NonStreamedEchoWithRecord) {
  ScopedEnv no_key(kNoKeyEnv, nullptr);
  MockServer server;
  server.start(0);
  ChatClient client(client_config_for(server, kNoKeyEnv));
  const json request = user_request("Echo me: \xE5\xAD\x97", false);
  const ChatResult r = client.complete(request, 7);
  ASSERT_TRUE(r.ok()) << r.record.error_message;
  EXPECT_EQ(r.response.content, "Echo me: \xE5\xAD\x97");
  EXPECT_EQ(r.response.finish_reason, "stop");
  const CallRecord& rec = r.record;
  EXPECT_EQ(rec.call_index, 7u);
  EXPECT_EQ(rec.http_status, 200);
  EXPECT_EQ(rec.model, "kimi-k3");
  EXPECT_EQ(rec.system_fingerprint, "k3lab-mock");
  EXPECT_TRUE(rec.simulated);
  EXPECT_FALSE(rec.streamed);
  EXPECT_EQ(rec.attempts, 1);
  EXPECT_EQ(rec.request_ids.at("x-request-id"), rec.request_ids.at("msh-request-id"));
  // Usage: the documented approximation over the rendered prompt, computed independently here.
  EXPECT_EQ(rec.prompt_tokens, static_cast<std::int64_t>(approx_token_count(render_prompt(request))));
  EXPECT_EQ(rec.completion_tokens,
            static_cast<std::int64_t>(approx_token_count(r.response.reasoning_content) + approx_token_count(r.response.content)));
  // Reasoning is recorded only as presence and hash.
  EXPECT_TRUE(rec.reasoning_present);
  EXPECT_EQ(rec.reasoning_sha256, core::sha256_hex(r.response.reasoning_content));
  const std::string dumped = rec.to_json().dump();
  EXPECT_EQ(dumped.find(r.response.reasoning_content), std::string::npos);
  EXPECT_EQ(rec.started_utc.size(), 24u);  // 2026-08-03T12:34:56.789Z
}

TEST(MockClient, StreamedAndNonStreamedResponsesAgree) {
  ScopedEnv no_key(kNoKeyEnv, nullptr);
  for (bool crlf : {false, true}) {
    MockServerOptions options;
    options.model = agent_model();
    options.stream_piece_bytes = 3;  // many small deltas
    options.wire_write_bytes = 7;    // SSE bytes cut mid-line and mid-character
    options.crlf = crlf;
    MockServer server(options);
    server.start(0);
    ChatClient client(client_config_for(server, kNoKeyEnv));
    const ChatResult plain = client.complete(user_request("Weather?", false));
    const ChatResult streamed = client.complete(user_request("Weather?", true));
    ASSERT_TRUE(plain.ok()) << plain.record.error_message;
    ASSERT_TRUE(streamed.ok()) << streamed.record.error_message;
    ASSERT_EQ(plain.response.tool_calls.size(), 2u);
    EXPECT_EQ(plain.response.tool_calls[0].id, "functions.lookup:0");
    EXPECT_EQ(plain.response.finish_reason, "tool_calls");
    ChatResponse s = streamed.response;
    ChatResponse p = plain.response;
    // Ids, usage (the second call hits the prefix cache differently) aside, the merged stream is the body.
    s.id = p.id = "";
    s.usage.reset();
    p.usage.reset();
    EXPECT_EQ(s, p) << "crlf=" << crlf;
    EXPECT_TRUE(streamed.record.streamed);
    ASSERT_TRUE(streamed.record.ttft_ms.has_value());
    EXPECT_LE(*streamed.record.ttft_ms, streamed.record.latency_ms);
    EXPECT_EQ(streamed.record.completion_tokens, plain.record.completion_tokens);
    EXPECT_EQ(streamed.record.prompt_tokens, plain.record.prompt_tokens);
  }
}

TEST(MockClient, UsageIsCountedOnceWhereverItIsPlaced) {
  ScopedEnv no_key(kNoKeyEnv, nullptr);
  std::vector<std::int64_t> prompt, completion;
  for (UsagePlacement placement : {UsagePlacement::choice, UsagePlacement::top_level, UsagePlacement::choice_and_trailing}) {
    MockServerOptions options;
    options.usage_placement = placement;
    MockServer server(options);
    server.start(0);
    ChatClient client(client_config_for(server, kNoKeyEnv));
    const ChatResult r = client.complete(user_request("count me once", true));
    ASSERT_TRUE(r.ok()) << r.record.error_message;
    ASSERT_TRUE(r.record.usage_reported);
    prompt.push_back(r.record.prompt_tokens);
    completion.push_back(r.record.completion_tokens);
  }
  const auto expected = static_cast<std::int64_t>(approx_token_count(render_prompt(user_request("count me once", true))));
  EXPECT_EQ(prompt, (std::vector<std::int64_t>{expected, expected, expected}));
  EXPECT_EQ(completion[0], completion[1]);
  EXPECT_EQ(completion[1], completion[2]);
}

TEST(MockClient, WarmPrefixReportsCachedTokensAndACacheBusterReportsZero) {
  ScopedEnv no_key(kNoKeyEnv, nullptr);
  MockServer server;
  server.start(0);
  ChatClient client(client_config_for(server, kNoKeyEnv));
  std::string haystack;
  for (int i = 0; i < 400; ++i) haystack += "Line " + std::to_string(i) + ": the grass is green and the sky is blue.\n";
  auto request_with = [&](const std::string& buster) {
    json r = user_request("", false);
    r["messages"][1]["content"] = buster + "\n" + haystack + "Question: what is line 7?";
    return r;
  };
  const json priming = request_with("prefix-id 0001");
  const ChatResult cold = client.complete(priming);
  const ChatResult warm = client.complete(priming);
  const ChatResult other = client.complete(request_with("prefix-id 0002"));
  ASSERT_TRUE(cold.ok() && warm.ok() && other.ok());
  EXPECT_EQ(cold.record.cached_tokens, 0);
  // Whole 1024-byte blocks of the rendered prompt, 256 tokens each.
  const auto blocks = static_cast<std::int64_t>(render_prompt(priming).size() / 1024);
  EXPECT_GT(blocks, 10);
  EXPECT_EQ(warm.record.cached_tokens, blocks * 256);
  EXPECT_LE(warm.record.cached_tokens, warm.record.prompt_tokens);
  EXPECT_EQ(other.record.cached_tokens, 0);  // the system message comes first and is unchanged, but
                                             // shorter than one block, so the changed first user line
                                             // breaks the first block
}

// A request's ids name the request, not its arrival: two servers asked the same things in different
// orders give each request the same ids; the identical request asked again gets new ones; a new
// session forgets earlier arrivals and the prompt cache, and salts the ids with its name.
TEST(MockClient, IdsDeriveFromTheRequestAndTheSessionNotTheArrivalOrder) {
  ScopedEnv no_key(kNoKeyEnv, nullptr);
  MockServer first;
  MockServer second;
  first.start(0);
  second.start(0);
  ChatClient to_first(client_config_for(first, kNoKeyEnv));
  ChatClient to_second(client_config_for(second, kNoKeyEnv));
  const json x = user_request("Which ids do I get? " + std::string(3000, 'x'), false);
  const json y = user_request("And in a stream?", true);
  const auto ids = [](const ChatResult& r) {
    EXPECT_TRUE(r.ok()) << r.record.error_message;
    return std::make_pair(r.record.request_ids.at("x-request-id"), r.record.response_id);
  };
  const auto first_x = ids(to_first.complete(x));
  const auto first_y = ids(to_first.complete(y));
  const auto first_x_again = ids(to_first.complete(x));
  const auto second_y = ids(to_second.complete(y));
  const auto second_x = ids(to_second.complete(x));
  EXPECT_EQ(first_x, second_x);
  EXPECT_EQ(first_y, second_y);
  EXPECT_NE(first_x, first_x_again);
  EXPECT_NE(first_x, first_y);
  const std::string hex = first_x.first.substr(std::string("mock-req-").size());
  EXPECT_EQ(hex.size(), 16u);
  EXPECT_EQ(first_x.second, "chatcmpl-mock-" + hex);

  // The first server saw x twice, the second once; after begin_session both answer x as a first arrival.
  const auto cached = [&](const ChatClient& client) { return client.complete(x).record.cached_tokens; };
  EXPECT_GT(cached(to_first), 0);
  first.begin_session("task=1/arm=control/rep=1");
  second.begin_session("task=1/arm=control/rep=1");
  const ChatResult fresh = to_first.complete(x);
  EXPECT_EQ(fresh.record.cached_tokens, 0);
  const auto session_x = ids(fresh);
  EXPECT_EQ(session_x, ids(to_second.complete(x)));
  EXPECT_NE(session_x, first_x);  // the same arrival in another session has other ids
  second.begin_session("task=1/arm=control/rep=2");
  EXPECT_NE(ids(to_second.complete(x)), session_x);
}

TEST(MockClient, ProtocolViolationsAre400sAndNotRetried) {
  ScopedEnv no_key(kNoKeyEnv, nullptr);
  MockServerOptions options;
  options.model = agent_model();
  MockServer server(options);
  server.start(0);
  ChatClient client(client_config_for(server, kNoKeyEnv));
  const ChatResult first = client.complete(user_request("Weather?", false));
  ASSERT_TRUE(first.ok());
  json history = user_request("Weather?", false);
  json assistant = first.response.assistant_message();
  // Fault arm "keep only assistant content": drop reasoning from the replayed message.
  json stripped = assistant;
  stripped.erase("reasoning_content");
  json bad = history;
  bad["messages"].push_back(stripped);
  for (const auto& call : assistant["tool_calls"]) {
    bad["messages"].push_back({{"role", "tool"}, {"tool_call_id", call["id"]}, {"content", "12 C"}});
  }
  const ChatResult rejected = client.complete(bad);
  EXPECT_EQ(rejected.record.error_class, ErrorClass::invalid_request);
  EXPECT_EQ(rejected.record.http_status, 400);
  EXPECT_EQ(rejected.record.attempts, 1);
  EXPECT_NE(rejected.record.error_message.find("reasoning_content is missing in assistant tool call message at index 2"),
            std::string::npos)
      << rejected.record.error_message;

  // Fault arm "omit one of two tool results".
  json omitted = history;
  omitted["messages"].push_back(assistant);
  omitted["messages"].push_back({{"role", "tool"}, {"tool_call_id", assistant["tool_calls"][0]["id"]}, {"content", "12 C"}});
  const ChatResult unanswered = client.complete(omitted);
  EXPECT_EQ(unanswered.record.error_class, ErrorClass::invalid_request);
  EXPECT_NE(unanswered.record.error_message.find("functions.lookup:1"), std::string::npos) << unanswered.record.error_message;

  // The documented protocol: exact replay succeeds and the model answers from the tool result.
  json good = history;
  good["messages"].push_back(assistant);
  for (const auto& call : assistant["tool_calls"]) {
    good["messages"].push_back({{"role", "tool"}, {"tool_call_id", call["id"]}, {"content", "12 C"}});
  }
  const ChatResult answered = client.complete(good);
  ASSERT_TRUE(answered.ok()) << answered.record.error_message;
  EXPECT_EQ(answered.response.content, "Result: 12 C");
}

TEST(MockClient, CompletionLimitTruncatesReasoningFirst) {
  ScopedEnv no_key(kNoKeyEnv, nullptr);
  MockServerOptions options;
  options.model = [](const json&) {
    MockReply r;
    r.reasoning_content = std::string(400, 'r');  // 100 approx tokens
    r.content = "the answer";
    return r;
  };
  MockServer server(options);
  server.start(0);
  ChatClient client(client_config_for(server, kNoKeyEnv));
  json request = user_request("q", true);
  request["max_completion_tokens"] = 50;
  const ChatResult r = client.complete(request);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.response.finish_reason, "length");
  EXPECT_EQ(r.response.content, "");
  EXPECT_EQ(r.response.reasoning_content.size(), 200u);
  EXPECT_EQ(r.record.completion_tokens, 50);
}

TEST(MockClient, ContextWindowAndBadRequests) {
  ScopedEnv no_key(kNoKeyEnv, nullptr);
  MockServerOptions options;
  options.context_window_tokens = 100;
  MockServer server(options);
  server.start(0);
  ChatClient client(client_config_for(server, kNoKeyEnv));
  json request = user_request("short", false);
  request["max_completion_tokens"] = 90;
  const ChatResult r = client.complete(request);
  EXPECT_EQ(r.record.error_class, ErrorClass::invalid_request);
  EXPECT_NE(r.record.error_message.find("exceeded model token limit : 100"), std::string::npos) << r.record.error_message;
  // Checked locally, before any byte is sent.
  EXPECT_THROW(client.complete(json{{"model", "kimi-k3"}}), std::invalid_argument);
  json effort = user_request("x", false);
  effort["reasoning_effort"] = "medium";
  EXPECT_THROW(client.complete(effort), std::invalid_argument);
  EXPECT_EQ(server.received().size(), 1u);
}

TEST(MockClient, ListsModels) {
  ScopedEnv no_key(kNoKeyEnv, nullptr);
  MockServerOptions options;
  options.models = {"kimi-k3", "kimi-k3.1-pro"};
  MockServer server(options);
  server.start(0);
  ChatClient client(client_config_for(server, kNoKeyEnv));
  EXPECT_EQ(client.list_models(), (std::vector<std::string>{"kimi-k3", "kimi-k3.1-pro"}));
}

TEST(MockClient, NoKeyForARemoteEndpointFailsBeforeAnyCall) {
  ScopedEnv no_key(kNoKeyEnv, nullptr);
  ClientConfig config;
  config.api_key_env = kNoKeyEnv;  // base_url stays https://api.moonshot.ai/v1
  ChatClient client(config);
  EXPECT_FALSE(client.api_key_present());
  try {
    client.complete(user_request("x", false));
    FAIL() << "a remote call without a key was attempted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(kNoKeyEnv), std::string::npos) << e.what();
  }
}

TEST(MockClient, SlowFirstTokenShowsInTimeToFirstToken) {
  ScopedEnv no_key(kNoKeyEnv, nullptr);
  MockServerOptions options;
  options.faults.script = {FaultKind::slow_first_token};
  options.faults.first_token_delay = std::chrono::milliseconds(150);
  MockServer server(options);
  server.start(0);
  ChatClient client(client_config_for(server, kNoKeyEnv));
  const ChatResult r = client.complete(user_request("slow", true));
  ASSERT_TRUE(r.ok()) << r.record.error_message;
  ASSERT_TRUE(r.record.ttft_ms.has_value());
  EXPECT_GE(*r.record.ttft_ms, 150.0);  // the injected delay is a floor; no upper bound is asserted
  EXPECT_EQ(server.received().at(0).fault, FaultKind::slow_first_token);
}

TEST(CallPool, ResultsInCallOrderAndInFlightBounded) {
  ScopedEnv no_key(kNoKeyEnv, nullptr);
  MockServerOptions options;
  options.faults.slow_first_token = 1.0;  // every first attempt lingers, so calls overlap
  options.faults.max_faulted_attempts = 1;
  options.faults.first_token_delay = std::chrono::milliseconds(30);
  MockServer server(options);
  server.start(0);
  ClientConfig config = client_config_for(server, kNoKeyEnv);
  config.max_in_flight = 3;
  ChatClient client(config);
  std::vector<json> requests;
  for (int i = 0; i < 12; ++i) requests.push_back(user_request("request " + std::to_string(i), true));
  const auto results = run_calls(client, requests, 6);  // more workers than slots
  ASSERT_EQ(results.size(), 12u);
  for (std::size_t i = 0; i < results.size(); ++i) {
    ASSERT_TRUE(results[i].ok()) << i << ": " << results[i].record.error_message;
    EXPECT_EQ(results[i].record.call_index, i);
    EXPECT_EQ(results[i].response.content, "request " + std::to_string(i));
  }
  EXPECT_LE(server.max_concurrent_requests(), 3u);
  EXPECT_EQ(server.received().size(), 12u);
}

TEST(CallPool, ValidatesEveryRequestFirstAndRethrowsLowestIndex) {
  ScopedEnv no_key(kNoKeyEnv, nullptr);
  MockServer server;
  server.start(0);
  ChatClient client(client_config_for(server, kNoKeyEnv));
  std::vector<json> requests = {user_request("ok", false), json{{"model", "kimi-k3"}}};
  try {
    run_calls(client, requests);
    FAIL() << "an invalid request was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("request 1:", 0), 0u) << e.what();
  }
  EXPECT_TRUE(server.received().empty());

  std::vector<int> seen(5, 0);
  EXPECT_THROW(for_each_index(5, 2,
                              [&](std::size_t i) {
                                seen[i] = 1;
                                if (i == 1 || i == 3) throw std::runtime_error("index " + std::to_string(i));
                              }),
               std::runtime_error);
  EXPECT_EQ(seen, (std::vector<int>{1, 1, 1, 1, 1}));  // every index still ran
  try {
    for_each_index(5, 2, [](std::size_t i) {
      if (i == 1 || i == 3) throw std::runtime_error("index " + std::to_string(i));
    });
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "index 1");
  }
}

TEST(MockServer, BlockingServeStopsFromAnotherThread) {
  ScopedEnv no_key(kNoKeyEnv, nullptr);
  MockServer server;
  std::thread serving([&] { server.serve(0); });
  while (server.port() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ChatClient client(client_config_for(server, kNoKeyEnv));
  const ChatResult r = client.complete(user_request("served", false));
  EXPECT_TRUE(r.ok()) << r.record.error_message;
  EXPECT_EQ(r.response.content, "served");
  server.stop();
  serving.join();
}

TEST(MockClient, KeyWithControlCharactersIsRefusedWithoutEchoingIt) {
  const char* env = "K3LAB_TEST_NEWLINE_KEY";
  ScopedEnv key(env, "sk-secretvalue\nX-Injected: 1");  // a real newline: header injection
  MockServer server;
  server.start(0);
  ChatClient client(client_config_for(server, env));
  try {
    client.complete(user_request("x", false));
    FAIL() << "a key with a newline was sent";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(env), std::string::npos);
    EXPECT_EQ(std::string(e.what()).find("secretvalue"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(server.received().empty());
}

TEST(MockServer, EphemeralPortsStartAndStop) {
  MockServer a;
  MockServer b;
  const int pa = a.start(0);
  const int pb = b.start(0);
  EXPECT_GT(pa, 0);
  EXPECT_NE(pa, pb);
  EXPECT_EQ(a.base_url(), "http://127.0.0.1:" + std::to_string(pa) + "/v1");
  EXPECT_THROW(a.start(0), std::runtime_error);
  a.stop();
  a.stop();
  MockServerOptions bad;
  bad.faults.rate_limit = 0.7;
  bad.faults.server_error = 0.7;
  EXPECT_THROW(MockServer{bad}, std::invalid_argument);
}

}  // namespace
}  // namespace k3lab::api
