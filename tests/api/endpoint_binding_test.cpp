// A run's endpoint identity: recorded from the choice and the served name, compared on resume, and
// reconstructed for runs that recorded only options.base_url.
#include <gtest/gtest.h>

#include "k3lab/api/endpoint_binding.hpp"

namespace k3lab::api {
namespace {

using nlohmann::json;

EndpointChoice url_choice(const std::string& url) {
  EndpointChoice c;
  c.kind = EndpointChoice::Kind::BaseUrl;
  c.base_url = url;
  return c;
}

TEST(EndpointBinding, IdentityNamesUrlServedModelAndSimulation) {
  const auto id = identify_endpoint(url_choice("http://127.0.0.1:9000/v1"), {{"served_model", "k3-awq"}});
  EXPECT_EQ(id.to_json(), (json{{"base_url", "http://127.0.0.1:9000/v1"}, {"served_model", "k3-awq"}, {"simulated", false}}));
  const auto embedded = identify_endpoint(EndpointChoice{}, json::object());
  EXPECT_EQ(embedded.base_url, "embedded-mock");
  EXPECT_TRUE(embedded.simulated);
  EXPECT_EQ(embedded.served_model, "");
}

TEST(EndpointBinding, ServedModelMustBeANonBlankString) {
  EXPECT_EQ(request_model(json::object(), "kimi-k3"), "kimi-k3");
  EXPECT_EQ(request_model({{"served_model", "Kimi-K3-FP8"}}, "kimi-k3"), "Kimi-K3-FP8");
  EXPECT_THROW(served_model_option({{"served_model", ""}}), std::invalid_argument);
  EXPECT_THROW(served_model_option({{"served_model", " \t"}}), std::invalid_argument);
  EXPECT_THROW(served_model_option({{"served_model", 3}}), std::invalid_argument);
}

TEST(EndpointBinding, ResumeAgainstAnotherEndpointIsRefusedNamingBoth) {
  const EndpointIdentity recorded{"http://127.0.0.1:9000/v1", "", false};
  const json manifest_options = {{"endpoint", recorded.to_json()}, {"base_url", "http://127.0.0.1:9000/v1"}};
  EXPECT_FALSE(endpoint_mismatch("runs/x", manifest_options, recorded));

  const auto embedded = identify_endpoint(EndpointChoice{}, json::object());
  const auto problem = endpoint_mismatch("runs/x", manifest_options, embedded);
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("http://127.0.0.1:9000/v1"), std::string::npos) << *problem;
  EXPECT_NE(problem->find("embedded mock"), std::string::npos) << *problem;
  EXPECT_NE(problem->find("--fresh"), std::string::npos) << *problem;

  const EndpointIdentity other_port{"http://127.0.0.1:9001/v1", "", false};
  EXPECT_TRUE(endpoint_mismatch("runs/x", manifest_options, other_port));
  const EndpointIdentity other_name{"http://127.0.0.1:9000/v1", "alias", false};
  EXPECT_TRUE(endpoint_mismatch("runs/x", manifest_options, other_name));
}

TEST(EndpointBinding, OlderRunsAreJudgedByTheirBaseUrlOption) {
  const json older = {{"base_url", "http://127.0.0.1:9000/v1/"}, {"device", "auto"}};
  const auto recorded = recorded_endpoint(older);
  ASSERT_TRUE(recorded);
  EXPECT_EQ(recorded->base_url, "http://127.0.0.1:9000/v1");
  EXPECT_TRUE(endpoint_mismatch("runs/x", older, identify_endpoint(EndpointChoice{}, json::object())));
  EXPECT_FALSE(endpoint_mismatch("runs/x", older, EndpointIdentity{"http://127.0.0.1:9000/v1", "", false}));
  // Nothing recorded (an older run on the default endpoint): nothing to compare.
  EXPECT_FALSE(recorded_endpoint(json{{"device", "auto"}}));
}

TEST(EndpointBinding, BlankBaseUrlTextIsRefused) {
  EXPECT_THROW(check_base_url_text(""), std::invalid_argument);
  EXPECT_THROW(check_base_url_text("  \t"), std::invalid_argument);
  EXPECT_NO_THROW(check_base_url_text("http://127.0.0.1:8000/v1"));
}

TEST(EndpointBinding, OnlyTheApiExperimentsCallAnEndpoint) {
  EXPECT_TRUE(calls_chat_endpoint("context-probe"));
  EXPECT_TRUE(calls_chat_endpoint("agent-replay"));
  EXPECT_FALSE(calls_chat_endpoint("attn-res"));
}

}  // namespace
}  // namespace k3lab::api
