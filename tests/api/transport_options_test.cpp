// The transport settings of a run: the protocol's transport section (defaults when a protocol has none),
// overridden only by well-formed run options, each override named as a deviation; and the plan's worst
// case built from them.
#include <gtest/gtest.h>

#include <fstream>

#include "k3lab/api/transport_options.hpp"

namespace k3lab::api {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

json with_transport(json section) { return {{"model", "kimi-k3"}, {"transport", std::move(section)}}; }

TEST(TransportOptions, AProtocolWithoutTheSectionGetsTheClientsDefaults) {
  ClientConfig config;
  apply_transport_options(json{{"model", "kimi-k3"}}, json::object(), config);
  EXPECT_EQ(config.connect_timeout, milliseconds(15'000));
  EXPECT_EQ(config.stall_timeout, milliseconds(600'000));
  EXPECT_EQ(config.total_timeout, milliseconds(1'800'000));
  EXPECT_EQ(config.requests_per_second, 0);
  EXPECT_EQ(config.tokens_per_minute, 0);
  const ClientConfig untouched;
  EXPECT_EQ(config.connect_timeout, untouched.connect_timeout);
  EXPECT_EQ(config.stall_timeout, untouched.stall_timeout);
  EXPECT_EQ(config.total_timeout, untouched.total_timeout);
}

TEST(TransportOptions, TheApiProtocolsWriteOutTheDefaults) {
  const TransportSettings defaults;
  for (const char* id : {"context-probe", "agent-replay"}) {
    std::ifstream file(std::string(K3LAB_SOURCE_DIR) + "/experiments/" + id + ".json");
    const json protocol = json::parse(file);
    const json& section = protocol.at("parameters").at("transport");
    EXPECT_EQ(section.size(), 5u) << id << ": every transport field is written out";
    const TransportSettings read = protocol_transport(protocol.at("parameters"));
    EXPECT_EQ(read.connect_timeout_s, defaults.connect_timeout_s) << id;
    EXPECT_EQ(read.stall_timeout_s, defaults.stall_timeout_s) << id;
    EXPECT_EQ(read.call_timeout_s, defaults.call_timeout_s) << id;
    EXPECT_EQ(read.requests_per_minute, defaults.requests_per_minute) << id;
    EXPECT_EQ(read.tokens_per_minute, defaults.tokens_per_minute) << id;
  }
}

TEST(TransportOptions, TheProtocolsValuesAreUsed) {
  ClientConfig config;
  apply_transport_options(with_transport({{"connect_timeout_s", 3},
                                          {"stall_timeout_s", 0.5},
                                          {"call_timeout_s", 40},
                                          {"requests_per_minute", 30},
                                          {"tokens_per_minute", 120000}}),
                          json::object(), config);
  EXPECT_EQ(config.connect_timeout, milliseconds(3'000));
  EXPECT_EQ(config.stall_timeout, milliseconds(500));
  EXPECT_EQ(config.total_timeout, milliseconds(40'000));
  EXPECT_DOUBLE_EQ(config.requests_per_second, 0.5);
  EXPECT_DOUBLE_EQ(config.tokens_per_minute, 120000);
}

TEST(TransportOptions, RunOptionsOverrideTheProtocolAndAreNamedAsDeviations) {
  const json parameters = with_transport({{"stall_timeout_s", 600}, {"requests_per_minute", 0}});
  const json options = {{"stall_timeout_s", 0.25}, {"requests_per_minute", 30}, {"call_timeout_s", 1800}};
  ClientConfig config;
  apply_transport_options(parameters, options, config);
  EXPECT_EQ(config.stall_timeout, milliseconds(250));
  EXPECT_DOUBLE_EQ(config.requests_per_second, 0.5);
  EXPECT_EQ(config.total_timeout, milliseconds(1'800'000));

  const auto lines = transport_deviations(parameters, options);
  ASSERT_EQ(lines.size(), 2u) << "an option equal to the protocol's value is no deviation";
  EXPECT_EQ(lines[0], "stall timeout 0.25 s (--stall-timeout; the protocol's is 600 s)");
  EXPECT_EQ(lines[1], "request rate limit 30 per minute (--requests-per-minute; the protocol's is none)");
  const auto sentence = transport_deviation_sentence(options, parameters);
  ASSERT_TRUE(sentence.has_value());
  EXPECT_NE(sentence->find(lines[0]), std::string::npos) << *sentence;
  EXPECT_FALSE(transport_deviation_sentence(json{{"served_model", "x"}}, parameters).has_value());
}

TEST(TransportOptions, BadProtocolValuesAreErrorsNamingTheField) {
  const std::vector<std::pair<std::string, json>> cases = {
      {"stall_timeout_s", -1},     {"stall_timeout_s", 0},       {"call_timeout_s", "soon"},
      {"connect_timeout_s", true}, {"requests_per_minute", -30}, {"tokens_per_minute", json::array()},
      {"stall_timout_s", 5}};
  for (const auto& [field, value] : cases) {
    const json parameters = with_transport({{field, value}});
    try {
      protocol_transport(parameters);
      FAIL() << field << " = " << value.dump() << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("parameters.transport." + field), std::string::npos) << e.what();
    }
    ClientConfig config;
    EXPECT_THROW(apply_transport_options(parameters, json::object(), config), std::invalid_argument) << field;
  }
  EXPECT_THROW(protocol_transport(json{{"transport", 600}}), std::invalid_argument);
}

TEST(TransportOptions, BadRunOptionsAreRefusedByName) {
  for (const json& bad : {json{{"stall_timeout_s", 0}}, json{{"stall_timeout_s", -1}}, json{{"call_timeout_s", "60"}},
                          json{{"requests_per_minute", 0}}}) {
    ClientConfig config;
    try {
      apply_transport_options(json::object(), bad, config);
      FAIL() << bad.dump() << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(bad.begin().key()), std::string::npos) << e.what();
    }
  }
}

TEST(TransportOptions, ThePlansWorstCaseRunsEverySendToTheCallTimeout) {
  TransportSettings transport;
  transport.call_timeout_s = 100;
  transport.requests_per_minute = 1;
  RetryPolicy retry;
  retry.max_sends = 3;
  retry.retry_after_cap = std::chrono::seconds(60);
  // 10 requests x 3 sends x 100 s, plus 10 x 2 waits x 60 s: 4,200 s = 1.1667 h.
  const json tight = transport_plan(transport, retry, 10, 1.0);
  EXPECT_EQ(tight["most_sends"].get<double>(), 30);
  EXPECT_DOUBLE_EQ(tight["worst_case_hours"].get<double>(), 1.17);
  EXPECT_FALSE(tight["worst_case_fits_window"].get<bool>());
  // 10 requests at 1 per minute: 10 minutes.
  EXPECT_DOUBLE_EQ(tight["least_hours_at_request_rate_limit"].get<double>(), 0.17);
  EXPECT_TRUE(transport_plan(transport, retry, 10, 2.0)["worst_case_fits_window"].get<bool>());
  transport.requests_per_minute = 0;
  EXPECT_TRUE(transport_plan(transport, retry, 10, 2.0)["least_hours_at_request_rate_limit"].is_null());
}

}  // namespace
}  // namespace k3lab::api
