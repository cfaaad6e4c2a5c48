#include "memory_pool/run_unit.hpp"

#include <chrono>

#include "k3lab/core/elapsed.hpp"
#include "k3lab/build_info.hpp"
#include "k3lab/sim/engine.hpp"
#include "k3lab/sim/parameters.hpp"
#include "k3lab/sim/result_json.hpp"

namespace k3lab::experiments::memory_pool {
namespace {

using core::seconds_since;

}  // namespace

std::filesystem::path fixture_root_for(const std::filesystem::path& protocol_file, const std::string& relative_file) {
  const std::filesystem::path beside = std::filesystem::absolute(protocol_file).parent_path().parent_path();
  if (std::filesystem::exists(sim::resolve_fixture(relative_file, beside))) return beside;
  const std::filesystem::path source(build::kSourceDir);
  if (std::filesystem::exists(sim::resolve_fixture(relative_file, source))) return source;
  return beside;  // the loader's error then names this path
}

UnitOutcome UnitRunner::run(const Unit& unit, RunEnv& env) {
  const sim::SimParameters params = sim::parse_parameters(env.parameters);
  const std::string mix_id = unit.spec.at("mix").get<std::string>();
  const std::size_t mix = params.mix_index(mix_id);
  const std::size_t trace_index = unit.spec.at("trace_index").get<std::size_t>();
  const std::size_t policy_index = params.policy_index(unit.spec.at("policy").get<std::string>());
  if (trace_index > params.seeded_traces_per_mix) {
    return UnitOutcome::failure("plan-mismatch", "unit " + unit.id + " names trace " + std::to_string(trace_index) +
                                                     " but the parameters have " +
                                                     std::to_string(params.seeded_traces_per_mix) + " seeded traces");
  }

  const auto trace_start = std::chrono::steady_clock::now();
  const std::string key = env.parameters.at("mixes").at(mix).dump() + "|" + std::to_string(params.seed) + "|" +
                          std::to_string(params.arrivals_per_trace) + "|" + std::to_string(trace_index) + "|" +
                          (trace_index == 0 ? params.retained_for(mix_id).sha256 : std::string());
  if (key != cached_key_ || !cached_) {
    cached_.reset();
    cached_key_.clear();
    try {
      if (trace_index == 0) {
        const auto& spec = params.retained_for(mix_id);
        cached_ = std::make_shared<const sim::UnitTrace>(
            sim::load_retained_trace(params, mix, fixture_root_for(env.protocol.path, spec.file), true));
      } else {
        cached_ = std::make_shared<const sim::UnitTrace>(sim::make_seeded_trace(params, mix, trace_index));
      }
    } catch (const sim::TraceHashMismatch& e) {
      return UnitOutcome::invalid("retained-trace-hash-mismatch", e.what());
    } catch (const std::runtime_error& e) {
      return UnitOutcome::failure("trace-unavailable", e.what());
    }
    cached_key_ = key;
    if (!cached_->regenerated_matches && env.note) {
      env.note(unit.id, {{"kind", "note"},
                         {"message", "the generator no longer reproduces the retained trace of mix " + mix_id +
                                         " (regenerated SHA-256 " + cached_->regenerated_sha256 +
                                         "); the committed file, whose hash matches the protocol, is used"}});
    }
  }
  const double trace_seconds = seconds_since(trace_start);
  const sim::UnitTrace& trace = *cached_;

  const sim::PolicyConfig policy = sim::policy_config(params, params.policies[policy_index]);
  const sim::EngineConfig engine = sim::engine_config(params, trace_index == 0);
  const auto sim_start = std::chrono::steady_clock::now();
  sim::SimResult result;
  try {
    result = sim::simulate(trace.trace, engine, policy);
  } catch (const std::logic_error& e) {
    return UnitOutcome::failure("invariant-violation", std::string("allocator invariant broken: ") + e.what());
  }
  const double sim_seconds = seconds_since(sim_start);

  nlohmann::json data = sim::result_to_json(result);
  data["trace"] = {{"label", sim::trace_label(trace_index)},
                   {"origin", trace.origin},
                   {"sha256", trace.sha256},
                   {"generator_seed", sim::seed_hex(trace.trace.generator_seed)},
                   {"arrivals", trace.trace.size()}};
  if (trace_index == 0) {
    data["trace"]["file"] = trace.file;
    data["trace"]["regenerated_sha256"] = trace.regenerated_sha256;
    data["trace"]["regenerated_matches"] = trace.regenerated_matches;
  }
  data["policy_geometry"] = sim::policy_geometry_json(policy);
  nlohmann::json timing = {{"trace_seconds", trace_seconds},
                           {"simulate_seconds", sim_seconds},
                           {"arrivals_per_second", sim_seconds > 0 ? static_cast<double>(result.arrivals) / sim_seconds : 0.0}};
  return UnitOutcome::result(std::move(data), std::move(timing));
}

}  // namespace k3lab::experiments::memory_pool
