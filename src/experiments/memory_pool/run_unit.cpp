#include "memory_pool/run_unit.hpp"

#include <chrono>

#include "k3lab/build_info.hpp"
#include "k3lab/core/elapsed.hpp"
#include "k3lab/core/ledger.hpp"
#include "k3lab/sim/calibration.hpp"
#include "k3lab/sim/engine.hpp"
#include "k3lab/sim/parameters.hpp"
#include "k3lab/sim/result_json.hpp"
#include "k3lab/sim/trace_file.hpp"
#include "memory_pool/units.hpp"

namespace k3lab::experiments::memory_pool {
namespace {

using core::seconds_since;

// What one unit simulates besides its trace: the policy, the engine settings, and the facts the unit
// records about how they were set (ratio, its choice, the copy bandwidth).
struct UnitSetup {
  sim::PolicySpec policy;
  sim::EngineConfig engine;
  nlohmann::json facts = nlohmann::json::object();
  nlohmann::json timing = nlohmann::json::object();  // facts that depend on the run's history, not its inputs
};

UnitSetup fixed_split_at(const sim::SimParameters& params, double ratio) {
  const sim::PolicySpec* fixed = first_policy_of(params, sim::PolicyKind::FixedSplit);
  if (!fixed) throw std::invalid_argument("the parameters have no fixed-split policy for this stage");
  return {sim::with_ratio(*fixed, ratio), sim::engine_config(params, false), {{"state_to_kv_ratio", ratio}}};
}

nlohmann::json trace_json(const Unit& unit, const sim::UnitTrace& trace) {
  nlohmann::json out = {{"label", unit.spec.at("trace").get<std::string>()},
                        {"origin", trace.origin},
                        {"sha256", trace.sha256},
                        {"generator_seed", sim::seed_hex(trace.trace.generator_seed)},
                        {"arrivals", trace.trace.size()}};
  if (trace.origin == "fixture") {
    out["file"] = trace.file;
    out["regenerated_sha256"] = trace.regenerated_sha256;
    out["regenerated_matches"] = trace.regenerated_matches;
  }
  return out;
}

// Runs the calibration simulations of `mix` that have no result in `results` and adds their data, with the
// calibration units' own inputs (trace, split, engine): the simulation is deterministic, so the data equal
// what those units record. A decision unit needs this when workers share a run dir (--shard, Slurm arrays)
// and another worker has not finished the mix's calibration units yet. Returns how many it ran.
std::size_t recompute_missing_calibration(const sim::SimParameters& params, const std::string& mix,
                                          std::map<std::string, nlohmann::json>& results) {
  const auto& tuning = *params.fixed_split_tuning;
  const std::size_t mix_index = params.mix_index(mix);
  std::size_t ran = 0;
  for (std::size_t k = 1; k <= tuning.calibration_traces_per_mix; ++k) {
    std::optional<sim::Trace> trace;
    for (double ratio : tuning.ratios) {
      const std::string id = calibration_unit_id(mix, k, ratio);
      if (results.count(id)) continue;
      if (!trace) trace = sim::generate_calibration_trace(params, mix_index, k);
      const UnitSetup setup = fixed_split_at(params, ratio);
      results[id] = sim::result_to_json(sim::simulate(*trace, setup.engine, sim::policy_config(params, setup.policy)));
      ++ran;
    }
  }
  return ran;
}

}  // namespace

std::filesystem::path fixture_root_for(const std::filesystem::path& protocol_file, const std::string& relative_file) {
  const std::filesystem::path beside = std::filesystem::absolute(protocol_file).parent_path().parent_path();
  if (std::filesystem::exists(sim::resolve_fixture(relative_file, beside))) return beside;
  const std::filesystem::path source(build::kSourceDir);
  if (std::filesystem::exists(sim::resolve_fixture(relative_file, source))) return source;
  return beside;  // the loader's error then names this path
}

std::optional<UnitOutcome> UnitRunner::prepare_trace(const Unit& unit, RunEnv& env, const sim::SimParameters& params) {
  const std::string mix_id = unit.spec.at("mix").get<std::string>();
  const std::size_t mix = params.mix_index(mix_id);
  const bool calibration = stage_of(unit.spec) == kStageCalibration;
  const std::size_t index = unit.spec.at(calibration ? "trace_number" : "trace_index").get<std::size_t>();
  const std::size_t limit =
      calibration ? params.fixed_split_tuning->calibration_traces_per_mix : params.seeded_traces_per_mix;
  if (index > limit || (calibration && index == 0)) {
    return UnitOutcome::failure("plan-mismatch", "unit " + unit.id + " names trace " + std::to_string(index) +
                                                     " but the parameters have " + std::to_string(limit) +
                                                     (calibration ? " calibration" : " seeded") + " traces");
  }
  const std::string key =
      env.parameters.at("mixes").at(mix).dump() + "|" + std::to_string(params.seed) + "|" +
      (calibration ? "calibration|" + std::to_string(params.fixed_split_tuning->arrivals_per_calibration_trace)
                   : std::to_string(params.arrivals_per_trace)) +
      "|" + std::to_string(index) + "|" + (!calibration && index == 0 ? params.retained_for(mix_id).sha256 : "");
  if (key == cached_key_ && cached_) return std::nullopt;
  cached_.reset();
  cached_key_.clear();
  try {
    if (calibration) {
      sim::UnitTrace generated;
      generated.origin = "generated-pre-shift";
      generated.trace = sim::generate_calibration_trace(params, mix, index);
      generated.sha256 = sim::trace_sha256(generated.trace);
      cached_ = std::make_shared<const sim::UnitTrace>(std::move(generated));
    } else if (index == 0) {
      const auto& spec = params.retained_for(mix_id);
      cached_ = std::make_shared<const sim::UnitTrace>(
          sim::load_retained_trace(params, mix, fixture_root_for(env.protocol.path, spec.file), true));
    } else {
      cached_ = std::make_shared<const sim::UnitTrace>(sim::make_seeded_trace(params, mix, index));
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
  return std::nullopt;
}

SplitChoice UnitRunner::split_choice(const RunEnv& env, const sim::SimParameters& params, const std::string& mix,
                                     std::size_t* recomputed) {
  *recomputed = 0;
  const std::string key = env.run_dir.string() + "|" + mix + "|" + env.parameters.at("fixed_split_tuning").dump();
  if (const auto it = chosen_splits_.find(key); it != chosen_splits_.end()) return it->second;
  std::map<std::string, nlohmann::json> results;
  if (std::filesystem::is_directory(env.run_dir)) {
    const RunRecords records{nlohmann::json::object(), core::read_ledger(env.run_dir), env.run_dir};
    results = calibration_results(records.terminal_records());
  }
  *recomputed = recompute_missing_calibration(params, mix, results);
  SplitChoice choice = choose_split_ratio(params, mix, results);
  if (choice.chosen) chosen_splits_[key] = choice;
  return choice;
}

UnitOutcome UnitRunner::run(const Unit& unit, RunEnv& env) {
  const sim::SimParameters params = sim::parse_parameters(env.parameters);
  const std::string stage = stage_of(unit.spec);
  const std::string mix_id = unit.spec.at("mix").get<std::string>();

  const auto trace_start = std::chrono::steady_clock::now();
  if (auto failed = prepare_trace(unit, env, params)) return *failed;
  const double trace_seconds = seconds_since(trace_start);
  const sim::UnitTrace& trace = *cached_;

  UnitSetup setup;
  try {
    if (stage == kStageCalibration || stage == kStageRatioSensitivity) {
      setup = fixed_split_at(params, unit.spec.at("state_to_kv_ratio").get<double>());
    } else {
      setup.policy = params.policies[params.policy_index(unit.spec.at("policy").get<std::string>())];
      const bool decision = stage == kStageDecision;
      setup.engine = sim::engine_config(params, decision && unit.spec.at("trace_index").get<std::size_t>() == 0);
      if (stage == kStageCompactionSensitivity) {
        setup.engine.copy_bytes_per_second = unit.spec.at("copy_bytes_per_second").get<double>();
        setup.facts["copy_bytes_per_second"] = setup.engine.copy_bytes_per_second;
      } else if (setup.policy.tuned_ratio) {
        std::size_t recomputed = 0;
        const SplitChoice choice = split_choice(env, params, mix_id, &recomputed);
        setup.timing["calibration_units_recomputed"] = recomputed;
        setup.policy = sim::with_ratio(setup.policy, choice.ratio);
        setup.facts = {{"state_to_kv_ratio", choice.ratio}, {"chosen_by", choice.to_json()}};
      }
    }
  } catch (const std::invalid_argument& e) {
    return UnitOutcome::failure("plan-mismatch", "unit " + unit.id + ": " + e.what());
  }

  const sim::PolicyConfig policy = sim::policy_config(params, setup.policy);
  const auto sim_start = std::chrono::steady_clock::now();
  sim::SimResult result;
  try {
    result = sim::simulate(trace.trace, setup.engine, policy);
  } catch (const std::logic_error& e) {
    return UnitOutcome::failure("invariant-violation", std::string("allocator invariant broken: ") + e.what());
  }
  const double sim_seconds = seconds_since(sim_start);

  nlohmann::json data = sim::result_to_json(result);
  data["trace"] = trace_json(unit, trace);
  data["policy_geometry"] = sim::policy_geometry_json(policy);
  for (auto it = setup.facts.begin(); it != setup.facts.end(); ++it) data[it.key()] = it.value();
  nlohmann::json timing = setup.timing;
  timing.update(nlohmann::json{
      {"trace_seconds", trace_seconds},
      {"simulate_seconds", sim_seconds},
      {"arrivals_per_second", sim_seconds > 0 ? static_cast<double>(result.arrivals) / sim_seconds : 0.0}});
  return UnitOutcome::result(std::move(data), std::move(timing));
}

}  // namespace k3lab::experiments::memory_pool
