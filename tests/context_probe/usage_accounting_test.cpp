// A page built from hand-made records: answered calls without usage are counted and make the cost of
// what they touch "unknown" instead of a silent $0; the served-model alias is named on the page.
#include <gtest/gtest.h>

#include <variant>

#include "context_probe/parameters.hpp"
#include "context_probe/summary.hpp"
#include "k3lab/core/protocol.hpp"
#include "test_support.hpp"

namespace k3lab::context_probe_test {
namespace {

using nlohmann::json;
namespace cp = experiments::context_probe;

json scored_record(const experiments::Unit& unit, bool usage_reported, double cost) {
  json call = {{"error_class", "none"}, {"usage_reported", usage_reported}, {"endpoint", "http://127.0.0.1:9/v1"},
               {"prompt_tokens", usage_reported ? 1000 : 0}, {"cached_tokens", 0},
               {"completion_tokens", usage_reported ? 10 : 0}};
  json r = {{"kind", usage_reported ? "result" : "invalid"}, {"unit", unit.id}, {"spec", unit.spec},
            {"data", {{"call", call}, {"cost_usd", cost}}}};
  if (!usage_reported) r["reason"] = "usage-missing";
  return r;
}

// The cells of table `id` in column `column`, one per row.
std::vector<report::Cell> column_cells(const report::Page& page, const std::string& id, const std::string& column) {
  std::vector<report::Cell> out;
  for (const auto& b : page.blocks) {
    if (b.table.id != id) continue;
    const auto at = std::find(b.table.columns.begin(), b.table.columns.end(), column) - b.table.columns.begin();
    for (const auto& row : b.table.rows) out.push_back(row[static_cast<std::size_t>(at)]);
  }
  return out;
}

TEST(UsageAccounting, CallsWithoutUsageMakeTheCostUnknownNotZero) {
  const auto protocol = core::load_protocol(protocol_file(), &cp::parameter_schema());
  std::vector<json> ledger;
  std::size_t cold = 0;
  for (const auto& u : smoke_units()) {
    if (u.spec.value("role", "") != "scored" || u.spec.value("stratum", "") != "cold") continue;
    ledger.push_back(scored_record(u, /*usage_reported=*/cold != 0, 0.25));  // only the first lacks usage
    ++cold;
  }
  ASSERT_GT(cold, 1u);
  json manifest = {{"parameters", protocol_parameters("smoke")}, {"options", {{"served_model", "k3-local"}}}};
  experiments::RunRecords run{manifest, {ledger, {}, 0}, {}};
  report::Page page;
  cp::summarise_run(protocol, run, page);

  const auto role_costs = column_cells(page, "calls-and-cost", "cost usd");
  ASSERT_EQ(role_costs.size(), 2u);  // "cold scored" and "all"
  for (const auto& c : role_costs) EXPECT_EQ(std::get<std::string>(c.value), "unknown");
  const auto group_costs = column_cells(page, "pass-rate", "cost usd");
  std::size_t unknown = 0, known = 0;
  for (const auto& c : group_costs) {
    if (std::holds_alternative<std::string>(c.value)) unknown += std::get<std::string>(c.value) == "unknown";
    if (std::holds_alternative<double>(c.value)) ++known;
  }
  EXPECT_EQ(unknown, 1u) << "only the group of the call without usage";
  EXPECT_GT(known, 0u);
  std::string text;
  for (const auto& b : page.blocks) text += b.markdown + b.table.caption;
  EXPECT_NE(text.find("usage-missing: 1 answered call(s)"), std::string::npos) << text;
  EXPECT_NE(text.find("Served model: requests named the model \"k3-local\""), std::string::npos) << text;
}

}  // namespace
}  // namespace k3lab::context_probe_test
