// A real one-node Slurm (scripts/slurm-local.sh): the memory-pool smoke profile as a sharded job
// array, one task's k3lab SIGKILLed mid-shard, `status`, a resubmission of the same command (only the
// killed shard's unfinished units go out), and the merged ledger and report compared with a
// one-process run; a data-parallel task on two ranks; a SIGSTOPped rank (the task ends, the unit
// completes on resubmission). Skips without root or without Debian's slurm-wlm and munge.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "common/files.hpp"
#include "k3lab/core/ledger.hpp"
#include "k3lab/core/run_dir.hpp"
#include "k3lab/exec/slurm_jobs.hpp"
#include "local_cluster.hpp"

using namespace k3lab;
using namespace k3lab::slurm_testing;
using namespace std::chrono_literals;

// First in the file, so first in its ctest lane (gtest's order is the file's; ctest keeps it when no timing
// history says otherwise, and with history this test is the lane's longest, which ctest starts first):
// it mostly waits on the distributed timeout, which overlaps the other lanes' work, and the tests below,
// which keep both cores busy, then run with less beside them.
// A hung data-parallel rank (SIGSTOP) ends its task within the distributed timeout plus srun's --wait:
// rank 0 notes the rank failure and exits 1, --kill-on-bad-exit=1 ends the step, the unit stays pending
// (no failure record), and the same submission again finishes it.
TEST(SlurmCluster, AStoppedRankEndsItsTaskAndTheUnitCompletesOnResubmission) {
  if (const auto why = cannot_start_cluster(true)) GTEST_SKIP() << *why;
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "two ranks need two CPUs on the one-node cluster";
  Workdir w;
  constexpr int kDistTimeout = 20;
  w.env["K3LAB_DIST_TIMEOUT"] = std::to_string(kDistTimeout);
  LocalSlurm slurm;
  ASSERT_TRUE(slurm.ok()) << slurm.log();
  w.env["SLURM_CONF"] = slurm.conf().string();
  // Long enough (200 steps) that the stop lands mid-training.
  const std::vector<std::string> submit = {
      "run", "hybrid-attention", "--profile", "smoke", "--unfrozen", "--set", "token_budget=25600", "--set",
      "eval_interval_tokens=6400", "--set", "downstream.at_tokens=[25600]", "--unit", "arm=all-kda/seed=3101", "--threads", "1", "--out", "runs",
      "--executor", "slurm", "--slurm-opt", "ntasks=2"};
  const auto first = w.k3lab(submit);
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  const std::string job = job_id_of(first.out);
  ASSERT_FALSE(job.empty()) << first.out;
  const auto run_dir = core::list_run_dirs(w.dir.path() / "runs", "hybrid-attention").at(0).path;
  const std::string worker = exec::task_worker_name(job, exec::read_job_records(run_dir).at(0).tasks.at(0).index);

  pid_t stopped = 0;
  for (const auto deadline = std::chrono::steady_clock::now() + 120s; !stopped && std::chrono::steady_clock::now() < deadline;) {
    bool attempted = false;
    for (const auto& r : core::read_ledger(run_dir).records) attempted |= r.value("kind", "") == "attempt";
    if (attempted) {
      std::this_thread::sleep_for(3s);  // into training
      const pid_t rank1 = k3lab_rank_process(worker, 1);
      if (rank1 > 0 && ::kill(rank1, SIGSTOP) == 0) stopped = rank1;
    }
    std::this_thread::sleep_for(100ms);
  }
  ASSERT_NE(stopped, 0) << "rank 1 of " << worker << " was not found while training";
  const auto stopped_at = std::chrono::steady_clock::now();
  const bool ended = w.wait_until_ended(job, std::chrono::seconds(kDistTimeout + exec::kRankExitWaitSeconds + 60));
  ::kill(stopped, SIGCONT);  // harmless when Slurm has killed it
  ASSERT_TRUE(ended) << "the task with a stopped rank did not end";
  EXPECT_LT(std::chrono::steady_clock::now() - stopped_at, std::chrono::seconds(kDistTimeout + exec::kRankExitWaitSeconds + 30));

  const auto status = w.k3lab({"status", run_dir.string(), "--json"});
  ASSERT_EQ(status.exit_code, 0) << status.out << status.err;
  const auto s = nlohmann::json::parse(status.out);
  EXPECT_EQ(s["counts"]["failed"], 0);
  EXPECT_EQ(s["counts"]["result"], 0);
  bool rank_failure = false;
  for (const auto& r : core::read_ledger(run_dir).records) rank_failure |= r.value("note", "") == "rank-failure";
  EXPECT_TRUE(rank_failure);

  const auto second = w.k3lab(submit);
  ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
  const std::string job2 = job_id_of(second.out);
  ASSERT_FALSE(job2.empty()) << second.out;
  ASSERT_TRUE(w.wait_until_ended(job2, 240s)) << "job " << job2 << " did not end";
  const auto records = terminal(run_dir);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0]["kind"], "result");
}

