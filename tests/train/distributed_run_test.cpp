// `k3lab run hybrid-attention` as two data-parallel ranks (the torchrun-style environment, Gloo on
// loopback): rank 0 alone writes the manifest, the ledger and the checkpoints, and the unit's result
// matches the one-process run of the same unit; a killed rank is noted (by rank 0, or by the survivor
// in its own shard when rank 0 is the one killed), its unit stays open, one process may not resume it
// (another world size), and the same command resumes it.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "k3lab/core/ledger.hpp"
#include "k3lab/core/run_dir.hpp"
#include "rank_processes.hpp"
#include "test_support.hpp"

namespace k3lab::train {
namespace {

using testing::TempDir;

const std::string kUnit = "arm=hybrid-3kda-1mla/seed=3101";
constexpr std::chrono::seconds kDeadline{240};
// The smoke profile's losses of one process and of two ranks differ only by float summation order.
constexpr double kLossTolerance = 1e-5;

std::vector<std::string> run_args(const std::filesystem::path& out, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {"run", "hybrid-attention", "--profile", "smoke", "--unfrozen", "--unit", kUnit,
                                   "--out", out.string(), "--device", "cpu", "--threads", "1"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

std::map<std::string, std::string> base_environment() {
  return {{"K3LAB_PROTOCOL_DIR", std::string(K3LAB_SOURCE_DIR) + "/experiments"}, {"OMP_NUM_THREADS", "1"}};
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Starts the ranks of one command; `poll` may kill one of them on a cue (it gets their pids).
std::vector<testing::ProcessExit> run_ranks(const std::filesystem::path& dir, const std::vector<std::string>& args,
                                            const std::string& tag,
                                            const std::function<void(const std::vector<pid_t>&)>& poll = {}) {
  const int port = testing::free_loopback_port();
  std::vector<pid_t> pids;
  for (int rank = 0; rank < 2; ++rank) {
    auto vars = base_environment();
    for (const auto& [k, v] : testing::rank_environment(rank, 2, port)) vars[k] = v;
    pids.push_back(testing::start_process(K3LAB_BINARY, args, vars, dir / (tag + "-rank-" + std::to_string(rank) + ".log")));
  }
  return testing::wait_all(pids, kDeadline, poll ? std::function<void()>([&] { poll(pids); }) : std::function<void()>());
}

std::filesystem::path only_run_dir(const std::filesystem::path& out) {
  std::vector<std::filesystem::path> dirs;
  const auto root = out / "hybrid-attention";
  if (std::filesystem::exists(root)) {
    for (const auto& entry : std::filesystem::directory_iterator(root)) {
      if (entry.is_directory()) dirs.push_back(entry.path());  // not the runner's lock file beside the run dirs
    }
  }
  if (dirs.size() != 1) throw std::runtime_error("expected one run dir under " + root.string());
  return dirs.front();
}

std::vector<nlohmann::json> records(const std::filesystem::path& run_dir, const std::string& kind) {
  std::vector<nlohmann::json> found;
  for (const auto& r : core::read_ledger(run_dir).records) {
    if (r.value("kind", "") == kind) found.push_back(r);
  }
  return found;
}

// Kills rank `victim` once rank 0 has written its first evaluation note (the checkpoint at step 2 is
// on disk by then); with the budget raised to 40 steps, both ranks are still training.
std::function<void(const std::vector<pid_t>&)> kill_after_first_evaluation(const std::filesystem::path& out, int victim) {
  return [out, victim, killed = false](const std::vector<pid_t>& pids) mutable {
    if (killed) return;
    const auto root = out / "hybrid-attention";
    if (!std::filesystem::exists(root)) return;
    for (const auto& entry : std::filesystem::directory_iterator(root)) {
      if (read_file(entry.path() / "ledger.jsonl").find("\"note\":\"evaluation\"") != std::string::npos) {
        ::kill(pids[static_cast<std::size_t>(victim)], SIGKILL);
        killed = true;
      }
    }
  };
}

TEST(DataParallelRun, TwoRanksTrainAUnitThatOnlyRankZeroRecords) {
  TempDir dir("dp-run");
  const auto single_out = dir.path / "single";
  const pid_t single = testing::start_process(K3LAB_BINARY, run_args(single_out), base_environment(), dir.path / "single.log");
  ASSERT_EQ(testing::wait_all({single}, kDeadline)[0].code, 0) << read_file(dir.path / "single.log");

  const auto out = dir.path / "dp";
  const auto exits = run_ranks(dir.path, run_args(out), "dp");
  ASSERT_EQ(exits[0].code, 0) << read_file(dir.path / "dp-rank-0.log");
  ASSERT_EQ(exits[1].code, 0) << read_file(dir.path / "dp-rank-1.log");

  const auto run_dir = only_run_dir(out);
  const auto manifest = core::read_manifest(run_dir);
  EXPECT_EQ(manifest.at("data_parallel").at("world_size"), 2);
  EXPECT_EQ(manifest.at("data_parallel").at("backend"), "gloo");
  EXPECT_EQ(core::read_ledger(run_dir).files.size(), 1u);  // no shard: rank 1 wrote nothing
  const auto attempts = records(run_dir, "attempt");
  ASSERT_EQ(attempts.size(), 1u);
  EXPECT_EQ(attempts[0].at("world_size"), 2);
  const auto results = records(run_dir, "result");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].at("unit"), kUnit);
  EXPECT_EQ(results[0].at("timing").at("training").at("world_size"), 2);

  const auto single_results = records(only_run_dir(single_out), "result");
  ASSERT_EQ(single_results.size(), 1u);
  EXPECT_FALSE(core::read_manifest(only_run_dir(single_out)).contains("data_parallel"));
  const auto& training = results[0].at("data").at("training");
  const auto& single_training = single_results[0].at("data").at("training");
  const auto losses = training.at("losses").get<std::vector<double>>();
  const auto single_losses = single_training.at("losses").get<std::vector<double>>();
  ASSERT_EQ(losses.size(), single_losses.size());
  for (std::size_t i = 0; i < losses.size(); ++i) EXPECT_NEAR(losses[i], single_losses[i], kLossTolerance) << "step " << i;
  EXPECT_EQ(training.at("evaluations").size(), single_training.at("evaluations").size());
  // One evaluation note per evaluation: rank 1 evaluated too but recorded nothing.
  EXPECT_EQ(records(run_dir, "note").size(), records(only_run_dir(single_out), "note").size());
}

TEST(DataParallelRun, AKilledRankIsNotedAndTheSameCommandResumesTheUnit) {
  TempDir dir("dp-run-kill");
  const auto out = dir.path / "runs";
  const auto args = run_args(out, {"--set", "token_budget=5120", "--set", "downstream.at_tokens=[5120]"});
  const auto killed = run_ranks(dir.path, args, "killed", kill_after_first_evaluation(out, 1));
  EXPECT_EQ(killed[1].signal, SIGKILL);
  EXPECT_EQ(killed[0].code, 1) << read_file(dir.path / "killed-rank-0.log");
  const auto run_dir = only_run_dir(out);
  EXPECT_TRUE(records(run_dir, "result").empty());
  EXPECT_TRUE(records(run_dir, "failure").empty());
  std::vector<nlohmann::json> rank_failures;
  for (const auto& note : records(run_dir, "note")) {
    if (note.value("note", "") == "rank-failure") rank_failures.push_back(note);
  }
  ASSERT_EQ(rank_failures.size(), 1u);
  EXPECT_EQ(rank_failures[0].at("unit"), kUnit);
  EXPECT_EQ(rank_failures[0].at("rank"), 0);
  EXPECT_NE(rank_failures[0].at("detail").get<std::string>().find("rank 1 died"), std::string::npos);

  // One process may not continue the two ranks' checkpoint: exit 2, nothing recorded, the fix named.
  const pid_t single = testing::start_process(K3LAB_BINARY, args, base_environment(), dir.path / "single.log");
  EXPECT_EQ(testing::wait_all({single}, kDeadline)[0].code, 2) << read_file(dir.path / "single.log");
  EXPECT_NE(read_file(dir.path / "single.log").find("written by 2 data-parallel rank(s) and this command has 1"),
            std::string::npos)
      << read_file(dir.path / "single.log");
  EXPECT_TRUE(records(run_dir, "result").empty());
  EXPECT_TRUE(records(run_dir, "failure").empty());

  const auto resumed = run_ranks(dir.path, args, "resumed");
  ASSERT_EQ(resumed[0].code, 0) << read_file(dir.path / "resumed-rank-0.log");
  ASSERT_EQ(resumed[1].code, 0) << read_file(dir.path / "resumed-rank-1.log");
  const auto results = records(run_dir, "result");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_GE(results[0].at("timing").at("training").at("resumed_from_step").get<std::int64_t>(), 2);
  EXPECT_EQ(results[0].at("data").at("training").at("losses").size(), 40u);
}

TEST(DataParallelRun, AKilledRankZeroIsNotedByTheSurvivorInItsOwnShard) {
  TempDir dir("dp-run-kill-root");
  const auto out = dir.path / "runs";
  const auto killed = run_ranks(dir.path, run_args(out, {"--set", "token_budget=5120", "--set", "downstream.at_tokens=[5120]"}), "killed",
                                kill_after_first_evaluation(out, 0));
  EXPECT_EQ(killed[0].signal, SIGKILL);
  EXPECT_EQ(killed[1].code, 1) << read_file(dir.path / "killed-rank-1.log");
  const auto run_dir = only_run_dir(out);
  const auto shard = run_dir / "ledger.rank-1.jsonl";
  ASSERT_TRUE(std::filesystem::exists(shard));
  const auto notes = records(run_dir, "note");
  const auto note = std::find_if(notes.begin(), notes.end(), [](const auto& n) { return n.value("note", "") == "rank-failure"; });
  ASSERT_NE(note, notes.end());
  EXPECT_EQ(note->at("rank"), 1);
  EXPECT_EQ(note->at("unit"), kUnit);
  EXPECT_NE(note->at("detail").get<std::string>().find("rank 0 died"), std::string::npos);
  EXPECT_TRUE(records(run_dir, "result").empty());
}

TEST(DataParallelRun, ExperimentsThatDoNotTrainRefuseSeveralRanks) {
  TempDir dir("dp-run-refuse");
  auto vars = base_environment();
  for (const auto& [k, v] : testing::rank_environment(0, 2, testing::free_loopback_port())) vars[k] = v;
  const pid_t pid = testing::start_process(K3LAB_BINARY, {"run", "memory-pool", "--profile", "smoke", "--unfrozen", "--out",
                                                          (dir.path / "runs").string()},
                                           vars, dir.path / "refuse.log");
  EXPECT_EQ(testing::wait_all({pid}, kDeadline)[0].code, 2);
  const auto log = read_file(dir.path / "refuse.log");
  EXPECT_NE(log.find("runs as one process"), std::string::npos) << log;
  EXPECT_FALSE(std::filesystem::exists(dir.path / "runs" / "memory-pool"));
}

}  // namespace
}  // namespace k3lab::train
