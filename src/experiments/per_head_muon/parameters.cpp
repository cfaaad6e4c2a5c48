#include "per_head_muon/parameters.hpp"

#include <memory>
#include <set>
#include <stdexcept>

namespace k3lab::experiments::per_head_muon {
namespace {

std::shared_ptr<core::Schema> model_schema() {
  auto s = std::make_shared<core::Schema>();
  s->integer("vocab_size", "embedding rows (tokenizer vocabulary, padded)").at_least(2);
  s->integer("d_model", "residual width").at_least(1);
  s->integer("n_layers", "decoder layers").at_least(1);
  s->integer("n_heads", "attention heads; Per-Head Muon orthogonalizes each head's block").at_least(2);
  s->integer("head_dim", "per-head width").at_least(1);
  s->integer("ffn_hidden", "SwiGLU hidden width").at_least(1);
  return s;
}

std::shared_ptr<core::Schema> data_schema() {
  auto s = std::make_shared<core::Schema>();
  s->string("dataset", "training/validation corpus id the data loader resolves (pinned with the freeze)");
  s->string("tokenizer", "tokenizer id, the same for every arm");
  s->integer("order_seed", "seeds the example order, identical for every run").at_least(0);
  return s;
}

std::shared_ptr<core::Schema> search_schema() {
  auto s = std::make_shared<core::Schema>();
  s->array_of("learning_rates", core::FieldType::Number, "peak learning rates of the grid, ascending")
      .above(0)
      .non_empty();
  s->array_of("weight_decays", core::FieldType::Number, "decoupled weight decays of the grid, ascending")
      .at_least(0)
      .non_empty();
  return s;
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

std::shared_ptr<core::Schema> decision_schema() {
  auto s = std::make_shared<core::Schema>();
  s->number("max_step_time_overhead", "acceptable optimizer step-time increase of Per-Head Muon over Muon")
      .at_least(0);
  s->number("confidence", "two-sided confidence of the paired bootstrap intervals").above(0).at_most(0.999);
  s->integer("bootstrap_resamples", "resamples of the paired (by confirmatory seed) bootstrap").at_least(100);
  s->integer("bootstrap_seed", "seed of the bootstrap draws").at_least(0);
  return s;
}

core::Schema make_schema() {
  core::Schema s;
  s.array_of("pilot_seeds", core::FieldType::Integer, "seeds of the configuration search, shared by all optimizers")
      .at_least(0)
      .non_empty();
  s.array_of("confirmatory_seeds", core::FieldType::Integer, "fresh seeds of the confirmatory runs (none used in the pilot)")
      .at_least(0)
      .non_empty();
  s.object("model", model_schema(), "the NanoChat-style proxy shared by every run");
  s.object("data", data_schema(), "corpus, tokenizer and example order");
  s.integer("token_budget", "training tokens of every confirmatory run (trained exactly to this)").at_least(1);
  s.integer("pilot_token_budget", "training tokens of every pilot run").at_least(1);
  s.integer("batch_tokens", "tokens per optimizer step").at_least(1);
  s.integer("sequence_length", "training window in tokens").at_least(1);
  s.integer("eval_interval_tokens", "checkpoint and evaluate every this many training tokens").at_least(1);
  s.integer("validation_tokens", "held-out tokens scored at every checkpoint").at_least(1);
  s.object("search", search_schema(), "the configuration grid every optimizer gets (the same search budget)");
  s.object("muon", muon_schema(), "standard and Per-Head Muon settings outside the grid");
  s.object("adamw", adamw_schema(), "AdamW settings outside the grid");
  s.object("schedule", schedule_schema(), "learning-rate schedule of every run");
  s.object("decision", decision_schema(), "the decision rule's numbers");
  return s;
}

void check_unique(const nlohmann::json& values, const std::string& path, std::vector<core::SchemaIssue>& issues) {
  std::set<std::string> seen;
  for (const auto& v : values) {
    if (!seen.insert(v.dump()).second) issues.push_back({path, "repeats " + v.dump() + "; list each value once"});
  }
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

double Parameters::approximate_parameters() const {
  const double d = static_cast<double>(model.d_model);
  const double attention = 4.0 * d * static_cast<double>(model.n_heads * model.head_dim);
  const double ffn = 3.0 * d * static_cast<double>(model.ffn_hidden);
  return static_cast<double>(model.vocab_size) * d + model.n_layers * (attention + ffn);
}

const core::Schema& parameter_schema() {
  static const core::Schema schema = make_schema();
  return schema;
}

Parameters parse_parameters(const nlohmann::json& j) {
  auto issues = parameter_schema().validate(j, "parameters");
  if (issues.empty()) {
    check_unique(j.at("pilot_seeds"), "parameters.pilot_seeds", issues);
    check_unique(j.at("confirmatory_seeds"), "parameters.confirmatory_seeds", issues);
    check_unique(j.at("search").at("learning_rates"), "parameters.search.learning_rates", issues);
    check_unique(j.at("search").at("weight_decays"), "parameters.search.weight_decays", issues);
    const auto pilot = j.at("pilot_seeds").get<std::vector<std::uint64_t>>();
    const std::set<std::uint64_t> pilot_set(pilot.begin(), pilot.end());
    for (auto seed : j.at("confirmatory_seeds").get<std::vector<std::uint64_t>>()) {
      if (pilot_set.count(seed)) {
        issues.push_back({"parameters.confirmatory_seeds", "seed " + std::to_string(seed) +
                                                               " is also a pilot seed; confirmatory seeds must be fresh"});
      }
    }
    if (j.at("confirmatory_seeds").size() < 2) {
      issues.push_back({"parameters.confirmatory_seeds", "needs at least 2 seeds: the decision rule is a paired "
                                                         "bootstrap over confirmatory seeds"});
    }
    const auto batch = j.at("batch_tokens").get<std::int64_t>();
    const auto seq = j.at("sequence_length").get<std::int64_t>();
    const auto interval = j.at("eval_interval_tokens").get<std::int64_t>();
    if (batch % seq != 0) {
      issues.push_back({"parameters.batch_tokens", "must be whole sequences: a multiple of sequence_length"});
    }
    if (interval % batch != 0) {
      issues.push_back({"parameters.eval_interval_tokens", "must be a whole number of steps: a multiple of batch_tokens"});
    }
    for (const char* budget : {"token_budget", "pilot_token_budget"}) {
      if (j.at(budget).get<std::int64_t>() % interval != 0) {
        issues.push_back({std::string("parameters.") + budget,
                          "must be a whole number of checkpoint intervals so the last checkpoint falls exactly on it"});
      }
    }
    if (j.at("validation_tokens").get<std::int64_t>() % seq != 0) {
      issues.push_back({"parameters.validation_tokens", "must be whole sequences: a multiple of sequence_length"});
    }
  }
  if (!issues.empty()) {
    std::string message = "per-head-muon parameters are invalid:";
    for (const auto& issue : issues) message += "\n  " + issue.path + ": " + issue.message;
    throw std::invalid_argument(message);
  }
  Parameters p;
  p.pilot_seeds = j.at("pilot_seeds").get<std::vector<std::uint64_t>>();
  p.confirmatory_seeds = j.at("confirmatory_seeds").get<std::vector<std::uint64_t>>();
  const auto& m = j.at("model");
  p.model = {m.at("vocab_size").get<std::int64_t>(), m.at("d_model").get<std::int64_t>(), m.at("n_layers").get<int>(),
             m.at("n_heads").get<int>(), m.at("head_dim").get<std::int64_t>(), m.at("ffn_hidden").get<std::int64_t>()};
  p.dataset = j.at("data").at("dataset").get<std::string>();
  p.tokenizer = j.at("data").at("tokenizer").get<std::string>();
  p.data_order_seed = j.at("data").at("order_seed").get<std::uint64_t>();
  p.token_budget = j.at("token_budget").get<std::int64_t>();
  p.pilot_token_budget = j.at("pilot_token_budget").get<std::int64_t>();
  p.batch_tokens = j.at("batch_tokens").get<std::int64_t>();
  p.sequence_length = j.at("sequence_length").get<std::int64_t>();
  p.eval_interval_tokens = j.at("eval_interval_tokens").get<std::int64_t>();
  p.validation_tokens = j.at("validation_tokens").get<std::int64_t>();
  p.learning_rates = j.at("search").at("learning_rates").get<std::vector<double>>();
  p.weight_decays = j.at("search").at("weight_decays").get<std::vector<double>>();
  p.muon = j.at("muon");
  p.adamw = j.at("adamw");
  p.schedule = j.at("schedule");
  const auto& d = j.at("decision");
  p.max_step_time_overhead = d.at("max_step_time_overhead").get<double>();
  p.confidence = d.at("confidence").get<double>();
  p.bootstrap_resamples = d.at("bootstrap_resamples").get<int>();
  p.bootstrap_seed = d.at("bootstrap_seed").get<std::uint64_t>();
  return p;
}

}  // namespace k3lab::experiments::per_head_muon
