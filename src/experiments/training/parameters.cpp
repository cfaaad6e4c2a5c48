#include "k3lab/experiments/training/parameters.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

namespace k3lab::experiments::training {

void throw_if_invalid(const std::string& experiment_id, const Issues& issues) {
  core::throw_schema_issues(experiment_id + " parameters are invalid:", issues);
}

void declare_seeds(Fields<Seeds>& fields, const std::string& doc) {
  fields.array_of("seeds", core::FieldType::Integer, doc, &Seeds::seeds).at_least(0).non_empty();
}

void declare_model_shape(Fields<ModelShape>& fields, const ModelShapeWording& wording) {
  fields.integer("vocab_size", "embedding rows (tokenizer vocabulary, padded)", &ModelShape::vocab_size).at_least(2);
  fields.integer("d_model", wording.d_model, &ModelShape::d_model).at_least(1);
  fields.integer("n_layers", wording.n_layers, &ModelShape::n_layers).at_least(wording.min_layers);
  fields.integer("n_heads", wording.n_heads, &ModelShape::n_heads).at_least(wording.min_heads);
  fields.integer("head_dim", wording.head_dim, &ModelShape::head_dim).at_least(1);
}

void declare_dense_model(Fields<DenseModel>& fields, const ModelShapeWording& wording, const std::string& ffn_doc) {
  fields.part(declare_model_shape, wording);
  fields.integer("ffn_hidden", ffn_doc, &DenseModel::ffn_hidden).at_least(1);
}

void declare_data(Fields<DataSource>& fields, const DataWording& wording) {
  fields.group("data", wording.object, [&](Fields<DataSource>& data) {
    data.string("dataset", wording.dataset, &DataSource::dataset);
    data.string("tokenizer", wording.tokenizer, &DataSource::tokenizer);
    data.integer("order_seed", wording.order_seed, &DataSource::data_order_seed).at_least(0);
    data.string_or_null("manifest_sha256", wording.manifest_sha256, &DataSource::manifest_sha256);
  });
}

void declare_batching(Fields<Batching>& fields, const BatchingWording& wording) {
  fields.integer("batch_tokens", wording.batch_tokens, &Batching::batch_tokens).at_least(1);
  fields.integer("sequence_length", wording.sequence_length, &Batching::sequence_length).at_least(1);
  fields.count_or_null("micro_batch_rows", wording.micro_batch_rows, &Batching::micro_batch_rows);
  fields.string_or_null("activation_checkpointing",
                        "\"none\": every activation is kept for backward, no recomputation (the only policy "
                        "implemented; every full profile fits one H200 without it, `k3lab plan`)",
                        &Batching::activation_checkpointing);
}

void declare_evaluation(Fields<TokenSchedule>& fields, const EvaluationWording& wording) {
  fields.integer("eval_interval_tokens", wording.eval_interval_tokens, &TokenSchedule::eval_interval_tokens).at_least(1);
  fields.integer("validation_tokens", wording.validation_tokens, &TokenSchedule::validation_tokens).at_least(1);
}

void declare_token_budget(Fields<TokenSchedule>& fields, const std::string& doc) {
  fields.integer("token_budget", doc, &TokenSchedule::token_budget).at_least(1);
}

void declare_token_schedule(Fields<TokenSchedule>& fields, const TokenScheduleWording& wording) {
  declare_token_budget(fields, wording.token_budget);
  fields.part(declare_batching, wording.batching);
  declare_evaluation(fields, wording.evaluation);
}

void declare_optimizer(Fields<OptimizerBlock>& fields, const OptimizerWording& wording) {
  auto s = std::make_shared<core::Schema>();
  s->string("name", wording.name).one_of({"adamw"});
  s->number("learning_rate", wording.learning_rate).above(0);
  s->number("weight_decay", "decoupled weight decay").at_least(0);
  s->number("beta1", "AdamW beta1").at_least(0).at_most(0.9999);
  s->number("beta2", "AdamW beta2").at_least(0).at_most(0.9999);
  if (wording.warmup_fraction) {
    s->number("warmup_fraction", "linear warmup as a fraction of the token budget").at_least(0).at_most(1);
  }
  s->string("decay", wording.decay).one_of({"cosine", "linear", "constant"});
  fields.json_object("optimizer", s, wording.object, &OptimizerBlock::optimizer);
}

void declare_bootstrap(Fields<Bootstrap>& fields, const BootstrapWording& wording) {
  fields.number("confidence", wording.confidence, &Bootstrap::confidence).above(0).at_most(0.999);
  fields.integer("bootstrap_resamples", wording.resamples, &Bootstrap::bootstrap_resamples).at_least(100);
  fields.integer("bootstrap_seed", "seed of the bootstrap draws", &Bootstrap::bootstrap_seed).at_least(0);
}

void check_seeds(const std::vector<std::uint64_t>& seeds, const std::string& path, bool paired, Issues& issues) {
  std::set<std::uint64_t> seen;
  for (auto seed : seeds) {
    if (!seen.insert(seed).second) {
      issues.push_back({path, "repeats seed " + std::to_string(seed) + "; every run needs its own seed"});
    }
  }
  if (paired && seeds.size() < 2) {
    issues.push_back({path, "needs at least 2 seeds: the decision rule is a paired bootstrap over seeds"});
  }
}

namespace {

void check_multiple(std::int64_t value, std::int64_t of, const std::string& path, const std::string& what,
                    Issues& issues) {
  if (value % of != 0) issues.push_back({path, "must be " + what + " (" + std::to_string(of) + ")"});
}

}  // namespace

void check_batching(const Batching& batching, Issues& issues) {
  check_multiple(batching.batch_tokens, batching.sequence_length, "parameters.batch_tokens",
                 "whole sequences: a multiple of sequence_length", issues);
  const std::int64_t rows = batching.batch_tokens / std::max<std::int64_t>(1, batching.sequence_length);
  if (batching.micro_batch_rows) {
    const auto micro = static_cast<std::int64_t>(*batching.micro_batch_rows);
    if (micro < 1 || rows % micro != 0) {
      issues.push_back({"parameters.micro_batch_rows",
                        "must be at least 1 and divide the " + std::to_string(rows) +
                            " rows of a step (batch_tokens / sequence_length)"});
    }
  }
  if (batching.activation_checkpointing && *batching.activation_checkpointing != "none") {
    issues.push_back({"parameters.activation_checkpointing",
                      "must be \"none\" (the trainer keeps every activation; recomputation is not implemented), got \"" +
                          *batching.activation_checkpointing + "\""});
  }
}

void check_token_schedule(const TokenSchedule& schedule, Issues& issues) {
  check_batching(schedule, issues);
  check_multiple(schedule.eval_interval_tokens, schedule.batch_tokens, "parameters.eval_interval_tokens",
                 "a whole number of steps: a multiple of batch_tokens", issues);
  check_whole_intervals(schedule.token_budget, "parameters.token_budget", schedule, issues);
  check_multiple(schedule.validation_tokens, schedule.sequence_length, "parameters.validation_tokens",
                 "whole sequences: a multiple of sequence_length", issues);
}

void check_whole_intervals(std::int64_t budget, const std::string& path, const TokenSchedule& schedule, Issues& issues) {
  check_multiple(budget, schedule.eval_interval_tokens, path,
                 "a whole number of evaluation intervals so the last evaluation falls exactly on it: a multiple of "
                 "eval_interval_tokens",
                 issues);
}

void check_sampling_interval(std::int64_t interval, const std::string& path, const TokenSchedule& schedule,
                             Issues& issues) {
  if (interval % schedule.batch_tokens != 0 || schedule.token_budget % interval != 0) {
    issues.push_back({path, "must be a whole number of steps (a multiple of batch_tokens) that divides token_budget, "
                            "so the last sample falls exactly on the budget"});
  }
}

double approximate_parameters(const DenseModel& model) {
  const double d = static_cast<double>(model.d_model);
  const double attention = 4.0 * d * static_cast<double>(model.n_heads * model.head_dim);
  const double ffn = 3.0 * d * static_cast<double>(model.ffn_hidden);
  return static_cast<double>(model.vocab_size) * d + model.n_layers * (attention + ffn);
}

}  // namespace k3lab::experiments::training
