// The five proxy ablations: seeds paired across arms, the structure each seed rule fixes (3:1 KDA/MLA
// schedule, three complete AttnRes blocks, exact token budgets, 48 pilot + 15 confirmatory runs that
// depend on the pilot), and estimates against hand-computed values.
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "attn_res/parameters.hpp"
#include "hybrid_attention/parameters.hpp"
#include "per_head_muon/parameters.hpp"
#include "plan_test_support.hpp"
#include "router_balance/parameters.hpp"
#include "situ_qat/parameters.hpp"

namespace k3lab::experiments::plan_test {
namespace {

struct Loaded {
  explicit Loaded(const std::string& id, const std::string& profile = "full")
      : c(case_for(id)), protocol(load(c)), experiment(c.make()), parameters(protocol.parameters_for(profile)),
        units(experiment->enumerate(protocol, parameters)) {}
  nlohmann::json details() const { return experiment->plan_details(protocol, parameters, units); }
  const Case& c;
  core::Protocol protocol;
  std::unique_ptr<Experiment> experiment;
  nlohmann::json parameters;
  std::vector<Unit> units;
};

// Every seed appears once in every arm: the runs are paired.
void expect_paired(const Loaded& l, std::size_t seeds) {
  std::map<std::uint64_t, std::set<std::string>> arms_by_seed;
  for (const auto& u : l.units) {
    EXPECT_TRUE(arms_by_seed[u.spec.at("seed").get<std::uint64_t>()].insert(u.spec.at("arm").get<std::string>()).second)
        << "seed used twice in one arm: " << u.id;
  }
  EXPECT_EQ(arms_by_seed.size(), seeds) << l.c.id;
  for (const auto& [seed, arms] : arms_by_seed) EXPECT_EQ(arms.size(), l.c.arms.size()) << seed;
}

template <typename Parse>
void expect_rejected(Parse parse, const nlohmann::json& parameters, const std::string& field) {
  try {
    parse(parameters);
    ADD_FAILURE() << "accepted parameters that break the rule on " << field;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
  }
}

TEST(HybridAttentionPlan, ThreeArmsByThreeSeedsWithTheThreeToOneSchedule) {
  const Loaded l("hybrid-attention");
  expect_paired(l, 3);
  for (const auto& u : l.units) {
    const auto schedule = u.spec.at("layer_schedule").get<std::vector<std::string>>();
    ASSERT_EQ(schedule.size(), 12u);
    const auto mla = std::count(schedule.begin(), schedule.end(), "mla");
    const std::string arm = u.spec.at("arm").get<std::string>();
    if (arm == "full-attention") {
      EXPECT_EQ(mla, 12);
    }
    if (arm == "all-kda") {
      EXPECT_EQ(mla, 0);
    }
    if (arm == "hybrid-3kda-1mla") {
      EXPECT_EQ(schedule, (std::vector<std::string>{"kda", "kda", "kda", "mla", "kda", "kda", "kda", "mla", "kda",
                                                    "kda", "kda", "mla"}));
    }
    EXPECT_EQ(u.spec.at("evaluations"), 40);  // 1B / 25M
  }
  EXPECT_EQ(l.units.front().id, "arm=full-attention/seed=3101");
}

TEST(HybridAttentionPlan, EstimateIsSixNDOverTheStatedRate) {
  // 6 x 120e6 x 1e9 = 7.2e17 FLOPs; / (795e12 x 0.4) = 2,264.15 s = 0.628931 h per run. Unrounded:
  // the Slurm executor sizes task time limits from it.
  const Loaded l("hybrid-attention");
  const auto d = l.details();
  EXPECT_DOUBLE_EQ(d["estimate"]["flops_per_run"].get<double>(), 7.2e17);
  EXPECT_NEAR(d["estimate"]["gpu_hours_per_run"].get<double>(), 0.628931, 1e-6);
  EXPECT_NEAR(d["estimate"]["gpu_hours_total"].get<double>(), 9 * 0.628931, 1e-5);
  EXPECT_EQ(d["per_run"]["optimizer_steps"], 5000);  // 1e9 / 200,000
  EXPECT_EQ(d["parameters"]["allowed_range"], nlohmann::json::array({119400000, 120600000}));
}

TEST(HybridAttentionPlan, RulesThatKeepTheDesignExactAreEnforced) {
  const Loaded l("hybrid-attention");
  auto broken = l.parameters;
  broken["model"]["n_layers"] = 10;
  expect_rejected(hybrid_attention::parse_parameters, broken, "parameters.model.n_layers");
  broken = l.parameters;
  broken["batch_tokens"] = 192000;  // 25M is not a whole number of 192,000-token steps
  expect_rejected(hybrid_attention::parse_parameters, broken, "parameters.eval_interval_tokens");
  broken = l.parameters;
  broken["long_context_eval"]["lengths"] = {4000, 8000};
  expect_rejected(hybrid_attention::parse_parameters, broken, "parameters.long_context_eval.lengths");
}

TEST(AttnResPlan, FivePairedSeedsAndThreeCompleteBlocksInEveryProfile) {
  for (const auto& profile : core::profile_names()) {
    const Loaded l("attn-res", profile);
    expect_paired(l, 5);
    const auto d = l.details();
    EXPECT_EQ(d["depth"]["complete_blocks"], 3) << profile;
    EXPECT_EQ(d["depth"]["partial_block_layers"], 0) << profile;
  }
  const Loaded full("attn-res");
  const auto d = full.details();
  EXPECT_EQ(d["depth"]["decoder_layers"], 36);
  EXPECT_EQ(d["depth"]["most_depth_sources_block_attnres"], 4);  // embedding + 3 blocks
  EXPECT_EQ(d["depth"]["most_depth_sources_full_attnres"], 73);  // embedding + 72 sublayer outputs
  EXPECT_DOUBLE_EQ(d["decision"]["min_relative_improvement"].get<double>(), 0.005);
  EXPECT_DOUBLE_EQ(d["decision"]["max_memory_regression"].get<double>(), 0.10);
  EXPECT_DOUBLE_EQ(d["decision"]["max_throughput_regression"].get<double>(), 0.10);
  EXPECT_EQ(d["per_run"]["checkpoints"], 20);
}

TEST(AttnResPlan, FewerThanThreeCompleteBlocksOrOneSeedIsRejected) {
  const Loaded l("attn-res");
  auto broken = l.parameters;
  broken["model"]["n_layers"] = 24;
  expect_rejected(attn_res::parse_parameters, broken, "parameters.model.n_layers");
  broken = l.parameters;
  broken["seeds"] = {4101};
  expect_rejected(attn_res::parse_parameters, broken, "parameters.seeds");
}

TEST(RouterBalancePlan, FourArmsByFiveSeedsWithTheSameUpdates) {
  const Loaded l("router-balance");
  expect_paired(l, 5);
  for (const auto& u : l.units) {
    EXPECT_EQ(u.spec.at("warmup_updates"), 1000);
    EXPECT_EQ(u.spec.at("measured_updates"), 50000);
  }
  const auto d = l.details();
  // capacity = ceil(32,768 x 4 / 64 x 1.25) = 2,560; tokens = 51,000 updates x 32,768.
  EXPECT_EQ(d["routing"]["expert_capacity_per_batch"], 2560);
  EXPECT_DOUBLE_EQ(d["per_run"]["tokens"].get<double>(), 1671168000.0);
  EXPECT_EQ(d["per_run"]["logged_points"], 5000);
}

TEST(RouterBalancePlan, EachArmCarriesOnlyItsOwnControl) {
  const Loaded l("router-balance");
  std::map<std::string, std::string> kinds;
  for (const auto& u : l.units) {
    kinds[u.spec.at("arm").get<std::string>()] = u.spec.at("control").at("kind").get<std::string>();
  }
  EXPECT_EQ(kinds, (std::map<std::string, std::string>{{"no-control", "none"},
                                                       {"aux-loss", "aux-loss"},
                                                       {"fixed-step-bias", "sign-bias"},
                                                       {"quantile-balancing", "quantile-bias"}}));
  auto broken = l.parameters;
  broken["model"]["top_k"] = 64;
  expect_rejected(router_balance::parse_parameters, broken, "parameters.model.top_k");
}

TEST(SituQatPlan, TwoArmsByFivePairedSeedsWithFixedBetas) {
  for (const auto& profile : core::profile_names()) {
    const Loaded l("situ-qat", profile);
    expect_paired(l, 5);
    for (const auto& u : l.units) {
      if (u.spec.at("arm") == "situ-glu") {
        EXPECT_EQ(u.spec["activation"]["beta1"], 4) << profile;
        EXPECT_EQ(u.spec["activation"]["beta2"], 25) << profile;
      } else {
        EXPECT_FALSE(u.spec["activation"].contains("beta1"));
      }
    }
  }
  const Loaded l("situ-qat");
  const auto d = l.details();
  EXPECT_EQ(d["per_run"]["histogram_checkpoints"], 10);  // 500M / 50M
  EXPECT_EQ(d["per_run"]["evaluations"], 20);            // 500M / 25M
  EXPECT_DOUBLE_EQ(d["qat"]["situ_output_bound"].get<double>(), 100.0);
}

TEST(SituQatPlan, WidthsMustHoldWholeMxBlocks) {
  const Loaded l("situ-qat");
  auto broken = l.parameters;
  broken["model"]["ffn_hidden"] = 1400;
  expect_rejected(situ_qat::parse_parameters, broken, "parameters.model.ffn_hidden");
}

TEST(PerHeadMuonPlan, PilotSearchThenConfirmatoryRunsThatDependOnIt) {
  const Loaded l("per-head-muon");
  std::map<std::string, std::size_t> position;
  std::size_t pilot = 0, confirm = 0;
  std::set<std::pair<double, double>> grid;
  for (std::size_t i = 0; i < l.units.size(); ++i) {
    const auto& u = l.units[i];
    position[u.id] = i;
    if (u.spec.at("phase") == "pilot") {
      ++pilot;
      EXPECT_EQ(confirm, 0u) << "pilot unit after a confirmatory unit: " << u.id;
      grid.insert({u.spec.at("learning_rate").get<double>(), u.spec.at("weight_decay").get<double>()});
    } else {
      ++confirm;
      EXPECT_EQ(u.spec.at("config"), "selected");
      const auto from = u.spec.at("selected_from").get<std::vector<std::string>>();
      EXPECT_EQ(from.size(), 16u);  // 8 configurations x 2 pilot seeds, of this arm only
      for (const auto& id : from) {
        ASSERT_TRUE(position.count(id)) << id << " is not an earlier unit";
        EXPECT_EQ(l.units[position[id]].spec.at("arm"), u.spec.at("arm"));
      }
    }
  }
  EXPECT_EQ(pilot, 48u);
  EXPECT_EQ(confirm, 15u);
  EXPECT_EQ(grid.size(), 8u);
  EXPECT_TRUE(position.count("phase=pilot/arm=per-head-muon/config=8/seed=7102"));
  EXPECT_TRUE(position.count("phase=confirm/arm=adamw/config=selected/seed=7205"));
}

TEST(PerHeadMuonPlan, ConfirmatorySeedsMustBeFresh) {
  const Loaded l("per-head-muon");
  auto broken = l.parameters;
  broken["confirmatory_seeds"] = {7201, 7202, 7101};
  expect_rejected(per_head_muon::parse_parameters, broken, "parameters.confirmatory_seeds");
  broken = l.parameters;
  broken["search"]["learning_rates"] = {0.001, 0.001};
  expect_rejected(per_head_muon::parse_parameters, broken, "parameters.search.learning_rates");
}

TEST(PerHeadMuonPlan, TotalTokensAreSixtyThreeBillion) {
  const Loaded l("per-head-muon");
  EXPECT_DOUBLE_EQ(l.details()["training_tokens_total"].get<double>(), 63e9);
}

}  // namespace
}  // namespace k3lab::experiments::plan_test
