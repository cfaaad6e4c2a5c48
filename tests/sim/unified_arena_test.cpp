// Hand-computed arena histories: every position and every moved byte is worked out in the comments.
#include <gtest/gtest.h>

#include "k3lab/sim/unified_arena.hpp"

namespace k3lab::sim {
namespace {

using Positions = std::vector<std::uint32_t>;

UnifiedArena arena(Bytes total, CompactionMode mode = CompactionMode::OnShortfall) {
  UnifiedArena::Geometry g;
  g.total_bytes = total;
  g.state_bytes = 10;
  g.page_bytes = 4;
  g.page_tokens = 4;
  g.compaction = mode;
  return UnifiedArena(g);
}

TEST(UnifiedArenaHand, HolesAreReusedWithoutMoving) {
  UnifiedArena a = arena(40);
  a.admit(0, 2);  // state slot 0 = [30,40), pages 0,1 = [0,8)
  a.admit(1, 3);  // state slot 1 = [20,30), pages 2,3,4 = [8,20); gap 0
  EXPECT_EQ(a.gap_bytes(), 0);
  EXPECT_EQ(a.free_bytes(), 0);
  a.release(0);   // slot 0 and pages 0,1 become holes (not at an edge)
  EXPECT_EQ(a.free_by_location(), (LocationBytes{0, 8, 10}));
  EXPECT_EQ(a.check_admit(3), Shortage::Shared);  // needs 10 + 12 = 22 > 18
  EXPECT_EQ(a.check_admit(2), Shortage::None);    // needs exactly 18
  a.admit(2, 2);
  EXPECT_EQ(a.state_slot(2), 0u);
  EXPECT_EQ(a.page_positions(2), (Positions{0, 1}));
  EXPECT_EQ(a.bytes_moved(), 0);
  EXPECT_EQ(a.free_bytes(), 0);
  a.check_invariants();
}

TEST(UnifiedArenaHand, StateShortfallCompactsTheKvRegion) {
  UnifiedArena a = arena(40);
  a.admit(0, 2);  // A: slot 0, pages 0,1
  a.admit(1, 1);  // B: slot 1, page 2; KV region 12 B, states 20 B, gap 8
  a.release(0);   // holes: slot 0, pages 0,1 (page 2 is live, so no retreat)
  a.admit(2, 1);  // C: state hole slot 0, page hole 0; left: page hole 1, gap 8
  EXPECT_EQ(a.free_by_location(), (LocationBytes{8, 4, 0}));
  // D needs a state (10 B): no state hole, gap 8 < 10, so the KV region is compacted: its top page
  // (position 2, B's) moves into the lowest hole (position 1): 4 bytes, one move; gap becomes 12.
  a.admit(3, 0);
  EXPECT_EQ(a.bytes_moved(), 4);
  EXPECT_EQ(a.moves(), 1u);
  EXPECT_EQ(a.page_positions(1), (Positions{1}));
  EXPECT_EQ(a.state_slot(3), 2u);                 // [10,20)
  EXPECT_EQ(a.kv_region_pages(), 2u);             // [0,8)
  EXPECT_EQ(a.gap_bytes(), 2);
  a.check_invariants();
}

TEST(UnifiedArenaHand, PageShortfallCompactsTheStateRegion) {
  UnifiedArena a = arena(44);
  a.admit(0, 1);  // A: slot 0 [34,44), page 0
  a.admit(1, 1);  // B: slot 1 [24,34), page 1
  a.admit(2, 1);  // C: slot 2 [14,24), page 2; used 42, gap 2
  EXPECT_EQ(a.check_admit(1), Shortage::Shared);
  a.release(1);   // B: slot 1 and page 1 become holes in the middle
  EXPECT_TRUE(a.grow(0));  // takes page hole 1, no move
  EXPECT_EQ(a.bytes_moved(), 0);
  // No page hole, gap 2 < 4: the state nearest the gap (slot 2, C's) moves into hole slot 1:
  // 10 bytes; the state region shrinks to 2 slots and the gap grows to 12.
  EXPECT_TRUE(a.grow(0));
  EXPECT_EQ(a.bytes_moved(), 10);
  EXPECT_EQ(a.moves(), 1u);
  EXPECT_EQ(a.state_slot(2), 1u);
  EXPECT_EQ(a.page_positions(0), (Positions{0, 1, 3}));
  EXPECT_EQ(a.gap_bytes(), 8);
  a.check_invariants();
  EXPECT_TRUE(a.grow(0));
  EXPECT_TRUE(a.grow(0));
  EXPECT_FALSE(a.grow(0));  // free 0: refused before anything moves
  EXPECT_EQ(a.bytes_moved(), 10);
  a.check_invariants();
}

TEST(UnifiedArenaHand, EagerCompactionFillsEveryHoleAtOnce) {
  UnifiedArena a = arena(44, CompactionMode::Eager);
  a.admit(0, 1);
  a.admit(1, 1);
  a.admit(2, 1);
  // Releasing B: C's page (top, position 2) moves into page hole 1 (4 B) and C's state (bottom,
  // slot 2) moves into state hole 1 (10 B).
  a.release(1);
  EXPECT_EQ(a.bytes_moved(), 14);
  EXPECT_EQ(a.moves(), 2u);
  EXPECT_EQ(a.page_positions(2), (Positions{1}));
  EXPECT_EQ(a.state_slot(2), 1u);
  EXPECT_EQ(a.free_by_location(), (LocationBytes{16, 0, 0}));
  a.check_invariants();
}

TEST(UnifiedArenaHand, EdgeFreesRetreatIntoTheGap) {
  UnifiedArena a = arena(40);
  a.admit(0, 1);
  a.admit(1, 2);  // B owns the top pages and the bottom state
  a.release(1);
  EXPECT_EQ(a.kv_region_pages(), 1u);
  EXPECT_EQ(a.state_region_slots(), 1u);
  EXPECT_EQ(a.free_by_location(), (LocationBytes{26, 0, 0}));
  a.release(0);
  EXPECT_EQ(a.free_bytes(), 40);
  EXPECT_EQ(a.gap_bytes(), 40);
  a.check_invariants();
}

TEST(UnifiedArenaHand, WatermarkIsPartOfTheAdmissionRule) {
  UnifiedArena::Geometry g;
  g.total_bytes = 40;
  g.state_bytes = 10;
  g.page_bytes = 4;
  g.page_tokens = 4;
  g.watermark_bytes = 6;
  UnifiedArena a(g);
  EXPECT_EQ(a.check_admit(6), Shortage::None);    // 10 + 24 + 6 = 40
  EXPECT_EQ(a.check_admit(7), Shortage::Shared);  // 44 > 40
  EXPECT_FALSE(a.fits_when_empty(7));
}

}  // namespace
}  // namespace k3lab::sim
