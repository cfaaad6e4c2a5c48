#include "k3lab/sim/engine.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "k3lab/sim/ring_deque.hpp"
#include "k3lab/sim/stats.hpp"

namespace k3lab::sim {

void EngineConfig::validate() const {
  auto fail = [](const std::string& field, const std::string& what) {
    throw std::invalid_argument("engine config: " + field + " " + what);
  };
  if (step_us <= 0) fail("step_us", "must be positive");
  if (prefill_tokens_per_step == 0) fail("prefill_tokens_per_step", "must be at least 1");
  if (!(drain_factor >= 0)) fail("drain_factor", "must be >= 0");
  if (!(copy_bytes_per_second > 0)) fail("copy_bytes_per_second", "must be > 0");
  if (reference_state_bytes <= 0 || reference_page_bytes <= 0 || reference_page_tokens == 0) {
    fail("reference sizes", "must be positive");
  }
  if (reference_watermark_bytes < 0) fail("reference_watermark_bytes", "must be >= 0");
}

namespace {

constexpr std::uint32_t kNone = kNoOwner;

template <class Pool>
class Engine {
 public:
  Engine(const Trace& trace, const EngineConfig& config, Pool& pool)
      : trace_(trace), cfg_(config), pool_(pool), page_tokens_(pool.page_tokens()) {}

  SimResult run();

 private:
  struct Slot {
    std::uint32_t request = kNone;
    std::uint32_t generation = 0;
    std::int64_t next_growth_iter = 0;
    std::uint32_t growths_left = 0;
    std::uint32_t bucket_pos = kNone;  // index in buckets_[next_growth_iter % page_tokens_], or kNone
    std::uint32_t prev = kNone;        // running list, oldest admission first
    std::uint32_t next = kNone;
    bool active = false;
  };
  struct FinishEvent {
    std::int64_t iter;
    std::uint32_t slot;
    std::uint32_t generation;
  };
  struct LaterFirst {
    bool operator()(const FinishEvent& a, const FinishEvent& b) const {
      return a.iter != b.iter ? a.iter > b.iter : a.slot > b.slot;
    }
  };
  enum Flags : std::uint8_t { kAdmitted = 1, kDeferred = 2 };
  // Time integrals over the run, for the time-weighted means.
  struct Integrals {
    double used = 0, running = 0, queued = 0, stranded = 0;
    std::array<double, kMaxLocations> stranded_by_location{};
  };

  std::uint32_t take_slot();
  void admit(std::uint32_t request);
  void retire(std::uint32_t slot);  // release memory and unlink; the caller decides what follows
  void grow_or_preempt(std::uint32_t slot);
  void admission_phase();
  void refresh_stranded();
  void bucket_insert(std::uint32_t slot);
  void bucket_remove(std::uint32_t slot);
  void record_sample(std::int64_t t);
  void start();
  void finish_due_requests();
  void grow_due_requests();
  void integrate_until(std::int64_t next_now);
  void close_books();
  void summarize();

  const Trace& trace_;
  const EngineConfig& cfg_;
  Pool& pool_;
  const std::uint32_t page_tokens_;
  SimResult out_;

  std::vector<Slot> slots_;
  std::vector<std::uint32_t> free_slots_;
  std::uint32_t oldest_ = kNone;
  std::uint32_t newest_ = kNone;
  std::uint32_t running_ = 0;
  std::vector<FinishEvent> heap_;
  std::vector<std::vector<std::uint32_t>> buckets_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> growth_scratch_;
  RingDeque<std::uint32_t> queue_;
  std::vector<std::uint8_t> flags_;
  std::vector<std::int64_t> delays_;
  std::vector<Bytes> stranded_samples_;
  std::array<double, kMaxLocations> stranded_sample_sums_{};

