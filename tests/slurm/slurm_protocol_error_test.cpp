// A real one-node Slurm (scripts/slurm-local.sh): a task that exits 3 is not sent again until a person
// says so. It trains nothing and times nothing (the job is held while the protocol is edited), so it runs
// beside other tests. Skips without root or without Debian's slurm-wlm and munge.
#include <gtest/gtest.h>

#include <fstream>

#include "k3lab/core/run_dir.hpp"
#include "k3lab/exec/slurm_jobs.hpp"
#include "local_cluster.hpp"

using namespace k3lab;
using namespace k3lab::slurm_testing;
using namespace std::chrono_literals;

// A task that exits with one of k3lab's deterministic errors (3: the protocol its tasks read differs from
// the run's) is marked as needing a person: `status` says so and exits 1, the same submission refuses to
// send its units again even once Slurm has forgotten nothing, and --resubmit-errors, after the fix,
// finishes the run.
TEST(SlurmCluster, AProtocolErrorIsNotResubmittedUntilAPersonSaysSo) {
  if (const auto why = cannot_start_cluster()) GTEST_SKIP() << *why;
  Workdir w;
  LocalSlurm slurm;
  ASSERT_TRUE(slurm.ok()) << slurm.log();
  w.env["SLURM_CONF"] = slurm.conf().string();

  const std::vector<std::string> submit = {"run",  "memory-pool", "--profile", "smoke",   "--unfrozen", "--out",
                                           "runs", "--executor",  "slurm",     "--shard", "2"};
  auto held = submit;
  held.insert(held.end(), {"--slurm-opt", "hold"});
  const auto first = w.k3lab(held);
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  const std::string job = job_id_of(first.out);
  ASSERT_FALSE(job.empty()) << first.out;
  const auto run_dir = core::list_run_dirs(w.dir.path() / "runs", "memory-pool").at(0).path;

  // While the job is held, the protocol its tasks will read is edited: every task exits 3.
  const auto protocol_file = w.dir.path() / "experiments" / "memory-pool.json";
  std::ifstream in(protocol_file);
  const auto original = nlohmann::json::parse(in);
  auto edited = original;
  edited["title"] = original["title"].get<std::string>() + " (edited)";
  std::ofstream(protocol_file) << edited.dump(2);
  ASSERT_EQ(w.slurm({"scontrol", "release", job}).exit_code, 0);
  ASSERT_TRUE(w.wait_until_ended(job, 120s)) << "job " << job << " did not end";
  for (const auto& [key, t] : w.states(job).tasks) EXPECT_EQ(t.exit_code, "3:0") << t.state;

  const auto status = w.k3lab({"status", run_dir.string()});
  EXPECT_EQ(status.exit_code, 1) << status.out << status.err;
  EXPECT_NE(status.out.find("ERROR (needs a person): task " + job + "_0 ended FAILED (exit 3:0)"), std::string::npos)
      << status.out;

  std::ofstream(protocol_file) << original.dump(2);  // the person restores the protocol ...
  const auto refused = w.k3lab(submit);
  EXPECT_EQ(refused.exit_code, 1) << refused.out << refused.err;
  EXPECT_NE(refused.out.find("--resubmit-errors"), std::string::npos) << refused.out;
  EXPECT_EQ(exec::read_job_records(run_dir).size(), 1u);

  auto confirmed = submit;  // ... and says so
  confirmed.push_back("--resubmit-errors");
  const auto second = w.k3lab(confirmed);
  ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
  const std::string job2 = job_id_of(second.out);
  ASSERT_FALSE(job2.empty()) << second.out;
  ASSERT_TRUE(w.wait_until_ended(job2, 120s)) << "job " << job2 << " did not end";
  const auto done = w.k3lab({"status", run_dir.string(), "--json"});
  EXPECT_EQ(done.exit_code, 0) << done.out << done.err;
  const auto s = nlohmann::json::parse(done.out);
  EXPECT_EQ(s["counts"]["result"], s["planned"]);
  EXPECT_TRUE(s["needs_person"].empty());
}
