// Which endpoint a run calls, and the labels it carries (the embedded mock must say "simulated").
#include <gtest/gtest.h>

#include <string>

#include "k3lab/api/endpoint_choice.hpp"
#include "mock_test_support.hpp"

namespace k3lab::api {
namespace {

using testing::ScopedEnv;

struct CleanEnv {
  ScopedEnv key{"MOONSHOT_API_KEY", nullptr};
  ScopedEnv url{"K3LAB_BASE_URL", nullptr};
};

TEST(EndpointChoice, NoKeyAndNoBaseUrlIsTheEmbeddedMockAndSaysSimulated) {
  CleanEnv env;
  const auto c = choose_endpoint(nlohmann::json::object(), "context-probe");
  EXPECT_EQ(c.kind, EndpointChoice::Kind::EmbeddedMock);
  EXPECT_EQ(c.record_name(), "embedded-mock");
  EXPECT_EQ(endpoint_labels(c), std::vector<std::string>{"simulated endpoint: not evidence about Kimi K3"});
}

TEST(EndpointChoice, KeyAloneSelectsTheKimiApiWithoutASimulatedLabel) {
  CleanEnv env;
  ScopedEnv key("MOONSHOT_API_KEY", "sk-test-not-a-real-key-123456");
  const auto c = choose_endpoint(nlohmann::json::object(), "context-probe");
  EXPECT_EQ(c.kind, EndpointChoice::Kind::KimiDefault);
  EXPECT_EQ(c.base_url, "https://api.moonshot.ai/v1");
  EXPECT_TRUE(endpoint_labels(c).empty());
  EXPECT_EQ(c.description(), "the Kimi API (https://api.moonshot.ai/v1)");
}

TEST(EndpointChoice, BaseUrlOptionBeatsTheEnvironment) {
  CleanEnv env;
  ScopedEnv url("K3LAB_BASE_URL", "http://127.0.0.1:9/v1");
  const auto from_env = choose_endpoint(nlohmann::json::object(), "context-probe");
  EXPECT_EQ(from_env.kind, EndpointChoice::Kind::BaseUrl);
  EXPECT_EQ(from_env.base_url, "http://127.0.0.1:9/v1");
  EXPECT_EQ(from_env.source, "$K3LAB_BASE_URL");

  const auto from_option = choose_endpoint({{"base_url", "http://localhost:8089/v1/"}}, "context-probe");
  EXPECT_EQ(from_option.source, "--base-url");
  EXPECT_EQ(from_option.base_url, "http://localhost:8089/v1");
  ASSERT_EQ(endpoint_labels(from_option).size(), 1u);
  EXPECT_NE(endpoint_labels(from_option)[0].find("http://localhost:8089/v1"), std::string::npos);
}

TEST(EndpointChoice, RemoteEndpointWithoutKeyIsRefusedWithTheFix) {
  CleanEnv env;
  try {
    choose_endpoint({{"base_url", "https://api.example.com/v1"}}, "context-probe");
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("MOONSHOT_API_KEY is not set"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("context-probe: ", 0), 0u) << e.what();
  }
}

TEST(EndpointChoice, BadBaseUrlsAreRefused) {
  CleanEnv env;
  ScopedEnv key("MOONSHOT_API_KEY", "sk-test-not-a-real-key-123456");
  EXPECT_THROW(choose_endpoint({{"base_url", "http://api.example.com/v1"}}, "context-probe"), std::invalid_argument);  // plain http
  EXPECT_THROW(choose_endpoint({{"base_url", "https://user:pw@api.example.com/v1"}}, "context-probe"), std::invalid_argument);
  EXPECT_THROW(choose_endpoint({{"base_url", 42}}, "context-probe"), std::invalid_argument);
  EXPECT_THROW(choose_endpoint({{"base_url", ""}}, "context-probe"), std::invalid_argument);
}

}  // namespace
}  // namespace k3lab::api
