#include "hybrid_attention/parameters.hpp"

#include <string>

namespace k3lab::experiments::hybrid_attention {
namespace {

using training::Fields;

void declare_model(Fields<Model>& m) {
  m.part(training::declare_model_shape,
         {.n_layers = "mixer layers; a multiple of 4 (hybrid: groups of 3 KDA layers then 1 MLA layer)",
          .d_model = "residual width, the same in every arm",
          .n_heads = "heads of every KDA and MLA layer",
          .head_dim = "per-head query/key width",
          .min_layers = 4});
  m.integer("mla_kv_latent_dim", "MLA compressed key-value latent width (what the MLA cache stores per token)",
            &Model::mla_kv_latent_dim)
      .at_least(1);
  m.integer("kda_chunk_size", "chunk length of the chunkwise KDA kernel; sequence lengths are multiples of it",
            &Model::kda_chunk_size)
      .at_least(1);
  m.integer("ffn_multiple", "each arm's FFN width is solved to target_parameters in steps of this size", &Model::ffn_multiple)
      .at_least(1);
}

void declare(Fields<Parameters>& f) {
  f.part(training::declare_seeds, "predeclared seeds; every arm runs every seed (paired)");
  f.integer("target_parameters", "trainable parameters of every arm", &Parameters::target_parameters).at_least(1);
  f.number("parameter_tolerance", "allowed relative distance from target_parameters", &Parameters::parameter_tolerance)
      .above(0)
      .at_most(0.1);
  f.object("model", "shared shape of the three arms", &Parameters::model, declare_model);
  f.part(training::declare_data, {});
  f.part(training::declare_token_schedule,
         {.evaluation = {.eval_interval_tokens = "evaluate every this many training tokens",
                         .validation_tokens = "held-out tokens scored at every evaluation"}});
  f.group("long_context_eval", "long-context probes at every evaluation", [](Fields<Parameters>& l) {
    l.array_of("lengths", core::FieldType::Integer,
               "context lengths of the retrieval, state-drift and inference memory/throughput probes; at least one "
               "beyond sequence_length",
               &Parameters::long_context_lengths)
        .at_least(1)
        .non_empty();
    l.integer("examples_per_length", "retrieval examples per length (and clean-text rows) at the last evaluation",
              &Parameters::long_context_examples)
        .at_least(1);
    l.count_or_null("checkpoint_examples",
                    "examples per length at the evaluations before the last: a fixed, evenly spaced subset of "
                    "examples_per_length (null: all of them)",
                    &Parameters::long_context_checkpoint_examples);
  });
  f.part(training::declare_downstream, "the predeclared downstream suite, scored at at_tokens and at the budget (docs/downstream.md)");
  f.number("safety_timeout_hours", "a run still training after this long is marked incomplete",
           &Parameters::safety_timeout_hours)
      .above(0);
  f.part(training::declare_optimizer, {});
  f.optional_object("analysis", "predeclared analysis settings of the paired downstream comparisons",
                    &Parameters::analysis, [](Fields<training::Bootstrap>& a) { training::declare_bootstrap(a, {}); });
}

void check(const Parameters& p, training::Issues& issues) {
  training::check_seeds(p.seeds, "parameters.seeds", false, issues);
  if (p.model.n_layers % 4 != 0) {
    issues.push_back({"parameters.model.n_layers", "must be a multiple of 4 so the hybrid is whole groups of 3 KDA "
                                                   "layers followed by 1 MLA layer"});
  }
  if (p.sequence_length % p.model.kda_chunk_size != 0) {
    issues.push_back({"parameters.sequence_length", "must be a multiple of model.kda_chunk_size (" +
                                                        std::to_string(p.model.kda_chunk_size) + ")"});
  }
  training::check_token_schedule(p, issues);
  training::check_downstream(p, p, p.model.vocab_size, p, issues);
  if (p.downstream && !p.analysis) {
    issues.push_back({"parameters.analysis", "is required with parameters.downstream: it sets the bootstrap of the "
                                             "paired downstream comparisons"});
  }
  if (const auto& subset = p.long_context_checkpoint_examples;
      subset && (*subset < 1 || *subset > static_cast<std::uint64_t>(p.long_context_examples))) {
    issues.push_back({"parameters.long_context_eval.checkpoint_examples",
                      "must be between 1 and examples_per_length (" + std::to_string(p.long_context_examples) +
                          "), or null to score every example at every evaluation"});
  }
  bool beyond = false;
  for (auto length : p.long_context_lengths) beyond |= length > p.sequence_length;
  if (!beyond) {
    issues.push_back({"parameters.long_context_eval.lengths", "needs at least one length beyond sequence_length (the "
                                                              "seed measures quality past the training window)"});
  }
}

}  // namespace

const training::ParameterSet<Parameters>& parameter_set() {
  return training::parameter_set_of<Parameters>("hybrid-attention", declare, check);
}

}  // namespace k3lab::experiments::hybrid_attention
