// The shared test helpers against hand-written expectations: a diff whose hunks are worked out by
// hand, ledgers with shards and a torn line, the deterministic part, and child processes run
// through /bin/sh (exit code, separate streams, environment, working folder).
#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>

#include "common/files.hpp"
#include "common/k3lab_process.hpp"
#include "common/ledger_compare.hpp"
#include "common/ledger_records.hpp"
#include "common/temp_dir.hpp"

namespace k3lab::testing {
namespace {

TEST(TempDir, IsPrivateWritableAndRemovedWithItsContents) {
  std::filesystem::path kept;
  {
    TempDir first("k3lab-common-test");
    TempDir second("k3lab-common-test");
    EXPECT_NE(first.path(), second.path());
    EXPECT_EQ(first.path().filename().string().rfind("k3lab-common-test-", 0), 0u) << first.path();
    const auto file = first.write("a/b/c.txt", std::string("x\0y", 3));
    EXPECT_EQ(file, first / "a/b/c.txt");
    EXPECT_EQ(read_file(file), std::string("x\0y", 3));
    kept = first.path();
  }
  EXPECT_FALSE(std::filesystem::exists(kept));
}

TEST(ReadTree, KeysAreRelativePathsWithForwardSlashes) {
  TempDir dir;
  dir.write("top.md", "1");
  dir.write("tables/t.csv", "2");
  const std::map<std::string, std::string> expected{{"tables/t.csv", "2"}, {"top.md", "1"}};
  EXPECT_EQ(read_tree(dir.path()), expected);
  EXPECT_THROW(read_file(dir / "missing"), std::runtime_error);
}

TEST(TreeDifference, NamesMissingAndExtraFilesAndDiffsTheFirstChangedOne) {
  TempDir expected, actual;
  expected.write("index.md", "same\n");
  actual.write("index.md", "same\n");
  EXPECT_EQ(tree_difference(expected.path(), actual.path()), "");
  expected.write("tables/a.csv", "x,1\n");
  actual.write("tables/a.csv", "x,2\n");
  expected.write("tables/b.csv", "b\n");
  actual.write("charts/c.svg", "<svg/>\n");
  EXPECT_EQ(tree_difference(expected.path(), actual.path()),
            "missing under " + actual.path().string() + ": tables/b.csv\n" + "not expected under " +
                actual.path().string() + ": charts/c.svg\n" + "--- " + (expected / "tables/a.csv").string() +
                "\n+++ " + (actual / "tables/a.csv").string() + "\n@@ -1,1 +1,1 @@\n-x,1\n+x,2\n");
}

TEST(UnifiedDiff, EqualTextsHaveNoDiff) { EXPECT_EQ(unified_diff("a\nb\n", "a\nb\n", "x", "y"), ""); }

TEST(UnifiedDiff, OneChangedLineWithThreeLinesOfContext) {
  const std::string expected = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
  const std::string actual = "1\n2\n3\n4\nFIVE\n6\n7\n8\n9\n";
  EXPECT_EQ(unified_diff(expected, actual, "expected/a.md", "actual/a.md"),
            "--- expected/a.md\n+++ actual/a.md\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+FIVE\n 6\n 7\n 8\n");
}

TEST(UnifiedDiff, DistantChangesGetTwoHunksAndInsertionsCountOnlyOnTheirSide) {
  std::string expected, actual;
  for (int i = 1; i <= 20; ++i) {
    expected += std::to_string(i) + "\n";
    if (i != 18) actual += std::to_string(i) + "\n";
    if (i == 2) actual += "new\n";
  }
  EXPECT_EQ(unified_diff(expected, actual, "e", "a"),
            "--- e\n+++ a\n"
            "@@ -1,5 +1,6 @@\n 1\n 2\n+new\n 3\n 4\n 5\n"
            "@@ -15,6 +16,5 @@\n 15\n 16\n 17\n-18\n 19\n 20\n");
}

TEST(UnifiedDiff, AMissingFinalNewlineIsADifference) {
  EXPECT_EQ(unified_diff("a\nb\n", "a\nb", "e", "a"),
            "--- e\n+++ a\n@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file\n");
}

TEST(UnifiedDiff, LongDiffsAreCut) {
  std::string many;
  for (int i = 0; i < 50; ++i) many += "line " + std::to_string(i) + "\n";
  const auto diff = unified_diff("", many, "e", "a", 10);
  EXPECT_NE(diff.find("+line 6\n... (diff cut after 10 lines)\n"), std::string::npos) << diff;
  EXPECT_EQ(diff.find("line 7"), std::string::npos) << diff;
}

TEST(LedgerRecords, ReadsEveryShardInNameOrderAndSkipsATornLastLine) {
  TempDir run;
  run.write("ledger.jsonl", "{\"seq\":0,\"kind\":\"plan\",\"units\":[\"u1\",\"u2\",\"u3\"]}\n"
                            "{\"seq\":1,\"kind\":\"result\",\"unit\":\"u1\"}\n{\"seq\":2,\"kind\":\"res");
  run.write("ledger.w1.jsonl", "{\"seq\":0,\"kind\":\"failure\",\"unit\":\"u2\"}\n"
                               "{\"seq\":1,\"kind\":\"attempt\",\"unit\":\"u3\"}\n");
  run.write("ledger.jsonl.torn-1", "{\"kind\":\"result\",\"unit\":\"u3\"}\n");
  run.write("notes.jsonl", "{\"kind\":\"result\",\"unit\":\"u3\"}\n");
  const auto records = read_ledger_records(run.path());
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(records[2]["unit"], "u2");
  EXPECT_EQ(planned_units(records), (std::vector<std::string>{"u1", "u2", "u3"}));
  EXPECT_EQ(terminal_counts(records), (std::map<std::string, int>{{"u1", 1}, {"u2", 1}}));
  run.write("ledger.w2.jsonl", "{\"kind\":\"result\"\n");
  EXPECT_THROW(read_ledger_records(run.path()), std::runtime_error);
}

TEST(LedgerRecords, LastTerminalRecordPerUnitInPlanOrder) {
  std::vector<nlohmann::json> records;
  for (const char* line : {R"({"kind":"plan","units":["a","b","c"]})", R"({"kind":"result","unit":"c","v":1})",
                           R"({"kind":"attempt","unit":"a"})", R"({"kind":"failure","unit":"x"})",
                           R"({"kind":"invalid","unit":"a"})", R"({"kind":"result","unit":"c","v":2})"}) {
    records.push_back(nlohmann::json::parse(line));
  }
  const auto last = last_terminal_records(records);
  ASSERT_EQ(last.size(), 3u);
  EXPECT_EQ(last[0], nlohmann::json::parse(R"({"kind":"invalid","unit":"a"})"));
  EXPECT_EQ(last[1], nlohmann::json::parse(R"({"kind":"result","unit":"c","v":2})"));
  EXPECT_EQ(last[2], nlohmann::json::parse(R"({"kind":"failure","unit":"x"})"));
}

TEST(LedgerRecords, RunDirsOfAnExperiment) {
  TempDir runs;
  std::filesystem::create_directories(runs / "memory-pool/20260101-000000-bbbb");
  std::filesystem::create_directories(runs / "memory-pool/20250101-000000-aaaa");
  std::filesystem::create_directories(runs / "attn-res/20250101-000000-cccc");
  EXPECT_EQ(run_dirs(runs.path(), "memory-pool"),
            (std::vector<std::filesystem::path>{runs / "memory-pool/20250101-000000-aaaa",
                                                runs / "memory-pool/20260101-000000-bbbb"}));
  EXPECT_THROW(only_run_dir(runs.path(), "memory-pool"), std::runtime_error);
  EXPECT_EQ(only_run_dir(runs.path(), "attn-res"), runs / "attn-res/20250101-000000-cccc");
  EXPECT_TRUE(run_dirs(runs.path(), "situ-qat").empty());
}

TEST(LedgerCompare, IgnoresOnlyTimeSeqTimingWorkerAndHardware) {
  const auto a = nlohmann::json::parse(R"({"seq":3,"t":"2026-01-01T00:00:00Z","kind":"result","unit":"u",
      "timing":{"s":1.5},"worker":"w1","hardware":{"id":"0123456789abcdef"},
      "data":{"loss":2.5,"t":"kept: only top-level keys are ignored"}})");
  auto b = a;
  b["seq"] = 9;
  b["t"] = "2027-01-01T00:00:00Z";
  b["timing"]["s"] = 3.0;
  b["worker"] = "w2";
  b["hardware"]["id"] = "fedcba9876543210";
  EXPECT_EQ(deterministic_part(a), nlohmann::json::parse(R"({"kind":"result","unit":"u",
      "data":{"loss":2.5,"t":"kept: only top-level keys are ignored"}})"));
  EXPECT_EQ(ledger_difference({a}, {b}), "");
  b["data"]["t"] = "changed";
  const auto nested = ledger_difference({a}, {b});
  EXPECT_NE(nested.find("record 0 differs"), std::string::npos) << nested;
  EXPECT_NE(nested.find("replace /data/t -> \"changed\""), std::string::npos) << nested;
  EXPECT_NE(nested.find("(was \"kept: only top-level keys are ignored\")"), std::string::npos) << nested;
}

TEST(LedgerCompare, OrderAndCountMatter) {
  const auto plan = nlohmann::json::parse(R"({"kind":"plan","units":["u1","u2"]})");
  const auto r1 = nlohmann::json::parse(R"({"kind":"result","unit":"u1"})");
  const auto r2 = nlohmann::json::parse(R"({"kind":"result","unit":"u2"})");
  EXPECT_NE(ledger_difference({plan, r1, r2}, {plan, r2, r1}).find("record 1 differs"), std::string::npos);
  const auto shorter = ledger_difference({plan, r1, r2}, {plan, r1});
  EXPECT_NE(shorter.find("expected 3 records, got 2"), std::string::npos) << shorter;
  EXPECT_NE(shorter.find("unit u2"), std::string::npos) << shorter;
}

TEST(Process, SeparateStreamsExitCodeEnvironmentAndFolder) {
  TempDir dir;
  ::setenv("K3LAB_COMMON_TEST_UNSET_ME", "present", 1);
  ProcessOptions options;
  options.cwd = dir.path();
  options.env = {{"K3LAB_COMMON_TEST_VALUE", "v 1"}, {"K3LAB_COMMON_TEST_UNSET_ME", std::nullopt}};
  const auto r = run_program("/bin/sh",
                             {"-c", "echo \"$K3LAB_COMMON_TEST_VALUE\"; pwd; echo \"[${K3LAB_COMMON_TEST_UNSET_ME-unset}]\" >&2; "
                                    "exit 7"},
                             options);
  ::unsetenv("K3LAB_COMMON_TEST_UNSET_ME");
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_EQ(r.signal, 0);
  EXPECT_EQ(r.out, "v 1\n" + std::filesystem::canonical(dir.path()).string() + "\n");
  EXPECT_EQ(r.err, "[unset]\n");
  EXPECT_EQ(r.output(), r.out + r.err);
}

TEST(Process, ARelativeProgramPathStillWorksInAnotherFolder) {
  TempDir dir;
  ProcessOptions options;
  options.cwd = dir / "a/b/c/d/e";  // deeper than the test's folder, so ../ paths lead elsewhere
  std::filesystem::create_directories(options.cwd);
  const auto shell = std::filesystem::relative("/bin/sh");
  ASSERT_TRUE(shell.is_relative()) << shell;
  const auto r = run_program(shell, {"-c", "exit 3"}, options);
  EXPECT_EQ(r.exit_code, 3) << r.output();
}

TEST(Process, KillAfterEndsAProcessWithSigkill) {
  ProcessOptions options;
  options.kill_after = std::chrono::milliseconds(50);
  const auto r = run_program("/bin/sh", {"-c", "exec sleep 30"}, options);
  EXPECT_EQ(r.signal, SIGKILL);
  EXPECT_EQ(r.exit_code, -1);
}

TEST(Process, AMissingProgramSaysHowToGetOne) {
  try {
    run_program("/nonexistent/k3lab", {});
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("K3LAB_BINARY"), std::string::npos) << e.what();
  }
}

