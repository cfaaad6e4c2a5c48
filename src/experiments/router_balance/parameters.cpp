#include "router_balance/parameters.hpp"

#include <cmath>
#include <memory>
#include <set>
#include <stdexcept>

namespace k3lab::experiments::router_balance {
namespace {

std::shared_ptr<core::Schema> model_schema() {
  auto s = std::make_shared<core::Schema>();
  s->integer("vocab_size", "embedding rows (tokenizer vocabulary, padded)").at_least(2);
  s->integer("d_model", "residual width").at_least(1);
  s->integer("n_layers", "layers, each attention followed by an MoE layer").at_least(1);
  s->integer("n_heads", "attention heads").at_least(1);
  s->integer("head_dim", "per-head width").at_least(1);
  s->integer("n_experts", "routed experts per MoE layer, the same in every arm").at_least(2);
  s->integer("top_k", "experts selected per token, the same in every arm").at_least(1);
  s->integer("expert_hidden", "hidden width of one expert FFN").at_least(1);
  s->string("router_activation", "router score function (K3: sigmoid)").one_of({"sigmoid", "softmax"});
  return s;
}

std::shared_ptr<core::Schema> data_schema() {
  auto s = std::make_shared<core::Schema>();
  s->string("dataset", "training corpus id the data loader resolves (pinned with the freeze)");
  s->string("tokenizer", "tokenizer id, the same for every arm");
  s->integer("order_seed", "seeds the token-batch order, identical for every arm and seed").at_least(0);
  return s;
}

std::shared_ptr<core::Schema> optimizer_schema() {
  auto s = std::make_shared<core::Schema>();
  s->string("name", "optimizer of every arm").one_of({"adamw"});
  s->number("learning_rate", "peak learning rate (one predeclared value: the search budget of every arm)").above(0);
  s->number("weight_decay", "decoupled weight decay").at_least(0);
  s->number("beta1", "AdamW beta1").at_least(0).at_most(0.9999);
  s->number("beta2", "AdamW beta2").at_least(0).at_most(0.9999);
  s->string("decay", "learning-rate decay after the warmup updates").one_of({"cosine", "linear", "constant"});
  return s;
}

std::shared_ptr<core::Schema> aux_loss_schema() {
  auto s = std::make_shared<core::Schema>();
  s->number("coefficient", "weight of the Switch-style load-balancing loss (arm aux-loss)").above(0);
  return s;
}

std::shared_ptr<core::Schema> fixed_step_schema() {
  auto s = std::make_shared<core::Schema>();
  s->number("step", "bias step of the sign update b_j += step * sign(mean load - load_j) (arm fixed-step-bias)")
      .above(0);
  return s;
}

std::shared_ptr<core::Schema> quantile_schema() {
  auto s = std::make_shared<core::Schema>();
  s->string("estimator", "exact per-expert quantile, or K3's histogram estimator").one_of({"exact", "histogram"});
  s->integer("histogram_bins", "bins of the histogram estimator (used when estimator is histogram)").at_least(2);
  return s;
}

std::shared_ptr<core::Schema> decision_schema() {
  auto s = std::make_shared<core::Schema>();
  s->number("max_relative_loss_increase", "largest final primary-loss increase vs fixed-step that is not 'worse'")
      .at_least(0);
  s->number("confidence", "two-sided confidence of the paired bootstrap intervals").above(0).at_most(0.999);
  s->integer("bootstrap_resamples", "resamples of the paired (by seed) bootstrap").at_least(100);
  s->integer("bootstrap_seed", "seed of the bootstrap draws").at_least(0);
  return s;
}

core::Schema make_schema() {
  core::Schema s;
  s.array_of("seeds", core::FieldType::Integer, "predeclared seeds, paired across all four arms")
      .at_least(0)
      .non_empty();
  s.object("model", model_schema(), "the small MoE model shared by the arms");
  s.number("capacity_factor", "expert capacity = ceil(batch_tokens * top_k / n_experts * capacity_factor)").above(0);
  s.object("data", data_schema(), "corpus, tokenizer and batch order");
  s.integer("warmup_updates", "updates before measurement starts, the same for every arm").at_least(0);
  s.integer("measured_updates", "post-warmup updates, all measured; never stopped early").at_least(1);
  s.integer("batch_tokens", "tokens per update").at_least(1);
  s.integer("sequence_length", "tokens per sequence").at_least(1);
  s.integer("log_interval_updates", "record loads, drops and biases every this many updates").at_least(1);
  s.integer("final_loss_window_updates", "final primary loss = mean over this many last measured updates").at_least(1);
  s.object("optimizer", optimizer_schema(), "the one optimizer configuration every arm uses");
  s.object("aux_loss", aux_loss_schema(), "arm aux-loss");
  s.object("fixed_step_bias", fixed_step_schema(), "arm fixed-step-bias");
  s.object("quantile_balancing", quantile_schema(), "arm quantile-balancing");
  s.object("decision", decision_schema(), "the decision rule's numbers");
  return s;
}

}  // namespace

std::int64_t Parameters::expert_capacity() const {
  return static_cast<std::int64_t>(std::ceil(static_cast<double>(batch_tokens) * model.top_k / model.n_experts *
                                             capacity_factor));
}

double Parameters::approximate_active_parameters() const {
  const double d = static_cast<double>(model.d_model);
  const double attention = 4.0 * d * static_cast<double>(model.n_heads * model.head_dim);
  const double experts = model.top_k * 3.0 * d * static_cast<double>(model.expert_hidden);
  const double router = d * model.n_experts;
  return static_cast<double>(model.vocab_size) * d + model.n_layers * (attention + experts + router);
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
    const auto& m = j.at("model");
    if (m.at("top_k").get<int>() >= m.at("n_experts").get<int>()) {
      issues.push_back({"parameters.model.top_k", "must be below n_experts, or routing selects every expert"});
    }
    const auto measured = j.at("measured_updates").get<std::int64_t>();
    if (measured % j.at("log_interval_updates").get<std::int64_t>() != 0) {
      issues.push_back({"parameters.log_interval_updates", "must divide measured_updates so the last update is logged"});
    }
    if (j.at("final_loss_window_updates").get<std::int64_t>() > measured) {
      issues.push_back({"parameters.final_loss_window_updates", "is longer than measured_updates"});
    }
    if (j.at("batch_tokens").get<std::int64_t>() % j.at("sequence_length").get<std::int64_t>() != 0) {
      issues.push_back({"parameters.batch_tokens", "must be whole sequences: a multiple of sequence_length"});
    }
  }
  if (!issues.empty()) {
    std::string message = "router-balance parameters are invalid:";
    for (const auto& issue : issues) message += "\n  " + issue.path + ": " + issue.message;
    throw std::invalid_argument(message);
  }
  Parameters p;
  p.seeds = j.at("seeds").get<std::vector<std::uint64_t>>();
  const auto& m = j.at("model");
  p.model = {m.at("vocab_size").get<std::int64_t>(), m.at("d_model").get<std::int64_t>(),
             m.at("n_layers").get<int>(),            m.at("n_heads").get<int>(),
             m.at("head_dim").get<std::int64_t>(),   m.at("n_experts").get<int>(),
             m.at("top_k").get<int>(),               m.at("expert_hidden").get<std::int64_t>(),
             m.at("router_activation").get<std::string>()};
  p.capacity_factor = j.at("capacity_factor").get<double>();
  p.dataset = j.at("data").at("dataset").get<std::string>();
  p.tokenizer = j.at("data").at("tokenizer").get<std::string>();
  p.data_order_seed = j.at("data").at("order_seed").get<std::uint64_t>();
  p.warmup_updates = j.at("warmup_updates").get<std::int64_t>();
  p.measured_updates = j.at("measured_updates").get<std::int64_t>();
  p.batch_tokens = j.at("batch_tokens").get<std::int64_t>();
  p.sequence_length = j.at("sequence_length").get<std::int64_t>();
  p.log_interval_updates = j.at("log_interval_updates").get<std::int64_t>();
  p.final_loss_window_updates = j.at("final_loss_window_updates").get<std::int64_t>();
  p.optimizer = j.at("optimizer");
  p.aux_loss_coefficient = j.at("aux_loss").at("coefficient").get<double>();
  p.fixed_step = j.at("fixed_step_bias").at("step").get<double>();
  p.quantile_estimator = j.at("quantile_balancing").at("estimator").get<std::string>();
  p.quantile_histogram_bins = j.at("quantile_balancing").at("histogram_bins").get<int>();
  const auto& d = j.at("decision");
  p.max_relative_loss_increase = d.at("max_relative_loss_increase").get<double>();
  p.confidence = d.at("confidence").get<double>();
  p.bootstrap_resamples = d.at("bootstrap_resamples").get<int>();
  p.bootstrap_seed = d.at("bootstrap_seed").get<std::uint64_t>();
  return p;
}

}  // namespace k3lab::experiments::router_balance
