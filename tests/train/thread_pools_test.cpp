#include <gtest/gtest.h>
#include <time.h>

#include <chrono>
#include <thread>

#include <torch/torch.h>

#include "k3lab/train/thread_pools.hpp"

using namespace k3lab;

namespace {

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

}  // namespace

TEST(ThreadPools, TwoThreadsSetLibTorchAndTheBlasPoolAlike) {
  const auto applied = train::apply_thread_policy(core::choose_thread_policy(2));
  EXPECT_EQ(applied.at("intra_op"), 2);
  EXPECT_EQ(torch::get_num_threads(), 2);
  EXPECT_EQ(applied.at("inter_op"), 1);
  if (!applied.at("blas").is_number()) GTEST_SKIP() << "the loaded BLAS is not OpenBLAS: " << applied.dump();
  EXPECT_EQ(applied.at("blas"), 2);
}

// threads = 1 means one busy core: the BLAS pool no longer starts a thread per core behind LibTorch's
// back (before: 33 s of CPU time in 17 s of wall time at "threads 1"). A single-threaded process can
// never use more CPU time than wall time, whatever else runs on the machine; two pools would.
TEST(ThreadPools, OneThreadKeepsOneCoreBusyThroughMatmuls) {
  const auto applied = train::apply_thread_policy(core::choose_thread_policy(1));
  EXPECT_EQ(applied.at("intra_op"), 1);
  EXPECT_EQ(applied.at("inter_op"), 1);
  if (applied.at("blas").is_number()) {
    EXPECT_EQ(applied.at("blas"), 1);
  }
  torch::manual_seed(0);
  const auto a = torch::randn({384, 384});  // (384, 384)
  auto c = a.mm(a);
  // Workers an earlier test of this process left spinning (OpenMP's and OpenBLAS's idle threads spin a
  // while before they sleep) would count here; let them fall asleep first.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const double cpu_start = cpu_seconds();
  const auto wall_start = std::chrono::steady_clock::now();
  for (int i = 0; i < 40; ++i) c = torch::tanh(c.mm(a) * 1e-3);  // (384, 384)
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  const double cores_busy = (cpu_seconds() - cpu_start) / wall;
  EXPECT_LE(cores_busy, 1.15) << "CPU time / wall time with threads = 1";
  EXPECT_TRUE(torch::isfinite(c).all().item<bool>());
}
