#include "router_balance/parameters.hpp"

#include <cmath>

namespace k3lab::experiments::router_balance {
namespace {

using training::Fields;

void declare_model(Fields<Model>& m) {
  m.part(training::declare_model_shape, {.n_layers = "layers, each attention followed by an MoE layer"});
  m.integer("n_experts", "routed experts per MoE layer, the same in every arm", &Model::n_experts).at_least(2);
  m.integer("top_k", "experts selected per token, the same in every arm", &Model::top_k).at_least(1);
  m.integer("expert_hidden", "hidden width of one expert FFN", &Model::expert_hidden).at_least(1);
  m.string("router_activation", "router score function (K3: sigmoid)", &Model::router_activation)
      .one_of({"sigmoid", "softmax"});
}

void declare_updates(Fields<Parameters>& f) {
  f.integer("warmup_updates", "updates before measurement starts, the same for every arm", &Parameters::warmup_updates)
      .at_least(0);
  f.integer("measured_updates", "post-warmup updates, all measured; never stopped early", &Parameters::measured_updates)
      .at_least(1);
  f.part(training::declare_batching, {.batch_tokens = "tokens per update", .sequence_length = "tokens per sequence"});
  f.integer("log_interval_updates", "record loads, drops and biases every this many updates",
            &Parameters::log_interval_updates)
      .at_least(1);
  f.integer("final_loss_window_updates", "final primary loss = mean over this many last measured updates",
            &Parameters::final_loss_window_updates)
      .at_least(1);
}

void declare_controls(Fields<Parameters>& f) {
  f.group("aux_loss", "arm aux-loss", [](Fields<Parameters>& a) {
    a.number("coefficient", "weight of the Switch-style load-balancing loss (arm aux-loss)",
             &Parameters::aux_loss_coefficient)
        .above(0);
  });
  f.group("fixed_step_bias", "arm fixed-step-bias", [](Fields<Parameters>& b) {
    b.number("step", "bias step of the sign update b_j += step * sign(mean load - load_j) (arm fixed-step-bias)",
             &Parameters::fixed_step)
        .above(0);
  });
  f.group("quantile_balancing", "arm quantile-balancing", [](Fields<Parameters>& q) {
    q.string("estimator", "exact per-expert quantile, or K3's histogram estimator", &Parameters::quantile_estimator)
        .one_of({"exact", "histogram"});
    q.integer("histogram_bins", "bins of the histogram estimator (used when estimator is histogram)",
              &Parameters::quantile_histogram_bins)
        .at_least(2);
  });
}

void declare(Fields<Parameters>& f) {
  f.part(training::declare_seeds, "predeclared seeds, paired across all four arms");
  f.object("model", "the small MoE model shared by the arms", &Parameters::model, declare_model);
  f.number("capacity_factor", "expert capacity = ceil(batch_tokens * top_k / n_experts * capacity_factor)",
           &Parameters::capacity_factor)
      .above(0);
  f.part(training::declare_data, {.object = "corpus, tokenizer and batch order",
                                  .dataset = "training corpus id the data loader resolves (pinned with the freeze)",
                                  .order_seed = "seeds the token-batch order, identical for every arm and seed"});
  declare_updates(f);
  f.part(training::declare_optimizer,
         {.learning_rate = "peak learning rate (one predeclared value: the search budget of every arm)",
          .decay = "learning-rate decay after the warmup updates",
          .warmup_fraction = false});
  declare_controls(f);
  f.group("decision", "the decision rule's numbers", [](Fields<Parameters>& d) {
    d.number("max_relative_loss_increase", "largest final primary-loss increase vs fixed-step that is not 'worse'",
             &Parameters::max_relative_loss_increase)
        .at_least(0);
    d.part(training::declare_bootstrap, {});
  });
}

void check(const Parameters& p, training::Issues& issues) {
  training::check_seeds(p.seeds, "parameters.seeds", true, issues);
  if (p.model.top_k >= p.model.n_experts) {
    issues.push_back({"parameters.model.top_k", "must be below n_experts, or routing selects every expert"});
  }
  if (p.measured_updates % p.log_interval_updates != 0) {
    issues.push_back({"parameters.log_interval_updates", "must divide measured_updates so the last update is logged"});
  }
  if (p.final_loss_window_updates > p.measured_updates) {
    issues.push_back({"parameters.final_loss_window_updates", "is longer than measured_updates"});
  }
  training::check_batching(p, issues);
  if (p.micro_batch_rows && static_cast<std::int64_t>(*p.micro_batch_rows) * p.sequence_length != p.batch_tokens) {
    issues.push_back({"parameters.micro_batch_rows",
                      "must be the whole batch (batch_tokens / sequence_length): one forward per update, because "
                      "expert capacity and the balancing statistics are per batch"});
  }
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

const training::ParameterSet<Parameters>& parameter_set() {
  return training::parameter_set_of<Parameters>("router-balance", declare, check);
}

}  // namespace k3lab::experiments::router_balance
