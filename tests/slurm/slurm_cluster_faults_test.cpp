// What a real cluster does to a run, on the one-node Slurm of scripts/slurm-local.sh: slurmd dies while
// tasks run (Slurm declares NODE_FAIL, the k3lab processes live on), and an administrator requeues a
// running task. Either way the run must end with exactly one terminal record per unit, no failure
// record, and the results of a one-process run. The units are agent-replay smoke runs against the
// embedded mock (each unit its own mock session, so a unit's record does not depend on which process ran
// the units before it; context-probe's warm units do), slowed by --requests-per-minute (a transport
// setting: it changes no recorded result) so that the tasks are still running when the fault arrives. Skips without root or without Debian's slurm-wlm
// and munge.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <optional>
#include <set>
#include <thread>

#include "k3lab/core/run_dir.hpp"
#include "k3lab/exec/slurm_jobs.hpp"
#include "local_cluster.hpp"

using namespace k3lab;
using namespace k3lab::slurm_testing;
using namespace std::chrono_literals;

namespace {

// Slow enough that a task of a 2-shard run needs about 55 s for its ~42 model calls (NODE_FAIL comes
// about 30 s after slurmd stops).
const std::vector<std::string> kSlowAgentReplay = {"run",        "agent-replay", "--profile", "smoke",
                                                   "--unfrozen", "--out",        "runs-slurm", "--executor",
                                                   "slurm",      "--shard",      "2",          "--requests-per-minute",
                                                   "45"};

std::vector<nlohmann::json> one_process_reference(const Workdir& w) {
  const auto reference = w.k3lab({"run", "agent-replay", "--profile", "smoke", "--unfrozen", "--out", "runs-one"});
  EXPECT_EQ(reference.exit_code, 0) << reference.out << reference.err;
  return terminal(core::list_run_dirs(w.dir.path() / "runs-one", "agent-replay").at(0).path);
}

// The workers of the run's first job, once each has recorded a unit (empty on timeout).
std::vector<std::string> workers_once_each_recorded(const std::filesystem::path& run_dir, const std::string& job) {
  const auto tasks = exec::read_job_records(run_dir).at(0).tasks;
  for (const auto deadline = std::chrono::steady_clock::now() + 90s; std::chrono::steady_clock::now() < deadline;) {
    std::vector<std::string> workers;
    for (const auto& task : tasks) {
      const std::string worker = exec::task_worker_name(job, task.index);
      if (terminal_count(run_dir / ("ledger." + worker + ".jsonl")) > 0) workers.push_back(worker);
    }
    if (workers.size() == tasks.size()) return workers;
    std::this_thread::sleep_for(200ms);
  }
  return {};
}

struct SubmittedRun {
  std::string job;
  std::filesystem::path run_dir;
  std::vector<std::string> workers;
};

// Submits `submit` and waits until every task of the job has recorded a unit (nullopt, with the
// test's failure, otherwise).
std::optional<SubmittedRun> submit_and_wait_for_records(const Workdir& w, const std::vector<std::string>& submit) {
  const auto first = w.k3lab(submit);
  EXPECT_EQ(first.exit_code, 0) << first.out << first.err;
  SubmittedRun run{job_id_of(first.out), {}, {}};
  EXPECT_FALSE(run.job.empty()) << first.out;
  if (first.exit_code != 0 || run.job.empty()) return std::nullopt;
  run.run_dir = core::list_run_dirs(w.dir.path() / "runs-slurm", "agent-replay").at(0).path;
  run.workers = workers_once_each_recorded(run.run_dir, run.job);
  EXPECT_FALSE(run.workers.empty()) << "the tasks recorded nothing within 90 s";
  if (run.workers.empty()) return std::nullopt;
  return run;
}

nlohmann::json status_json(const Workdir& w, const std::filesystem::path& run_dir) {
  const auto status = w.k3lab({"status", run_dir.string(), "--json"});
  EXPECT_EQ(status.exit_code, 0) << status.out << status.err;
  return nlohmann::json::parse(status.out);
}

// Submits again until nothing is left (at most `rounds` times), waiting for each job.
void resubmit_until_done(const Workdir& w, const std::vector<std::string>& submit, int rounds) {
  for (int round = 0; round < rounds; ++round) {
    const auto again = w.k3lab(submit);
    ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
    if (again.out.find("nothing to submit") != std::string::npos) return;
    const std::string job = job_id_of(again.out);
    ASSERT_FALSE(job.empty()) << again.out;
    ASSERT_TRUE(w.wait_until_ended(job, 180s)) << "job " << job << " did not end";
  }
}

// The run is complete, without failure or duplicate, and its records equal the one-process run's apart
// from what an interrupted unit's resume may change (docs/reliability.md, "The API experiments after a
// resume"): an agent-replay unit whose run a stopped process left unfinished notes the operation record
// it set aside and the cost of that attempt; at most `interrupted` units may.
void expect_complete_and_equal(const Workdir& w, const std::filesystem::path& run_dir,
                               const std::vector<nlohmann::json>& reference, std::size_t interrupted) {
  const auto done = w.k3lab({"status", run_dir.string(), "--json"});
  EXPECT_EQ(done.exit_code, 0) << done.out << done.err;  // non-zero on any duplicate terminal record
  const auto s = nlohmann::json::parse(done.out);
  EXPECT_EQ(s["counts"]["result"], s["planned"]);
  EXPECT_EQ(s["counts"]["failed"], 0);
  EXPECT_TRUE(s["duplicates"].empty()) << s["duplicates"].dump();
  auto records = terminal(run_dir);
  ASSERT_EQ(records.size(), reference.size());
  std::size_t resumed = 0;
  for (auto& r : records) {
    if (!r["data"].contains("abandoned_records")) continue;
    ++resumed;
    r["data"].erase("abandoned_records");
    r["data"]["metrics"]["abandoned_attempt_cost_usd"] = 0.0;
  }
  EXPECT_LE(resumed, interrupted);
  for (std::size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ(records[i], reference[i]) << "first differing record, unit " << reference[i].value("unit", "")
                                        << "\nSlurm run: " << records[i].dump() << "\none process: " << reference[i].dump();
    if (records[i] != reference[i]) break;
  }
}

}  // namespace

