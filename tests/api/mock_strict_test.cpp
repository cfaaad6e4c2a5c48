// The mock answers a strict client as the OpenAI API does: 400 invalid_request_error naming the field
// for ill-typed requests, 404 model_not_found for an unknown model (also on GET /v1/models/{id}),
// usage streamed only with stream_options.include_usage, and "logprobs": null. Raw HTTP over a
// socket, so the client's own request checks cannot hide what the server does.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "k3lab/api/mock_request_check.hpp"
#include "k3lab/api/mock_server.hpp"

namespace k3lab::api {
namespace {

using nlohmann::json;

struct RawResponse {
  int status = 0;
  std::string body;
};

// One HTTP/1.1 request with Connection: close; the whole response, de-chunked when chunked.
RawResponse raw_request(int port, const std::string& method, const std::string& path, const std::string& body = "") {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    throw std::runtime_error("cannot connect to the mock");
  }
  const std::string request = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" +
                              "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
                              "\r\n\r\n" + body;
  (void)::write(fd, request.data(), request.size());
  std::string raw;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) raw.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  RawResponse out;
  out.status = std::stoi(raw.substr(raw.find(' ') + 1, 3));
  const auto head_end = raw.find("\r\n\r\n");
  std::string payload = raw.substr(head_end + 4);
  if (raw.substr(0, head_end).find("Transfer-Encoding: chunked") != std::string::npos) {
    std::string joined;
    std::size_t pos = 0;
    for (;;) {
      const auto eol = payload.find("\r\n", pos);
      const std::size_t size = std::stoul(payload.substr(pos, eol - pos), nullptr, 16);
      if (size == 0) break;
      joined += payload.substr(eol + 2, size);
      pos = eol + 2 + size + 2;
    }
    payload = joined;
  }
  out.body = payload;
  return out;
}

json chat(const std::string& model = "kimi-k3") {
  return {{"model", model}, {"messages", {{{"role", "user"}, {"content", "hello"}}}}, {"max_completion_tokens", 64}};
}

TEST(MockStrict, IllTypedRequestsAre400sNamingTheField) {
  const std::vector<std::pair<std::string, json>> cases = {
      {"stream", [] { auto b = chat(); b["stream"] = "yes"; return b; }()},
      {"max_completion_tokens", [] { auto b = chat(); b["max_completion_tokens"] = "ten"; return b; }()},
      {"max_completion_tokens", [] { auto b = chat(); b["max_completion_tokens"] = -5; return b; }()},
      {"max_tokens", [] { auto b = chat(); b["max_tokens"] = 1.5; return b; }()},
      {"n", [] { auto b = chat(); b["n"] = 3; return b; }()},
      {"tools", [] { auto b = chat(); b["tools"] = "nope"; return b; }()},
      {"tools[0]", [] { auto b = chat(); b["tools"] = json::array({{{"type", "function"}}}); return b; }()},
      {"tools[0].function.name",
       [] { auto b = chat(); b["tools"] = json::array({{{"type", "function"}, {"function", {{"name", ""}}}}}); return b; }()},
      {"messages[0]", [] { auto b = chat(); b["messages"] = json::array({"hello"}); return b; }()},
      {"temperature", [] { auto b = chat(); b["temperature"] = "hot"; return b; }()},
      {"model", [] { auto b = chat(); b["model"] = 7; return b; }()}};
  MockServer server;
  const int port = server.start(0);
  for (const auto& [param, body] : cases) {
    const auto r = raw_request(port, "POST", "/v1/chat/completions", body.dump());
    EXPECT_EQ(r.status, 400) << param << ": " << r.body;
    const auto e = json::parse(r.body, nullptr, false);
    ASSERT_TRUE(e.is_object() && e.contains("error")) << r.body;
    EXPECT_EQ(e["error"]["type"], "invalid_request_error") << r.body;
    EXPECT_EQ(e["error"]["param"], param) << r.body;
  }
  EXPECT_EQ(raw_request(port, "POST", "/v1/chat/completions", chat().dump()).status, 200);
}

TEST(MockStrict, UnknownModelsAre404ModelNotFound) {
  MockServerOptions options;
  options.models = {"kimi-k3", "served-alias"};
  MockServer server(options);
  const int port = server.start(0);
  const auto r = raw_request(port, "POST", "/v1/chat/completions", chat("gpt-4o").dump());
  EXPECT_EQ(r.status, 404) << r.body;
  EXPECT_EQ(json::parse(r.body)["error"]["code"], "model_not_found");
  EXPECT_EQ(raw_request(port, "POST", "/v1/chat/completions", chat("served-alias").dump()).status, 200);

  const auto known = raw_request(port, "GET", "/v1/models/served-alias");
  EXPECT_EQ(known.status, 200) << known.body;
  EXPECT_EQ(json::parse(known.body)["id"], "served-alias");
  const auto unknown = raw_request(port, "GET", "/v1/models/kimi-k2");
  EXPECT_EQ(unknown.status, 404) << unknown.body;
  EXPECT_EQ(json::parse(unknown.body)["error"]["code"], "model_not_found");
}

// The SSE data events of a streamed body, parsed (without [DONE]).
std::vector<json> events(const std::string& body) {
  std::vector<json> out;
  std::size_t pos = 0;
  while ((pos = body.find("data: ", pos)) != std::string::npos) {
    const auto end = body.find('\n', pos);
    const std::string data = body.substr(pos + 6, end - pos - 6);
    if (data != "[DONE]") out.push_back(json::parse(data));
    pos = end;
  }
  return out;
}

TEST(MockStrict, UsageIsStreamedOnlyWhenAskedForAndLogprobsAreNull) {
  MockServerOptions options;
  options.usage_placement = UsagePlacement::top_level;  // the OpenAI shape: one trailing chunk
  MockServer server(options);
  const int port = server.start(0);
  auto body = chat();
  body["stream"] = true;
  auto usage_chunks = [&](const json& request) {
    int n = 0;
    for (const auto& e : events(raw_request(port, "POST", "/v1/chat/completions", request.dump()).body)) {
      n += e.contains("usage") ? 1 : 0;
      for (const auto& c : e["choices"]) {
        EXPECT_TRUE(c.contains("logprobs") && c["logprobs"].is_null()) << c.dump();
        EXPECT_FALSE(c.contains("usage")) << "usage inside a choice is not the OpenAI shape";
      }
    }
    return n;
  };
  EXPECT_EQ(usage_chunks(body), 0) << "usage without stream_options.include_usage";
  body["stream_options"] = {{"include_usage", true}};
  EXPECT_EQ(usage_chunks(body), 1);
  const auto whole = json::parse(raw_request(port, "POST", "/v1/chat/completions", chat().dump()).body);
  EXPECT_TRUE(whole["choices"][0]["logprobs"].is_null());
  EXPECT_TRUE(whole.contains("usage")) << "a non-streamed completion always carries usage";
}

TEST(MockStrict, TheCheckAcceptsWhatTheExperimentsSend) {
  json agent = chat();
  agent["stream"] = true;
  agent["stream_options"] = {{"include_usage", true}};
  agent["reasoning_effort"] = "high";
  agent["tools"] = json::array(
      {{{"type", "function"}, {"function", {{"name", "lookup"}, {"parameters", {{"type", "object"}}}}}}});
  agent["messages"].push_back({{"role", "assistant"}, {"content", nullptr}, {"tool_calls", json::array()}});
  EXPECT_FALSE(check_chat_request(agent, {"kimi-k3"}));
}

}  // namespace
}  // namespace k3lab::api
