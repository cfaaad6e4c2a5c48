#include "per_head_muon/parameters.hpp"

#include <memory>
#include <set>
#include <string>

namespace k3lab::experiments::per_head_muon {
namespace {

using training::Fields;

void declare_model(Fields<Model>& m) {
  training::declare_dense_model(
      m, {.n_layers = "decoder layers", .n_heads = "attention heads; Per-Head Muon orthogonalizes each head's block", .min_heads = 2},
      "SwiGLU hidden width");
}

std::shared_ptr<core::Schema> muon_schema() {
  auto s = std::make_shared<core::Schema>();
  s->number("momentum", "momentum coefficient").at_least(0).at_most(0.9999);
  s->boolean("nesterov", "Nesterov-style momentum");
  s->integer("newton_schulz_steps", "quintic Newton-Schulz iterations per update").at_least(1);
  s->number("update_rms", "target RMS of an orthogonalized update (Moonlight: 0.2 x sqrt(max(rows, cols)))")
      .above(0);
  s->array_of("per_head_projections", core::FieldType::String,
              "projections whose momentum Per-Head Muon splits by head (the seed: query, key, value)")
      .one_of({"query", "key", "value", "output"})
      .non_empty();
  return s;
}

std::shared_ptr<core::Schema> adamw_schema() {
  auto s = std::make_shared<core::Schema>();
  s->number("beta1", "AdamW beta1 (AdamW arm; embeddings, norms and gains in the Muon arms)").at_least(0).at_most(0.9999);
  s->number("beta2", "AdamW beta2").at_least(0).at_most(0.9999);
  s->number("epsilon", "AdamW epsilon").above(0);
  return s;
}

std::shared_ptr<core::Schema> schedule_schema() {
  auto s = std::make_shared<core::Schema>();
  s->number("warmup_fraction", "linear warmup as a fraction of the run's token budget").at_least(0).at_most(1);
  s->string("decay", "learning-rate decay after warmup").one_of({"cosine", "linear", "constant"});
  return s;
}

void declare_optimizers(Fields<Parameters>& f) {
  f.group("search", "the configuration grid every optimizer gets (the same search budget)", [](Fields<Parameters>& s) {
    s.array_of("learning_rates", core::FieldType::Number, "peak learning rates of the grid, ascending",
               &Parameters::learning_rates)
        .above(0)
        .non_empty();
    s.array_of("weight_decays", core::FieldType::Number, "decoupled weight decays of the grid, ascending",
               &Parameters::weight_decays)
        .at_least(0)
        .non_empty();
  });
  f.json_object("muon", muon_schema(), "standard and Per-Head Muon settings outside the grid", &Parameters::muon);
  f.json_object("adamw", adamw_schema(), "AdamW settings outside the grid", &Parameters::adamw);
  f.json_object("schedule", schedule_schema(), "learning-rate schedule of every run", &Parameters::schedule);
}

void declare(Fields<Parameters>& f) {
  f.array_of("pilot_seeds", core::FieldType::Integer, "seeds of the configuration search, shared by all optimizers",
             &Parameters::pilot_seeds)
      .at_least(0)
      .non_empty();
  f.array_of("confirmatory_seeds", core::FieldType::Integer,
             "fresh seeds of the confirmatory runs (none used in the pilot)", &Parameters::confirmatory_seeds)
      .at_least(0)
      .non_empty();
  f.object("model", "the NanoChat-style proxy shared by every run", &Parameters::model, declare_model);
  f.part(training::declare_data, {.order_seed = "seeds the example order, identical for every run"});
  f.part(training::declare_token_budget, "training tokens of every confirmatory run (trained exactly to this)");
  f.integer("pilot_token_budget", "training tokens of every pilot run", &Parameters::pilot_token_budget).at_least(1);
  f.part(training::declare_batching, {});
  f.part(training::declare_evaluation, {});
  f.part(training::declare_downstream, "the predeclared downstream suite, scored at at_tokens and at the budget (docs/downstream.md)");
  declare_optimizers(f);
  f.group("decision", "the decision rule's numbers", [](Fields<Parameters>& d) {
    d.number("max_step_time_overhead", "acceptable optimizer step-time increase of Per-Head Muon over Muon",
             &Parameters::max_step_time_overhead)
        .at_least(0);
    d.part(training::declare_bootstrap, {.resamples = "resamples of the paired (by confirmatory seed) bootstrap"});
  });
}

void check_unique(const std::vector<double>& values, const std::string& path, training::Issues& issues) {
  std::set<double> seen;
  for (double v : values) {
    if (!seen.insert(v).second) issues.push_back({path, "repeats " + nlohmann::json(v).dump() + "; list each value once"});
  }
}

void check(const Parameters& p, training::Issues& issues) {
  training::check_seeds(p.pilot_seeds, "parameters.pilot_seeds", false, issues);
  training::check_seeds(p.confirmatory_seeds, "parameters.confirmatory_seeds", true, issues);
  check_unique(p.learning_rates, "parameters.search.learning_rates", issues);
  check_unique(p.weight_decays, "parameters.search.weight_decays", issues);
  const std::set<std::uint64_t> pilot(p.pilot_seeds.begin(), p.pilot_seeds.end());
  for (auto seed : p.confirmatory_seeds) {
    if (pilot.count(seed)) {
      issues.push_back({"parameters.confirmatory_seeds", "seed " + std::to_string(seed) +
                                                             " is also a pilot seed; confirmatory seeds must be fresh"});
    }
  }
  training::check_token_schedule(p, issues);
  training::check_downstream(p, p, p.model.vocab_size, p, issues);
  training::check_whole_intervals(p.pilot_token_budget, "parameters.pilot_token_budget", p, issues);
}

}  // namespace

std::vector<Configuration> Parameters::configurations() const {
  std::vector<Configuration> out;
  int id = 1;
  for (double lr : learning_rates) {
    for (double wd : weight_decays) out.push_back({id++, lr, wd});
  }
  return out;
}

const training::ParameterSet<Parameters>& parameter_set() {
  return training::parameter_set_of<Parameters>("per-head-muon", declare, check);
}

}  // namespace k3lab::experiments::per_head_muon
