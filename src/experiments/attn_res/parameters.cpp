#include "attn_res/parameters.hpp"

#include <string>

namespace k3lab::experiments::attn_res {
namespace {

using training::Fields;

void declare_model(Fields<Model>& m) {
  training::declare_dense_model(m,
                                {.n_layers = "decoder layers, the same in every arm; at least three complete AttnRes blocks",
                                 .d_model = "residual width, the same in every arm"},
                                "SwiGLU hidden width");
}

void declare_decision(Fields<Decision>& d) {
  d.number("min_relative_improvement", "smallest mean relative validation-loss improvement that counts as a gain",
           &Decision::min_relative_improvement)
      .at_least(0);
  d.part(training::declare_bootstrap, {.confidence = "two-sided confidence of the paired bootstrap interval"});
  d.number("max_memory_regression", "reject the mechanism if peak stored residual memory grows by more than this",
           &Decision::max_memory_regression)
      .at_least(0);
  d.number("max_throughput_regression", "reject the mechanism if training throughput drops by more than this",
           &Decision::max_throughput_regression)
      .at_least(0)
      .at_most(1);
}

void declare(Fields<Parameters>& f) {
  f.part(training::declare_seeds, "predeclared seeds, paired across all three arms");
  f.object("model", "shape shared by the three arms", &Parameters::model, declare_model);
  f.integer("attnres_block_layers", "decoder layers per Block AttnRes block (K3 uses 12)", &Parameters::attnres_block_layers)
      .at_least(1);
  f.part(training::declare_data, {});
  f.part(training::declare_token_schedule,
         {.batching = {.batch_tokens = "tokens per optimizer step, never shrunk for one design"}});
  f.part(training::declare_downstream, "the predeclared downstream suite, scored at at_tokens and at the budget (docs/downstream.md)");
  f.part(training::declare_optimizer, {});
  f.object("decision", "the seed's decision rule, as numbers", &Parameters::decision, declare_decision);
}

void check(const Parameters& p, training::Issues& issues) {
  training::check_seeds(p.seeds, "parameters.seeds", true, issues);
  const int layers = p.model.n_layers;
  const int block = p.attnres_block_layers;
  if (layers < 3 * block) {
    issues.push_back({"parameters.model.n_layers", std::to_string(layers) + " layers hold fewer than three complete " +
                                                       std::to_string(block) + "-layer blocks; use at least " +
                                                       std::to_string(3 * block)});
  }
  training::check_token_schedule(p, issues);
  training::check_downstream(p, p, p.model.vocab_size, p, issues);
}

}  // namespace

const training::ParameterSet<Parameters>& parameter_set() {
  return training::parameter_set_of<Parameters>("attn-res", declare, check);
}

}  // namespace k3lab::experiments::attn_res
