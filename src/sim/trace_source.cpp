#include "k3lab/sim/trace_source.hpp"

#include <cstdio>

#include "k3lab/sim/trace_file.hpp"

namespace k3lab::sim {

std::filesystem::path resolve_fixture(const std::string& file, const std::filesystem::path& repo_root) {
  const std::filesystem::path path(file);
  return path.is_absolute() ? path : repo_root / path;
}

UnitTrace load_retained_trace(const SimParameters& params, std::size_t mix_index,
                              const std::filesystem::path& repo_root, bool regenerate_check) {
  const MixSpec& mix = params.mixes.at(mix_index);
  const RetainedTraceSpec& spec = params.retained_for(mix.id);
  const std::filesystem::path path = resolve_fixture(spec.file, repo_root);
  if (!std::filesystem::exists(path)) {
    throw std::runtime_error("retained trace for mix " + mix.id + " not found at " + path.string() +
                             "; restore it from git (it is committed under fixtures/memory-pool/) -- regenerating it "
                             "would not reproduce the frozen file if the generator changed");
  }
  UnitTrace out;
  out.origin = "fixture";
  out.file = spec.file;
  out.trace = read_trace_file(path, &out.sha256);
  if (out.sha256 != spec.sha256) {
    throw TraceHashMismatch("retained trace " + path.string() + " has SHA-256 " + out.sha256 +
                            " but the protocol records " + spec.sha256 +
                            "; the file is not the frozen trace (restore it from git)");
  }
  if (out.trace.generator_seed != spec.generator_seed) {
    throw std::runtime_error("retained trace " + path.string() + " was generated with another seed than the protocol's");
  }
  if (out.trace.size() != params.arrivals_per_trace) {
    throw std::runtime_error("retained trace " + path.string() + " holds " + std::to_string(out.trace.size()) +
                             " arrivals but this profile asks for " + std::to_string(params.arrivals_per_trace) +
                             "; point the profile's retained_traces at a file of that size");
  }
  if (regenerate_check) {
    out.regenerated_sha256 = trace_sha256(generate_protocol_trace(params, mix_index, 0));
    out.regenerated_matches = out.regenerated_sha256 == out.sha256;
  }
  return out;
}

UnitTrace make_seeded_trace(const SimParameters& params, std::size_t mix_index, std::size_t trace_index) {
  if (trace_index == 0) throw std::invalid_argument("trace 0 is the retained trace: use load_retained_trace");
  UnitTrace out;
  out.origin = "generated";
  out.trace = generate_protocol_trace(params, mix_index, trace_index);
  out.sha256 = trace_sha256(out.trace);
  return out;
}

nlohmann::json write_retained_traces(const SimParameters& params, const std::filesystem::path& repo_root) {
  nlohmann::json list = nlohmann::json::array();
  for (std::size_t m = 0; m < params.mixes.size(); ++m) {
    const RetainedTraceSpec& spec = params.retained_for(params.mixes[m].id);
    const Trace trace = generate_protocol_trace(params, m, 0);
    const std::filesystem::path path = resolve_fixture(spec.file, repo_root);
    std::filesystem::create_directories(path.parent_path());
    write_trace_file(path, trace);
    char seed[17];
    std::snprintf(seed, sizeof(seed), "%016llx", static_cast<unsigned long long>(trace.generator_seed));
    list.push_back({{"mix", spec.mix}, {"file", spec.file}, {"sha256", trace_sha256(trace)}, {"generator_seed", seed}});
  }
  return list;
}

}  // namespace k3lab::sim
