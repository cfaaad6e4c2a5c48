// What a person sees around the work: suggestions after a typo, `k3lab help`, examples in --help, and
// the table `run` ends with.
#include <gtest/gtest.h>

#include "common/files.hpp"
#include "common/k3lab_process.hpp"
#include "common/temp_dir.hpp"

namespace k3lab::testing {
namespace {

ProcessOptions in_temp(const std::filesystem::path& cwd) {
  ProcessOptions options;
  options.cwd = cwd;
  options.env["K3LAB_PROTOCOL_DIR"] = (source_dir() / "experiments").string();
  options.env["NO_COLOR"] = "1";
  return options;
}

TEST(Usage, AMistypedCommandOrOptionGetsTheClosestSuggestionOnStderr) {
  const TempDir dir("k3lab-usage");
  const auto command = run_k3lab({"rnu"}, in_temp(dir.path()));
  EXPECT_EQ(command.exit_code, 2);
  EXPECT_NE(command.err.find("unknown command \"rnu\"; did you mean \"run\"?"), std::string::npos) << command.err;
  const auto option = run_k3lab({"plan", "memory-pool", "--proflie", "smoke"}, in_temp(dir.path()));
  EXPECT_EQ(option.exit_code, 2);
  EXPECT_NE(option.err.find("unknown option --proflie; did you mean --profile?"), std::string::npos) << option.err;
  const auto far = run_k3lab({"zzzzzz"}, in_temp(dir.path()));
  EXPECT_EQ(far.exit_code, 2);
  EXPECT_EQ(far.err.find("did you mean"), std::string::npos) << "no implausible guess: " << far.err;
}

TEST(Usage, HelpNamesACommandAndEveryCommandHelpEndsWithExamples) {
  const TempDir dir("k3lab-help");
  const auto help = run_k3lab({"help", "run"}, in_temp(dir.path()));
  EXPECT_EQ(help.exit_code, 0) << help.output();
  EXPECT_NE(help.out.find("--profile"), std::string::npos);
  EXPECT_NE(help.out.find("Examples:\n  k3lab run --all --profile smoke"), std::string::npos) << help.out;
  for (const char* command : {"list", "plan", "validate", "freeze", "report", "status", "bench", "mock-server",
                              "check-endpoint", "fixture"}) {
    const auto each = run_k3lab({command, "--help"}, in_temp(dir.path()));
    EXPECT_NE(each.out.find("Examples:\n  k3lab "), std::string::npos) << command;
  }
  const auto unknown = run_k3lab({"help", "rport"}, in_temp(dir.path()));
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("did you mean \"report\"?"), std::string::npos) << unknown.err;
}

TEST(Usage, PlanAndRunShareTheSmokeDefault) {
  const TempDir dir("k3lab-default-profile");
  const auto plan = run_k3lab({"plan", "memory-pool"}, in_temp(dir.path()));
  ASSERT_EQ(plan.exit_code, 0) << plan.output();
  EXPECT_NE(plan.out.find("profile: smoke"), std::string::npos) << plan.out;
}

// Hours to two significant digits, whole numbers grouped, nested plans as indented blocks.
TEST(Usage, PlanPrintsNumbersAPersonReads) {
  const TempDir dir("k3lab-plan-numbers");
  const auto plan = run_k3lab({"plan", "hybrid-attention", "--profile", "full"}, in_temp(dir.path()));
  ASSERT_EQ(plan.exit_code, 0) << plan.output();
  EXPECT_NE(plan.out.find("gpu_hours_per_run: 0.63 h\n"), std::string::npos) << plan.out;
  EXPECT_NE(plan.out.find("training_tokens_total: 9,000,000,000\n"), std::string::npos) << plan.out;
  EXPECT_EQ(plan.out.find("0.6289308"), std::string::npos) << "no raw doubles";
  const auto nested = run_k3lab({"plan", "context-probe", "--profile", "full"}, in_temp(dir.path()));
  ASSERT_EQ(nested.exit_code, 0) << nested.output();
  for (const auto& line : {std::string("{\""), std::string("[{")}) {
    EXPECT_EQ(nested.out.find(line), std::string::npos) << "no JSON dumped on one line: " << nested.out;
  }
}

// Two experiments in one command: each bar says where it is in the batch, and the command ends with
// one table of what ran.
TEST(Usage, RunEndsWithATableOfEveryExperimentItRan) {
  const TempDir dir("k3lab-run-table");
  // Two experiments that run in about a second (the training ones' smoke runs are ExperimentSmoke's).
  const auto run = run_k3lab({"run", "memory-pool", "agent-replay", "--profile", "smoke", "--out", "lab"},
                             in_temp(dir.path()));
  ASSERT_EQ(run.exit_code, 0) << run.output();
  EXPECT_NE(run.out.find("[2/2] agent-replay"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("| experiment | profile | units | results | invalid | failures | outcome | run dir |"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("| memory-pool | smoke | 51/51 | 51 | 0 | 0 | complete (smoke: no verdict) |"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("| agent-replay | smoke | 35/35 | 35 | 0 | 0 | complete (smoke: no verdict) |"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("Pages: build/k3lab report --runs lab --out report"), std::string::npos) << run.out;
  // Every hint repeats the user's folder: the run that finds nothing to do, and report on a missing folder.
  const auto again = run_k3lab({"run", "memory-pool", "--profile", "smoke", "--out", "lab"}, in_temp(dir.path()));
  EXPECT_EQ(again.exit_code, 0) << again.output();
  EXPECT_NE(again.output().find("nothing to do. `k3lab report --runs lab` renders it"), std::string::npos)
      << again.output();
  const auto missing = run_k3lab({"report", "--runs", "elsewhere"}, in_temp(dir.path()));
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("`k3lab run --all --profile smoke --out elsewhere`"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace k3lab::testing
