// context-probe: the frozen call ledger's structure (seed: 1,200 scored + 600 priming calls), the
// cost bounds against hand-computed values, and the 5% window rule at its boundary.
#include <map>
#include <set>
#include <tuple>

#include <gtest/gtest.h>

#include "context_probe/parameters.hpp"
#include "context_probe/units.hpp"
#include "plan_test_support.hpp"

namespace k3lab::experiments::plan_test {
namespace {

struct ContextProbe : ::testing::Test {
  const Case& c = case_for("context-probe");
  core::Protocol protocol = load(c);
  std::unique_ptr<Experiment> experiment = c.make();
  nlohmann::json parameters = protocol.parameters_for("full");
  std::vector<Unit> units = experiment->enumerate(protocol, parameters);
};

TEST_F(ContextProbe, SeedArithmeticByAxis) {
  std::size_t prime = 0;
  std::map<std::string, std::size_t> stratum, family, length;
  for (const auto& u : units) {
    if (u.spec.at("role") == "prime") {
      ++prime;
      EXPECT_EQ(u.id.rfind("prime/", 0), 0u) << u.id;
      continue;
    }
    ++stratum[u.spec.at("stratum").get<std::string>()];
    ++family[u.spec.at("family").get<std::string>()];
    ++length[std::to_string(u.spec.at("length").get<std::int64_t>())];
  }
  EXPECT_EQ(prime, 600u);  // 8 fixtures x 5 families x 5 lengths x 1 warm stratum x 3 repetitions
  EXPECT_EQ(stratum, (std::map<std::string, std::size_t>{{"cold", 600}, {"warm", 600}}));
  EXPECT_EQ(family.size(), 5u);
  for (const auto& [name, n] : family) EXPECT_EQ(n, 240u) << name;  // 8 x 5 x 2 x 3
  EXPECT_EQ(length, (std::map<std::string, std::size_t>{
                        {"32768", 240}, {"131072", 240}, {"262144", 240}, {"524288", 240}, {"1048576", 240}}));
}

TEST_F(ContextProbe, UnitIdsFollowTheDocumentedForm) {
  std::set<std::string> ids;
  for (const auto& u : units) ids.insert(u.id);
  EXPECT_TRUE(ids.count("family=distractor/fixture=3/length=131072/stratum=warm/rep=1"));
  EXPECT_TRUE(ids.count("family=repository/fixture=8/length=1048576/stratum=cold/rep=3"));
  EXPECT_TRUE(ids.count("prime/family=multi-hop/fixture=1/length=32768/rep=2"));
}

TEST_F(ContextProbe, WarmCellFollowsItsOwnPrimingCallAndSharesOnlyItsPrefix) {
  std::map<std::string, int> prefix_uses;
  for (const auto& u : units) ++prefix_uses[u.spec.at("prefix_id").get<std::string>()];
  for (std::size_t i = 0; i < units.size(); ++i) {
    const auto& s = units[i].spec;
    const std::string prefix = s.at("prefix_id").get<std::string>();
    if (s.at("stratum") == "cold") {
      EXPECT_EQ(prefix_uses[prefix], 1) << "cold prefix reused: " << units[i].id;
      EXPECT_EQ(s.at("accept_when"), "usage.cached_tokens == 0");
    } else if (s.at("role") == "scored") {
      ASSERT_GT(i, 0u);
      EXPECT_EQ(units[i - 1].id, s.at("primed_by").get<std::string>()) << units[i].id;
      EXPECT_EQ(units[i - 1].spec.at("prefix_id"), s.at("prefix_id"));
      EXPECT_EQ(prefix_uses[prefix], 2) << "a warm prefix belongs to one priming call and one cell";
      EXPECT_EQ(s.at("accept_when"), "usage.cached_tokens > 0");
    }
  }
}

TEST_F(ContextProbe, EachRepetitionRunsEveryBlockOnceBeforeTheNext) {
  int last_rep = 1;
  std::map<int, std::set<std::tuple<std::string, int, std::int64_t>>> blocks;
  for (const auto& u : units) {
    const int rep = u.spec.at("rep").get<int>();
    EXPECT_GE(rep, last_rep) << "repetition " << rep << " interleaved with an earlier one at " << u.id;
    last_rep = rep;
    blocks[rep].insert(std::make_tuple(u.spec.at("family").get<std::string>(), u.spec.at("fixture").get<int>(),
                                       u.spec.at("length").get<std::int64_t>()));
  }
  ASSERT_EQ(blocks.size(), 3u);
  for (const auto& [rep, set] : blocks) EXPECT_EQ(set.size(), 200u) << rep;  // 5 families x 8 fixtures x 5 lengths
}

TEST_F(ContextProbe, RequestBudgetsReserveCompletionCapacity) {
  for (const auto& u : units) {
    const auto length = u.spec.at("length").get<std::int64_t>();
    EXPECT_EQ(u.spec.at("max_prompt_tokens").get<std::int64_t>() + 16384, length);
    EXPECT_EQ(u.spec.at("haystack_tokens").get<std::int64_t>() + 16384 + 1024, length);
  }
}

TEST_F(ContextProbe, CostBoundsMatchHandComputation) {
  // Prompt ceilings (budget - 16,384): 16,384 + 114,688 + 245,760 + 507,904 + 1,032,192 = 1,916,928
  // per (family, fixture, repetition); x 120 = 230,031,360 tokens for each of cold, priming and warm.
  // Misses (cold + priming) 460,062,720 x $3/M = $1,380.18816; warm hits 230,031,360 x $0.30/M =
  // $69.009408; completions 1,800 x 16,384 = 29,491,200 x $15/M = $442.368.
  const auto d = experiment->plan_details(protocol, parameters, units);
  EXPECT_EQ(d["calls"]["scored"], 1200);
  EXPECT_EQ(d["calls"]["priming"], 600);
  EXPECT_EQ(d["calls"]["most_requests_with_transport_retries"], 5400);
  EXPECT_DOUBLE_EQ(d["token_bounds"]["prompt_tokens_priming_and_cold"].get<double>(), 460062720.0);
  EXPECT_DOUBLE_EQ(d["token_bounds"]["prompt_tokens_warm_scored"].get<double>(), 230031360.0);
  EXPECT_DOUBLE_EQ(d["cost_usd"]["completion_at_cap"].get<double>(), 442.37);  // shown to the cent
  // With warm hits: 1,380.18816 + 69.009408 + 442.368; with no hits: 690,094,080 x $3/M + 442.368.
  EXPECT_DOUBLE_EQ(d["cost_usd"]["total_if_warm_cells_fully_cached"].get<double>(), 1891.57);  // 1,891.565568
  EXPECT_DOUBLE_EQ(d["cost_usd"]["total_upper_bound"].get<double>(), 2512.65);                 // 2,512.65024
  EXPECT_EQ(d["window"]["stop_when_invalid_cells_exceed"], 60);
}

TEST_F(ContextProbe, WindowStopsOnlyAfterMoreThanFivePercentOfScoredCellsAreInvalid) {
  std::vector<nlohmann::json> records;
  std::size_t bad = 0;
  for (const auto& u : units) {
    if (u.spec.at("role") == "prime") {
      records.push_back(terminal(u, "invalid"));  // priming calls never count
      continue;
    }
    if (bad < 60) {
      records.push_back(terminal(u, bad % 2 ? "invalid" : "failure"));
      ++bad;
    } else {
      records.push_back(terminal(u, "result"));
    }
  }
  auto verdict = experiment->check_window(protocol, parameters, records);
  EXPECT_FALSE(verdict.stop) << verdict.reason;  // 60 of 1,200 is exactly 5%, not more
  for (auto& r : records) {
    if (r["spec"]["role"] == "scored" && r["kind"] == "result") {
      r["kind"] = "invalid";
      break;
    }
  }
  verdict = experiment->check_window(protocol, parameters, records);
  EXPECT_TRUE(verdict.stop);
  EXPECT_EQ(verdict.data["invalid_scored_cells"].get<int>() + verdict.data["failed_scored_cells"].get<int>(), 61);
  EXPECT_NE(verdict.reason.find("rerun the complete matrix"), std::string::npos) << verdict.reason;
}

TEST_F(ContextProbe, CrossFieldRulesNameTheField) {
  auto broken = parameters;
  broken["lengths"] = {32768, 16384};
  EXPECT_THROW(
      {
        try {
          context_probe::parse_parameters(broken);
        } catch (const std::invalid_argument& e) {
          EXPECT_NE(std::string(e.what()).find("parameters.lengths[1]"), std::string::npos) << e.what();
          throw;
        }
      },
      std::invalid_argument);
  broken = parameters;
  broken["lengths"] = {17000};  // below 16,384 + 1,024: no room for fixture text
  EXPECT_THROW(context_probe::parse_parameters(broken), std::invalid_argument);
  broken = parameters;
  broken["pricing"]["model"] = "kimi-k2.6";
  try {
    context_probe::parse_parameters(broken);
    ADD_FAILURE() << "a price table for another model was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("parameters.pricing.model"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace k3lab::experiments::plan_test
