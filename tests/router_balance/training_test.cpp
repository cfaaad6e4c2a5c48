// router-balance on the shared trainer: its checkpoint cadence, and a unit interrupted mid-run that
// continues from its checkpoint to exactly the records (and routing artifact) of an uninterrupted one.
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <sstream>

#include "common/temp_dir.hpp"
#include "k3lab/core/protocol.hpp"
#include "router_balance/moe_model.hpp"
#include "router_balance/parameters.hpp"
#include "router_balance/router_control.hpp"
#include "router_balance/run_unit.hpp"

namespace k3lab::experiments::router_balance {
namespace {

const std::filesystem::path kProtocolFile = std::filesystem::path(K3LAB_SOURCE_DIR) / "experiments/router-balance.json";

std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

const core::Protocol& protocol() {
  static const auto p = core::load_protocol(kProtocolFile, &parameter_schema());
  return p;
}

const nlohmann::json& smoke_parameters() {
  static const auto j = protocol().parameters_for("smoke");
  return j;
}

const Unit kUnit{"arm=quantile-balancing/seed=5101", {{"arm", "quantile-balancing"}, {"seed", 5101}}};

// Runs the unit in `run_dir` (artifacts under run_dir/artifacts), stopping on request once `stop_at`
// of the run is done (never with 0).
UnitOutcome run_unit_in(const std::filesystem::path& run_dir, double stop_at = 0) {
  std::atomic<bool> stop{false};
  const auto progress = [&](double fraction) { stop.store(stop_at > 0 && fraction >= stop_at); };
  RunEnv env{protocol(), smoke_parameters(), "smoke", run_dir, run_dir / "artifacts", false,
             {{"device", "cpu"}, {"threads", 1}}, nullptr, progress, &stop, nullptr};
  return run_training_unit(kUnit, env);
}

TEST(RouterBalanceTraining, KeepsAboutFiftyCheckpointsPerRun) {
  EXPECT_EQ(checkpoint_interval_updates(51000), 1020);  // the full profile: 50 checkpoints
  EXPECT_EQ(checkpoint_interval_updates(1000), 20);
  EXPECT_EQ(checkpoint_interval_updates(10), 1);        // the smoke profile: every update
  EXPECT_EQ(checkpoint_interval_updates(202), 2);       // 202 / 50 = 4 does not divide: the next divisor below
  const auto p = parse_parameters(smoke_parameters());
  const auto config = loop_config(p, {{"device", "cpu"}}, "ckpt");
  EXPECT_EQ(config.rows_per_step(), config.resolved_micro_batch_rows());  // one forward per update
  EXPECT_EQ(config.total_steps(), p.total_updates());
  EXPECT_EQ(config.eval_interval_tokens, p.batch_tokens);
}

TEST(RouterBalanceTraining, AStoppedUnitContinuesFromItsCheckpointToTheSameRecords) {
  testing::TempDir straight_dir("k3lab-router-balance-straight"), stopped_dir("k3lab-router-balance-stopped");
  const auto straight = run_unit_in(straight_dir.path());
  ASSERT_EQ(straight.kind, UnitOutcome::Kind::Result) << straight.data.dump();
  EXPECT_THROW(run_unit_in(stopped_dir.path(), 0.5), std::runtime_error);  // interrupted: the runner leaves it open
  const auto resumed = run_unit_in(stopped_dir.path());
  ASSERT_EQ(resumed.kind, UnitOutcome::Kind::Result) << resumed.data.dump();
  const auto p = parse_parameters(smoke_parameters());
  EXPECT_EQ(resumed.timing.at("training").at("resumed_from_step"), p.total_updates() / 2);
  EXPECT_EQ(resumed.data, straight.data);  // bitwise: losses, logged routing, metrics, oscillation
  const auto artifact = resumed.data.at("routing_artifact").get<std::string>();
  EXPECT_EQ(read_text(stopped_dir.path() / artifact), read_text(straight_dir.path() / artifact));
}

TEST(RouterBalanceTraining, AKilledRunCutsTheRoutingLogBackToItsCheckpointAndResumesBitwise) {
  const auto p = parse_parameters(smoke_parameters());
  testing::TempDir dir("k3lab-router-balance-killed");
  auto config = loop_config(p, {{"device", "cpu"}, {"threads", 1}}, {});
  config.eval_interval_tokens = 5 * p.batch_tokens;  // checkpoints at updates 5 and 10 only
  const auto control = control_of_arm("quantile-balancing");
  const auto data = train::load_dataset({p.dataset, p.tokenizer, p.model.vocab_size, {}});

  MoeProxyTask straight(p, control, 5101, dir.path() / "straight.jsonl");
  const auto reference = train::train_task(straight, config, data);
  ASSERT_EQ(reference.status, train::TrainResult::Status::Completed) << reference.detail;

  config.checkpoint_dir = dir.path() / "ckpt";
  MoeProxyTask killed(p, control, 5101, dir.path() / "resumed.jsonl");
  train::LoopHooks crash;
  crash.crash_after_step = [](std::int64_t step) { return step == 8; };  // 3 updates past the checkpoint
  ASSERT_EQ(train::train_task(killed, config, data, crash).status, train::TrainResult::Status::Interrupted);
  MoeProxyTask resumed(p, control, 5101, dir.path() / "resumed.jsonl");
  const auto result = train::train_task(resumed, config, data);
  ASSERT_EQ(result.status, train::TrainResult::Status::Completed) << result.detail;
  EXPECT_EQ(*result.resumed_from_step, 5);
  EXPECT_EQ(result.state.losses, reference.state.losses);
  EXPECT_EQ(result.state.step_extras, reference.state.step_extras);
  EXPECT_EQ(resumed.oscillation().mean_abs_change(), straight.oscillation().mean_abs_change());
  EXPECT_EQ(resumed.oscillation().sign_flip_fraction(), straight.oscillation().sign_flip_fraction());
  EXPECT_EQ(resumed.oscillation().changes(), straight.oscillation().changes());
  EXPECT_EQ(read_text(dir.path() / "resumed.jsonl"), read_text(dir.path() / "straight.jsonl"));
}

}  // namespace
}  // namespace k3lab::experiments::router_balance
