#include "per_head_muon/units.hpp"

#include <map>

#include "k3lab/experiments/training/plan_estimate.hpp"
#include "k3lab/experiments/training/proxy_experiment.hpp"
#include "per_head_muon/page.hpp"
#include "per_head_muon/run_unit.hpp"

namespace k3lab::experiments::per_head_muon {

const std::vector<std::string>& arm_ids() {
  static const std::vector<std::string> ids = {"adamw", "muon", "per-head-muon"};
  return ids;
}

std::string pilot_unit_id(const std::string& arm, int configuration, std::uint64_t seed) {
  return "phase=pilot/arm=" + arm + "/config=" + std::to_string(configuration) + "/seed=" + std::to_string(seed);
}

std::string confirmatory_unit_id(const std::string& arm, std::uint64_t seed) {
  return "phase=confirm/arm=" + arm + "/config=" + kSelectedConfiguration + "/seed=" + std::to_string(seed);
}

std::vector<Unit> enumerate_units(const Parameters& p) {
  const auto grid = p.configurations();
  std::vector<Unit> units;
  for (std::size_t i = 0; i < p.pilot_seeds.size(); ++i) {
    for (const auto& c : grid) {
      for (const auto& arm : arm_ids()) {
        units.push_back({pilot_unit_id(arm, c.id, p.pilot_seeds[i]),
                         {{"phase", "pilot"},
                          {"arm", arm},
                          {"config", c.id},
                          {"learning_rate", c.learning_rate},
                          {"weight_decay", c.weight_decay},
                          {"seed", p.pilot_seeds[i]},
                          {"seed_index", i + 1},
                          {"token_budget", p.pilot_token_budget}}});
      }
    }
  }
  const auto confirmatory = training::arm_by_seed_units(
      arm_ids(), p.confirmatory_seeds,
      [&](const std::string& arm) {
        nlohmann::json candidates = nlohmann::json::array();
        for (auto seed : p.pilot_seeds) {
          for (const auto& c : grid) candidates.push_back(pilot_unit_id(arm, c.id, seed));
        }
        return nlohmann::json{{"phase", "confirmatory"},
                              {"config", kSelectedConfiguration},
                              {"selection_rule", kSelectionRule},
                              {"selected_from", std::move(candidates)},
                              {"token_budget", p.token_budget}};
      },
      confirmatory_unit_id);
  units.insert(units.end(), confirmatory.begin(), confirmatory.end());
  return units;
}

// Per arm: its pilot and confirmatory runs with their mean token budget; only AdamW steps as the bench does.
std::vector<training::ArmCost> arm_cost_rows(const Parameters& p, const std::vector<Unit>& units, double parameters) {
  std::vector<training::ArmCost> costs;
  for (const auto& arm : arm_ids()) {
    std::size_t runs = 0;
    double tokens = 0;
    for (const auto& u : units) {
      if (u.spec.at("arm") != arm) continue;
      ++runs;
      tokens += u.spec.at("token_budget").get<double>();
    }
    const auto config = [&] {
      return trainer_config(p, arm, p.configurations().front(), 0, p.token_budget, nlohmann::json::object(), {});
    };
    auto bench = training::trainer_bench_shape(config);
    if (arm != "adamw") {
      bench = {std::nullopt, "`k3lab bench train` steps AdamW; this arm steps " + arm +
                                 (bench.shape ? std::string() : "; " + bench.reason)};
    }
    costs.push_back({arm, runs, runs ? tokens / static_cast<double>(runs) : 0.0, parameters, bench,
                     training::trainer_memory(config)});
  }
  return costs;
}

nlohmann::json plan_details(const Parameters& p, const std::vector<Unit>& units) {
  std::map<std::string, std::size_t> pilot_by_arm, pilot_by_config, pilot_by_seed, confirm_by_arm, confirm_by_seed;
  std::size_t pilot = 0, confirm = 0;
  double tokens = 0;
  for (const auto& u : units) {
    const auto& s = u.spec;
    const std::string arm = s.at("arm").get<std::string>();
    const std::string seed = std::to_string(s.at("seed").get<std::uint64_t>());
    tokens += s.at("token_budget").get<double>();
    if (s.at("phase") == "pilot") {
      ++pilot;
      ++pilot_by_arm[arm];
      ++pilot_by_config[std::to_string(s.at("config").get<int>())];
      ++pilot_by_seed[seed];
    } else {
      ++confirm;
      ++confirm_by_arm[arm];
      ++confirm_by_seed[seed];
    }
  }
  nlohmann::json grid = nlohmann::json::array();
  for (const auto& c : p.configurations()) {
    grid.push_back({{"config", c.id}, {"learning_rate", c.learning_rate}, {"weight_decay", c.weight_decay}});
  }
  const double parameters = training::approximate_parameters(p.model);
  const auto total = training::gpu_hours(parameters, tokens);
  nlohmann::json d;
  d["runs"] = {{"total", units.size()},
               {"pilot", {{"total", pilot}, {"by_arm", pilot_by_arm}, {"by_config", pilot_by_config},
                          {"by_seed", pilot_by_seed}}},
               {"confirmatory", {{"total", confirm}, {"by_arm", confirm_by_arm}, {"by_seed", confirm_by_seed},
                                 {"config", "selected per arm after the pilot"}}}};
  d["search_grid"] = grid;
  d["selection_rule"] = kSelectionRule;
  d["per_run"] = {{"pilot_token_budget", p.pilot_token_budget},
                  {"confirmatory_token_budget", p.token_budget},
                  {"checkpoints_per_confirmatory_run", p.token_budget / p.eval_interval_tokens}};
  d["training_tokens_total"] = tokens;
  d["gpu_hours_by_arm"] = training::arm_costs_json(arm_cost_rows(p, units, parameters));
  // Head diversity and update norms read weights and the optimizer; the validation loss is the only pass
  // besides the end-task suite of the confirmatory runs.
  training::EvaluationCost evaluation{.parameters = parameters,
                                      .training_tokens = tokens,
                                      .runs = units.size(),
                                      .parts = {training::validation_loss_part(p, tokens)}};
  const auto confirmatory_runs = static_cast<double>(3 * p.confirmatory_seeds.size());
  for (auto& part : training::downstream_parts(p, confirmatory_runs, p.sequence_length)) {
    evaluation.parts.push_back(std::move(part));
  }
  d["evaluation_cost"] = training::evaluation_cost_json(evaluation);
  d["estimate"] = {{"approximate_parameters", parameters},
                   {"flops_total", total.flops},
                   {"gpu_hours_total", total.gpu_hours},
                   {"basis", training::estimate_basis("6 x parameters x tokens",
                                                      "Newton-Schulz iterations, attention scores and evaluation are "
                                                      "not counted, so this is a lower bound on time")}};
  return d;
}

std::unique_ptr<Experiment> make_experiment() {
  training::RecordsByGroupTable records{
      "terminal-records-by-phase-and-arm", "Terminal records by phase and arm", "phase / arm",
      "Confirmatory runs use each arm's configuration selected by mean pilot validation loss; no optimizer is retuned "
      "after confirmatory results are opened.",
      [](const nlohmann::json& spec) {
        if (!spec.is_object() || !spec.contains("arm")) return std::string("(record without spec)");
        return spec.value("phase", "?") + " / " + spec.at("arm").get<std::string>();
      }};
  return training::make_proxy_experiment<Parameters>(
      {.parameters = &parameter_set(), .arms = arm_ids(), .units = enumerate_units,
       .plan = plan_details, .run = run_training_unit, .results = add_results, .records = std::move(records),
       // A confirmatory unit that found its arm's pilots unfinished: every later one would end alike.
       .stop_on_invalid = {kPilotsUnfinished}});
}

}  // namespace k3lab::experiments::per_head_muon
