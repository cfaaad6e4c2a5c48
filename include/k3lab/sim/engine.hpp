#pragma once
// The discrete-event admission simulator. The engine runs in iterations (one decode step each, of
// fixed simulated duration): every running request advances one token per iteration, prefill
// advances prefill_tokens_per_step prompt tokens per iteration. Within an iteration, in order:
//   1. arrivals up to the iteration's start join the FCFS queue;
//   2. requests whose last token was produced release their memory (binary heap of finish times);
//   3. requests whose next token starts a new KV page get one (a calendar of P buckets keyed by
//      iteration mod page_tokens, so page growth is analytic: no per-token work). If no memory is
//      left, the newest running request is preempted (vLLM/SGLang recompute): its memory is freed
//      and it goes back to the head of the queue;
//   4. unless something was preempted, the queue head is admitted while it fits (head-of-line
//      blocking: a head that does not fit stops admission). Admission takes the KDA state and
//      the prompt's KV pages at once, and keeps a watermark free for decode growth.
// Compaction moves in an iteration are charged on the critical path: the iteration lasts
// step + bytes_moved / copy_bytes_per_second. Stopping rule (the seed's): after the last arrival
// the queue drains; if draining lasts more than drain_factor x the trace duration, the requests still
// queued count as misses.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "k3lab/sim/fixed_split_pool.hpp"
#include "k3lab/sim/padded_pool.hpp"
#include "k3lab/sim/pool_types.hpp"
#include "k3lab/sim/trace.hpp"
#include "k3lab/sim/unified_arena.hpp"

namespace k3lab::sim {

struct PolicyConfig {
  PolicyKind kind = PolicyKind::Unified;
  FixedSplitPool::Geometry fixed;
  UnifiedArena::Geometry unified;
  PaddedPool::Geometry padded;
};

struct EngineConfig {
  std::int64_t step_us = 0;                   // one decode iteration
  std::uint32_t prefill_tokens_per_step = 0;  // chunked prefill, per request per iteration
  double drain_factor = 2.0;
  double copy_bytes_per_second = 0;           // compaction copy payload bandwidth
  std::uint32_t time_series_points = 0;       // samples over the arrival window; 0 = none
  // The policy-neutral need of a request, for the stranded-bytes definition: its state, its prompt
  // in reference pages, and the reference watermark (the unified arena's admission rule).
  Bytes reference_state_bytes = 0;
  Bytes reference_page_bytes = 0;
  std::uint32_t reference_page_tokens = 0;
  Bytes reference_watermark_bytes = 0;
  bool check_invariants_every_iteration = false;  // tests: full allocator check after each iteration

  void validate() const;  // throws std::invalid_argument naming the field
};

struct TimeSeries {
  std::int64_t interval_us = 0;
  std::vector<std::int64_t> t_us;
  std::vector<std::int64_t> admitted;    // cumulative first admissions
  std::vector<std::int64_t> rejections;  // cumulative memory rejections
  std::vector<std::int64_t> queued;
  std::vector<std::int64_t> running;
  std::vector<Bytes> used_bytes;
  std::vector<Bytes> stranded_bytes;
};

struct SimResult {
  std::string policy_kind;
  std::vector<std::string> locations;  // where free bytes can sit, for this policy
  Bytes total_bytes = 0;

  std::uint64_t arrivals = 0;
  std::uint64_t admitted = 0;                  // requests admitted at least once
  std::uint64_t admitted_by_last_arrival = 0;  // ... no later than the last arrival
  std::uint64_t completed = 0;
  std::uint64_t misses = 0;                    // never admitted, still queued when the run stopped
  std::uint64_t dropped_too_large = 0;         // could never fit this policy's memory, even empty
  std::uint64_t dropped_at_decode = 0;         // alone in memory and still unable to grow
  std::uint64_t preemptions = 0;
  std::uint64_t requeued_at_end = 0;           // preempted requests waiting when the run stopped
  std::uint64_t running_at_end = 0;
  std::uint64_t memory_rejections = 0;         // refused admission attempts (see docs)
  std::uint64_t requests_deferred = 0;         // distinct requests refused at least once
  std::array<std::uint64_t, kShortageKinds> rejections_by_shortage{};

  // Stranded free bytes: free bytes while the queue head waits for memory although the free bytes,
  // pooled, would cover its reference need. Time-weighted over the run, and sampled at rejections.
  double stranded_time_weighted = 0;
  std::array<double, kMaxLocations> stranded_time_weighted_by_location{};
  std::uint64_t rejections_with_stranded = 0;
  double stranded_at_rejection_mean = 0;
  Bytes stranded_at_rejection_p50 = 0;
  Bytes stranded_at_rejection_p90 = 0;
  Bytes stranded_at_rejection_max = 0;
  std::array<double, kMaxLocations> stranded_at_rejection_by_location_mean{};

  double queue_delay_mean_us = 0;  // admitted requests, first admission minus arrival
  std::int64_t queue_delay_p50_us = 0;
  std::int64_t queue_delay_p90_us = 0;
  std::int64_t queue_delay_p99_us = 0;
  std::int64_t queue_delay_max_us = 0;

  Bytes bytes_moved = 0;
  std::uint64_t moves = 0;
  std::int64_t compaction_stall_us = 0;

  double used_bytes_time_weighted = 0;
  double running_time_weighted = 0;
  double queued_time_weighted = 0;

  std::int64_t first_arrival_us = 0;
  std::int64_t last_arrival_us = 0;
  std::int64_t deadline_us = 0;
  std::int64_t end_us = 0;
  bool deadline_hit = false;
  std::uint64_t iterations = 0;  // engine loop passes, including the release-only pass before an idle jump

  TimeSeries series;
};

SimResult simulate(const Trace& trace, const EngineConfig& config, const PolicyConfig& policy);

}  // namespace k3lab::sim