TEST(SlurmCluster, KilledShardTaskResubmittedEqualsOneProcessRun) {
  if (const auto why = cannot_start_cluster()) GTEST_SKIP() << *why;
  Workdir w;

  const auto reference = w.k3lab({"run", "memory-pool", "--profile", "smoke", "--unfrozen", "--out", "runs-one"});
  ASSERT_EQ(reference.exit_code, 0) << reference.out << reference.err;
  const auto reference_dir = core::list_run_dirs(w.dir.path() / "runs-one", "memory-pool").at(0).path;

  LocalSlurm slurm;
  ASSERT_TRUE(slurm.ok()) << slurm.log();
  w.env["SLURM_CONF"] = slurm.conf().string();

  // --unfrozen keeps this test about Slurm, not about the protocol's freeze record; the tasks must
  // repeat it to resolve the same design.
  const std::vector<std::string> submit = {"run", "memory-pool", "--profile", "smoke", "--unfrozen", "--out",
                                           "runs-slurm", "--executor", "slurm", "--shard", "3"};
  const auto first = w.k3lab(submit);
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  const std::string job = job_id_of(first.out);
  ASSERT_FALSE(job.empty()) << first.out;
  const auto run_dir = core::list_run_dirs(w.dir.path() / "runs-slurm", "memory-pool").at(0).path;

  // SIGKILL one task's k3lab once it has finished a unit and still has units of its shard left.
  const auto first_jobs = exec::read_job_records(run_dir);
  ASSERT_EQ(first_jobs.size(), 1u);
  std::optional<std::size_t> victim;
  for (const auto deadline = std::chrono::steady_clock::now() + 90s; !victim && std::chrono::steady_clock::now() < deadline;) {
    for (const auto& task : first_jobs[0].tasks) {
      const std::string worker = exec::task_worker_name(job, task.index);
      const auto shard = run_dir / ("ledger." + worker + ".jsonl");
      if (!std::filesystem::exists(shard)) continue;
      const auto finished = terminal_count(shard);
      if (finished == 0 || finished >= task.units.size()) continue;
      const pid_t pid = k3lab_process_of(worker);
      if (pid > 0 && ::kill(pid, SIGKILL) == 0) {
        victim = task.index;
        break;
      }
    }
    std::this_thread::sleep_for(2ms);
  }
  ASSERT_TRUE(victim.has_value()) << "no task could be killed mid-shard";
  ASSERT_TRUE(w.wait_until_ended(job, 120s)) << "job " << job << " did not end";
  EXPECT_EQ(w.states(job).tasks.at({job, *victim}).state, "FAILED");  // killed from outside Slurm

  const auto status = w.k3lab({"status", run_dir.string(), "--json"});
  ASSERT_EQ(status.exit_code, 0) << status.err;
  const auto s = nlohmann::json::parse(status.out);
  const std::size_t planned = s["planned"].get<std::size_t>();
  EXPECT_EQ(s["counts"]["failed"], 0);
  EXPECT_EQ(s["counts"]["running"], 0);
  EXPECT_GE(s["counts"]["pending"].get<std::size_t>(), 1u);
  EXPECT_EQ(s["counts"]["result"].get<std::size_t>() + s["counts"]["pending"].get<std::size_t>(), planned);
  std::set<std::string> pending;
  for (const auto& u : s["units"]) {
    if (u["phase"] == "pending") pending.insert(u["unit"].get<std::string>());
  }

  const auto second = w.k3lab(submit);
  ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
  const std::string job2 = job_id_of(second.out);
  ASSERT_FALSE(job2.empty()) << second.out;
  EXPECT_NE(job2, job);
  const auto jobs = exec::read_job_records(run_dir);
  ASSERT_EQ(jobs.size(), 2u);
  ASSERT_EQ(jobs[1].tasks.size(), 1u);  // only the killed shard had units left
  EXPECT_EQ(jobs[1].tasks[0].index, *victim);
  EXPECT_EQ(std::set<std::string>(jobs[1].tasks[0].units.begin(), jobs[1].tasks[0].units.end()), pending);
  ASSERT_TRUE(w.wait_until_ended(job2, 120s)) << "job " << job2 << " did not end";

  const auto done = nlohmann::json::parse(w.k3lab({"status", run_dir.string(), "--json"}).out);
  EXPECT_EQ(done["counts"]["result"], planned);
  EXPECT_EQ(done["counts"]["pending"], 0);

  EXPECT_EQ(terminal(run_dir), terminal(reference_dir));
  const auto report_one = w.k3lab({"report", "--runs", "runs-one", "--out", "report-one"});
  const auto report_slurm = w.k3lab({"report", "--runs", "runs-slurm", "--out", "report-slurm"});
  ASSERT_EQ(report_one.exit_code, 0) << report_one.err;
  ASSERT_EQ(report_slurm.exit_code, 0) << report_slurm.err;
  const auto one = k3lab::testing::report_measurements(w.dir.path() / "report-one");
  EXPECT_FALSE(one.empty());
  EXPECT_EQ(k3lab::testing::report_measurements(w.dir.path() / "report-slurm"), one);

  const auto third = w.k3lab(submit);
  EXPECT_EQ(third.exit_code, 0) << third.out << third.err;
  EXPECT_NE(third.out.find("nothing to submit"), std::string::npos) << third.out;
  EXPECT_EQ(exec::read_job_records(run_dir).size(), 2u);
}

