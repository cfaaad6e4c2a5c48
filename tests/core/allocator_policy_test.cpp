// The allocator policy (core/allocator_policy.hpp), checked through glibc's own reports: threads that
// allocate at once share one heap (malloc_info lists the heaps; counted in a fresh process, since heaps
// are never destroyed), and the trim between units gives freed heap pages back (the resident size in
// /proc/self/statm drops).
#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <barrier>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string_view>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "k3lab/core/allocator_policy.hpp"

namespace k3lab::core {
namespace {

// The heaps (arenas) glibc has made in this process, from malloc_info's XML.
int heap_count() {
  char* text = nullptr;
  std::size_t size = 0;
  FILE* out = ::open_memstream(&text, &size);
  ::malloc_info(0, out);
  std::fclose(out);
  int heaps = 0;
  for (std::string_view rest(text, size); rest.find("<heap nr=") != std::string_view::npos; ++heaps) {
    rest.remove_prefix(rest.find("<heap nr=") + 1);
  }
  std::free(text);
  return heaps;
}

// Runs this test binary again with only the child case below, K3LAB_ARENA_CHILD=`mode`; its exit status.
int run_arena_child(const char* mode) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setenv("K3LAB_ARENA_CHILD", mode, 1);
    std::freopen("/dev/null", "w", stdout);
    ::execl("/proc/self/exe", "allocator-policy-child", "--gtest_filter=AllocatorPolicyChild.*", nullptr);
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages_total = 0, pages_resident = 0;
  statm >> pages_total >> pages_resident;
  return pages_resident * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

// Writes every page of `block` (volatile: the compiler may not drop the allocation).
void touch_pages(void* block, std::size_t bytes) {
  auto* bytes_of = static_cast<volatile char*>(block);
  for (std::size_t i = 0; i < bytes; i += 4096) bytes_of[i] = 1;
}

// Started by AllocatorPolicy.ThreadsShareOneHeap in a fresh process: four threads allocate at once; the
// exit status is the number of heaps glibc then has.
TEST(AllocatorPolicyChild, HeapsAfterFourThreadsAllocateAtOnce) {
  const char* mode = std::getenv("K3LAB_ARENA_CHILD");
  if (!mode) GTEST_SKIP() << "run by AllocatorPolicy.ThreadsShareOneHeap";
  if (std::string_view(mode) == "policy" && !apply_allocator_policy().applied) std::_Exit(100);
  std::barrier all_allocated(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      void* block = std::malloc(4096);
      touch_pages(block, 4096);
      all_allocated.arrive_and_wait();
      std::free(block);
    });
  }
  for (auto& thread : threads) thread.join();
  std::_Exit(heap_count());
}

TEST(AllocatorPolicy, ThreadsShareOneHeap) {
  if (std::getenv("MALLOC_ARENA_MAX") || std::getenv("GLIBC_TUNABLES")) GTEST_SKIP() << "the user's malloc settings";
  EXPECT_EQ(run_arena_child("policy"), 1);
  // The control: glibc's default gives each of the four threads a heap of its own.
  EXPECT_GT(run_arena_child("default"), 1);
}

TEST(AllocatorPolicy, ReleaseFreeMemoryGivesFreedHeapPagesBack) {
  // 64 MiB in 64 KiB blocks (below the mmap threshold, so from the heap); every other one is freed,
  // so the blocks still held pin the heap's top and free() alone returns nothing.
  constexpr std::size_t kBlock = std::size_t{64} << 10;
  constexpr std::size_t kCount = 1024;
  std::vector<void*> blocks;
  for (std::size_t i = 0; i < kCount; ++i) {
    blocks.push_back(std::malloc(kBlock));
    ASSERT_NE(blocks.back(), nullptr);
    touch_pages(blocks.back(), kBlock);
  }
  for (std::size_t i = 0; i < kCount; i += 2) std::free(blocks[i]);
  const std::size_t freed = kCount / 2 * kBlock;
  const std::size_t before = resident_bytes();
  EXPECT_TRUE(release_free_memory());
  const std::size_t after = resident_bytes();
  for (std::size_t i = 1; i < kCount; i += 2) std::free(blocks[i]);
  ASSERT_LT(after, before);
  // Each freed block keeps at most its first and last partial page: nearly all of it comes back.
  EXPECT_GE(before - after, freed / 2) << "freed " << freed << " bytes, resident " << before << " -> " << after;
}

TEST(AllocatorPolicy, TheUsersMallocSettingsWin) {
  ASSERT_EQ(::setenv("MALLOC_ARENA_MAX", "4", 1), 0);
  const auto policy = apply_allocator_policy();
  ::unsetenv("MALLOC_ARENA_MAX");
  EXPECT_FALSE(policy.applied);
  EXPECT_NE(policy.source.find("MALLOC_ARENA_MAX"), std::string::npos) << policy.source;
  EXPECT_EQ(allocator_policy().to_json().at("applied"), false);
  apply_allocator_policy();  // the rest of the binary runs under k3lab's policy again
}

}  // namespace
}  // namespace k3lab::core
