#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <set>
#include <thread>
#include <vector>

#include "k3lab/core/run_choice_lock.hpp"
#include "k3lab/core/run_dir.hpp"
#include "run_dir_fixture.hpp"
#include "test_protocol_fixture.hpp"

using namespace k3lab;
using k3lab::testing::complete_manifest;
using k3lab::testing::kPlan;
using k3lab::testing::kResult;
using k3lab::testing::make_run;
using k3lab::testing::minimal_protocol;
using k3lab::testing::TempDir;

namespace {


// The folders directly under runs/<id>/ (independently of core's listing).
std::vector<std::filesystem::path> folders_of(const std::filesystem::path& runs_root, const std::string& id) {
  std::vector<std::filesystem::path> folders;
  for (const auto& entry : std::filesystem::directory_iterator(runs_root / id)) {
    if (entry.is_directory()) folders.push_back(entry.path());
  }
  return folders;
}

// The DamagedRunDir that listing the runs of memory-pool throws; fails the test when none is thrown.
std::string damaged_error(const std::filesystem::path& runs_root, const std::filesystem::path& expected_dir) {
  try {
    (void)core::latest_run_dir(runs_root, "memory-pool", "full");
    ADD_FAILURE() << "expected a DamagedRunDir";
  } catch (const core::DamagedRunDir& e) {
    EXPECT_EQ(e.run_dir(), expected_dir);
    const std::string text = e.what();
    EXPECT_EQ(text.rfind(expected_dir.string() + " is a damaged run dir: ", 0), 0u) << text;
    EXPECT_NE(text.find("Restore manifest.json"), std::string::npos) << text;
    EXPECT_NE(text.find("--fresh"), std::string::npos) << text;
    return e.problem();
  }
  return "";
}

}  // namespace

TEST(RunDir, CreatedRunIsListedWithItsManifest) {
  TempDir dir;
  const auto manifest = complete_manifest(minimal_protocol(), "full", 2);
  const auto run = make_run(dir / "runs", manifest, {kPlan, kResult});
  const auto listed = core::list_run_dirs(dir / "runs", "memory-pool");
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].path, run);
  EXPECT_EQ(listed[0].manifest, manifest);
  EXPECT_EQ(core::latest_run_dir(dir / "runs", "memory-pool", "full")->path, run);
  EXPECT_FALSE(core::latest_run_dir(dir / "runs", "memory-pool", "smoke").has_value());
}

TEST(RunDir, MissingManifestBesideALedgerIsRefusedNotSkipped) {
  TempDir dir;
  const auto run = make_run(dir / "runs", complete_manifest(minimal_protocol(), "full", 2), {kPlan, kResult});
  std::filesystem::remove(run / "manifest.json");
  EXPECT_NE(damaged_error(dir / "runs", run).find("manifest.json is missing"), std::string::npos);
  EXPECT_THROW(core::list_run_dirs(dir / "runs", "memory-pool"), core::DamagedRunDir);
  EXPECT_THROW(core::read_manifest(run), core::DamagedRunDir);
  const auto scan = core::scan_run_dirs(dir / "runs", "memory-pool");
  EXPECT_TRUE(scan.runs.empty());
  ASSERT_EQ(scan.damaged.size(), 1u);
  EXPECT_EQ(scan.damaged[0].run_dir(), run);
}

TEST(RunDir, TruncatedOrIncompleteManifestIsRefused) {
  TempDir dir;
  const auto manifest = complete_manifest(minimal_protocol(), "full", 2);
  const auto run = make_run(dir / "runs", manifest, {kPlan});
  const std::string text = manifest.dump(2);
  std::ofstream(run / "manifest.json", std::ios::trunc) << text.substr(0, text.size() / 2);
  EXPECT_NE(damaged_error(dir / "runs", run).find("manifest.json is not valid JSON"), std::string::npos);

  auto incomplete = manifest;
  incomplete.erase("design_sha256");
  std::ofstream(run / "manifest.json", std::ios::trunc) << incomplete.dump();
  EXPECT_EQ(damaged_error(dir / "runs", run), "manifest.json has no \"design_sha256\"");

  std::ofstream(run / "manifest.json", std::ios::trunc) << "{}";
  EXPECT_EQ(damaged_error(dir / "runs", run), "manifest.json has no \"experiment\"");

  auto wrong_type = manifest;
  wrong_type["units_planned"] = "2";
  std::ofstream(run / "manifest.json", std::ios::trunc) << wrong_type.dump();
  EXPECT_EQ(damaged_error(dir / "runs", run), "manifest.json \"units_planned\" is not a count");

  auto elsewhere = manifest;
  elsewhere["experiment"] = "router-balance";
  std::ofstream(run / "manifest.json", std::ios::trunc) << elsewhere.dump();
  EXPECT_NE(damaged_error(dir / "runs", run).find("names experiment \"router-balance\""), std::string::npos);
}

