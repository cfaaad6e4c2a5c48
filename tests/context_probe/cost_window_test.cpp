// The test-window clock; the window rule's stop conditions.
#include <gtest/gtest.h>

#include "context_probe/window_rule.hpp"
#include "k3lab/api/clock.hpp"
#include "k3lab/api/test_window.hpp"
#include "test_support.hpp"

namespace k3lab::context_probe_test {
namespace {

namespace cp = experiments::context_probe;

TEST(TestWindow, UtcRoundTripAndBounds) {
  const auto t = api::parse_utc("2026-08-03T12:34:56.789Z");
  EXPECT_EQ(api::format_utc(t), "2026-08-03T12:34:56.789Z");
  EXPECT_EQ(api::format_utc(api::parse_utc("2026-01-01T00:00:00Z")), "2026-01-01T00:00:00.000Z");
  EXPECT_THROW(api::parse_utc("yesterday"), std::invalid_argument);
  EXPECT_THROW(api::parse_utc("2026-08-03 12:34:56"), std::invalid_argument);

  api::TestWindow w{t, 24};
  EXPECT_EQ(api::format_utc(w.end()), "2026-08-04T12:34:56.789Z");
  EXPECT_TRUE(w.contains(t));
  EXPECT_TRUE(w.contains(w.end() - std::chrono::milliseconds(1)));
  EXPECT_FALSE(w.contains(w.end()));
  EXPECT_FALSE(w.contains(t - std::chrono::milliseconds(1)));
}

TEST(TestWindow, RecordedStartIsTheEarliestTerminalRecord) {
  core::LedgerContents ledger;
  ledger.records = {
      {{"kind", "plan"}, {"timing", {{"window_start_utc", "2020-01-01T00:00:00.000Z"}}}},  // not terminal
      {{"kind", "result"}, {"timing", {{"window_start_utc", "2026-08-03T10:00:00.000Z"}}}},
      {{"kind", "invalid"}, {"timing", {{"window_start_utc", "2026-08-03T09:00:00.000Z"}}}},
      {{"kind", "failure"}, {"timing", nlohmann::json::object()}}};
  const auto start = api::recorded_window_start(ledger);
  ASSERT_TRUE(start.has_value());
  EXPECT_EQ(api::format_utc(*start), "2026-08-03T09:00:00.000Z");
  EXPECT_FALSE(api::recorded_window_start(core::LedgerContents{}).has_value());
}

TEST(TestWindow, ANewWindowOpensOnTheMillisecondAndAResumeKeepsTheRecordedStart) {
  const auto now = api::parse_utc("2026-08-03T12:00:00.123Z") + std::chrono::microseconds(456);
  const auto fresh = api::open_test_window(core::LedgerContents{}, 24, now);
  EXPECT_EQ(fresh.start, api::parse_utc("2026-08-03T12:00:00.123Z"));  // records keep milliseconds
  EXPECT_EQ(fresh.hours, 24);
  core::LedgerContents ledger;
  ledger.records = {{{"kind", "result"}, {"timing", {{"window_start_utc", "2026-08-03T09:00:00.000Z"}}}}};
  EXPECT_EQ(api::open_test_window(ledger, 24, now).start, api::parse_utc("2026-08-03T09:00:00.000Z"));
}

nlohmann::json scored(const std::string& kind, const std::string& reason = "") {
  nlohmann::json r = {{"kind", kind}, {"spec", {{"role", "scored"}}}};
  if (!reason.empty()) r["reason"] = reason;
  return r;
}

TEST(WindowRule, FivePercentOfScoredCellsStopsTheWindow) {
  const auto p = cp::parse_parameters(protocol_parameters("full"));  // 1,200 scored cells: 60 tolerated
  std::vector<nlohmann::json> records;
  for (int i = 0; i < 30; ++i) records.push_back(scored("invalid", "warm-cache-miss"));
  for (int i = 0; i < 30; ++i) records.push_back(scored("failure", "transport"));
  for (int i = 0; i < 100; ++i) records.push_back({{"kind", "failure"}, {"spec", {{"role", "prime"}}}});
  EXPECT_FALSE(cp::check_invalid_window(p, records).stop);  // 60 of 1,200: not more than 5%
  records.push_back(scored("invalid", "cold-cache-hit"));
  const auto v = cp::check_invalid_window(p, records);
  EXPECT_TRUE(v.stop);
  EXPECT_EQ(v.data["invalid_scored_cells"], 31);
  EXPECT_EQ(v.data["failed_scored_cells"], 30);
  EXPECT_NE(v.reason.find("61 of 1200"), std::string::npos) << v.reason;
}

TEST(WindowRule, AnExpiredWindowStopsWhateverTheCount) {
  const auto p = cp::parse_parameters(protocol_parameters("full"));
  std::vector<nlohmann::json> records = {scored("result"),
                                         {{"kind", "invalid"}, {"reason", "window-expired"}, {"spec", {{"role", "prime"}}}}};
  const auto v = cp::check_invalid_window(p, records);
  EXPECT_TRUE(v.stop);
  EXPECT_NE(v.reason.find("24-hour test window closed"), std::string::npos) << v.reason;
}

nlohmann::json failed_call(const std::string& error_class, int status, const std::string& message) {
  return {{"kind", "failure"},
          {"unit", "u1"},
          {"reason", error_class},
          {"spec", {{"role", "prime"}}},
          {"data", {{"call", {{"error_class", error_class}, {"http_status", status}, {"error_message", message}}}}}};
}

TEST(WindowRule, AConfigurationErrorStopsAtOnceNamingItself) {
  const auto p = cp::parse_parameters(protocol_parameters("full"));
  const std::vector<std::pair<nlohmann::json, std::string>> cases = {
      {failed_call("transport", 0, "Couldn't connect to server: Failed to connect to 127.0.0.1 port 9 after 0 ms"),
       "connection refused"},
      {failed_call("transport", 0, "SSL connect error: wrong version number"), "TLS failure"},
      {failed_call("auth", 401, "HTTP 401: Invalid Authentication"), "HTTP 401 (auth)"},
      {failed_call("not_found", 404, "HTTP 404: The model `kimi-k3` does not exist"), "HTTP 404 (not_found)"}};
  for (const auto& [record, label] : cases) {
    const auto v = cp::check_invalid_window(p, {record});
    EXPECT_TRUE(v.stop) << label;
    EXPECT_EQ(v.data["configuration_error"]["label"], label);
    EXPECT_NE(v.reason.find("configuration error (" + label + ")"), std::string::npos) << v.reason;
    EXPECT_NE(v.reason.find("--fresh"), std::string::npos) << v.reason;
  }
  // A dropped stream or an overload is the endpoint being flaky, not misconfigured: one does not stop.
  EXPECT_FALSE(cp::check_invalid_window(p, {failed_call("transport", 0, "transfer closed with 120 bytes remaining")}).stop);
  EXPECT_FALSE(cp::check_invalid_window(p, {failed_call("overload", 429, "HTTP 429: engine overloaded")}).stop);
}

}  // namespace
}  // namespace k3lab::context_probe_test
