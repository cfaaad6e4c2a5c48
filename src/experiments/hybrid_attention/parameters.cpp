#include "hybrid_attention/parameters.hpp"

#include <memory>
#include <set>
#include <stdexcept>

namespace k3lab::experiments::hybrid_attention {
namespace {

std::shared_ptr<core::Schema> model_schema() {
  auto s = std::make_shared<core::Schema>();
  s->integer("vocab_size", "embedding rows (tokenizer vocabulary, padded)").at_least(2);
  s->integer("d_model", "residual width, the same in every arm").at_least(1);
  s->integer("n_layers", "mixer layers; a multiple of 4 (hybrid: groups of 3 KDA layers then 1 MLA layer)").at_least(4);
  s->integer("n_heads", "heads of every KDA and MLA layer").at_least(1);
  s->integer("head_dim", "per-head query/key width").at_least(1);
  s->integer("mla_kv_latent_dim", "MLA compressed key-value latent width (what the MLA cache stores per token)")
      .at_least(1);
  s->integer("kda_chunk_size", "chunk length of the chunkwise KDA kernel; sequence lengths are multiples of it")
      .at_least(1);
  s->integer("ffn_multiple", "each arm's FFN width is solved to target_parameters in steps of this size").at_least(1);
  return s;
}

std::shared_ptr<core::Schema> data_schema() {
  auto s = std::make_shared<core::Schema>();
  s->string("dataset", "training/validation corpus id the data loader resolves (pinned with the freeze)");
  s->string("tokenizer", "tokenizer id, the same for every arm");
  s->integer("order_seed", "seeds the example order, identical for every arm and seed").at_least(0);
  return s;
}

std::shared_ptr<core::Schema> long_context_schema() {
  auto s = std::make_shared<core::Schema>();
  s->array_of("lengths", core::FieldType::Integer,
              "context lengths of the retrieval, state-drift and inference memory/throughput probes; at least one "
              "beyond sequence_length")
      .at_least(1)
      .non_empty();
  s->integer("examples_per_length", "retrieval examples per length at every evaluation").at_least(1);
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

core::Schema make_schema() {
  core::Schema s;
  s.array_of("seeds", core::FieldType::Integer, "predeclared seeds; every arm runs every seed (paired)")
      .at_least(0)
      .non_empty();
  s.integer("target_parameters", "trainable parameters of every arm").at_least(1);
  s.number("parameter_tolerance", "allowed relative distance from target_parameters").above(0).at_most(0.1);
  s.object("model", model_schema(), "shared shape of the three arms");
  s.object("data", data_schema(), "corpus, tokenizer and example order");
  s.integer("token_budget", "training tokens of every valid run (trained exactly to this)").at_least(1);
  s.integer("batch_tokens", "tokens per optimizer step").at_least(1);
  s.integer("sequence_length", "training window in tokens").at_least(1);
  s.integer("eval_interval_tokens", "evaluate every this many training tokens").at_least(1);
  s.integer("validation_tokens", "held-out tokens scored at every evaluation").at_least(1);
  s.object("long_context_eval", long_context_schema(), "long-context probes at every evaluation");
  s.number("safety_timeout_hours", "a run still training after this long is marked incomplete").above(0);
  s.object("optimizer", optimizer_schema(), "the one optimizer configuration every arm uses");
  return s;
}

}  // namespace

const core::Schema& parameter_schema() {
  static const core::Schema schema = make_schema();
  return schema;
}

Parameters parse_parameters(const nlohmann::json& j) {
  auto issues = parameter_schema().validate(j, "parameters");
  if (issues.empty()) {
    const auto seeds = j.at("seeds").get<std::vector<std::uint64_t>>();
    if (std::set<std::uint64_t>(seeds.begin(), seeds.end()).size() != seeds.size()) {
      issues.push_back({"parameters.seeds", "repeats a seed; every run needs its own seed"});
    }
    const auto& m = j.at("model");
    if (m.at("n_layers").get<int>() % 4 != 0) {
      issues.push_back({"parameters.model.n_layers", "must be a multiple of 4 so the hybrid is whole groups of 3 KDA "
                                                     "layers followed by 1 MLA layer"});
    }
    const auto budget = j.at("token_budget").get<std::int64_t>();
    const auto batch = j.at("batch_tokens").get<std::int64_t>();
    const auto seq = j.at("sequence_length").get<std::int64_t>();
    const auto interval = j.at("eval_interval_tokens").get<std::int64_t>();
    const auto chunk = m.at("kda_chunk_size").get<std::int64_t>();
    if (seq % chunk != 0) {
      issues.push_back({"parameters.sequence_length", "must be a multiple of model.kda_chunk_size (" +
                                                          std::to_string(chunk) + ")"});
    }
    if (batch % seq != 0) {
      issues.push_back({"parameters.batch_tokens", "must be whole sequences: a multiple of sequence_length (" +
                                                       std::to_string(seq) + ")"});
    }
    if (interval % batch != 0) {
      issues.push_back({"parameters.eval_interval_tokens", "must be a whole number of steps: a multiple of "
                                                           "batch_tokens (" + std::to_string(batch) + ")"});
    }
    if (budget % interval != 0) {
      issues.push_back({"parameters.token_budget", "must be a whole number of evaluation intervals so the last "
                                                   "evaluation falls exactly on the budget"});
    }
    if (j.at("validation_tokens").get<std::int64_t>() % seq != 0) {
      issues.push_back({"parameters.validation_tokens", "must be whole sequences: a multiple of sequence_length"});
    }
    bool beyond = false;
    for (auto length : j.at("long_context_eval").at("lengths").get<std::vector<std::int64_t>>()) beyond |= length > seq;
    if (!beyond) {
      issues.push_back({"parameters.long_context_eval.lengths", "needs at least one length beyond sequence_length ("
                                                                "the seed measures quality past the training window)"});
    }
  }
  if (!issues.empty()) {
    std::string message = "hybrid-attention parameters are invalid:";
    for (const auto& issue : issues) message += "\n  " + issue.path + ": " + issue.message;
    throw std::invalid_argument(message);
  }
  Parameters p;
  p.seeds = j.at("seeds").get<std::vector<std::uint64_t>>();
  p.target_parameters = j.at("target_parameters").get<std::int64_t>();
  p.parameter_tolerance = j.at("parameter_tolerance").get<double>();
  const auto& m = j.at("model");
  p.model = {m.at("vocab_size").get<std::int64_t>(), m.at("d_model").get<std::int64_t>(),
             m.at("n_layers").get<int>(),            m.at("n_heads").get<int>(),
             m.at("head_dim").get<std::int64_t>(),   m.at("mla_kv_latent_dim").get<std::int64_t>(),
             m.at("kda_chunk_size").get<std::int64_t>(), m.at("ffn_multiple").get<std::int64_t>()};
  p.dataset = j.at("data").at("dataset").get<std::string>();
  p.tokenizer = j.at("data").at("tokenizer").get<std::string>();
  p.data_order_seed = j.at("data").at("order_seed").get<std::uint64_t>();
  p.token_budget = j.at("token_budget").get<std::int64_t>();
  p.batch_tokens = j.at("batch_tokens").get<std::int64_t>();
  p.sequence_length = j.at("sequence_length").get<std::int64_t>();
  p.eval_interval_tokens = j.at("eval_interval_tokens").get<std::int64_t>();
  p.validation_tokens = j.at("validation_tokens").get<std::int64_t>();
  p.long_context_lengths = j.at("long_context_eval").at("lengths").get<std::vector<std::int64_t>>();
  p.long_context_examples = j.at("long_context_eval").at("examples_per_length").get<int>();
  p.safety_timeout_hours = j.at("safety_timeout_hours").get<double>();
  p.optimizer = j.at("optimizer");
  return p;
}

}  // namespace k3lab::experiments::hybrid_attention
