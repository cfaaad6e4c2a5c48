#include "k3lab/sim/bench.hpp"

#include <time.h>

#include <chrono>
#include <cmath>
#include <iomanip>
#include <stdexcept>

#include "k3lab/core/elapsed.hpp"
#include "k3lab/core/protocol.hpp"
#include "k3lab/sim/engine.hpp"
#include "k3lab/sim/parameters.hpp"
#include "k3lab/sim/trace_csv.hpp"
#include "k3lab/sim/trace_source.hpp"

namespace k3lab::sim {
namespace {

using Clock = std::chrono::steady_clock;

using core::seconds_since;

// CPU time of this thread: the per-core figure must not depend on what else the machine runs.
double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace

int run_memory_pool_bench(const nlohmann::json& options, std::ostream& out) {
  if (!options.is_null() && !options.is_object()) {
    throw std::invalid_argument("memory-pool bench: options must be a JSON object");
  }
  const nlohmann::json opts = options.is_null() ? nlohmann::json::object() : options;
  static const char* known[] = {"parameters", "protocol", "profile",    "mix",
                                "trace",      "csv",      "csv_format", "state_to_kv_ratio"};
  for (auto it = opts.begin(); it != opts.end(); ++it) {
    bool ok = false;
    for (const char* k : known) ok = ok || it.key() == k;
    if (!ok) {
      throw std::invalid_argument("memory-pool bench: unknown option \"" + it.key() +
                                  "\"; known: parameters, protocol, profile, mix, trace, csv, csv_format, "
                                  "state_to_kv_ratio");
    }
  }
  nlohmann::json raw;
  if (opts.contains("parameters")) {
    raw = opts.at("parameters");
  } else {
    const std::filesystem::path path = opts.contains("protocol") ? std::filesystem::path(opts.at("protocol").get<std::string>())
                                                                 : core::protocol_path("memory-pool");
    const core::Protocol protocol = core::load_protocol(path, &parameter_schema());
    raw = protocol.parameters_for(opts.value("profile", std::string("full")));
  }
  const SimParameters params = parse_parameters(raw);

  Trace trace;
  std::string trace_name;
  const auto generate_start = Clock::now();
  if (opts.contains("csv")) {
    CsvImportOptions csv;
    csv.format = parse_csv_trace_format(opts.value("csv_format", std::string("burstgpt")));
    CsvImportReport report;
    trace = import_trace_csv_file(opts.at("csv").get<std::string>(), csv, &report);
    trace_name = trace.source;
  } else {
    const std::string mix_id = opts.value("mix", params.mixes.back().id);
    const std::size_t mix = params.mix_index(mix_id);
    const std::size_t index = opts.value("trace", std::size_t{1});
    if (index < 1 || index > params.seeded_traces_per_mix) {
      throw std::invalid_argument("memory-pool bench: trace must be in 1.." + std::to_string(params.seeded_traces_per_mix));
    }
    trace = make_seeded_trace(params, mix, index).trace;
    trace_name = "mix=" + mix_id + " trace=" + trace_label(index);
  }
  const double generate_seconds = seconds_since(generate_start);
  out << "memory-pool bench: " << trace_name << ", " << trace.size() << " arrivals (trace made in " << std::fixed
      << std::setprecision(3) << generate_seconds << " s)\n";

  const EngineConfig engine = engine_config(params, false);
  std::uint64_t total_arrivals = 0;
  double total_cpu_seconds = 0;
  for (const PolicySpec& spec : params.policies) {
    // A tuned split (protocol v2) runs at the middle candidate unless the options name a ratio.
    const PolicySpec policy =
        spec.tuned_ratio
            ? with_ratio(spec,
                         opts.value("state_to_kv_ratio",
                                    params.fixed_split_tuning->ratios[params.fixed_split_tuning->ratios.size() / 2]))
            : spec;
    const PolicyConfig config = policy_config(params, policy);
    const auto start = Clock::now();
    const double cpu_start = thread_cpu_seconds();
    const SimResult result = simulate(trace, engine, config);
    const double cpu = thread_cpu_seconds() - cpu_start;
    const double wall = seconds_since(start);
    total_arrivals += result.arrivals;
    total_cpu_seconds += cpu;
    out << "policy=" << policy.id;
    if (policy.kind == PolicyKind::FixedSplit) out << " state_to_kv_ratio=" << policy.state_to_kv_ratio;
    out << " arrivals=" << result.arrivals << " admitted=" << result.admitted << " iterations=" << result.iterations
        << " cpu_s=" << std::setprecision(3) << cpu << " wall_s=" << wall
        << " arrivals_per_cpu_s=" << std::setprecision(0) << (cpu > 0 ? result.arrivals / cpu : 0.0) << "\n";
  }
  const double rate = total_cpu_seconds > 0 ? static_cast<double>(total_arrivals) / total_cpu_seconds : 0.0;
  out << "arrivals_per_second_per_core: " << std::llround(rate) << std::endl;
  return 0;
}

}  // namespace k3lab::sim
