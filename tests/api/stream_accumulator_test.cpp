// StreamAccumulator and ChatStreamDecoder against hand-written chunks whose merged result is
// written out by hand, and against parse_chat_completion of the equivalent non-streamed body.
#include <gtest/gtest.h>

#include <string>

#include "k3lab/api/chat_stream_decoder.hpp"
#include "k3lab/api/chat_types.hpp"
#include "k3lab/api/stream_accumulator.hpp"

namespace k3lab::api {
namespace {

using nlohmann::json;

json chunk_with(json choice_fields) {
  json choice = {{"index", 0}, {"finish_reason", nullptr}};
  choice.update(choice_fields);
  return {{"id", "chatcmpl-1"}, {"object", "chat.completion.chunk"}, {"model", "kimi-k3"}, {"choices", {choice}}};
}

const json kUsage = {{"prompt_tokens", 1113}, {"completion_tokens", 40}, {"total_tokens", 1153},
                     {"cached_tokens", 1024}, {"prompt_tokens_details", {{"cached_tokens", 1024}}}};

// A Kimi-shaped stream: reasoning, content, two interleaved tool calls, choice-level usage on the
// finishing chunk, then an identical trailing top-level usage (observed on K3).
std::vector<json> tool_stream() {
  return {
      chunk_with({{"delta", {{"role", "assistant"}, {"content", ""}}}}),
      chunk_with({{"delta", {{"reasoning_content", "Need "}}}}),
      chunk_with({{"delta", {{"reasoning_content", "two \xE5\xAD\x97 tools."}}}}),
      chunk_with({{"delta", {{"content", "Calling."}}}}),
      chunk_with({{"delta",
                   {{"tool_calls",
                     {{{"index", 0}, {"id", "functions.add:0"}, {"type", "function"}, {"function", {{"name", "add"}, {"arguments", ""}}}}}}}}}),
      chunk_with({{"delta",
                   {{"tool_calls",
                     {{{"index", 1}, {"id", "functions.mul:1"}, {"type", "function"}, {"function", {{"name", "mul"}, {"arguments", "{\"x\""}}}}}}}}}),
      chunk_with({{"delta", {{"tool_calls", {{{"index", 0}, {"function", {{"arguments", "{\"a\":1,"}}}}}}}}}),
      chunk_with({{"delta", {{"tool_calls", {{{"index", 1}, {"function", {{"arguments", ":2}"}}}}}}}}}),
      chunk_with({{"delta", {{"tool_calls", {{{"index", 0}, {"function", {{"arguments", "\"b\":2}"}}}}}}}}}),
      chunk_with({{"delta", json::object()}, {"finish_reason", "tool_calls"}, {"usage", kUsage}}),
      {{"id", "chatcmpl-1"}, {"object", "chat.completion.chunk"}, {"model", "kimi-k3"}, {"choices", json::array()}, {"usage", kUsage}},
  };
}

ChatResponse expected_tool_response() {
  ChatResponse r;
  r.id = "chatcmpl-1";
  r.model = "kimi-k3";
  r.content = "Calling.";
  r.reasoning_content = "Need two \xE5\xAD\x97 tools.";
  r.has_reasoning = true;
  r.tool_calls = {{"functions.add:0", "function", "add", "{\"a\":1,\"b\":2}"},
                  {"functions.mul:1", "function", "mul", "{\"x\":2}"}};
  r.finish_reason = "tool_calls";
  r.usage = Usage{1113, 40, 1153, 1024, std::nullopt};
  return r;
}

TEST(StreamAccumulator, MergesDeltasByIndexAndCountsUsageOnce) {
  StreamAccumulator acc;
  for (const auto& c : tool_stream()) acc.add_chunk(c);
  EXPECT_EQ(acc.response(), expected_tool_response());
  EXPECT_TRUE(acc.has_token());
  EXPECT_FALSE(acc.done());
  acc.add_data("[DONE]");
  EXPECT_TRUE(acc.done());
}

TEST(StreamAccumulator, StreamedEqualsNonStreamedBody) {
  const json body = {
      {"id", "chatcmpl-1"},
      {"object", "chat.completion"},
      {"model", "kimi-k3"},
      {"choices",
       {{{"index", 0},
         {"message",
          {{"role", "assistant"},
           {"content", "Calling."},
           {"reasoning_content", "Need two \xE5\xAD\x97 tools."},
           {"tool_calls",
            {{{"id", "functions.add:0"}, {"type", "function"}, {"function", {{"name", "add"}, {"arguments", "{\"a\":1,\"b\":2}"}}}},
             {{"id", "functions.mul:1"}, {"type", "function"}, {"function", {{"name", "mul"}, {"arguments", "{\"x\":2}"}}}}}}}},
         {"finish_reason", "tool_calls"}}}},
      {"usage", kUsage}};
  StreamAccumulator acc;
  for (const auto& c : tool_stream()) acc.add_chunk(c);
  EXPECT_EQ(acc.response(), parse_chat_completion(body));
}

TEST(StreamAccumulator, UsageFromEitherPlace) {
  const json only_choice = chunk_with({{"delta", json::object()}, {"finish_reason", "stop"}, {"usage", {{"prompt_tokens", 5}, {"completion_tokens", 2}}}});
  StreamAccumulator a;
  a.add_chunk(only_choice);
  ASSERT_TRUE(a.response().usage);
  EXPECT_EQ(a.response().usage->prompt_tokens, 5);

  json top = {{"choices", json::array()}, {"usage", {{"prompt_tokens", 9}, {"completion_tokens", 3}}}};
  StreamAccumulator b;
  b.add_chunk(chunk_with({{"delta", {{"content", "x"}}}, {"finish_reason", "stop"}}));
  b.add_chunk(top);
  ASSERT_TRUE(b.response().usage);
  EXPECT_EQ(b.response().usage->prompt_tokens, 9);
  EXPECT_EQ(b.response().usage->completion_tokens, 3);
}

TEST(ParseUsage, CachedTokensFromEitherField) {
  EXPECT_EQ(parse_usage({{"prompt_tokens", 10}, {"cached_tokens", 4}}).cached_tokens, 4);
  EXPECT_EQ(parse_usage({{"prompt_tokens", 10}, {"prompt_tokens_details", {{"cached_tokens", 6}}}}).cached_tokens, 6);
  // Both: Moonshot's top-level field wins (kimi-cli's order).
  EXPECT_EQ(parse_usage({{"cached_tokens", 4}, {"prompt_tokens_details", {{"cached_tokens", 6}}}}).cached_tokens, 4);
  EXPECT_EQ(parse_usage({{"prompt_tokens", 10}}).cached_tokens, 0);
  EXPECT_EQ(parse_usage({{"completion_tokens_details", {{"reasoning_tokens", 7}}}}).reasoning_tokens, 7);
  EXPECT_FALSE(parse_usage(json::object()).reasoning_tokens.has_value());
  EXPECT_THROW(parse_usage({{"prompt_tokens", "ten"}}), std::runtime_error);
  EXPECT_THROW(parse_usage({{"prompt_tokens", -1}}), std::runtime_error);
}

TEST(StreamAccumulator, RejectsWhatItCannotMerge) {
  StreamAccumulator conflicting;
  conflicting.add_chunk(chunk_with({{"delta", {{"tool_calls", {{{"index", 0}, {"id", "a"}}}}}}}));
  EXPECT_THROW(conflicting.add_chunk(chunk_with({{"delta", {{"tool_calls", {{{"index", 0}, {"id", "b"}}}}}}})),
               std::runtime_error);

  StreamAccumulator two_choices;
  json c = chunk_with({{"delta", {{"content", "x"}}}});
  c["choices"][0]["index"] = 1;
  EXPECT_THROW(two_choices.add_chunk(c), std::runtime_error);

  StreamAccumulator malformed;
  try {
    malformed.add_data("{\"choices\": [");
    FAIL() << "malformed JSON accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("malformed JSON in stream chunk 1"), std::string::npos) << e.what();
  }
}

TEST(StreamAccumulator, RepeatedIdenticalIdIsAccepted) {
  StreamAccumulator acc;
  acc.add_chunk(chunk_with({{"delta", {{"tool_calls", {{{"index", 0}, {"id", "a"}, {"function", {{"name", "f"}, {"arguments", "{"}}}}}}}}}));
  acc.add_chunk(chunk_with({{"delta", {{"tool_calls", {{{"index", 0}, {"id", "a"}, {"function", {{"name", "f"}, {"arguments", "}"}}}}}}}}}));
  ASSERT_EQ(acc.response().tool_calls.size(), 1u);
  EXPECT_EQ(acc.response().tool_calls[0].arguments, "{}");
}

TEST(StreamAccumulator, RecordsAnErrorInsideTheStream) {
  StreamAccumulator acc;
  acc.add_data(R"({"error":{"type":"engine_overloaded_error","message":"busy"}})");
  ASSERT_TRUE(acc.error());
  EXPECT_EQ(acc.error()->type, "engine_overloaded_error");
  EXPECT_EQ(acc.error()->message, "busy");
}

TEST(ChatStreamDecoder, SseBytesToResponseWithFirstTokenHook) {
  std::string sse = ": keep-alive\n\n";
  for (const auto& c : tool_stream()) sse += "data: " + c.dump() + "\r\n\r\n";
  sse += "data: [DONE]\n\n";
  for (std::size_t cut = 0; cut <= sse.size(); cut += 5) {
    int first_token_calls = 0;
    ChatStreamDecoder decoder([&] { ++first_token_calls; });
    decoder.push(std::string_view(sse).substr(0, cut));
    decoder.push(std::string_view(sse).substr(cut));
    EXPECT_TRUE(decoder.finish());
    EXPECT_TRUE(decoder.accumulator().done());
    EXPECT_EQ(decoder.accumulator().response(), expected_tool_response()) << "cut " << cut;
    EXPECT_EQ(first_token_calls, 1);
  }
}

TEST(ChatStreamDecoder, NamedErrorEventIsRecorded) {
  ChatStreamDecoder decoder;
  decoder.push("event: error\ndata: {\"error\":{\"type\":\"server_error\",\"message\":\"boom\"}}\n\n");
  ASSERT_TRUE(decoder.accumulator().error());
  EXPECT_EQ(decoder.accumulator().error()->message, "boom");
}

TEST(ChatResponse, AssistantMessageCarriesReasoningAndToolCalls) {
  const json m = expected_tool_response().assistant_message();
  EXPECT_EQ(m["role"], "assistant");
  EXPECT_EQ(m["reasoning_content"], "Need two \xE5\xAD\x97 tools.");
  ASSERT_EQ(m["tool_calls"].size(), 2u);
  EXPECT_EQ(m["tool_calls"][1]["function"]["arguments"], "{\"x\":2}");
  ChatResponse plain;
  plain.content = "hi";
  EXPECT_FALSE(plain.assistant_message().contains("reasoning_content"));
  EXPECT_FALSE(plain.assistant_message().contains("tool_calls"));
}

}  // namespace
}  // namespace k3lab::api