TEST(Process, K3labGetsThePassiveOpenMpPolicyUnlessTheTestSetsOrUnsetsIt) {
  const auto added = with_passive_openmp({});
  EXPECT_EQ(added.env.at("OMP_WAIT_POLICY"), "PASSIVE");
  EXPECT_EQ(added.env.at("GOMP_SPINCOUNT"), "10000");
  ProcessOptions own;
  own.env = {{"OMP_WAIT_POLICY", std::nullopt}, {"GOMP_SPINCOUNT", "500"}, {"K3LAB_X", "y"}};
  const auto kept = with_passive_openmp(own);
  EXPECT_FALSE(kept.env.at("OMP_WAIT_POLICY").has_value());
  EXPECT_EQ(kept.env.at("GOMP_SPINCOUNT"), "500");
  EXPECT_EQ(kept.env.at("K3LAB_X"), "y");
  EXPECT_EQ(kept.env.size(), 3u);
}

TEST(Process, TheBinaryCanBeOverriddenFromTheEnvironment) {
  const char* old = std::getenv("K3LAB_BINARY");
  const std::string saved = old ? old : "";
  ::setenv("K3LAB_BINARY", "/some/other/k3lab", 1);
  EXPECT_EQ(k3lab_binary(), "/some/other/k3lab");
  if (old) {
    ::setenv("K3LAB_BINARY", saved.c_str(), 1);
  } else {
    ::unsetenv("K3LAB_BINARY");
  }
  EXPECT_EQ(command_line({"run", "x", "--profile", "smoke"}), "k3lab run x --profile smoke");
}

}  // namespace
}  // namespace k3lab::testing
