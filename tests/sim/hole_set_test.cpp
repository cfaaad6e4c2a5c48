#include <set>

#include <gtest/gtest.h>

#include "k3lab/core/rng.hpp"
#include "k3lab/sim/hole_set.hpp"

namespace k3lab::sim {
namespace {

TEST(HoleSet, MatchesAnOrderedSetUnderRandomOperations) {
  core::Rng rng(11);
  for (std::uint32_t capacity : {1u, 63u, 64u, 65u, 4095u, 4096u, 9000u}) {
    HoleSet holes(capacity);
    std::set<std::uint32_t> reference;
    for (int step = 0; step < 4000; ++step) {
      const auto pos = static_cast<std::uint32_t>(rng.below(capacity));
      const int op = static_cast<int>(rng.below(3));
      if (op == 0 && !reference.count(pos)) {
        holes.insert(pos);
        reference.insert(pos);
      } else if (op == 1 && reference.count(pos)) {
        holes.erase(pos);
        reference.erase(pos);
      } else if (op == 2) {
        std::vector<std::uint32_t> taken;
        const auto want = static_cast<std::uint32_t>(rng.below(5));
        holes.take_lowest(want, [&](std::uint32_t p) { taken.push_back(p); });
        std::vector<std::uint32_t> expected;
        for (auto it = reference.begin(); it != reference.end() && expected.size() < want; ++it) expected.push_back(*it);
        ASSERT_EQ(taken, expected);
        for (auto p : expected) reference.erase(p);
      }
      ASSERT_EQ(holes.size(), reference.size());
      ASSERT_EQ(holes.contains(pos), reference.count(pos) == 1);
      if (!reference.empty()) {
        ASSERT_EQ(holes.lowest(), *reference.begin());
      }
    }
  }
}

TEST(HoleSet, RejectsDoubleInsertAndEraseOfAbsentPosition) {
  HoleSet holes(10);
  holes.insert(3);
  EXPECT_THROW(holes.insert(3), std::logic_error);
  EXPECT_THROW(holes.erase(4), std::logic_error);
  EXPECT_THROW(HoleSet(5).lowest(), std::logic_error);
}

}  // namespace
}  // namespace k3lab::sim
