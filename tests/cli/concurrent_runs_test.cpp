// Two `k3lab run` processes on one run dir (docs/reliability.md, "Unit claims and leases"): whether
// they are two workers started together on a fresh --out, or a plain resume beside a worker, every
// unit gets exactly one terminal record and the ledger equals an uninterrupted run apart from t, seq,
// timing and worker. A ledger with two terminal records for a unit makes `status` and resume fail
// loudly.
#include <gtest/gtest.h>

#include <fstream>
#include <thread>

#include "common/files.hpp"
#include "common/k3lab_process.hpp"
#include "common/ledger_compare.hpp"
#include "common/ledger_records.hpp"
#include "common/temp_dir.hpp"

namespace k3lab::testing {
namespace {

constexpr const char* kExperiment = "memory-pool";  // 27 smoke units of tens of milliseconds

ProcessOptions quiet_environment(const std::filesystem::path& cwd) {
  ProcessOptions options;
  options.cwd = cwd;
  options.env["K3LAB_PROTOCOL_DIR"] = (source_dir() / "experiments").string();
  options.env["K3LAB_LEASE_SECONDS"] = std::nullopt;
  for (const char* name : {"WORLD_SIZE", "RANK", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "SLURM_STEP_NUM_TASKS",
                           "SLURM_PROCID", "SLURM_LOCALID", "SLURM_JOB_ID", "SLURM_ARRAY_JOB_ID"}) {
    options.env[name] = std::nullopt;
  }
  return options;
}

std::vector<std::string> run_args(const std::filesystem::path& runs, const std::string& worker) {
  std::vector<std::string> args = {"run", kExperiment, "--profile", "smoke", "--out", runs.string()};
  if (!worker.empty()) args.insert(args.end(), {"--worker", worker});
  return args;
}

std::vector<nlohmann::json> comparable_terminal(const std::filesystem::path& run_dir) {
  std::vector<nlohmann::json> out;
  for (const auto& r : last_terminal_records(read_ledger_records(run_dir))) out.push_back(deterministic_part(r));
  return out;
}

// Runs two commands at once; returns both results.
std::pair<ProcessResult, ProcessResult> together(const std::vector<std::string>& a, const std::vector<std::string>& b,
                                                 const ProcessOptions& options) {
  ProcessResult ra, rb;
  std::thread ta([&] { ra = run_k3lab(a, options); });
  std::thread tb([&] { rb = run_k3lab(b, options); });
  ta.join();
  tb.join();
  return {ra, rb};
}

void expect_one_terminal_per_unit_equal_to(const std::filesystem::path& run_dir,
                                           const std::vector<nlohmann::json>& reference, const std::string& what) {
  const auto records = read_ledger_records(run_dir);
  const auto planned = planned_units(records);
  ASSERT_EQ(planned.size(), reference.size()) << what;
  const auto counts = terminal_counts(records);
  EXPECT_EQ(counts.size(), planned.size()) << what;
  for (const auto& unit : planned) {
    const auto it = counts.find(unit);
    EXPECT_TRUE(it != counts.end() && it->second == 1)
        << what << ": unit " << unit << " has " << (it == counts.end() ? 0 : it->second) << " terminal records";
  }
  const auto actual = comparable_terminal(run_dir);
  EXPECT_EQ(actual, reference) << what << "\n" << ledger_difference(reference, actual);
}

class ConcurrentRuns : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto straight = run_k3lab(run_args(dir.path() / "reference", ""), quiet_environment(dir.path()));
    ASSERT_EQ(straight.exit_code, 0) << straight.output();
    reference = comparable_terminal(only_run_dir(dir.path() / "reference", kExperiment));
    ASSERT_FALSE(reference.empty());
  }
  TempDir dir{"k3lab-concurrent"};
  std::vector<nlohmann::json> reference;
};

TEST_F(ConcurrentRuns, TwoWorkersStartedTogetherOnAFreshOutRunEveryUnitOnce) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    const auto runs = dir.path() / ("workers-" + std::to_string(attempt));
    const auto [a, b] = together(run_args(runs, "a"), run_args(runs, "b"), quiet_environment(dir.path()));
    ASSERT_EQ(a.exit_code, 0) << a.output();
    ASSERT_EQ(b.exit_code, 0) << b.output();
    ASSERT_EQ(run_dirs(runs, kExperiment).size(), 1u) << "two run dirs for one --out";
    expect_one_terminal_per_unit_equal_to(only_run_dir(runs, kExperiment), reference,
                                          "workers, attempt " + std::to_string(attempt));
  }
}

TEST_F(ConcurrentRuns, APlainResumeBesideAWorkerRunsEveryUnitOnce) {
  const auto runs = dir.path() / "plain-and-worker";
  // A first run SIGKILLed after a few units leaves a run dir to resume, with the lease of the unit it was
  // in held by a dead process on this host: taken over at once, not after the lease period.
  ProcessOptions killed = quiet_environment(dir.path());
  killed.started = [&] {
    const auto dirs = run_dirs(runs, kExperiment);
    try {
      return !dirs.empty() && terminal_counts(read_ledger_records(dirs[0])).size() >= 3;
    } catch (const std::exception&) {
      return false;  // the ledger is being created
    }
  };
  killed.kill_after = std::chrono::milliseconds(1);
  run_k3lab(run_args(runs, ""), killed);
  ASSERT_EQ(run_dirs(runs, kExperiment).size(), 1u);
  const auto [plain, worker] = together(run_args(runs, ""), run_args(runs, "w"), quiet_environment(dir.path()));
  ASSERT_EQ(plain.exit_code, 0) << plain.output();
  ASSERT_EQ(worker.exit_code, 0) << worker.output();
  expect_one_terminal_per_unit_equal_to(only_run_dir(runs, kExperiment), reference, "plain beside a worker");
}

TEST_F(ConcurrentRuns, ADuplicateTerminalRecordMakesStatusAndResumeFailLoudly) {
  const auto run_dir = only_run_dir(dir.path() / "reference", kExperiment);
  auto duplicate = last_terminal_records(read_ledger_records(run_dir)).at(2);
  duplicate["worker"] = "old-worker";
  std::ofstream(run_dir / "ledger.old-worker.jsonl") << duplicate.dump() << "\n";
  const std::string unit = duplicate["unit"].get<std::string>();

  const auto status = run_k3lab({"status", run_dir.string()}, quiet_environment(dir.path()));
  EXPECT_EQ(status.exit_code, 1) << status.output();
  EXPECT_NE(status.out.find("ERROR: DUPLICATE terminal records for unit " + unit + ": 2 terminal records"),
            std::string::npos)
      << status.output();

  const auto resume = run_k3lab(run_args(dir.path() / "reference", ""), quiet_environment(dir.path()));
  EXPECT_EQ(resume.exit_code, 1) << resume.output();
  EXPECT_NE(resume.output().find("LEDGER ERROR"), std::string::npos) << resume.output();
  EXPECT_NE(resume.output().find(unit), std::string::npos) << resume.output();
}

}  // namespace
}  // namespace k3lab::testing
