// Two plain `run` commands (no --worker) started together on a fresh --out: the run dir is chosen
// under runs/<id>/.lock, so there is one run dir and each unit is run once; the second command either
// resumes what the first left (nothing) or refuses because the first holds the ledger, with the fix.
// (Two --worker processes: ConcurrentRuns in tests/cli.)
#include <gtest/gtest.h>

#include <thread>

#include "common/ledger_records.hpp"
#include "common/temp_dir.hpp"
#include "fault_support.hpp"

namespace k3lab::testing {
namespace {

TEST(ConcurrentFreshStarts, TwoPlainRunsOnOneFreshOutMakeOneRunDirAndRunEachUnitOnce) {
  TempDir dir("k3lab-faults-concurrent");
  const auto options = fault_environment(dir.path());
  const auto& experiment = simulator_experiment();
  const auto straight = run_k3lab(experiment.run_arguments(dir.path() / "reference"), options);
  ASSERT_EQ(straight.exit_code, 0) << straight.output();
  const auto reference = comparable_terminal_records(only_run_dir(dir.path() / "reference", experiment.id));

  for (int attempt = 0; attempt < 2; ++attempt) {
    SCOPED_TRACE("attempt " + std::to_string(attempt));
    const auto runs = dir.path() / ("together-" + std::to_string(attempt));
    ProcessResult first, second;
    std::thread first_thread([&] { first = run_k3lab(experiment.run_arguments(runs), options); });
    std::thread second_thread([&] { second = run_k3lab(experiment.run_arguments(runs), options); });
    first_thread.join();
    second_thread.join();

    ASSERT_EQ(run_dirs(runs, experiment.id).size(), 1u) << "two run dirs for one --out";
    EXPECT_TRUE(first.exit_code == 0 || second.exit_code == 0) << first.output() << second.output();
    for (const auto* result : {&first, &second}) {
      if (result->exit_code == 0) continue;
      EXPECT_EQ(result->exit_code, 1) << result->output();
      EXPECT_NE(result->output().find("another k3lab process is writing"), std::string::npos) << result->output();
    }
    EXPECT_EQ(resumed_run_difference(only_run_dir(runs, experiment.id), reference), "");
  }
}

}  // namespace
}  // namespace k3lab::testing