// slurmd stops for long enough that slurmctld declares the node down and the tasks NODE_FAIL, while
// their k3lab processes keep calling and recording: `status` writes no failure and shows the leased
// units running, a resubmission during the outage leaves them out and says so, and once slurmd is back
// the run completes with one terminal record per unit.
TEST(SlurmCluster, ANodeFailureWhileTasksRunLeavesNoFailureOrDuplicateAndTheRunCompletes) {
  if (const auto why = cannot_start_cluster()) GTEST_SKIP() << *why;
  Workdir w;
  const auto reference = one_process_reference(w);
  LocalSlurm slurm(std::map<std::string, std::string>{{"K3LAB_SLURMD_TIMEOUT", "10"}});
  if (slurm.was_running()) GTEST_SKIP() << "a local cluster already runs: this test starts its own with a 10 s SlurmdTimeout";
  ASSERT_TRUE(slurm.ok()) << slurm.log();
  w.env["SLURM_CONF"] = slurm.conf().string();
  auto submit = kSlowAgentReplay;
  submit.push_back("--no-requeue");  // Slurm would requeue the tasks itself; here a person resubmits

  const auto started = submit_and_wait_for_records(w, submit);
  ASSERT_TRUE(started.has_value());
  const auto& [job, run_dir, workers] = *started;

  ASSERT_TRUE(slurm.stop_slurmd());
  bool node_failed = false;
  for (const auto deadline = std::chrono::steady_clock::now() + 90s; !node_failed && std::chrono::steady_clock::now() < deadline;) {
    const auto tasks = w.states(job).tasks;
    node_failed = !tasks.empty() && std::all_of(tasks.begin(), tasks.end(), [](const auto& t) { return t.second.state == "NODE_FAIL"; });
    std::this_thread::sleep_for(500ms);
  }
  ASSERT_TRUE(node_failed) << "slurmctld did not declare NODE_FAIL within 90 s of stopping slurmd";
  for (const auto& worker : workers) {
    ASSERT_GT(k3lab_process_of(worker), 0) << worker << " ended before NODE_FAIL: the test needs slower calls";
  }

  const auto during = status_json(w, run_dir);
  EXPECT_EQ(during["counts"]["failed"], 0);
  std::set<std::string> leased;
  for (const auto& u : during["units"]) {
    if (u["phase"] == "running") leased.insert(u["unit"].get<std::string>());
  }
  EXPECT_GE(leased.size(), 1u) << during.dump();
  const auto second = w.k3lab(submit);
  ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
  EXPECT_NE(second.out.find("live lease covers them"), std::string::npos) << second.out;
  const auto jobs = exec::read_job_records(run_dir);
  for (const auto& task : jobs.back().tasks) {
    for (const auto& unit : task.units) EXPECT_EQ(leased.count(unit), 0u) << unit << " was submitted while leased";
  }

  ASSERT_TRUE(slurm.start_again());
  for (const auto& j : jobs) ASSERT_TRUE(w.wait_until_ended(j.job_id, 180s)) << "job " << j.job_id << " did not end";
  for (const auto deadline = std::chrono::steady_clock::now() + 60s; std::chrono::steady_clock::now() < deadline;) {
    if (std::none_of(workers.begin(), workers.end(), [](const auto& worker) { return k3lab_process_of(worker) > 0; })) break;
    std::this_thread::sleep_for(500ms);
  }
  resubmit_until_done(w, submit, 3);
  expect_complete_and_equal(w, run_dir, reference, workers.size());
}

