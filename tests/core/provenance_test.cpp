// Where a run's source revision comes from (core/provenance.hpp): the protocols' git checkout, else the
// tree the binary was built from; a freeze's own records never make the tree dirty. And the UTC
// timestamps, against instants worked out by hand.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "common/temp_dir.hpp"
#include "k3lab/build_info.hpp"
#include "k3lab/core/provenance.hpp"

using k3lab::testing::TempDir;

namespace {

// Runs a shell command in `dir`; true on exit status 0.
bool shell_in(const std::filesystem::path& dir, const std::string& command) {
  return std::system(("cd '" + dir.string() + "' && " + command + " >/dev/null 2>&1").c_str()) == 0;
}

void write(const std::filesystem::path& file, const std::string& text) {
  std::filesystem::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

}  // namespace

TEST(Provenance, ProtocolsOutsideACheckoutTakeTheRevisionOfTheBuildTree) {
  const auto build_tree = k3lab::core::source_revision(k3lab::build::kSourceDir);
  if (build_tree.revision == k3lab::core::SourceRevision{}.revision) {
    GTEST_SKIP() << "the build's source tree is not a git checkout here";
  }
  TempDir dir;  // not inside any git checkout
  const auto j = k3lab::core::provenance(dir.path(), {"k3lab", "run"});
  EXPECT_EQ(j.at("source_revision"), build_tree.revision);
  EXPECT_EQ(j.at("source_revision_from"), std::string("the build's source tree ") + k3lab::build::kSourceDir);
}

TEST(Provenance, FreezeRecordsDoNotMakeTheTreeDirty) {
  TempDir dir;
  const auto repo = dir.path();
  if (!shell_in(repo, "git init -q . && git config user.email t@example.org && git config user.name t")) {
    GTEST_SKIP() << "git is not available";
  }
  write(repo / "experiments" / "a.json", "{}\n");
  write(repo / "experiments" / "frozen" / "a.json", "{\"v\": 1}\n");
  ASSERT_TRUE(shell_in(repo, "git add -A && git commit -q -m first"));
  const auto frozen = repo / "experiments" / "frozen";
  EXPECT_FALSE(k3lab::core::source_revision(repo / "experiments", frozen).dirty);

  write(frozen / "a.json", "{\"v\": 2}\n");  // what freezing a first protocol does to the tree
  EXPECT_TRUE(k3lab::core::source_revision(repo / "experiments").dirty);
  EXPECT_FALSE(k3lab::core::source_revision(repo / "experiments", frozen).dirty)
      << "a second freeze in the same command must not call the tree dirty";

  write(repo / "experiments" / "a.json", "{\"edited\": true}\n");
  EXPECT_TRUE(k3lab::core::source_revision(repo / "experiments", frozen).dirty) << "a real edit is still dirty";
}

// 1,754,224,496.789 s after the epoch is 2025-08-03 12:34:56.789 UTC (20,303 days = 2025-08-03, plus
// 45,296 s = 12:34:56); the whole-second formats drop the milliseconds instead of rounding them.
TEST(UtcTimestamps, RecordsKeepMillisecondsMessagesAndThroughputRecordsWholeSeconds) {
  const std::chrono::system_clock::time_point instant{std::chrono::milliseconds(1'754'224'496'789)};
  EXPECT_EQ(k3lab::core::format_utc(instant), "2025-08-03T12:34:56.789Z");
  EXPECT_EQ(k3lab::core::format_utc_seconds(instant), "2025-08-03T12:34:56Z");
  const std::chrono::system_clock::time_point epoch{};
  EXPECT_EQ(k3lab::core::format_utc(epoch), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(k3lab::core::format_utc_seconds(epoch + std::chrono::milliseconds(999)), "1970-01-01T00:00:00Z");
}
