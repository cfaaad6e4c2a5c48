#include <gtest/gtest.h>

#include "k3lab/api/endpoint.hpp"

namespace k3lab::api {
namespace {

TEST(Endpoint, LoopbackHosts) {
  for (const char* host : {"localhost", "LOCALHOST", "127.0.0.1", "127.1.2.3", "127.255.255.254", "::1", "[::1]"}) {
    EXPECT_TRUE(is_loopback_host(host)) << host;
  }
  for (const char* host : {"localhost.example", "127.0.0.1.nip.io", "128.0.0.1", "10.0.0.1", "::2", "api.moonshot.ai", ""}) {
    EXPECT_FALSE(is_loopback_host(host)) << host;
  }
}

TEST(Endpoint, DefaultIsHttpsMoonshot) {
  const Endpoint ep = parse_endpoint(kDefaultBaseUrl);
  EXPECT_EQ(ep.scheme, "https");
  EXPECT_EQ(ep.host, "api.moonshot.ai");
  EXPECT_FALSE(ep.loopback);
  EXPECT_EQ(ep.chat_completions_url(), "https://api.moonshot.ai/v1/chat/completions");
}

TEST(Endpoint, PlainHttpOnlyForLoopback) {
  EXPECT_TRUE(parse_endpoint("http://127.0.0.1:8080/v1").loopback);
  EXPECT_EQ(parse_endpoint("http://[::1]:9/v1/").base_url, "http://[::1]:9/v1");
  EXPECT_EQ(parse_endpoint("http://localhost:9/v1").host, "localhost");
  EXPECT_THROW(parse_endpoint("http://api.moonshot.ai/v1"), std::invalid_argument);
  EXPECT_THROW(parse_endpoint("http://127.0.0.1.nip.io/v1"), std::invalid_argument);
}

TEST(Endpoint, RejectsCredentialsOtherSchemesAndQueries) {
  EXPECT_THROW(parse_endpoint("https://user:secret@api.moonshot.ai/v1"), std::invalid_argument);
  EXPECT_THROW(parse_endpoint("ftp://api.moonshot.ai/v1"), std::invalid_argument);
  EXPECT_THROW(parse_endpoint("https://api.moonshot.ai/v1?key=x"), std::invalid_argument);
  EXPECT_THROW(parse_endpoint("not a url"), std::invalid_argument);
  try {
    parse_endpoint("https://user:secret@api.moonshot.ai/v1");
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).find("secret"), std::string::npos) << "the error must not echo credentials";
  }
}

}  // namespace
}  // namespace k3lab::api
