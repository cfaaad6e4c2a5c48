// The page from sparse ledgers: records without data (as the common plan tests write them) and no
// confirmatory result yet must still give the record counts and the pilot selection table.
#include <gtest/gtest.h>

#include <cmath>

#include "k3lab/core/protocol.hpp"
#include "per_head_muon/parameters.hpp"
#include "per_head_muon/selection.hpp"
#include "per_head_muon/units.hpp"

namespace k3lab::experiments::per_head_muon {
namespace {

TEST(PerHeadMuonPage, RecordsWithoutDataGiveCountsAndAPendingSelection) {
  const auto protocol = core::load_protocol(std::filesystem::path(K3LAB_SOURCE_DIR) / "experiments/per-head-muon.json",
                                            &parameter_schema());
  const auto experiment = make_experiment();
  const auto parameters = protocol.parameters_for("smoke");
  const auto units = experiment->enumerate(protocol, parameters);
  RunRecords records;
  records.manifest = {{"profile", "smoke"}, {"parameters", parameters}};
  const std::vector<std::string> kinds = {"result", "invalid", "failure"};
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    records.ledger.records.push_back({{"seq", i}, {"kind", kinds[i]}, {"unit", units[i].id}, {"spec", units[i].spec}});
  }
  EXPECT_TRUE(std::isinf(pilot_loss(records.ledger.records[0])));
  report::Page page;
  ASSERT_NO_THROW(experiment->summarise(protocol, records, page));
  bool selection = false;
  for (const auto& block : page.blocks) {
    if (block.kind != report::Block::Kind::Table || block.table.id != "pilot-selection") continue;
    selection = true;
    for (const auto& row : block.table.rows) EXPECT_EQ(std::get<std::string>(row.back().value), "pending");
  }
  EXPECT_TRUE(selection);
}

}  // namespace
}  // namespace k3lab::experiments::per_head_muon
