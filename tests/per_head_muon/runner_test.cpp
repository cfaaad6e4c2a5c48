// The runner's trainer setup: arms differ only in the optimizer, and a killed Muon / Per-Head Muon
// run resumes from its checkpoint to bitwise the losses of an uninterrupted one (optimizer state in
// the checkpoint).
#include <gtest/gtest.h>

#include <unistd.h>

#include "k3lab/core/protocol.hpp"
#include "k3lab/train/trainer.hpp"
#include "per_head_muon/muon_optimizer.hpp"
#include "per_head_muon/parameters.hpp"
#include "per_head_muon/run_unit.hpp"

namespace k3lab::experiments::per_head_muon {
namespace {

Parameters smoke() {
  const auto protocol = core::load_protocol(std::filesystem::path(K3LAB_SOURCE_DIR) / "experiments/per-head-muon.json",
                                            &parameter_schema());
  return parse_parameters(protocol.parameters_for("smoke"));
}

TEST(TrainerConfig, ArmsDifferOnlyInTheOptimizer) {
  const auto p = smoke();
  const Configuration c{2, 0.004, 0.1};
  auto adamw = trainer_config(p, "adamw", c, 7201, p.token_budget, {{"device", "cpu"}}, {}).to_json();
  auto muon = trainer_config(p, "muon", c, 7201, p.token_budget, {{"device", "cpu"}}, {}).to_json();
  auto heads = trainer_config(p, "per-head-muon", c, 7201, p.token_budget, {{"device", "cpu"}}, {}).to_json();
  EXPECT_EQ(adamw.at("optimizer").at("name"), "phm-adamw");
  EXPECT_EQ(muon.at("optimizer").at("name"), "muon");
  EXPECT_EQ(heads.at("optimizer").at("name"), "per-head-muon");
  EXPECT_EQ(heads.at("optimizer").at("learning_rate"), 0.004);
  EXPECT_EQ(heads.at("optimizer").at("newton_schulz_steps"), 5);
  adamw.erase("optimizer");
  muon.erase("optimizer");
  heads.erase("optimizer");
  EXPECT_EQ(adamw, muon);
  EXPECT_EQ(muon, heads);
}

TEST(Resume, AKilledPerHeadMuonRunResumesBitwise) {
  const auto p = smoke();
  const auto dir = std::filesystem::temp_directory_path() / ("k3lab-phm-resume-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const auto data = train::load_dataset({p.dataset, p.tokenizer, p.model.vocab_size, {}});
  for (const std::string arm : {"muon", "per-head-muon", "adamw"}) {
    auto config = trainer_config(p, arm, {2, 0.004, 0.1}, 7101, p.token_budget, {{"device", "cpu"}, {"threads", 1}}, {});
    const auto straight = train::train(config, data);
    ASSERT_EQ(straight.status, train::TrainResult::Status::Completed) << straight.detail;
    config.checkpoint_dir = dir / arm;
    train::TrainerHooks crash;
    crash.crash_after_step = [](std::int64_t step) { return step == 2; };  // after the first checkpoint (step 2)
    EXPECT_EQ(train::train(config, data, crash).status, train::TrainResult::Status::Interrupted);
    const auto resumed = train::train(config, data);
    ASSERT_EQ(resumed.status, train::TrainResult::Status::Completed) << resumed.detail;
    EXPECT_TRUE(resumed.resumed_from_step.has_value()) << arm;
    EXPECT_EQ(resumed.state.losses, straight.state.losses) << arm;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace k3lab::experiments::per_head_muon
