// Data-parallel training with c10d's Gloo backend on CPU: two real processes (distributed_worker,
// started with the torchrun-style environment on a free loopback port) against the one-process run of
// the same global batch; a rank killed mid-run; a rank-local NaN; the launch environment's errors.
//
// Tolerance of the two-process vs one-process comparison: the update is mathematically the same, but
// one process sums 4 micro-batch gradients in sequence while two ranks each sum 2 and the all-reduce
// adds the two partial sums, so float32 rounding differs (about one float32 ulp per step), and AdamW
// carries it into the later steps. Observed over these 6 steps: equal losses, parameters within
// 2.4e-7; the bounds here are 1e-5. Ranks that train the wrong rows move the losses by about 1e-2.
// The two ranks of one run must agree exactly: the all-reduce hands every rank the same bits.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>

#include <torch/torch.h>

#include "distributed_support.hpp"
#include "k3lab/core/resume_refused.hpp"
#include "k3lab/train/distributed.hpp"
#include "rank_processes.hpp"
#include "test_support.hpp"

namespace k3lab::train {
namespace {

using testing::free_loopback_port;
using testing::TempDir;

constexpr double kLossTolerance = 1e-5;
constexpr double kParameterTolerance = 1e-5;
// A rank that has not finished by then is hung (the runs take a few seconds; the group timeout is 10 s).
constexpr std::chrono::seconds kRunDeadline{60};

struct RankRun {
  nlohmann::json result;  // the worker's JSON (null when it wrote none)
  bool killed = false;    // ended by SIGKILL
};

// Runs `world` distributed_worker ranks, each with the rank environment plus `common` and its
// `extra` variables, and reads their results.
std::vector<RankRun> run_ranks(const std::filesystem::path& dir, int world,
                               const std::map<int, std::map<std::string, std::string>>& extra = {},
                               const std::map<std::string, std::string>& common = {}) {
  const int port = free_loopback_port();
  std::vector<pid_t> pids;
  for (int rank = 0; rank < world; ++rank) {
    auto vars = testing::rank_environment(rank, world, port);
    for (const auto& [k, v] : common) vars[k] = v;
    if (auto it = extra.find(rank); it != extra.end()) {
      for (const auto& [k, v] : it->second) vars[k] = v;
    }
    const auto stem = dir / ("rank-" + std::to_string(rank));
    vars["K3LAB_TEST_OUT"] = stem.string() + ".json";
    pids.push_back(testing::start_process(K3LAB_DP_WORKER, {}, vars, stem.string() + ".log"));
  }
  const auto exits = testing::wait_all(pids, kRunDeadline);
  std::vector<RankRun> runs(static_cast<std::size_t>(world));
  for (int rank = 0; rank < world; ++rank) {
    auto& run = runs[static_cast<std::size_t>(rank)];
    run.killed = exits[static_cast<std::size_t>(rank)].signal == SIGKILL;
    std::ifstream in(dir / ("rank-" + std::to_string(rank) + ".json"));
    if (in) run.result = nlohmann::json::parse(in);
  }
  return runs;
}

const LmTrainResult& one_process() {
  static const LmTrainResult r = train(testing::data_parallel_config(), testing::data_parallel_corpus());
  return r;
}

// The uninterrupted two-rank run, shared by the tests that compare with it.
const std::vector<RankRun>& two_ranks() {
  static const std::vector<RankRun> runs = [] {
    TempDir dir("dp-two-ranks");
    return run_ranks(dir.path, 2);
  }();
  return runs;
}

double max_abs_difference(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0.0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

TEST(DataParallel, TwoGlooRanksMatchOneProcessOnTheSameGlobalBatch) {
  const auto& reference = one_process();
  ASSERT_EQ(reference.status, TrainResult::Status::Completed) << reference.detail;
  const auto& runs = two_ranks();
  ASSERT_EQ(runs.size(), 2u);
  for (const auto& run : runs) {
    ASSERT_FALSE(run.result.is_null()) << "a rank wrote no result";
    ASSERT_FALSE(run.result.contains("error")) << run.result.at("error");
    EXPECT_EQ(run.result.at("status"), "completed") << run.result.at("detail");
    EXPECT_EQ(run.result.at("timing").at("world_size"), 2);
    EXPECT_EQ(run.result.at("timing").at("backend"), "gloo");
  }
  const auto losses = runs[0].result.at("losses").get<std::vector<double>>();
  ASSERT_EQ(losses.size(), reference.state.losses.size());
  for (std::size_t i = 0; i < losses.size(); ++i) {
    EXPECT_NEAR(losses[i], reference.state.losses[i], kLossTolerance) << "step " << i;
  }
  const auto& evaluations = runs[0].result.at("evaluations");
  ASSERT_EQ(evaluations.size(), reference.state.evaluations.size());
  for (std::size_t i = 0; i < evaluations.size(); ++i) {
    EXPECT_EQ(evaluations[i].at("tokens"), reference.state.evaluations[i].at("tokens"));
    EXPECT_NEAR(evaluations[i].at("validation_loss").get<double>(),
                reference.state.evaluations[i].at("validation_loss").get<double>(), kLossTolerance);
  }
  const auto parameters = runs[0].result.at("parameters").get<std::vector<double>>();
  EXPECT_LT(max_abs_difference(parameters, testing::flat_parameters(*reference.model)), kParameterTolerance);
  // Training moved the parameters far more than the tolerance, so the comparison means something.
  const auto config = testing::data_parallel_config();
  const models::DecoderLM initial(config.model, config.init_seed);
  EXPECT_GT(max_abs_difference(parameters, testing::flat_parameters(*initial)), 100 * kParameterTolerance);
  // Both ranks hold bitwise the same run.
  EXPECT_EQ(runs[1].result.at("losses"), runs[0].result.at("losses"));
  EXPECT_EQ(runs[1].result.at("evaluations"), runs[0].result.at("evaluations"));
  EXPECT_EQ(runs[1].result.at("parameters"), runs[0].result.at("parameters"));
}

TEST(DataParallel, AKilledRankEndsTheSurvivorAsRankFailureAndTheCheckpointResumes) {
  TempDir dir("dp-kill");
  const auto checkpoints = (dir.path / "checkpoints").string();
  const auto killed = run_ranks(dir.path, 2, {{1, {{"K3LAB_TEST_KILL_AFTER_STEP", "3"}}}},
                                {{"K3LAB_TEST_CHECKPOINT_DIR", checkpoints}});
  EXPECT_TRUE(killed[1].killed);
  const auto& survivor = killed[0].result;
  ASSERT_FALSE(survivor.is_null());
  ASSERT_FALSE(survivor.contains("error")) << survivor.at("error");
  EXPECT_EQ(survivor.at("status"), "failed");
  EXPECT_EQ(survivor.at("failure_class"), "rank-failure");
  EXPECT_EQ(survivor.at("step"), 3);  // it could not finish step 3 without rank 1
  const auto detail = survivor.at("detail").get<std::string>();
  EXPECT_NE(detail.find("rank 1 died"), std::string::npos) << detail;
  EXPECT_NE(detail.find("checkpoint at step 2 resumes it"), std::string::npos) << detail;

  // One process may not continue what two ranks checkpointed: refused, naming the world size to use.
  auto single = testing::data_parallel_config();
  single.checkpoint_dir = checkpoints;
  try {
    train(single, testing::data_parallel_corpus());
    ADD_FAILURE() << "a one-process resume of a two-rank checkpoint was not refused";
  } catch (const core::ResumeRefused& e) {
    EXPECT_NE(std::string(e.what()).find("written by 2 data-parallel rank(s) and this command has 1"), std::string::npos)
        << e.what();
  }

  // Both ranks resume from rank 0's checkpoint and end bitwise where the uninterrupted run ends.
  std::filesystem::remove(dir.path / "rank-0.json");
  const auto resumed = run_ranks(dir.path, 2, {}, {{"K3LAB_TEST_CHECKPOINT_DIR", checkpoints}});
  const auto& uninterrupted = two_ranks();
  for (std::size_t rank = 0; rank < 2; ++rank) {
    const auto& r = resumed[rank].result;
    ASSERT_FALSE(r.is_null());
    ASSERT_FALSE(r.contains("error")) << r.at("error");
    EXPECT_EQ(r.at("status"), "completed") << r.at("detail");
    EXPECT_EQ(r.at("resumed_from_step"), 2);
    EXPECT_EQ(r.at("losses"), uninterrupted[0].result.at("losses"));
    EXPECT_EQ(r.at("parameters"), uninterrupted[0].result.at("parameters"));
  }
}

TEST(DataParallel, AKilledRootEndsTheOtherRankAsRankFailureAndIsSeenGone) {
  TempDir dir("dp-kill-root");
  const auto runs = run_ranks(dir.path, 2, {{0, {{"K3LAB_TEST_KILL_AFTER_STEP", "1"}}}});
  EXPECT_TRUE(runs[0].killed);
  const auto& survivor = runs[1].result;
  ASSERT_FALSE(survivor.is_null());
  ASSERT_FALSE(survivor.contains("error")) << survivor.at("error");
  EXPECT_EQ(survivor.at("failure_class"), "rank-failure");
  EXPECT_EQ(survivor.at("step"), 1);
  EXPECT_NE(survivor.at("detail").get<std::string>().find("rank 0 died"), std::string::npos);
  EXPECT_NE(survivor.at("detail").get<std::string>().find("keeps no checkpoints"), std::string::npos);
  // Rank 0 served the store: the survivor can tell that nobody else will record the failure.
  EXPECT_EQ(survivor.at("root_reachable"), false);
}

TEST(DataParallel, ARankLocalNanStopsEveryRankAtTheSameStep) {
  TempDir dir("dp-nan");
  const auto runs = run_ranks(dir.path, 2, {{1, {{"K3LAB_TEST_NAN_AT_STEP", "2"}}}});
  for (const auto& run : runs) {
    ASSERT_FALSE(run.result.is_null());
    ASSERT_FALSE(run.result.contains("error")) << run.result.at("error");
    EXPECT_EQ(run.result.at("status"), "failed");
    EXPECT_EQ(run.result.at("failure_class"), "nan-loss");
    EXPECT_EQ(run.result.at("step"), 2);
    EXPECT_EQ(run.result.at("losses").size(), 2u);
  }
  const auto detail = runs[0].result.at("detail").get<std::string>();
  EXPECT_NE(detail.find("rank 1 of 2"), std::string::npos) << detail;
}

TEST(DataParallel, RowsThatDoNotSplitAcrossRanksAreRefused) {
  TempDir dir("dp-rows");
  const auto runs = run_ranks(dir.path, 2, {}, {{"K3LAB_TEST_BATCH_TOKENS", "48"}});  // 3 rows, 2 ranks
  for (const auto& run : runs) {
    ASSERT_TRUE(run.result.contains("error")) << run.result.dump();
    const auto message = run.result.at("error").get<std::string>();
    EXPECT_NE(message.find("batch_tokens"), std::string::npos) << message;
    EXPECT_NE(message.find("2 data-parallel ranks"), std::string::npos) << message;
  }
}

TEST(DataParallel, WorldSizeOneLeavesTheConfigurationAndItsHashAlone) {
  DistributedContext single(LaunchEnvironment{}, torch::Device(torch::kCPU));
  EXPECT_EQ(single.world_size(), 1);
  EXPECT_EQ(single.backend(), "none");
  EXPECT_FALSE(single.process_group());
  auto config = testing::data_parallel_config();
  config.micro_batch_rows = 0;  // automatic: resolved over the rows per rank
  const auto alone = config.to_json();
  config.distributed = &single;
  EXPECT_EQ(config.to_json(), alone);
  const auto result = train(config, testing::data_parallel_corpus());
  EXPECT_EQ(result.timing_json().at("world_size"), 1);
  EXPECT_EQ(result.timing_json().at("backend"), "none");
}

// Launch environments.

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

std::string launch_error(std::map<std::string, std::string> vars) {
  try {
    launch_environment(env_of(std::move(vars)));
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(LaunchEnvironment, NoLauncherIsOneProcess) {
  const auto env = launch_environment(env_of({}));
  EXPECT_EQ(env.world_size, 1);
  EXPECT_EQ(env.rank, 0);
  EXPECT_EQ(env.launcher, "single");
  EXPECT_EQ(env.timeout, kDefaultDistributedTimeout);
  // World size 1 needs no rendezvous address, from either launcher.
  EXPECT_EQ(launch_environment(env_of({{"WORLD_SIZE", "1"}})).world_size, 1);
  EXPECT_EQ(launch_environment(env_of({{"SLURM_STEP_NUM_TASKS", "1"}, {"SLURM_PROCID", "0"}})).world_size, 1);
}

TEST(LaunchEnvironment, TorchrunStyle) {
  const auto env = launch_environment(env_of({{"WORLD_SIZE", "4"}, {"RANK", "3"}, {"LOCAL_RANK", "1"},
                                              {"MASTER_ADDR", "node7"}, {"MASTER_PORT", "29500"},
                                              {"K3LAB_DIST_TIMEOUT", "5"}}));
  EXPECT_EQ(env.launcher, "torchrun");
  EXPECT_EQ(env.world_size, 4);
  EXPECT_EQ(env.rank, 3);
  EXPECT_EQ(env.local_rank, 1);
  EXPECT_EQ(env.master_addr, "node7");
  EXPECT_EQ(env.master_port, 29500);
  EXPECT_EQ(env.timeout, std::chrono::seconds(5));
  // Without LOCAL_RANK, one node is assumed.
  EXPECT_EQ(launch_environment(env_of({{"WORLD_SIZE", "2"}, {"RANK", "1"}, {"MASTER_ADDR", "a"}, {"MASTER_PORT", "1"}}))
                .local_rank,
            1);
}

TEST(LaunchEnvironment, SrunNeedsTheMasterAddressFromTheJobScript) {
  const std::map<std::string, std::string> srun = {
      {"SLURM_NTASKS", "2"}, {"SLURM_STEP_NUM_TASKS", "2"}, {"SLURM_PROCID", "1"}, {"SLURM_LOCALID", "0"}};
  const auto message = launch_error(srun);
  EXPECT_NE(message.find("SLURM_STEP_NUM_TASKS=2"), std::string::npos) << message;
  EXPECT_NE(message.find("MASTER_ADDR"), std::string::npos) << message;
  EXPECT_NE(message.find("scontrol show hostnames"), std::string::npos) << message;
  auto with_master = srun;
  with_master["MASTER_ADDR"] = "node1";
  with_master["MASTER_PORT"] = "29400";
  const auto env = launch_environment(env_of(with_master));
  EXPECT_EQ(env.launcher, "srun");
  EXPECT_EQ(env.world_size, 2);
  EXPECT_EQ(env.rank, 1);
  EXPECT_EQ(env.local_rank, 0);
  // WORLD_SIZE (torchrun inside an allocation) takes precedence over Slurm's task count.
  with_master["WORLD_SIZE"] = "1";
  EXPECT_EQ(launch_environment(env_of(with_master)).world_size, 1);
  EXPECT_NE(launch_error({{"SLURM_STEP_NUM_TASKS", "2"}}).find("SLURM_PROCID"), std::string::npos);
  // A batch script (or salloc shell) of a 4-task allocation runs once: not a rank, whatever SLURM_NTASKS says.
  EXPECT_EQ(launch_environment(env_of({{"SLURM_NTASKS", "4"}, {"SLURM_PROCID", "0"}})).world_size, 1);
}

TEST(LaunchEnvironment, ErrorsNameTheVariableToFix) {
  const std::map<std::string, std::string> good = {
      {"WORLD_SIZE", "2"}, {"RANK", "0"}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "29500"}};
  auto without = [&](const std::string& name) {
    auto vars = good;
    vars.erase(name);
    return launch_error(vars);
  };
  auto with = [&](const std::string& name, const std::string& value) {
    auto vars = good;
    vars[name] = value;
    return launch_error(vars);
  };
  EXPECT_EQ(launch_error(good), "");
  EXPECT_NE(without("MASTER_PORT").find("needs MASTER_PORT"), std::string::npos) << without("MASTER_PORT");
  EXPECT_NE(without("MASTER_ADDR").find("needs MASTER_ADDR"), std::string::npos) << without("MASTER_ADDR");
  EXPECT_NE(without("RANK").find("RANK is not"), std::string::npos) << without("RANK");
  EXPECT_NE(with("RANK", "2").find("RANK must be below WORLD_SIZE"), std::string::npos) << with("RANK", "2");
  EXPECT_NE(with("RANK", "-1").find("RANK=-1 is out of range"), std::string::npos) << with("RANK", "-1");
  EXPECT_NE(with("RANK", "one").find("RANK=\"one\" is not a whole number"), std::string::npos);
  EXPECT_NE(with("WORLD_SIZE", "2x").find("WORLD_SIZE=\"2x\" is not a whole number"), std::string::npos);
  EXPECT_NE(with("WORLD_SIZE", "0").find("WORLD_SIZE=0 is out of range"), std::string::npos);
  EXPECT_NE(with("MASTER_PORT", "http").find("MASTER_PORT=\"http\""), std::string::npos);
  EXPECT_NE(with("MASTER_PORT", "70000").find("MASTER_PORT=70000 is out of range"), std::string::npos);
  EXPECT_NE(with("K3LAB_DIST_TIMEOUT", "soon").find("K3LAB_DIST_TIMEOUT"), std::string::npos);
}

TEST(LaunchEnvironment, JoiningWithoutPeersTimesOutWithTheAddress) {
  LaunchEnvironment env;
  env.world_size = 2;
  env.rank = 1;  // a client whose server (rank 0) never starts
  env.master_addr = "127.0.0.1";
  env.master_port = free_loopback_port();
  env.timeout = std::chrono::seconds(1);
  try {
    DistributedContext context(env, torch::Device(torch::kCPU));
    FAIL() << "joined a group without rank 0";
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("could not join the data-parallel group at 127.0.0.1:" + std::to_string(env.master_port)),
              std::string::npos)
        << message;
  }
}

}  // namespace
}  // namespace k3lab::train