// `scontrol requeue` of a running array task: Slurm stops its k3lab (SIGTERM) and starts the task
// again under the same job and task id, which appends to the same shard, resumes the open unit, and
// leaves nothing to resubmit.
TEST(SlurmCluster, AnAdministratorsRequeueOfARunningTaskEndsWithOneRecordPerUnit) {
  if (const auto why = cannot_start_cluster()) GTEST_SKIP() << *why;
  Workdir w;
  const auto reference = one_process_reference(w);
  LocalSlurm slurm;
  ASSERT_TRUE(slurm.ok()) << slurm.log();
  w.env["SLURM_CONF"] = slurm.conf().string();
  auto submit = kSlowAgentReplay;
  submit.back() = "120";  // about 20 s per task; the requeue follows its first record

  const auto started = submit_and_wait_for_records(w, submit);
  ASSERT_TRUE(started.has_value());
  const auto& [job, run_dir, workers] = *started;
  const pid_t before = k3lab_process_of(workers[0]);
  ASSERT_GT(before, 0) << workers[0] << " ended before the requeue: the test needs slower calls";

  const std::size_t index = exec::read_job_records(run_dir).at(0).tasks.at(0).index;
  const std::string task = job + "_" + std::to_string(index);
  const auto requeued = w.slurm({"scontrol", "requeue", task});
  ASSERT_EQ(requeued.exit_code, 0) << requeued.out << requeued.err;
  // Slurm holds a requeued job back for two minutes; once it is pending again, let it start at once.
  bool released = false;
  for (const auto deadline = std::chrono::steady_clock::now() + 60s; !released && std::chrono::steady_clock::now() < deadline;) {
    std::this_thread::sleep_for(500ms);
    const auto tasks = w.states(job).tasks;
    const auto it = tasks.find({job, index});
    if (it == tasks.end() || it->second.state != "PENDING") continue;
    if (w.slurm({"scontrol", "update", "JobId=" + task, "StartTime=now"}).exit_code != 0) continue;
    released = w.slurm({"scontrol", "-o", "show", "job", task}).out.find("Reason=BeginTime") == std::string::npos;
  }
  ASSERT_TRUE(released) << "the requeued task " << task << " did not become eligible";
  ASSERT_TRUE(w.wait_until_ended(job, 180s)) << "job " << job << " did not end";
  EXPECT_NE(::kill(before, 0), 0) << "the requeued task's first k3lab still runs";
  const auto shown = w.slurm({"scontrol", "-o", "show", "job", task});
  EXPECT_NE(shown.out.find("Restarts=1"), std::string::npos) << shown.out;

  const auto again = w.k3lab(submit);
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_NE(again.out.find("nothing to submit"), std::string::npos) << again.out;
  expect_complete_and_equal(w, run_dir, reference, 1);
}
