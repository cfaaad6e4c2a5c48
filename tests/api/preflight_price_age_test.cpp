// The pre-flight reports the price table's age from its as_of date and an injected "today"
// (ManualClock: 2026-01-01T00:00:00Z, advanced per case), and warns past 90 days, naming the file and
// field to update. Day counts below are worked out by hand from the calendar.
#include <gtest/gtest.h>

#include "k3lab/api/preflight.hpp"
#include "mock_test_support.hpp"

namespace k3lab::api {
namespace {

using nlohmann::json;
using std::chrono::hours;

constexpr const char* kUnsetKeyForPriceAge = "K3LAB_TEST_UNSET_KEY_PRICE_AGE";

std::chrono::system_clock::time_point new_year_2026() { return ManualClock().utc_now(); }

TEST(PriceTableAge, DaysSinceCountsCalendarDays) {
  const auto now = new_year_2026();
  EXPECT_EQ(days_since("2025-12-31", now), 1);
  EXPECT_EQ(days_since("2026-01-01", now), 0);
  // Sep 30 + Oct 31 + Nov 30 + Dec 31 days.
  EXPECT_EQ(days_since("2025-09-01", now), 122);
  EXPECT_EQ(days_since("2025-01-01", now), 365);
  EXPECT_EQ(days_since("2024-01-01", now), 731) << "2024 is a leap year";
  EXPECT_EQ(days_since("2026-01-05 (checked by hand)", now), -4) << "text after the date is allowed";
  EXPECT_EQ(days_since("2025-12-31", now + hours(23)), 1) << "the same UTC day, whatever the hour";
  EXPECT_EQ(days_since("2025-12-31", now + hours(24)), 2);
}

TEST(PriceTableAge, TextThatDoesNotStartWithADateHasNoAge) {
  const auto now = new_year_2026();
  for (const char* text : {"mid-2026 (third-party report)", "", "2025-02-30", "2025-13-01", "2025-1-01", "25-01-01"}) {
    EXPECT_FALSE(days_since(text, now).has_value()) << text;
  }
}

struct PriceAgeCase {
  std::string as_of;
  int days_after_new_year;  // how far the injected clock is advanced
  std::optional<std::int64_t> age;
  bool warned;
};

TEST(PriceTableAge, ThePreflightPrintsTheAgeAndWarnsPastNinetyDays) {
  testing::ScopedEnv no_key(kUnsetKeyForPriceAge, nullptr);
  MockServer server;
  server.start(0);
  const ChatClient client(testing::client_config_for(server, kUnsetKeyForPriceAge));
  // 2025-10-03 to 2026-01-01 is 29 + 30 + 31 = 90 days: not yet stale; a day earlier, or the same table
  // a day later, is 91.
  const std::vector<PriceAgeCase> cases = {
      {"2025-10-03", 0, 90, false},
      {"2025-10-02", 0, 91, true},
      {"2025-10-03", 1, 91, true},
      {"2025-12-01", 0, 31, false},
      {"mid-2026 (third-party report)", 0, std::nullopt, true},
  };
  for (const auto& c : cases) {
    auto clock = std::make_shared<ManualClock>();
    clock->advance(hours(24 * c.days_after_new_year));
    PreflightOptions options;
    options.model = "kimi-k3";
    options.price_table_as_of = c.as_of;
    options.price_table_file = "experiments/context-probe.json";
    options.clock = clock;
    const PreflightReport report = run_preflight(client, options);
    EXPECT_TRUE(report.ok()) << "a stale price table warns, it does not fail the pre-flight\n" << report.text();
    const json j = report.to_json();
    const std::string text = report.text();
    if (c.age) {
      EXPECT_EQ(j["price_table_age_days"], *c.age) << c.as_of;
      EXPECT_NE(text.find("as of " + c.as_of + " (" + std::to_string(*c.age) + " days old"), std::string::npos) << text;
    } else {
      EXPECT_TRUE(j["price_table_age_days"].is_null()) << j.dump();
      EXPECT_NE(text.find("(age unknown"), std::string::npos) << text;
    }
    EXPECT_EQ(j["warnings"].size(), c.warned ? 1u : 0u) << c.as_of << " " << j["warnings"].dump();
    EXPECT_EQ(text.find("warning:") != std::string::npos, c.warned) << text;
    if (c.warned) {
      const std::string warning = j["warnings"][0];
      EXPECT_NE(warning.find("experiments/context-probe.json"), std::string::npos) << warning;
      EXPECT_NE(warning.find("parameters.pricing"), std::string::npos) << warning;
      EXPECT_NE(warning.find("as_of"), std::string::npos) << warning;
    }
  }
}

TEST(PriceTableAge, NoPriceTableNoAgeAndNoWarning) {
  testing::ScopedEnv no_key(kUnsetKeyForPriceAge, nullptr);
  MockServer server;
  server.start(0);
  PreflightOptions options;
  options.model = "kimi-k3";
  options.clock = std::make_shared<ManualClock>();
  const auto report = run_preflight(ChatClient(testing::client_config_for(server, kUnsetKeyForPriceAge)), options);
  EXPECT_TRUE(report.warnings.empty());
  EXPECT_EQ(report.text().find("price table"), std::string::npos) << report.text();
}

}  // namespace
}  // namespace k3lab::api