// A data-parallel array task: `--slurm-opt ntasks=2` makes the task srun two ranks of one
// hybrid-attention smoke unit; rank 0 alone records it, and its losses equal a one-process run's.
TEST(SlurmCluster, DataParallelTaskTrainsOneUnitOnTwoRanks) {
  if (const auto why = cannot_start_cluster(true)) GTEST_SKIP() << *why;
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "two ranks need two CPUs on the one-node cluster";
  Workdir w;
  const std::string unit = "arm=all-kda/seed=3101";
  const auto reference = w.k3lab({"run", "hybrid-attention", "--profile", "smoke", "--unfrozen", "--unit", unit,
                                  "--threads", "1", "--out", "runs-one"});
  ASSERT_EQ(reference.exit_code, 0) << reference.out << reference.err;
  const auto reference_dir = core::list_run_dirs(w.dir.path() / "runs-one", "hybrid-attention").at(0).path;

  LocalSlurm slurm;
  ASSERT_TRUE(slurm.ok()) << slurm.log();
  w.env["SLURM_CONF"] = slurm.conf().string();
  const auto submitted = w.k3lab({"run", "hybrid-attention", "--profile", "smoke", "--unfrozen", "--unit", unit,
                                  "--threads", "1", "--out", "runs-slurm", "--executor", "slurm", "--slurm-opt",
                                  "ntasks=2"});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.out << submitted.err;
  const std::string job = job_id_of(submitted.out);
  ASSERT_FALSE(job.empty()) << submitted.out;
  ASSERT_TRUE(w.wait_until_ended(job, 180s)) << "job " << job << " did not end";
  const auto run_dir = core::list_run_dirs(w.dir.path() / "runs-slurm", "hybrid-attention").at(0).path;

  std::string task_log;
  for (const auto& entry : std::filesystem::directory_iterator(run_dir / "slurm")) {
    if (entry.path().extension() != ".out") continue;
    std::ifstream in(entry.path());
    task_log += std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  // The submitting process wrote the manifest; the task's attempt says how it ran.
  std::optional<nlohmann::json> attempt;
  for (const auto& r : core::read_ledger(run_dir).records) {
    if (r.value("kind", "") == "attempt") attempt = r;
  }
  ASSERT_TRUE(attempt.has_value()) << task_log;
  EXPECT_EQ(attempt->value("world_size", 0), 2) << attempt->dump();
  // The submission's manifest says how its tasks train, as a local data-parallel run's does.
  const auto manifest = core::read_manifest(run_dir);
  ASSERT_TRUE(manifest.contains("data_parallel")) << manifest.dump();
  EXPECT_EQ(manifest["data_parallel"]["world_size"], 2);
  EXPECT_EQ(manifest["data_parallel"]["launcher"], "srun");
  const auto records = terminal(run_dir);
  ASSERT_EQ(records.size(), 1u) << task_log;
  EXPECT_EQ(records[0]["kind"], "result");
  const auto expected = terminal(reference_dir).at(0)["data"]["training"]["losses"];
  const auto losses = records[0]["data"]["training"]["losses"];
  ASSERT_EQ(losses.size(), expected.size());
  for (std::size_t i = 0; i < losses.size(); ++i) {
    // Two ranks sum their halves of the batch in a different order: float rounding only.
    EXPECT_NEAR(losses[i].get<double>(), expected[i].get<double>(), 1e-5) << "step " << i;
  }
  for (const auto& entry : std::filesystem::directory_iterator(run_dir)) {
    EXPECT_EQ(entry.path().filename().string().find("rank-"), std::string::npos) << "a rank wrote " << entry.path();
  }
}
