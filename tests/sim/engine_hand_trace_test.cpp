// Tiny traces whose every admission, rejection, delay and moved byte is computed by hand in the
// comments (1 byte per token; one iteration = 1 ms; prefill takes one iteration).
#include <gtest/gtest.h>

#include "k3lab/sim/engine.hpp"
#include "k3lab/sim/result_json.hpp"

namespace k3lab::sim {
namespace {

Trace trace_of(std::vector<TraceRecord> records) {
  Trace t;
  t.source = "hand";
  t.records = std::move(records);
  return t;
}

EngineConfig engine(Bytes state, std::uint32_t page_tokens, double drain_factor = 2.0) {
  EngineConfig e;
  e.step_us = 1000;
  e.prefill_tokens_per_step = 100;
  e.drain_factor = drain_factor;
  e.copy_bytes_per_second = 1e6;  // 1 byte per microsecond of stall
  e.reference_state_bytes = state;
  e.reference_page_tokens = page_tokens;
  e.reference_page_bytes = page_tokens;  // 1 byte per token
  e.reference_watermark_bytes = 0;
  e.check_invariants_every_iteration = true;
  return e;
}

PolicyConfig fixed(std::uint32_t slots, std::uint32_t pages, Bytes state, std::uint32_t page_tokens) {
  PolicyConfig p;
  p.kind = PolicyKind::FixedSplit;
  p.fixed.state_bytes = state;
  p.fixed.page_bytes = page_tokens;
  p.fixed.page_tokens = page_tokens;
  p.fixed.state_slots = slots;
  p.fixed.kv_pages = pages;
  p.fixed.budget_bytes = p.fixed.state_pool_bytes() + p.fixed.kv_pool_bytes();
  return p;
}

PolicyConfig unified(Bytes total, Bytes state, std::uint32_t page_tokens) {
  PolicyConfig p;
  p.kind = PolicyKind::Unified;
  p.unified.total_bytes = total;
  p.unified.state_bytes = state;
  p.unified.page_bytes = page_tokens;
  p.unified.page_tokens = page_tokens;
  return p;
}

TEST(EngineHandTrace, FixedSplitStrandsKvBytesWhileStateSlotsRunOut) {
  // State 10 B, pages of 4 tokens (4 B); 2 state slots, 10 KV pages. Three requests at t=0, each
  // 4 prompt tokens (1 page) and 2 output tokens.
  //  iter 0 (t=0): admit r0, r1; r2 refused (no state slot): rejection 1, stranded = all free
  //    bytes = 8 free pages = 32 B in the KV pool (r2's reference need 10 + 4 = 14 <= 32).
  //  iter 1: decode step 1 of r0, r1 makes 5 tokens: one new page each -> stranded 24 B.
  //  iter 2: decode step 2; nothing changes (still 24 B stranded).
  //  iter 3: r0, r1 finish (admitted iter 0 + 1 prefill + 2 decode); r2 admitted at 3 ms.
  //  iter 4: r2 grows; iter 6: r2 finishes. The engine idles until r3 arrives at 100 ms (a last
  //  arrival late enough that the drain rule never bites); r3 runs one prefill iteration: end 101 ms.
  const Trace t = trace_of({{0, 4, 2}, {0, 4, 2}, {0, 4, 2}, {100000, 4, 0}});
  const SimResult r = simulate(t, engine(10, 4), fixed(2, 10, 10, 4));
  EXPECT_EQ(r.admitted, 4u);
  EXPECT_EQ(r.completed, 4u);
  EXPECT_EQ(r.memory_rejections, 1u);
  EXPECT_EQ(r.requests_deferred, 1u);
  EXPECT_EQ(r.rejections_by_shortage[static_cast<std::size_t>(Shortage::StatePool)], 1u);
  EXPECT_EQ(r.queue_delay_p50_us, 0);     // delays 0, 0, 3000, 0: rank 2 of 4
  EXPECT_EQ(r.queue_delay_p90_us, 3000);  // rank 4
  EXPECT_EQ(r.queue_delay_p99_us, 3000);
  EXPECT_DOUBLE_EQ(r.queue_delay_mean_us, 750.0);
  EXPECT_EQ(r.end_us, 101000);
  EXPECT_EQ(r.stranded_at_rejection_max, 32);
  EXPECT_DOUBLE_EQ(r.stranded_at_rejection_by_location_mean[1], 32.0);  // kv-pool
  EXPECT_DOUBLE_EQ(r.stranded_at_rejection_by_location_mean[0], 0.0);   // state-pool
  // (32 + 24 + 24) B x 1000 us over a 101000 us run.
  EXPECT_DOUBLE_EQ(r.stranded_time_weighted, 80000.0 / 101000.0);
  EXPECT_DOUBLE_EQ(r.stranded_time_weighted_by_location[1], 80000.0 / 101000.0);
  EXPECT_EQ(r.misses, 0u);
  EXPECT_FALSE(r.deadline_hit);
}

TEST(EngineHandTrace, UnifiedAdmitsWhatTheSplitRefuses) {
  // Same trace and the same 60 B as one arena: all three fit at t=0 (3 x 14 B = 42 B), each grows
  // one page at iter 1 (54 B); nothing is moved; all finish at iter 3 (3 ms). r3 at 100 ms holds
  // 14 B for one iteration.
  const Trace t = trace_of({{0, 4, 2}, {0, 4, 2}, {0, 4, 2}, {100000, 4, 0}});
  const SimResult r = simulate(t, engine(10, 4), unified(60, 10, 4));
  EXPECT_EQ(r.admitted, 4u);
  EXPECT_EQ(r.memory_rejections, 0u);
  EXPECT_EQ(r.queue_delay_max_us, 0);
  EXPECT_EQ(r.bytes_moved, 0);
  EXPECT_EQ(r.end_us, 101000);
  EXPECT_DOUBLE_EQ(r.stranded_time_weighted, 0.0);
  // Used bytes: 42 B in iter 0, 54 B in iters 1 and 2, 14 B for r3: (42 + 54 + 54 + 14) x 1000 us.
  EXPECT_DOUBLE_EQ(r.used_bytes_time_weighted, 164000.0 / 101000.0);
}

TEST(EngineHandTrace, CompactionBytesAreCountedAndStallTheIteration) {
  // Arena 44 B, state 10 B, pages of 4 tokens. At t=0: A (4 tokens, 8 out), B (4, 0 out),
  // C (4, 1 out): slots 0,1,2 and pages 0,1,2; gap 2 B.
  //  iter 1: B finishes (slot 1 and page 1 become holes). A takes page hole 1. C needs a page: no
  //    hole, gap 2 < 4, so C's state (slot 2, nearest the gap) moves into slot 1: 10 B moved,
  //    which stalls iteration 1 by 10 us (1e6 B/s).
  //  iter 2 (t=2010 us): C finishes. A grows again at iter 5 (no move: the gap has room) and
  //  finishes at iter 9 (t=9010 us). D at 100 ms runs one iteration in an empty arena.
  const Trace t = trace_of({{0, 4, 8}, {0, 4, 0}, {0, 4, 1}, {100000, 4, 0}});
  const SimResult r = simulate(t, engine(10, 4), unified(44, 10, 4));
  EXPECT_EQ(r.admitted, 4u);
  EXPECT_EQ(r.completed, 4u);
  EXPECT_EQ(r.bytes_moved, 10);
  EXPECT_EQ(r.moves, 1u);
  EXPECT_EQ(r.compaction_stall_us, 10);
  EXPECT_EQ(r.end_us, 101000);
  // Loop passes: iters 0..9 (A's release at 9 turns into the idle jump), D's iteration, D's release.
  EXPECT_EQ(r.iterations, 12u);
  const auto json = result_to_json(r);
  EXPECT_EQ(json["compaction"]["bytes_moved"], 10);
}

TEST(EngineHandTrace, PreemptionRequeuesTheNewestAtTheHead) {
  // Fixed split, 2 slots, 3 pages of 2 tokens. r0, r1 at t=0, each 2 tokens (1 page), 4 out.
  // Growth at decode steps 1 and 3 (iters 1 and 3 for r0).
  //  iter 0: both admitted (1 page free).  iter 1: r0 grows (0 free); r1 cannot: r1 is the newest
  //    and preempts itself back to the queue head; no admission in an iteration with a preemption.
  //  iter 2: r1 readmitted (not a first admission: its delay stays 0).
  //  iter 3: r0 needs its third page: none free, the newest (r1) is preempted again.
  //  iter 4: r1 refused (KV pool short): one memory rejection, nothing stranded (free < need).
  //  iter 5: r0 finishes; r1 readmitted; it grows at iters 6 and 8 and finishes at iter 10
  //  (10 ms). r2 at 100 ms runs one iteration.
  const Trace t = trace_of({{0, 2, 4}, {0, 2, 4}, {100000, 2, 0}});
  const SimResult r = simulate(t, engine(10, 2), fixed(2, 3, 10, 2));
  EXPECT_EQ(r.admitted, 3u);
  EXPECT_EQ(r.completed, 3u);
  EXPECT_EQ(r.preemptions, 2u);
  EXPECT_EQ(r.memory_rejections, 1u);
  EXPECT_EQ(r.rejections_by_shortage[static_cast<std::size_t>(Shortage::KvPool)], 1u);
  EXPECT_EQ(r.rejections_with_stranded, 0u);
  EXPECT_EQ(r.queue_delay_max_us, 0);
  EXPECT_EQ(r.end_us, 101000);
  // Loop passes: iters 0..10 (r1's release at 10 turns into the idle jump), r2's iteration, its release.
  EXPECT_EQ(r.iterations, 13u);
}

TEST(EngineHandTrace, DrainDeadlineTurnsQueuedRequestsIntoMisses) {
  // One state slot. r0 at 0 (1 token, 10 out: finishes at iter 11); r1 at 1 ms. Trace duration
  // 1 ms; with drain factor 1 the deadline is 2 ms: at t = 3 ms (> 2 ms) r1 is still queued -> miss.
  const Trace t = trace_of({{0, 1, 10}, {1000, 1, 1}});
  const SimResult r = simulate(t, engine(10, 1, 1.0), fixed(1, 100, 10, 1));
  EXPECT_TRUE(r.deadline_hit);
  EXPECT_EQ(r.deadline_us, 2000);
  EXPECT_EQ(r.end_us, 3000);
  EXPECT_EQ(r.admitted, 1u);
  EXPECT_EQ(r.misses, 1u);
  EXPECT_EQ(r.running_at_end, 1u);
  EXPECT_EQ(r.memory_rejections, 1u);
  // With a drain factor of 20 the deadline (21 ms) is not reached: r1 waits 10 ms, admitted at 11 ms.
  const SimResult late = simulate(t, engine(10, 1, 20.0), fixed(1, 100, 10, 1));
  EXPECT_FALSE(late.deadline_hit);
  EXPECT_EQ(late.misses, 0u);
  EXPECT_EQ(late.admitted, 2u);
  EXPECT_EQ(late.queue_delay_max_us, 10000);
  EXPECT_EQ(late.admitted_by_last_arrival, 1u);
  EXPECT_EQ(late.end_us, 13000);
}

TEST(EngineHandTrace, RequestsThatCanNeverFitAreDroppedNotBlocking) {
  // Two KV pages of 2 tokens: a 10-token prompt needs 5 pages and can never fit; r1 behind it runs.
  const Trace t = trace_of({{0, 10, 1}, {0, 2, 1}});
  const SimResult r = simulate(t, engine(10, 2), fixed(1, 2, 10, 2));
  EXPECT_EQ(r.dropped_too_large, 1u);
  EXPECT_EQ(r.admitted, 1u);
  EXPECT_EQ(r.memory_rejections, 0u);
  EXPECT_EQ(r.misses, 0u);
}

TEST(EngineHandTrace, ARequestThatOutgrowsEmptyMemoryIsDroppedAtDecode) {
  // One page of 2 tokens: 2 prompt tokens fit, the third token needs a second page that does not
  // exist even with nothing else running; the request is dropped instead of looping forever. r1 at
  // 100 ms fits and completes.
  const Trace t = trace_of({{0, 2, 5}, {100000, 1, 0}});
  const SimResult r = simulate(t, engine(10, 2), fixed(1, 1, 10, 2));
  EXPECT_EQ(r.admitted, 2u);
  EXPECT_EQ(r.dropped_at_decode, 1u);
  EXPECT_EQ(r.completed, 1u);
  EXPECT_EQ(r.preemptions, 0u);
}

TEST(EngineHandTrace, AZeroDurationTraceHasNoDrainTime) {
  // The seed's rule read literally: a trace whose arrivals all share one instant has duration 0, so
  // any draining exceeds twice it. r0 and r1 are admitted at t=0; at the next iteration (1 ms > 0)
  // the run stops: r2, refused for lack of a state slot, is a miss.
  const Trace t = trace_of({{0, 1, 3}, {0, 1, 3}, {0, 1, 3}});
  const SimResult r = simulate(t, engine(10, 1), fixed(2, 10, 10, 1));
  EXPECT_TRUE(r.deadline_hit);
  EXPECT_EQ(r.admitted, 2u);
  EXPECT_EQ(r.misses, 1u);
  EXPECT_EQ(r.running_at_end, 2u);
  EXPECT_EQ(r.end_us, 1000);
}

TEST(EngineHandTrace, IdleGapsAreSkippedToTheNextArrival) {
  // r0 at 0 runs 1 + 1 iterations; r1 arrives at 1 s: the engine jumps, it does not step 1000 times.
  const Trace t = trace_of({{0, 1, 1}, {1'000'000, 1, 1}});
  const SimResult r = simulate(t, engine(10, 1), fixed(1, 10, 10, 1));
  EXPECT_EQ(r.admitted, 2u);
  EXPECT_EQ(r.end_us, 1'002'000);
  EXPECT_LT(r.iterations, 10u);
}

}  // namespace
}  // namespace k3lab::sim
