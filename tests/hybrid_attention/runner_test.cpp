// hybrid-attention's runner: arm models within the parameter tolerance in both profiles, controlled
// variables identical across arms, and a killed unit resuming from its checkpoint to the same result.
#include <gtest/gtest.h>

#include <atomic>

#include "hybrid_attention/arm_model.hpp"
#include "hybrid_attention/parameters.hpp"
#include "hybrid_attention/run_unit.hpp"
#include "hybrid_attention/units.hpp"
#include "k3lab/core/protocol.hpp"
#include "k3lab/models/param_count.hpp"
#include "k3lab/train/data_order.hpp"
#include "common/temp_dir.hpp"

namespace k3lab::experiments::hybrid_attention {
namespace {

using k3lab::testing::TempDir;

const core::Protocol& protocol() {
  static const core::Protocol p = core::load_protocol(
      std::filesystem::path(K3LAB_SOURCE_DIR) / "experiments/hybrid-attention.json", &parameter_schema());
  return p;
}

class ArmModels : public ::testing::TestWithParam<std::string> {};

TEST_P(ArmModels, EveryArmWithinTheParameterTolerance) {
  const auto p = parse_parameters(protocol().parameters_for(GetParam()));
  for (const auto& arm : arm_ids()) {
    const auto config = arm_model_config(p, arm);
    const auto count = models::count_parameters(config);
    const double error = std::abs(static_cast<double>(count - p.target_parameters)) / static_cast<double>(p.target_parameters);
    EXPECT_LE(error, p.parameter_tolerance) << arm << ": " << count;
    EXPECT_EQ(static_cast<int>(config.schedule.size()), p.model.n_layers);
  }
  EXPECT_EQ(arm_model_config(p, "hybrid-3kda-1mla").schedule.substr(0, 4), "KKKM");
  EXPECT_EQ(arm_model_config(p, "all-kda").schedule.find('M'), std::string::npos);
  EXPECT_EQ(arm_model_config(p, "full-attention").schedule.find('K'), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Profiles, ArmModels, ::testing::Values("smoke", "full"));

TEST(TrainerSetup, ControlledVariablesAreIdenticalAcrossArms) {
  const auto p = parse_parameters(protocol().parameters_for("full"));
  nlohmann::json reference;
  for (const auto& arm : arm_ids()) {
    auto j = trainer_config(p, arm, 3101, nlohmann::json::object(), "").to_json();
    j.erase("model");
    if (reference.is_null()) reference = j;
    EXPECT_EQ(j, reference) << arm;
  }
  EXPECT_EQ(reference.at("order_seed"), 3001);
  EXPECT_EQ(reference.at("token_budget"), 1000000000);
  EXPECT_EQ(reference.at("init_seed"), 3101);
}

TEST(TrainerSetup, DataOrderIsTheSameForEveryArmAndSeed) {
  const auto p = parse_parameters(protocol().parameters_for("smoke"));
  const auto data = train::load_dataset({p.dataset, p.tokenizer, p.model.vocab_size, "unused"});
  std::vector<std::int64_t> first;
  for (const auto& arm : arm_ids()) {
    for (const auto seed : p.seeds) {
      const auto c = trainer_config(p, arm, seed, nlohmann::json::object(), "");
      const train::WindowOrder order(data.train.size(), c.sequence_length, c.order_seed);
      std::vector<std::int64_t> tokens;
      for (std::int64_t step = 0; step < c.total_steps(); ++step) {
        const auto b = train::training_batch(data.train, order, step * c.rows_per_step(), c.rows_per_step(), p.model.vocab_size);
        tokens.insert(tokens.end(), b.inputs.begin(), b.inputs.end());
      }
      if (first.empty()) first = tokens;
      EXPECT_EQ(tokens, first) << arm << " seed " << seed;
    }
  }
  EXPECT_EQ(static_cast<std::int64_t>(first.size()), p.token_budget);
}

TEST(TrainerSetup, CheckpointFolderNamesTheUnit) {
  EXPECT_EQ(unit_checkpoint_dir("/runs/x/artifacts", "arm=all-kda/seed=3101"),
            std::filesystem::path("/runs/x/artifacts/checkpoints/arm=all-kda_seed=3101"));
}

struct UnitRun {
  UnitOutcome outcome;
  std::vector<nlohmann::json> notes;
};

UnitRun run_one(const std::filesystem::path& run_dir, const std::atomic<bool>* stop, double stop_at,
                std::atomic<bool>* flag) {
  const auto parameters = protocol().parameters_for("smoke");
  const auto units = enumerate_units(parse_parameters(parameters));
  const auto& unit = units.at(2);  // the hybrid arm of the first seed
  UnitRun run;
  RunEnv env{protocol(), parameters, "smoke", run_dir, run_dir / "artifacts", false,
             nlohmann::json{{"device", "cpu"}, {"threads", 1}}, nullptr, nullptr, stop};
  env.note = [&](const std::string&, nlohmann::json record) { run.notes.push_back(std::move(record)); };
  env.progress = [&](double fraction) {
    if (flag && fraction >= stop_at) flag->store(true);
  };
  run.outcome = make_experiment()->run_unit(unit, env);
  return run;
}

TEST(RunUnit, KilledUnitResumesToTheSameResult) {
  TempDir straight("k3lab-hybrid-straight"), killed("k3lab-hybrid-killed");
  const auto uninterrupted = run_one(straight.path(), nullptr, 0, nullptr);
  ASSERT_EQ(uninterrupted.outcome.kind, UnitOutcome::Kind::Result) << uninterrupted.outcome.detail;
  const auto& data = uninterrupted.outcome.data;
  EXPECT_EQ(data.at("training").at("tokens"), 512);
  EXPECT_EQ(data.at("training").at("evaluations").size(), 2u);
  EXPECT_EQ(uninterrupted.notes.size(), 2u);
  bool beyond = false;
  for (const auto& r : data.at("training").at("evaluations").back().at("probes").at("retrieval")) {
    beyond = beyond || r.at("beyond_training_window").get<bool>();
  }
  EXPECT_TRUE(beyond);

  std::atomic<bool> stop{false};
  EXPECT_THROW(run_one(killed.path(), &stop, 0.75, &stop), std::runtime_error);  // stops after step 3 of 4
  const auto first_seed = std::to_string(protocol().parameters_for("smoke").at("seeds")[0].get<int>());
  EXPECT_TRUE(std::filesystem::exists(killed.path() / "artifacts/checkpoints" /
                                      ("arm=hybrid-3kda-1mla_seed=" + first_seed) / "latest.json"));
  stop.store(false);
  const auto resumed = run_one(killed.path(), &stop, 2.0, nullptr);
  ASSERT_EQ(resumed.outcome.kind, UnitOutcome::Kind::Result) << resumed.outcome.detail;
  EXPECT_EQ(resumed.outcome.data, uninterrupted.outcome.data);
}

TEST(RunUnit, MissingDatasetIsAFailureThatStopsTheWindow) {
  TempDir run_dir("k3lab-hybrid-nodata");
  auto parameters = protocol().parameters_for("smoke");
  parameters["data"]["dataset"] = "fineweb-edu-sample-10BT";
  parameters["data"]["tokenizer"] = "gpt2";
  parameters.erase("downstream");  // the byte suite needs byte tokens; this test is about the data
  const auto units = enumerate_units(parse_parameters(parameters));
  RunEnv env{protocol(), parameters, "smoke", run_dir.path(), run_dir.path() / "artifacts", false,
             nlohmann::json{{"device", "cpu"}, {"data_dir", run_dir.path().string()}}, nullptr, nullptr, nullptr};
  const auto experiment = make_experiment();
  const auto outcome = experiment->run_unit(units.at(0), env);
  ASSERT_EQ(outcome.kind, UnitOutcome::Kind::Failure);
  EXPECT_EQ(outcome.reason, kDataUnavailable);
  EXPECT_NE(outcome.detail.find("fineweb-edu-sample-10BT"), std::string::npos) << outcome.detail;
  const nlohmann::json record = {{"kind", "failure"}, {"reason", outcome.reason}, {"detail", outcome.detail}};
  EXPECT_TRUE(experiment->check_window(protocol(), parameters, {record}).stop);
  const nlohmann::json other = {{"kind", "failure"}, {"reason", "nan-loss"}};
  EXPECT_FALSE(experiment->check_window(protocol(), parameters, {other}).stop);
}

}  // namespace
}  // namespace k3lab::experiments::hybrid_attention
