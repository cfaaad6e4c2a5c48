#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "common/temp_dir.hpp"
#include "k3lab/experiments/runner_scaling.hpp"

using namespace k3lab;

namespace {

// TMPDIR pointed at memory when the machine has /dev/shm: this test counts the runner's work, and the
// ledger's per-unit fdatasync (the durability promise, measured by `k3lab bench runner`) would make 20,000
// units take minutes on a slow disk.
class MemoryTmpdir {
 public:
  MemoryTmpdir() {
    if (const char* old = std::getenv("TMPDIR")) saved_ = old;
    if (std::filesystem::is_directory("/dev/shm")) ::setenv("TMPDIR", "/dev/shm", 1);
  }
  ~MemoryTmpdir() {
    if (saved_) ::setenv("TMPDIR", saved_->c_str(), 1);
    else ::unsetenv("TMPDIR");
  }

 private:
  std::optional<std::string> saved_;
};

}  // namespace

// Issue 19: the runner's work per unit must not grow with the units before it. Wall time is the
// benchmark's business (`k3lab bench runner`); this test counts the work that used to grow: the window
// rule was handed every terminal record so far after each unit (20,000 units: 200 million record visits).
TEST(RunnerScaling, TwentyThousandUnitsFeedTheWindowRuleOneRecordPerUnitInEveryBlock) {
  MemoryTmpdir in_memory;
  k3lab::testing::TempDir dir("runner-scaling");
  const auto scaling = experiments::measure_runner_scaling({.units = 20000, .block = 1000, .folder = dir.path()});
  ASSERT_EQ(scaling.exit_code, 0);
  EXPECT_EQ(scaling.units_run, 20000u);
  ASSERT_EQ(scaling.blocks.size(), 20u);
  for (std::size_t b = 0; b < scaling.blocks.size(); ++b) {
    const auto& block = scaling.blocks[b];
    EXPECT_EQ(block.window_records_fed, block.unit_seconds.size()) << "block " << b + 1;
  }
}