  std::int64_t now_ = 0;
  std::int64_t iter_ = 0;
  std::uint32_t blocked_head_ = kNone;   // the head refused last, until memory is released
  bool released_since_refusal_ = false;
  bool memory_changed_ = false;
  bool preempted_this_iteration_ = false;
  LocationBytes stranded_now_{};
  Bytes stranded_total_now_ = 0;
  std::size_t next_arrival_ = 0;  // first trace record not yet queued
  std::int64_t next_sample_ = 0;
  std::size_t sample_cap_ = 0;  // 0: no time series
  Integrals integrals_;
};

template <class Pool>
std::uint32_t Engine<Pool>::take_slot() {
  if (!free_slots_.empty()) {
    const std::uint32_t s = free_slots_.back();
    free_slots_.pop_back();
    return s;
  }
  slots_.emplace_back();
  return static_cast<std::uint32_t>(slots_.size() - 1);
}

template <class Pool>
void Engine<Pool>::bucket_insert(std::uint32_t slot) {
  auto& bucket = buckets_[static_cast<std::size_t>(slots_[slot].next_growth_iter % page_tokens_)];
  slots_[slot].bucket_pos = static_cast<std::uint32_t>(bucket.size());
  bucket.push_back(slot);
}

template <class Pool>
void Engine<Pool>::bucket_remove(std::uint32_t slot) {
  Slot& s = slots_[slot];
  if (s.bucket_pos == kNone) return;
  auto& bucket = buckets_[static_cast<std::size_t>(s.next_growth_iter % page_tokens_)];
  const std::uint32_t last = bucket.back();
  bucket[s.bucket_pos] = last;
  slots_[last].bucket_pos = s.bucket_pos;
  bucket.pop_back();
  s.bucket_pos = kNone;
}

template <class Pool>
void Engine<Pool>::admit(std::uint32_t request) {
  const TraceRecord& r = trace_.records[request];
  const std::uint32_t slot = take_slot();
  const std::uint32_t pages = ceil_div(r.prompt_tokens, page_tokens_);
  pool_.admit(slot, pages);
  memory_changed_ = true;

  Slot& s = slots_[slot];
  s.request = request;
  s.active = true;
  ++s.generation;
  const std::int64_t prefill_iters = ceil_div(r.prompt_tokens, cfg_.prefill_tokens_per_step);
  // Decode step j (1..output) runs in iteration iter_ + prefill_iters + j - 1 and brings the KV to
  // prompt + j tokens; it needs a new page when prompt + j - 1 is a multiple of the page size.
  const std::uint32_t g = page_tokens_;
  std::uint32_t first_j = (g - (r.prompt_tokens - 1) % g) % g;
  if (first_j == 0) first_j = g;
  s.growths_left = r.output_tokens >= first_j ? 1 + (r.output_tokens - first_j) / g : 0;
  s.bucket_pos = kNone;
  if (s.growths_left > 0) {
    s.next_growth_iter = iter_ + prefill_iters + first_j - 1;
    bucket_insert(slot);
  }
  heap_.push_back({iter_ + prefill_iters + r.output_tokens, slot, s.generation});
  std::push_heap(heap_.begin(), heap_.end(), LaterFirst{});

  s.prev = newest_;
  s.next = kNone;
  if (newest_ != kNone) slots_[newest_].next = slot;
  else oldest_ = slot;
  newest_ = slot;
  ++running_;

  if (!(flags_[request] & kAdmitted)) {
    flags_[request] |= kAdmitted;
    ++out_.admitted;
    if (now_ <= out_.last_arrival_us) ++out_.admitted_by_last_arrival;
    delays_.push_back(now_ - r.arrival_us);
  }
}

template <class Pool>
void Engine<Pool>::retire(std::uint32_t slot) {
  Slot& s = slots_[slot];
  pool_.release(slot);
  bucket_remove(slot);
  if (s.prev != kNone) slots_[s.prev].next = s.next;
  else oldest_ = s.next;
  if (s.next != kNone) slots_[s.next].prev = s.prev;
  else newest_ = s.prev;
  s.active = false;
  ++s.generation;  // its pending finish event is now stale
  --running_;
  free_slots_.push_back(slot);
  released_since_refusal_ = true;
  memory_changed_ = true;
}

template <class Pool>
void Engine<Pool>::grow_or_preempt(std::uint32_t slot) {
  while (!pool_.grow(slot)) {
    if (running_ == 1) {
      // Alone in memory and still unable to grow: it can never finish (the livelock vLLM #47272
      // describes). Drop it rather than requeue it forever.
      retire(slot);
      ++out_.dropped_at_decode;
      return;
    }
    const std::uint32_t victim = newest_;
    const std::uint32_t request = slots_[victim].request;
    retire(victim);
    queue_.push_front(request);
    ++out_.preemptions;
    preempted_this_iteration_ = true;
    if (victim == slot) return;
  }
  memory_changed_ = true;
  Slot& s = slots_[slot];
  if (--s.growths_left == 0) {
    bucket_remove(slot);
  } else {
    s.next_growth_iter += page_tokens_;  // same residue: it stays in its bucket
  }
}

template <class Pool>
void Engine<Pool>::refresh_stranded() {
  stranded_now_ = {};
  stranded_total_now_ = 0;
  if (queue_.empty()) return;
  const TraceRecord& head = trace_.records[queue_.front()];
  const Bytes need = cfg_.reference_state_bytes +
                     static_cast<Bytes>(ceil_div(head.prompt_tokens, cfg_.reference_page_tokens)) *
                         cfg_.reference_page_bytes +
                     cfg_.reference_watermark_bytes;
  const Bytes free = pool_.free_bytes();
  if (free < need) return;  // memory is genuinely short: nothing is stranded
  stranded_now_ = pool_.free_by_location();
  stranded_total_now_ = free;
}

template <class Pool>
void Engine<Pool>::admission_phase() {
  bool refused_now = false;
  while (!queue_.empty() && !preempted_this_iteration_) {
    const std::uint32_t request = queue_.front();
    if (request == blocked_head_ && !released_since_refusal_) break;  // nothing freed: still blocked
    const std::uint32_t pages = ceil_div(trace_.records[request].prompt_tokens, page_tokens_);
    const Shortage shortage = pool_.check_admit(pages);
    if (shortage == Shortage::None) {
      queue_.pop_front();
      admit(request);
      blocked_head_ = kNone;
      continue;
    }
    if (!pool_.fits_when_empty(pages)) {
      queue_.pop_front();
      ++out_.dropped_too_large;
      continue;
    }
    ++out_.memory_rejections;
    ++out_.rejections_by_shortage[static_cast<std::size_t>(shortage)];
    if (!(flags_[request] & kDeferred)) {
      flags_[request] |= kDeferred;
      ++out_.requests_deferred;
    }
    blocked_head_ = request;
    released_since_refusal_ = false;
    refused_now = true;
    break;
  }
  if (queue_.empty()) {
    stranded_now_ = {};
    stranded_total_now_ = 0;
  } else if (memory_changed_ || refused_now || queue_.front() != blocked_head_) {
    refresh_stranded();
  }
  if (refused_now) {
    stranded_samples_.push_back(stranded_total_now_);
    if (stranded_total_now_ > 0) ++out_.rejections_with_stranded;
    for (int i = 0; i < kMaxLocations; ++i) stranded_sample_sums_[static_cast<std::size_t>(i)] += static_cast<double>(stranded_now_[static_cast<std::size_t>(i)]);
  }
}

template <class Pool>
void Engine<Pool>::record_sample(std::int64_t t) {
  TimeSeries& ts = out_.series;
  ts.t_us.push_back(t);
  ts.admitted.push_back(static_cast<std::int64_t>(out_.admitted));
  ts.rejections.push_back(static_cast<std::int64_t>(out_.memory_rejections));
  ts.queued.push_back(static_cast<std::int64_t>(queue_.size()));
  ts.running.push_back(running_);
  ts.used_bytes.push_back(pool_.used_bytes());
  ts.stranded_bytes.push_back(stranded_total_now_);
}

// Validates the inputs and sets the result's trace facts, the buffers and the time-series cadence.
template <class Pool>
void Engine<Pool>::start() {
  cfg_.validate();
  validate_trace(trace_);
  const auto& records = trace_.records;
  const std::size_t n = records.size();
  if (n >= kNone) throw std::invalid_argument("trace too long for the simulator (at most 4294967294 requests)");

  out_.policy_kind = "";
  out_.total_bytes = pool_.total_bytes();
  for (int i = 0; i < Pool::kLocations; ++i) out_.locations.emplace_back(Pool::kLocationNames[i]);
  out_.arrivals = n;
  out_.first_arrival_us = n ? records.front().arrival_us : 0;
  out_.last_arrival_us = n ? records.back().arrival_us : 0;
  const std::int64_t duration = out_.last_arrival_us - out_.first_arrival_us;
  out_.deadline_us = out_.last_arrival_us + std::llround(cfg_.drain_factor * static_cast<double>(duration));

  buckets_.assign(page_tokens_, {});
  flags_.assign(n, 0);
  delays_.reserve(n);
  queue_.reserve(1024);
  heap_.reserve(1024);

  next_sample_ = out_.first_arrival_us;
  if (cfg_.time_series_points > 0) {
    out_.series.interval_us = std::max<std::int64_t>(1, (duration + cfg_.time_series_points - 1) / cfg_.time_series_points);
    sample_cap_ = static_cast<std::size_t>(cfg_.time_series_points * (1.0 + cfg_.drain_factor)) + 2;
  }
  now_ = out_.first_arrival_us;
}

// Retires the requests whose last decode step ran before this iteration (stale events skipped).
template <class Pool>
void Engine<Pool>::finish_due_requests() {
  while (!heap_.empty() && heap_.front().iter <= iter_) {
    const FinishEvent e = heap_.front();
    std::pop_heap(heap_.begin(), heap_.end(), LaterFirst{});
    heap_.pop_back();
    if (!slots_[e.slot].active || slots_[e.slot].generation != e.generation) continue;
    retire(e.slot);
    ++out_.completed;
  }
}

// Gives a page to every running request whose KV crosses a page boundary in this iteration.
template <class Pool>
void Engine<Pool>::grow_due_requests() {
  const auto& bucket = buckets_[static_cast<std::size_t>(iter_ % page_tokens_)];
  if (bucket.empty()) return;
  growth_scratch_.clear();
  for (std::uint32_t slot : bucket) growth_scratch_.emplace_back(slot, slots_[slot].generation);
  for (const auto& [slot, generation] : growth_scratch_) {
    const Slot& s = slots_[slot];
    if (!s.active || s.generation != generation || s.next_growth_iter != iter_) continue;
    grow_or_preempt(slot);
  }
}

// Integrates the state over [now_, next_now) and records the time-series samples that fall in it.
template <class Pool>
void Engine<Pool>::integrate_until(std::int64_t next_now) {
  const double dt = static_cast<double>(next_now - now_);
  integrals_.used += dt * static_cast<double>(pool_.used_bytes());
  integrals_.running += dt * running_;
  integrals_.queued += dt * static_cast<double>(queue_.size());
  if (stranded_total_now_ > 0) {
    integrals_.stranded += dt * static_cast<double>(stranded_total_now_);
    for (std::size_t i = 0; i < kMaxLocations; ++i) integrals_.stranded_by_location[i] += dt * static_cast<double>(stranded_now_[i]);
  }
  while (sample_cap_ > 0 && next_sample_ < next_now && out_.series.t_us.size() < sample_cap_) {
    record_sample(next_sample_);
    next_sample_ += out_.series.interval_us;
  }
}

// Close the books: what is still queued, what is still running, and a final leak check.
template <class Pool>
void Engine<Pool>::close_books() {
  for (std::size_t i = 0; i < queue_.size(); ++i) {
    if (flags_[queue_.at(i)] & kAdmitted) ++out_.requeued_at_end;
    else ++out_.misses;
  }
  out_.running_at_end = running_;
  while (oldest_ != kNone) retire(oldest_);
  pool_.check_invariants();
  if (pool_.used_bytes() != 0) throw std::logic_error("simulator: memory still in use after every request was released (leak)");
}

// Time-weighted means, stranded memory at rejections, queue delays and compaction totals.
template <class Pool>
void Engine<Pool>::summarize() {
  const double span = static_cast<double>(std::max<std::int64_t>(1, out_.end_us - out_.first_arrival_us));
  out_.used_bytes_time_weighted = integrals_.used / span;
  out_.running_time_weighted = integrals_.running / span;
  out_.queued_time_weighted = integrals_.queued / span;
  out_.stranded_time_weighted = integrals_.stranded / span;
  for (std::size_t i = 0; i < kMaxLocations; ++i) out_.stranded_time_weighted_by_location[i] = integrals_.stranded_by_location[i] / span;

  if (!stranded_samples_.empty()) {
    double sum = 0;
    for (Bytes b : stranded_samples_) sum += static_cast<double>(b);
    const double count = static_cast<double>(stranded_samples_.size());
    out_.stranded_at_rejection_mean = sum / count;
    for (std::size_t i = 0; i < kMaxLocations; ++i) out_.stranded_at_rejection_by_location_mean[i] = stranded_sample_sums_[i] / count;
    out_.stranded_at_rejection_max = *std::max_element(stranded_samples_.begin(), stranded_samples_.end());
    out_.stranded_at_rejection_p50 = nearest_rank_percentile(stranded_samples_, 0.5);
    out_.stranded_at_rejection_p90 = nearest_rank_percentile(stranded_samples_, 0.9);
  }
  if (!delays_.empty()) {
    double sum = 0;
    for (std::int64_t d : delays_) sum += static_cast<double>(d);
    out_.queue_delay_mean_us = sum / static_cast<double>(delays_.size());
    out_.queue_delay_max_us = *std::max_element(delays_.begin(), delays_.end());
    out_.queue_delay_p50_us = nearest_rank_percentile(delays_, 0.5);
    out_.queue_delay_p90_us = nearest_rank_percentile(delays_, 0.9);
    out_.queue_delay_p99_us = nearest_rank_percentile(delays_, 0.99);
  }
  out_.bytes_moved = pool_.bytes_moved();
  out_.moves = pool_.moves();
}

template <class Pool>
SimResult Engine<Pool>::run() {
  start();
  const auto& records = trace_.records;
  const std::size_t n = records.size();
  const double us_per_byte = 1e6 / cfg_.copy_bytes_per_second;
  for (;;) {
    while (next_arrival_ < n && records[next_arrival_].arrival_us <= now_) {
      queue_.push_back(static_cast<std::uint32_t>(next_arrival_));
      ++next_arrival_;
    }
    if (next_arrival_ == n && queue_.empty() && running_ == 0) break;
    if (next_arrival_ == n && now_ > out_.deadline_us) {
      out_.deadline_hit = true;
      break;
    }
    const Bytes moved_before = pool_.bytes_moved();
    memory_changed_ = false;
    preempted_this_iteration_ = false;

    finish_due_requests();
    if (running_ > 0) grow_due_requests();
    admission_phase();

    if (cfg_.check_invariants_every_iteration) pool_.check_invariants();

    const Bytes moved = pool_.bytes_moved() - moved_before;
    const std::int64_t stall = moved > 0 ? static_cast<std::int64_t>(std::ceil(static_cast<double>(moved) * us_per_byte)) : 0;
    out_.compaction_stall_us += stall;
    std::int64_t next_now;
    if (running_ == 0 && queue_.empty()) {
      if (next_arrival_ == n) {
        out_.end_us = now_;
        ++out_.iterations;
        break;
      }
      next_now = records[next_arrival_].arrival_us;  // idle: jump to the next arrival
    } else {
      next_now = now_ + cfg_.step_us + stall;
    }
    integrate_until(next_now);
    now_ = next_now;
    ++iter_;
    ++out_.iterations;
  }
  if (out_.end_us == 0) out_.end_us = now_;
  close_books();
  summarize();
  return out_;
}

}  // namespace

SimResult simulate(const Trace& trace, const EngineConfig& config, const PolicyConfig& policy) {
  SimResult result;
  switch (policy.kind) {
    case PolicyKind::FixedSplit: {
      FixedSplitPool pool(policy.fixed);
      result = Engine<FixedSplitPool>(trace, config, pool).run();
      break;
    }
    case PolicyKind::Unified: {
      UnifiedArena pool(policy.unified);
      result = Engine<UnifiedArena>(trace, config, pool).run();
      break;
    }
    case PolicyKind::PaddedSinglePage: {
      PaddedPool pool(policy.padded);
      result = Engine<PaddedPool>(trace, config, pool).run();
      break;
    }
  }
  result.policy_kind = policy_kind_name(policy.kind);
  return result;
}

}  // namespace k3lab::sim
