// The transport settings of a run: documented defaults, overridden only by well-formed run options.
#include <gtest/gtest.h>

#include "k3lab/api/transport_options.hpp"

namespace k3lab::api {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

TEST(TransportOptions, DefaultsAreTheDocumentedOnes) {
  ClientConfig config;
  apply_transport_options(json::object(), config);
  EXPECT_EQ(config.connect_timeout, milliseconds(15'000));
  EXPECT_EQ(config.stall_timeout, milliseconds(600'000));
  EXPECT_EQ(config.total_timeout, milliseconds(1'800'000));
  EXPECT_EQ(config.retry.max_sends, 3);
}

TEST(TransportOptions, RunOptionsOverrideInSeconds) {
  ClientConfig config;
  apply_transport_options({{"connect_timeout_s", 2}, {"stall_timeout_s", 0.25}, {"call_timeout_s", 90}}, config);
  EXPECT_EQ(config.connect_timeout, milliseconds(2'000));
  EXPECT_EQ(config.stall_timeout, milliseconds(250));
  EXPECT_EQ(config.total_timeout, milliseconds(90'000));
}

TEST(TransportOptions, RateLimitsArePerMinuteOptions) {
  ClientConfig config;
  apply_transport_options(json::object(), config);
  EXPECT_EQ(config.requests_per_second, 0);
  EXPECT_EQ(config.tokens_per_minute, 0);
  apply_transport_options({{"requests_per_minute", 30}, {"tokens_per_minute", 120000}}, config);
  EXPECT_DOUBLE_EQ(config.requests_per_second, 0.5);
  EXPECT_DOUBLE_EQ(config.tokens_per_minute, 120000);
}

TEST(TransportOptions, NonsenseIsRefusedByName) {
  for (const json& bad : {json{{"stall_timeout_s", 0}}, json{{"stall_timeout_s", -1}}, json{{"call_timeout_s", "60"}},
                          json{{"requests_per_minute", 0}}}) {
    ClientConfig config;
    try {
      apply_transport_options(bad, config);
      FAIL() << bad.dump() << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(bad.begin().key()), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace k3lab::api
