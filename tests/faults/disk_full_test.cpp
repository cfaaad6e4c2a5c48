// A full disk through the binary (docs/reliability.md, "Fault storms"): the k3lab process runs under a
// file size limit (RLIMIT_FSIZE, SIGXFSZ ignored, so a write past it fails with EFBIG as a full disk
// fails with ENOSPC). Limits are computed from an uninterrupted run's file sizes so the fault falls
// mid-run. The process must stop with exit 1 (never abort), leave the unit it was in open, and a resume
// with the limit lifted must end with the uninterrupted run's ledger apart from t, seq, timing, worker.
#include <gtest/gtest.h>

#include <algorithm>

#include "common/ledger_compare.hpp"
#include "common/ledger_records.hpp"
#include "common/temp_dir.hpp"
#include "fault_support.hpp"

namespace k3lab::testing {
namespace {

class DiskFull : public ::testing::TestWithParam<FaultExperiment> {
 protected:
  void SetUp() override { run_reference(GetParam()); }

  void run_reference(const FaultExperiment& experiment) {
    const auto straight = run_k3lab(experiment.run_arguments(dir.path() / "reference"), options);
    ASSERT_EQ(straight.exit_code, 0) << straight.output();
    const auto run_dir = only_run_dir(dir.path() / "reference", experiment.id);
    reference = comparable_terminal_records(run_dir);
    sizes = run_dir_sizes(run_dir);
    ASSERT_FALSE(reference.empty());
  }

  // Runs under `limit_bytes` into a fresh runs root, checks the fault left the run open and honest, then
  // resumes without the limit and compares with the reference. Returns the units the fault left open.
  std::vector<std::string> fault_then_resume(const FaultExperiment& experiment, std::uintmax_t limit_bytes,
                                             const std::string& expected_text) {
    const auto runs = dir.path() / "faulted";
    const auto faulted = run_k3lab_with_file_size_limit(experiment.run_arguments(runs), limit_bytes, options);
    EXPECT_EQ(faulted.exit_code, 1) << "limit " << limit_bytes << " bytes\n" << faulted.output();
    EXPECT_EQ(faulted.output().find("terminate called"), std::string::npos) << faulted.output();
    EXPECT_NE(faulted.output().find(expected_text), std::string::npos) << faulted.output();
    const auto run_dir = only_run_dir(runs, experiment.id);
    const auto open = expect_open_and_honest(read_ledger_records(run_dir));

    const auto resumed = run_k3lab(experiment.run_arguments(runs), options);
    EXPECT_EQ(resumed.exit_code, 0) << resumed.output();
    EXPECT_EQ(resumed_run_difference(run_dir, reference), "");
    return open;
  }

  // The fault fell mid-run; every terminal record written before it is the reference's for its unit (a
  // fault of the machine writes no failure record); at most the one unit it was in (--threads 1) has an
  // attempt and no terminal record. Returns those open units.
  std::vector<std::string> expect_open_and_honest(const std::vector<nlohmann::json>& records) {
    const auto finished = last_terminal_records(records);
    EXPECT_LT(finished.size(), reference.size()) << "the limit did not stop the run";
    for (const auto& record : finished) {
      const auto same_unit = std::find_if(reference.begin(), reference.end(),
                                          [&](const nlohmann::json& r) { return r["unit"] == record["unit"]; });
      EXPECT_TRUE(same_unit != reference.end() && deterministic_part(record) == *same_unit)
          << "a terminal record the uninterrupted run does not have: " << record.dump();
    }
    const auto counts = terminal_counts(records);
    std::vector<std::string> open;
    for (const auto& record : records) {
      if (record.value("kind", "") != "attempt") continue;
      const auto unit = record["unit"].get<std::string>();
      if (!counts.contains(unit) && std::find(open.begin(), open.end(), unit) == open.end()) open.push_back(unit);
    }
    EXPECT_LE(open.size(), 1u) << "units left open: " << nlohmann::json(open).dump();
    return open;
  }

  TempDir dir{"k3lab-faults-disk"};
  ProcessOptions options = fault_environment(dir.path());
  std::vector<nlohmann::json> reference;
  RunDirSizes sizes;
};

TEST_P(DiskFull, ALedgerPastTheLimitMidRunStopsWithExit1AndTheResumeEqualsAnUninterruptedRun) {
  // Between the largest other file (manifest, checkpoints) and the final ledger: only the ledger's growth
  // reaches it, after some units.
  ASSERT_GT(sizes.ledger, sizes.largest_other + 4096)
      << "the ledger must outgrow every other file for the limit to fall mid-run; shrink the experiment";
  const std::uintmax_t limit = sizes.largest_other + (sizes.ledger - sizes.largest_other) / 2;
  fault_then_resume(GetParam(), limit, "ledger");
}

INSTANTIATE_TEST_SUITE_P(ApiSimulatorTraining, DiskFull,
                         ::testing::Values(api_experiment(), simulator_experiment(), training_experiment()),
                         [](const auto& info) {
                           std::string name = info.param.id;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

class DiskFullCheckpoint : public DiskFull {
 protected:
  void SetUp() override { run_reference(training_experiment()); }
};

// The failure of issue 12: LibTorch's archive writer threw again from its destructor and the process
// aborted (exit 134) after writing a permanent failure record.
TEST_F(DiskFullCheckpoint, ACheckpointPastTheLimitStopsTheUnitWithExit1NotAnAbort) {
  ASSERT_GT(sizes.largest_checkpoint_file, sizes.manifest + 4096)
      << "the checkpoint files must outgrow the manifest for the limit to fall on a checkpoint";
  const std::uintmax_t limit = sizes.manifest + (sizes.largest_checkpoint_file - sizes.manifest) / 2;
  const auto open = fault_then_resume(training_experiment(), limit, "checkpoint");
  EXPECT_EQ(open.size(), 1u) << "the unit whose checkpoint failed must stay open (attempt, no terminal record)";
}

}  // namespace
}  // namespace k3lab::testing
