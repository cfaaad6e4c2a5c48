#include "k3lab/sim/result_json.hpp"

namespace k3lab::sim {
namespace {

double seconds(std::int64_t us) { return static_cast<double>(us) / 1e6; }

}  // namespace

nlohmann::json result_to_json(const SimResult& r) {
  using nlohmann::json;
  json shortage = json::object();
  for (int k = 1; k < kShortageKinds; ++k) {
    shortage[shortage_name(static_cast<Shortage>(k))] = r.rejections_by_shortage[static_cast<std::size_t>(k)];
  }
  json tw_by_location = json::object();
  json rej_by_location = json::object();
  for (std::size_t i = 0; i < r.locations.size(); ++i) {
    tw_by_location[r.locations[i]] = r.stranded_time_weighted_by_location[i];
    rej_by_location[r.locations[i]] = r.stranded_at_rejection_by_location_mean[i];
  }
  json out = {
      {"policy_kind", r.policy_kind},
      {"total_bytes", r.total_bytes},
      {"counts",
       {{"arrivals", r.arrivals},
        {"admitted", r.admitted},
        {"admitted_by_last_arrival", r.admitted_by_last_arrival},
        {"completed", r.completed},
        {"misses", r.misses},
        {"dropped_too_large", r.dropped_too_large},
        {"dropped_at_decode", r.dropped_at_decode},
        {"preemptions", r.preemptions},
        {"requeued_at_end", r.requeued_at_end},
        {"running_at_end", r.running_at_end},
        {"memory_rejections", r.memory_rejections},
        {"requests_deferred", r.requests_deferred},
        {"rejections_by_shortage", shortage}}},
      {"stranded_bytes",
       {{"time_weighted", r.stranded_time_weighted},
        {"time_weighted_by_location", tw_by_location},
        {"at_rejection",
         {{"mean", r.stranded_at_rejection_mean},
          {"p50", r.stranded_at_rejection_p50},
          {"p90", r.stranded_at_rejection_p90},
          {"max", r.stranded_at_rejection_max},
          {"rejections_with_stranded", r.rejections_with_stranded},
          {"mean_by_location", rej_by_location}}}}},
      {"queue_delay_seconds",
       {{"mean", r.queue_delay_mean_us / 1e6},
        {"p50", seconds(r.queue_delay_p50_us)},
        {"p90", seconds(r.queue_delay_p90_us)},
        {"p99", seconds(r.queue_delay_p99_us)},
        {"max", seconds(r.queue_delay_max_us)}}},
      {"compaction",
       {{"bytes_moved", r.bytes_moved}, {"moves", r.moves}, {"stall_seconds", seconds(r.compaction_stall_us)}}},
      {"occupancy",
       {{"used_bytes_time_weighted", r.used_bytes_time_weighted},
        {"running_time_weighted", r.running_time_weighted},
        {"queued_time_weighted", r.queued_time_weighted}}},
      {"horizon",
       {{"first_arrival_seconds", seconds(r.first_arrival_us)},
        {"last_arrival_seconds", seconds(r.last_arrival_us)},
        {"deadline_seconds", seconds(r.deadline_us)},
        {"end_seconds", seconds(r.end_us)},
        {"deadline_hit", r.deadline_hit},
        {"iterations", r.iterations}}},
  };
  if (!r.series.t_us.empty()) {
    json t = json::array();
    for (std::int64_t v : r.series.t_us) t.push_back(seconds(v));
    out["time_series"] = {{"interval_seconds", seconds(r.series.interval_us)},
                          {"t_seconds", t},
                          {"admitted", r.series.admitted},
                          {"rejections", r.series.rejections},
                          {"queued", r.series.queued},
                          {"running", r.series.running},
                          {"used_bytes", r.series.used_bytes},
                          {"stranded_bytes", r.series.stranded_bytes}};
  }
  return out;
}

}  // namespace k3lab::sim
