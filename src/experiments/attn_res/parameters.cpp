#include "attn_res/parameters.hpp"

#include <memory>
#include <set>
#include <stdexcept>

namespace k3lab::experiments::attn_res {
namespace {

std::shared_ptr<core::Schema> model_schema() {
  auto s = std::make_shared<core::Schema>();
  s->integer("vocab_size", "embedding rows (tokenizer vocabulary, padded)").at_least(2);
  s->integer("d_model", "residual width, the same in every arm").at_least(1);
  s->integer("n_layers", "decoder layers, the same in every arm; at least three complete AttnRes blocks").at_least(1);
  s->integer("n_heads", "attention heads").at_least(1);
  s->integer("head_dim", "per-head width").at_least(1);
  s->integer("ffn_hidden", "SwiGLU hidden width").at_least(1);
  return s;
}

std::shared_ptr<core::Schema> data_schema() {
  auto s = std::make_shared<core::Schema>();
  s->string("dataset", "training/validation corpus id the data loader resolves (pinned with the freeze)");
  s->string("tokenizer", "tokenizer id, the same for every arm");
  s->integer("order_seed", "seeds the example order, identical for every arm and seed").at_least(0);
  return s;
}

std::shared_ptr<core::Schema> optimizer_schema() {
  auto s = std::make_shared<core::Schema>();
  s->string("name", "optimizer of every arm").one_of({"adamw"});
  s->number("learning_rate", "peak learning rate (one predeclared configuration for every arm)").above(0);
  s->number("weight_decay", "decoupled weight decay").at_least(0);
  s->number("beta1", "AdamW beta1").at_least(0).at_most(0.9999);
  s->number("beta2", "AdamW beta2").at_least(0).at_most(0.9999);
  s->number("warmup_fraction", "linear warmup as a fraction of the token budget").at_least(0).at_most(1);
  s->string("decay", "learning-rate decay after warmup").one_of({"cosine", "linear", "constant"});
  return s;
}

std::shared_ptr<core::Schema> decision_schema() {
  auto s = std::make_shared<core::Schema>();
  s->number("min_relative_improvement", "smallest mean relative validation-loss improvement that counts as a gain")
      .at_least(0);
  s->number("confidence", "two-sided confidence of the paired bootstrap interval").above(0).at_most(0.999);
  s->integer("bootstrap_resamples", "resamples of the paired (by seed) bootstrap").at_least(100);
  s->integer("bootstrap_seed", "seed of the bootstrap draws").at_least(0);
  s->number("max_memory_regression", "reject the mechanism if peak stored residual memory grows by more than this")
      .at_least(0);
  s->number("max_throughput_regression", "reject the mechanism if training throughput drops by more than this")
      .at_least(0)
      .at_most(1);
  return s;
}

core::Schema make_schema() {
  core::Schema s;
  s.array_of("seeds", core::FieldType::Integer, "predeclared seeds, paired across all three arms")
      .at_least(0)
      .non_empty();
  s.object("model", model_schema(), "shape shared by the three arms");
  s.integer("attnres_block_layers", "decoder layers per Block AttnRes block (K3 uses 12)").at_least(1);
  s.object("data", data_schema(), "corpus, tokenizer and example order");
  s.integer("token_budget", "training tokens of every valid run (trained exactly to this)").at_least(1);
  s.integer("batch_tokens", "tokens per optimizer step, never shrunk for one design").at_least(1);
  s.integer("sequence_length", "training window in tokens").at_least(1);
  s.integer("eval_interval_tokens", "checkpoint and evaluate every this many training tokens").at_least(1);
  s.integer("validation_tokens", "held-out tokens scored at every checkpoint").at_least(1);
  s.object("optimizer", optimizer_schema(), "the one optimizer configuration every arm uses");
  s.object("decision", decision_schema(), "the seed's decision rule, as numbers");
  return s;
}

}  // namespace

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
    const auto seeds = j.at("seeds").get<std::vector<std::uint64_t>>();
    if (std::set<std::uint64_t>(seeds.begin(), seeds.end()).size() != seeds.size()) {
      issues.push_back({"parameters.seeds", "repeats a seed; every paired run needs its own seed"});
    }
    if (seeds.size() < 2) {
      issues.push_back({"parameters.seeds", "needs at least 2 seeds: the decision rule is a paired bootstrap over seeds"});
    }
    const int layers = j.at("model").at("n_layers").get<int>();
    const int block = j.at("attnres_block_layers").get<int>();
    if (layers < 3 * block) {
      issues.push_back({"parameters.model.n_layers", std::to_string(layers) + " layers hold fewer than three complete " +
                                                         std::to_string(block) + "-layer blocks; use at least " +
                                                         std::to_string(3 * block)});
    }
    const auto budget = j.at("token_budget").get<std::int64_t>();
    const auto batch = j.at("batch_tokens").get<std::int64_t>();
    const auto seq = j.at("sequence_length").get<std::int64_t>();
    const auto interval = j.at("eval_interval_tokens").get<std::int64_t>();
    if (batch % seq != 0) {
      issues.push_back({"parameters.batch_tokens", "must be whole sequences: a multiple of sequence_length"});
    }
    if (interval % batch != 0) {
      issues.push_back({"parameters.eval_interval_tokens", "must be a whole number of steps: a multiple of batch_tokens"});
    }
    if (budget % interval != 0) {
      issues.push_back({"parameters.token_budget", "must be a whole number of checkpoint intervals so the last "
                                                   "checkpoint falls exactly on the budget"});
    }
    if (j.at("validation_tokens").get<std::int64_t>() % seq != 0) {
      issues.push_back({"parameters.validation_tokens", "must be whole sequences: a multiple of sequence_length"});
    }
  }
  if (!issues.empty()) {
    std::string message = "attn-res parameters are invalid:";
    for (const auto& issue : issues) message += "\n  " + issue.path + ": " + issue.message;
    throw std::invalid_argument(message);
  }
  Parameters p;
  p.seeds = j.at("seeds").get<std::vector<std::uint64_t>>();
  const auto& m = j.at("model");
  p.model = {m.at("vocab_size").get<std::int64_t>(), m.at("d_model").get<std::int64_t>(), m.at("n_layers").get<int>(),
             m.at("n_heads").get<int>(), m.at("head_dim").get<std::int64_t>(), m.at("ffn_hidden").get<std::int64_t>()};
  p.attnres_block_layers = j.at("attnres_block_layers").get<int>();
  p.dataset = j.at("data").at("dataset").get<std::string>();
  p.tokenizer = j.at("data").at("tokenizer").get<std::string>();
  p.data_order_seed = j.at("data").at("order_seed").get<std::uint64_t>();
  p.token_budget = j.at("token_budget").get<std::int64_t>();
  p.batch_tokens = j.at("batch_tokens").get<std::int64_t>();
  p.sequence_length = j.at("sequence_length").get<std::int64_t>();
  p.eval_interval_tokens = j.at("eval_interval_tokens").get<std::int64_t>();
  p.validation_tokens = j.at("validation_tokens").get<std::int64_t>();
  p.optimizer = j.at("optimizer");
  const auto& d = j.at("decision");
  p.decision = {d.at("min_relative_improvement").get<double>(), d.at("confidence").get<double>(),
                d.at("bootstrap_resamples").get<int>(),        d.at("bootstrap_seed").get<std::uint64_t>(),
                d.at("max_memory_regression").get<double>(),   d.at("max_throughput_regression").get<double>()};
  return p;
}

}  // namespace k3lab::experiments::attn_res