TEST(RunDir, EmptyFoldersAndFoldersSetAsideAreNotRunDirs) {
  TempDir dir;
  const auto good = make_run(dir / "runs", complete_manifest(minimal_protocol(), "full", 2), {kPlan});
  // A creation interrupted before the manifest: nothing was recorded, nothing to refuse.
  std::filesystem::create_directories(dir / "runs/memory-pool/29990101-000000-abcdef/artifacts");
  // A damaged run dir renamed to start with '.': set aside, as its message suggests.
  const auto aside = make_run(dir / "runs", complete_manifest(minimal_protocol(), "full", 2), {kPlan, kResult});
  std::filesystem::remove(aside / "manifest.json");
  std::filesystem::rename(aside, aside.parent_path() / ("." + aside.filename().string()));
  const auto scan = core::scan_run_dirs(dir / "runs", "memory-pool");
  EXPECT_TRUE(scan.damaged.empty());
  ASSERT_EQ(scan.runs.size(), 1u);
  EXPECT_EQ(scan.runs[0].path, good);
  EXPECT_EQ(folders_of(dir / "runs", "memory-pool").size(), 3u);
}

TEST(RunDir, CreationRefusesAnIncompleteManifest) {
  TempDir dir;
  auto manifest = complete_manifest(minimal_protocol(), "full", 2);
  manifest.erase("protocol");
  EXPECT_THROW(core::create_run_dir(dir / "runs", "memory-pool", manifest), std::invalid_argument);
  EXPECT_FALSE(std::filesystem::exists(dir / "runs/memory-pool"));
}

TEST(RunChoiceLock, SecondHolderWaitsUntilTheFirstReleases) {
  TempDir dir;
  std::atomic<bool> first_released{false};
  std::atomic<bool> second_saw_release{false};
  std::atomic<bool> second_started{false};
  auto first = std::make_unique<core::RunChoiceLock>(dir / "runs", "memory-pool");
  std::thread second([&] {
    second_started = true;
    core::RunChoiceLock lock(dir / "runs", "memory-pool");
    second_saw_release = first_released.load();
  });
  while (!second_started) std::this_thread::yield();
  // Give the second thread time to reach flock; if the lock did not exclude, it would finish now.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  first_released = true;
  first.reset();
  second.join();
  EXPECT_TRUE(second_saw_release);
  EXPECT_TRUE(std::filesystem::exists(dir / "runs/memory-pool/.lock"));
  // A lock on another experiment's folder is independent.
  core::RunChoiceLock mine(dir / "runs", "memory-pool");
  EXPECT_NO_THROW({ core::RunChoiceLock other(dir / "runs", "router-balance"); });
}

TEST(RunChoiceLock, ProcessesRacingOnAFreshRunsRootAgreeOnOneRunDir) {
  TempDir dir;
  const auto runs = dir / "runs";
  const auto manifest = complete_manifest(minimal_protocol(), "full", 2);
  constexpr int kProcesses = 6;
  std::vector<pid_t> children;
  for (int i = 0; i < kProcesses; ++i) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      // What the runner does: choose the latest run dir or create one, under the lock; report the choice.
      int status = 0;
      try {
        core::RunChoiceLock lock(runs, "memory-pool");
        auto run = core::latest_run_dir(lock, "full");
        if (!run) run = core::create_run_dir(lock, manifest);
        std::ofstream(dir / ("choice-" + std::to_string(i))) << run->path.string();
      } catch (...) {
        status = 1;
      }
      ::_exit(status);
    }
    children.push_back(pid);
  }
  for (const pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  const auto folders = folders_of(runs, "memory-pool");
  ASSERT_EQ(folders.size(), 1u);
  std::set<std::string> choices;
  for (int i = 0; i < kProcesses; ++i) {
    std::ifstream in(dir / ("choice-" + std::to_string(i)));
    std::string chosen;
    std::getline(in, chosen);
    choices.insert(chosen);
  }
  EXPECT_EQ(choices, std::set<std::string>{folders[0].string()});
}
