// The mock's prefix cache, with expected cached bytes worked out from the block size by hand.
#include <gtest/gtest.h>

#include <string>

#include "k3lab/api/prefix_cache.hpp"

namespace k3lab::api {
namespace {

std::string text_of(std::size_t bytes, char seed) {
  std::string s;
  for (std::size_t i = 0; i < bytes; ++i) s.push_back(static_cast<char>('a' + (seed + i * 7) % 26));
  return s;
}

TEST(PrefixCache, RepeatHitsWholeBlocksOnly) {
  PrefixCache cache(1024);
  const std::string prompt = text_of(5000, 1);  // 4 whole blocks + 904 bytes
  EXPECT_EQ(cache.lookup_and_insert(prompt), 0u);
  EXPECT_EQ(cache.lookup_and_insert(prompt), 4096u);
}

TEST(PrefixCache, ChangedFirstLineReportsZero) {
  PrefixCache cache(1024);
  const std::string body = text_of(8000, 2);
  cache.lookup_and_insert("cache-buster 0001\n" + body);
  EXPECT_EQ(cache.lookup("cache-buster 0002\n" + body), 0u);
  EXPECT_EQ(cache.lookup("cache-buster 0001\n" + body), 7168u);  // 8018 bytes: 7 whole blocks
}

TEST(PrefixCache, DivergenceInsideABlockKeepsEarlierBlocks) {
  PrefixCache cache(1024);
  std::string a = text_of(4096, 3);
  std::string b = a;
  b[2600] = '#';  // inside block 2 (bytes 2048..3071)
  cache.lookup_and_insert(a);
  EXPECT_EQ(cache.lookup_and_insert(b), 2048u);
  EXPECT_EQ(cache.lookup(b), 4096u);  // b's own blocks are now stored
}

TEST(PrefixCache, ShorterThanABlockNeverHits) {
  PrefixCache cache(1024);
  cache.lookup_and_insert("short");
  EXPECT_EQ(cache.lookup_and_insert("short"), 0u);
}

TEST(PrefixCache, SameBlockAtAnotherPositionDoesNotHit) {
  PrefixCache cache(4);
  cache.lookup_and_insert("AAAABBBB");
  EXPECT_EQ(cache.lookup("BBBBAAAA"), 0u);  // hashes chain over everything before a block
  EXPECT_EQ(cache.lookup("AAAACCCC"), 4u);
}

TEST(PrefixCache, OldGenerationIsDroppedRecentlyUsedSurvives) {
  PrefixCache cache(4, 4);  // each generation holds 2 blocks
  const std::string p1 = "AAAABBBB", p2 = "CCCCDDDD", p3 = "EEEEFFFF";
  cache.lookup_and_insert(p1);
  cache.lookup_and_insert(p2);  // turnover: p1 is now the older generation
  EXPECT_EQ(cache.lookup(p1), 8u);
  EXPECT_EQ(cache.lookup_and_insert(p1), 8u);  // a hit, refreshed into the newer generation
  cache.lookup_and_insert(p3);                 // turnover: p2 is dropped, p1 survives
  EXPECT_EQ(cache.lookup(p2), 0u);
  EXPECT_EQ(cache.lookup(p1), 8u);
  EXPECT_EQ(cache.lookup(p3), 8u);
  EXPECT_THROW(PrefixCache(0), std::invalid_argument);
  EXPECT_THROW(PrefixCache(4, 1), std::invalid_argument);
}

}  // namespace
}  // namespace k3lab::api
