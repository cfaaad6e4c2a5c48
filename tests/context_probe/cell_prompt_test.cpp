// The exact request of a cell: the fixture it carries, the cache-buster rules between strata, and
// the budget check that runs before any call.
#include <gtest/gtest.h>

#include "context_probe/cell_prompt.hpp"
#include "k3lab/api/budget.hpp"
#include "k3lab/validate/cache_buster.hpp"
#include "test_support.hpp"

namespace k3lab::context_probe_test {
namespace {

namespace cp = experiments::context_probe;

const std::string kBlock = "family=multi-hop/fixture=1/length=32768";

TEST(CellPrompt, FamilyNamesMapToValidateFamilies) {
  EXPECT_EQ(cp::fixture_family_of("single"), validate::FixtureFamily::single_retrieval);
  EXPECT_EQ(cp::fixture_family_of("distractor"), validate::FixtureFamily::distractor_retrieval);
  EXPECT_EQ(cp::fixture_family_of("multi-hop"), validate::FixtureFamily::multi_hop);
  EXPECT_EQ(cp::fixture_family_of("order-state"), validate::FixtureFamily::order_state);
  EXPECT_EQ(cp::fixture_family_of("repository"), validate::FixtureFamily::repository);
  EXPECT_EQ(cp::fixture_family_of("single-retrieval"), validate::FixtureFamily::single_retrieval);
  EXPECT_THROW(cp::fixture_family_of("needle"), std::invalid_argument);
}

TEST(CellPrompt, FixtureNumberSelectsSeedAndPlacementIndex) {
  const auto p = cp::parse_parameters(protocol_parameters("full"));
  const auto est = validate::conservative_byte_estimator();
  const auto r = cp::fixture_request(p, "order-state", 3, 32768, "x", est);
  EXPECT_EQ(r.seed, 1103u);
  EXPECT_EQ(r.index, 2);
  EXPECT_EQ(r.family, validate::FixtureFamily::order_state);
  EXPECT_EQ(r.target_tokens, 32768u - 16384u - 1024u);
  EXPECT_THROW(cp::fixture_request(p, "order-state", 0, 32768, "x", est), std::invalid_argument);
  EXPECT_THROW(cp::fixture_request(p, "order-state", 9, 32768, "x", est), std::invalid_argument);
}

TEST(CellPrompt, RequestCarriesTheFixtureAndTheProtocolSettings) {
  const auto p = smoke_parameters();
  const auto cold = smoke_unit(kBlock + "/stratum=cold/rep=1");
  const auto cell = cp::build_cell_prompt(p, cold.spec, "", validate::conservative_byte_estimator());
  const auto& req = cell.request;
  EXPECT_EQ(req["model"], "kimi-k3");
  EXPECT_EQ(req["reasoning_effort"], "high");
  EXPECT_EQ(req["max_completion_tokens"], 512);
  EXPECT_EQ(req["stream"], true);
  ASSERT_EQ(req["messages"].size(), 1u);
  EXPECT_EQ(req["messages"][0]["content"], cell.fixture.prompt);
  // The cold cell's first line is the cache buster of its own prefix id.
  EXPECT_EQ(cell.prefix_id, "cp-multi-hop-f1-L32768-r1-cold");
  EXPECT_EQ(cell.fixture.prompt.rfind(validate::cache_buster_line(cell.prefix_id), 0), 0u);
}

TEST(CellPrompt, BudgetIsCountedIndependentlyAndFits) {
  const auto p = smoke_parameters();
  const auto unit = smoke_unit(kBlock + "/stratum=cold/rep=1");
  const auto cell = cp::build_cell_prompt(p, unit.spec, "", validate::conservative_byte_estimator());
  // Conservative estimator: ceil(bytes / 3); one message: 16 per message + 16 per request.
  EXPECT_EQ(cell.budget.prompt_tokens, (cell.fixture.prompt.size() + 2) / 3);
  EXPECT_EQ(cell.budget.framing_tokens, 32u);
  EXPECT_EQ(cell.budget.max_completion_tokens, 512u);
  EXPECT_EQ(cell.budget.length, 32768);
  EXPECT_GE(cell.budget.headroom(), 0);
  // The fixture fills its target within a word: nearly the whole haystack budget is used.
  EXPECT_GT(cell.budget.prompt_tokens, static_cast<std::uint64_t>(p.haystack_tokens(32768) - 16));
}

TEST(CellPrompt, PrimingAndWarmSendIdenticalBytesColdDiffersFromTheFirstLine) {
  const auto p = smoke_parameters();
  const auto est = validate::conservative_byte_estimator();
  const auto cold = cp::build_cell_prompt(p, smoke_unit(kBlock + "/stratum=cold/rep=1").spec, "w1", est);
  const auto prime = cp::build_cell_prompt(p, smoke_unit("prime/" + kBlock + "/rep=1").spec, "w1", est);
  const auto warm = cp::build_cell_prompt(p, smoke_unit(kBlock + "/stratum=warm/rep=1").spec, "w1", est);
  EXPECT_EQ(prime.request.dump(), warm.request.dump());
  EXPECT_EQ(warm.prefix_id, "w1/cp-multi-hop-f1-L32768-r1-warm");
  const auto& a = cold.fixture.prompt;
  const auto& b = warm.fixture.prompt;
  EXPECT_NE(a.substr(0, a.find('\n')), b.substr(0, b.find('\n')));
  EXPECT_EQ(a.substr(a.find('\n')), b.substr(b.find('\n')));  // same fixture text after the buster line
  // Another window salts the prefix id, so nothing is shared with this window's cache.
  const auto other = cp::build_cell_prompt(p, smoke_unit(kBlock + "/stratum=warm/rep=1").spec, "w2", est);
  EXPECT_NE(other.fixture.prompt.substr(0, 200), b.substr(0, 200));
}

TEST(CellPrompt, OverBudgetIsRefusedBeforeSendingNeverTruncated) {
  auto j = protocol_parameters("smoke");
  j["framing_reserve_tokens"] = 0;  // the fixture may fill prompt + completion = budget; framing no longer fits
  const auto p = cp::parse_parameters(j);
  const auto unit = smoke_unit(kBlock + "/stratum=cold/rep=1");
  EXPECT_THROW(cp::build_cell_prompt(p, unit.spec, "", validate::conservative_byte_estimator()), api::BudgetExceeded);
}

TEST(CellPrompt, MoreSeedsThanPlacementsIsAProtocolError) {
  auto j = protocol_parameters("full");
  j["fixture_seeds"] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  try {
    cp::parse_parameters(j);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("parameters.fixture_seeds"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace k3lab::context_probe_test
