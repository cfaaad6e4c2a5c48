// The shared price table of the direct-API experiments: call cost against hand computation, the
// model check and parsing.
#include "k3lab/api/price_table.hpp"

#include <gtest/gtest.h>

namespace k3lab::api {
namespace {

TEST(PriceTable, CallCostMatchesTheApiNotesFormula) {
  const PriceTable price{"kimi-k3", "x", "y", 0.30, 3.00, 15.00};
  // 100,000 prompt tokens of which 60,000 cached, 2,000 completion:
  // 60,000 x 0.30 + 40,000 x 3.00 + 2,000 x 15.00 = 18,000 + 120,000 + 30,000 = 168,000 per 1e6 = $0.168.
  EXPECT_NEAR(price.call_usd(100000, 60000, 2000), 0.168, 1e-12);
  EXPECT_NEAR(price.call_usd(1000, 0, 0), 0.003, 1e-12);
  // More cached than prompt tokens is billed as all-cached, never a negative miss.
  EXPECT_NEAR(price.call_usd(1000, 5000, 0), 0.0003, 1e-12);
}

TEST(PriceTable, ParsesTheProtocolsTableAndNamesAPriceTableForAnotherModel) {
  nlohmann::json parameters = {
      {"model", "kimi-k3"},
      {"pricing",
       {{"model", "kimi-k3"}, {"as_of", "2026-08-22"}, {"source", "api.md"},
        {"usd_per_million_tokens", {{"cache_hit", 0.3}, {"cache_miss", 3.0}, {"output", 15.0}}}}}};
  EXPECT_TRUE(price_table_schema("tests")->validate(parameters.at("pricing"), "parameters.pricing").empty());
  EXPECT_EQ(price_table_model_issue(parameters), std::nullopt);
  const PriceTable table = parse_price_table(parameters.at("pricing"));
  EXPECT_EQ(table.as_of, "2026-08-22");
  EXPECT_DOUBLE_EQ(table.cache_miss, 3.0);
  parameters["pricing"]["model"] = "kimi-k2";
  const auto issue = price_table_model_issue(parameters);
  ASSERT_TRUE(issue);
  EXPECT_EQ(issue->path, "parameters.pricing.model");
  parameters["pricing"]["usd_per_million_tokens"]["output"] = -1;
  EXPECT_FALSE(price_table_schema("tests")->validate(parameters.at("pricing"), "parameters.pricing").empty());
}

}  // namespace
}  // namespace k3lab::api
