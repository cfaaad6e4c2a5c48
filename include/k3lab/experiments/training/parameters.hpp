#pragma once
// The parameters of a proxy-training experiment, each field written once: `Fields` declares a schema
// entry (name, type, bounds, wording) together with the member its value is read into, so struct,
// schema and parse cannot drift apart. The parts every proxy module shares (model shape, data, token
// schedule, optimizer, bootstrap, seeds) are declared here once, with their rules across fields; a
// module declares only its own fields, in the order its protocol lists them.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/core/schema.hpp"

namespace k3lab::experiments::training {

using Issues = std::vector<core::SchemaIssue>;

// Schema entries of one JSON object and the members of T they fill. `object` fills a member struct;
// `group` and `part` keep filling T (the JSON nests, the struct stays flat).
template <class T>
class Fields {
 public:
  Fields() : schema_(std::make_shared<core::Schema>()) {}

  template <class M, class Of>
  core::Field& integer(std::string name, std::string doc, M Of::*member) {
    bind(name, member);
    return schema_->integer(std::move(name), std::move(doc));
  }
  template <class M, class Of>
  core::Field& number(std::string name, std::string doc, M Of::*member) {
    bind(name, member);
    return schema_->number(std::move(name), std::move(doc));
  }
  template <class M, class Of>
  core::Field& string(std::string name, std::string doc, M Of::*member) {
    bind(name, member);
    return schema_->string(std::move(name), std::move(doc));
  }
  template <class M, class Of>
  core::Field& array_of(std::string name, core::FieldType element, std::string doc, M Of::*member) {
    bind(name, member);
    return schema_->array_of(std::move(name), element, std::move(doc));
  }
  // An optional string or null (both std::nullopt): absent in parameters recorded before the field
  // existed. The schema has no "string or null" type, so it takes any value here and the reader refuses
  // anything else, naming the field.
  template <class Of>
  core::Field& string_or_null(std::string name, std::string doc, std::optional<std::string> Of::*member) {
    static_assert(std::is_base_of_v<Of, T>, "the member must belong to T or a base of T");
    readers_.push_back([name, member](const nlohmann::json& j, T& out) {
      const auto value = j.value(name, nlohmann::json());
      if (!value.is_null() && !value.is_string()) {
        throw std::invalid_argument("parameters field \"" + name + "\" must be a string or null, got " + value.dump());
      }
      out.*member = value.is_null() ? std::nullopt : std::optional<std::string>(value.get<std::string>());
    });
    auto& field = schema_->string(std::move(name), std::move(doc) + " (a string or null)");
    field.type = core::FieldType::Any;
    return field.optional();
  }
  // An optional non-negative integer or null (both std::nullopt), like string_or_null.
  template <class Of>
  core::Field& count_or_null(std::string name, std::string doc, std::optional<std::uint64_t> Of::*member) {
    static_assert(std::is_base_of_v<Of, T>, "the member must belong to T or a base of T");
    readers_.push_back([name, member](const nlohmann::json& j, T& out) {
      const auto value = j.value(name, nlohmann::json());
      const bool count = value.is_number_unsigned() || (value.is_number_integer() && value.get<std::int64_t>() >= 0);
      if (!value.is_null() && !count) {
        throw std::invalid_argument("parameters field \"" + name + "\" must be a non-negative integer or null, got " +
                                    value.dump());
      }
      out.*member = value.is_null() ? std::nullopt : std::optional<std::uint64_t>(value.get<std::uint64_t>());
    });
    auto& field = schema_->string(std::move(name), std::move(doc) + " (a non-negative integer or null)");
    field.type = core::FieldType::Any;
    return field.optional();
  }
  // An optional object (std::nullopt when absent) whose fields fill the member struct `member`.
  template <class U, class Of>
  core::Field& optional_object(std::string name, std::string doc, std::optional<U> Of::*member,
                               const std::type_identity_t<std::function<void(Fields<U>&)>>& declare) {
    static_assert(std::is_base_of_v<Of, T>, "the member must belong to T or a base of T");
    Fields<U> inner;
    declare(inner);
    readers_.push_back([name, member, inner](const nlohmann::json& j, T& out) {
      if (!j.contains(name)) return;
      U value;
      inner.read(j.at(name), value);
      out.*member = std::move(value);
    });
    return schema_->object(std::move(name), inner.schema(), std::move(doc)).optional();
  }
  // An object kept as JSON for its consumer (the trainer, an optimizer), validated by `schema`.
  template <class Of>
  core::Field& json_object(std::string name, std::shared_ptr<core::Schema> schema, std::string doc,
                           nlohmann::json Of::*member) {
    bind(name, member);
    return schema_->object(std::move(name), std::move(schema), std::move(doc));
  }
  // An object whose fields fill the member struct `member`.
  template <class U, class Of>
  core::Field& object(std::string name, std::string doc, U Of::*member,
                      const std::type_identity_t<std::function<void(Fields<U>&)>>& declare) {
    static_assert(std::is_base_of_v<Of, T>, "the member must belong to T or a base of T");
    Fields<U> inner;
    declare(inner);
    readers_.push_back([name, member, inner](const nlohmann::json& j, T& out) { inner.read(j.at(name), out.*member); });
    return schema_->object(std::move(name), inner.schema(), std::move(doc));
  }
  // An object whose fields fill T itself.
  core::Field& group(std::string name, std::string doc, const std::function<void(Fields<T>&)>& declare) {
    Fields<T> inner;
    declare(inner);
    readers_.push_back([name, inner](const nlohmann::json& j, T& out) { inner.read(j.at(name), out); });
    return schema_->object(std::move(name), inner.schema(), std::move(doc));
  }
  // The fields a shared fragment declares for Base (a base of T), here, in order.
  template <class Base, class Wording>
  void part(void (*declare)(Fields<Base>&, const Wording&), const std::type_identity_t<Wording>& wording) {
    static_assert(std::is_base_of_v<Base, T>, "a part fills a base of T");
    Fields<Base> inner(schema_);
    declare(inner, wording);
    readers_.push_back([inner](const nlohmann::json& j, T& out) { inner.read(j, static_cast<Base&>(out)); });
  }

  const std::shared_ptr<core::Schema>& schema() const { return schema_; }
  // Reads every declared field of an object the schema validated.
  void read(const nlohmann::json& j, T& out) const {
    for (const auto& reader : readers_) reader(j, out);
  }

 private:
  template <class>
  friend class Fields;
  explicit Fields(std::shared_ptr<core::Schema> shared) : schema_(std::move(shared)) {}

  template <class M, class Of>
  void bind(const std::string& name, M Of::*member) {
    static_assert(std::is_base_of_v<Of, T>, "the member must belong to T or a base of T");
    readers_.push_back([name, member](const nlohmann::json& j, T& out) { out.*member = j.at(name).template get<M>(); });
  }

  std::shared_ptr<core::Schema> schema_;
  std::vector<std::function<void(const nlohmann::json&, T&)>> readers_;
};

// Throws std::invalid_argument "<id> parameters are invalid:" with one line per issue, if any.
void throw_if_invalid(const std::string& experiment_id, const Issues& issues);

// A module's parameters block: its schema, its rules across fields (run on the typed view once the
// schema holds) and the typed parse.
template <class P>
class ParameterSet {
 public:
  using Rules = std::function<void(const P& parameters, Issues& issues)>;

  ParameterSet(std::string experiment_id, const std::function<void(Fields<P>&)>& declare, Rules rules)
      : id_(std::move(experiment_id)), rules_(std::move(rules)) {
    declare(fields_);
  }

  const std::string& experiment_id() const { return id_; }
  const core::Schema& schema() const { return *fields_.schema(); }

  // Validates (schema, then the rules) and converts; throws std::invalid_argument naming every bad field.
  P parse(const nlohmann::json& parameters) const {
    auto issues = schema().validate(parameters, "parameters");
    P p;
    if (issues.empty()) {
      fields_.read(parameters, p);
      if (rules_) rules_(p, issues);
    }
    throw_if_invalid(id_, issues);
    return p;
  }

 private:
  std::string id_;
  Fields<P> fields_;
  Rules rules_;
};

// The one ParameterSet of a module's P, built on first use.
template <class P>
const ParameterSet<P>& parameter_set_of(const char* experiment_id, void (*declare)(Fields<P>&),
                                        void (*rules)(const P&, Issues&)) {
  static const ParameterSet<P> set(experiment_id, declare, rules);
  return set;
}

// ---- The parts the proxy modules share. Wording defaults are the common phrasing; a module passes
// its own where the protocol's meaning differs.

struct Seeds {
  std::vector<std::uint64_t> seeds;
};

struct ModelShape {
  std::int64_t vocab_size = 0;
  std::int64_t d_model = 0;
  int n_layers = 0;
  int n_heads = 0;
  std::int64_t head_dim = 0;
};

// A dense decoder's shape with a gated FFN of ffn_hidden.
struct DenseModel : ModelShape {
  std::int64_t ffn_hidden = 0;
};

struct DataSource {
  std::string dataset;
  std::string tokenizer;
  std::uint64_t data_order_seed = 0;
  std::optional<std::string> manifest_sha256 = std::nullopt;  // the dataset folder's pinned manifest (docs/data.md)
};

struct Batching {
  std::int64_t batch_tokens = 0;
  std::int64_t sequence_length = 0;
  // Rows per forward and backward, the same for every arm (issue 18; a data-parallel rank with fewer
  // rows takes all of its rows at once); nullopt only in parameters
  // recorded before the field existed, which ran the trainer's automatic rule.
  std::optional<std::uint64_t> micro_batch_rows;
  // "none": every saved activation is kept (the only policy the trainer implements); nullopt as above.
  std::optional<std::string> activation_checkpointing;

  // micro_batch_rows for train::LoopConfig (0: the automatic rule).
  std::int64_t trainer_micro_batch_rows() const { return static_cast<std::int64_t>(micro_batch_rows.value_or(0)); }
};

struct TokenSchedule : Batching {
  std::int64_t token_budget = 0;  // training tokens of a run, trained exactly to this
  std::int64_t eval_interval_tokens = 0;
  std::int64_t validation_tokens = 0;
};

struct OptimizerBlock {
  nlohmann::json optimizer;  // validated by the schema; consumed by the trainer as is
};

struct Bootstrap {
  double confidence = 0;
  int bootstrap_resamples = 0;
  std::uint64_t bootstrap_seed = 0;
};

// "seeds": the predeclared seeds (integers, at least one).
void declare_seeds(Fields<Seeds>& fields, const std::string& doc);

struct ModelShapeWording {
  std::string n_layers;
  std::string d_model = "residual width";
  std::string n_heads = "attention heads";
  std::string head_dim = "per-head width";
  int min_layers = 1;
  int min_heads = 1;
};
// vocab_size, d_model, n_layers, n_heads, head_dim (inside the module's "model" object).
void declare_model_shape(Fields<ModelShape>& fields, const ModelShapeWording& wording);

// The shape, then "ffn_hidden" (its wording is ffn_doc).
void declare_dense_model(Fields<DenseModel>& fields, const ModelShapeWording& wording, const std::string& ffn_doc);

struct DataWording {
  std::string object = "corpus, tokenizer and example order";
  std::string dataset = "training/validation corpus id the data loader resolves (pinned with the freeze)";
  std::string tokenizer = "tokenizer id, the same for every arm";
  std::string order_seed = "seeds the example order, identical for every arm and seed";
  std::string manifest_sha256 =
      "SHA-256 of the dataset folder's manifest.json (`k3lab data manifest`); a run "
      "refuses a folder that differs; null or absent: not pinned yet (a run reading a folder "
      "refuses)";
};
// "data": {dataset, tokenizer, order_seed, manifest_sha256}.
void declare_data(Fields<DataSource>& fields, const DataWording& wording);

struct BatchingWording {
  std::string batch_tokens = "tokens per optimizer step";
  std::string sequence_length = "training window in tokens";
  std::string micro_batch_rows =
      "rows per forward and backward (gradients accumulate over the step's rows), the same for every arm; "
      "must divide batch_tokens / sequence_length; `k3lab plan` prints each arm's memory at it";
};
void declare_batching(Fields<Batching>& fields, const BatchingWording& wording);

struct EvaluationWording {
  std::string eval_interval_tokens = "checkpoint and evaluate every this many training tokens";
  std::string validation_tokens = "held-out tokens scored at every checkpoint";
};
// eval_interval_tokens, validation_tokens.
void declare_evaluation(Fields<TokenSchedule>& fields, const EvaluationWording& wording);

// token_budget (its wording is the doc).
void declare_token_budget(Fields<TokenSchedule>& fields, const std::string& doc);

struct TokenScheduleWording {
  std::string token_budget = "training tokens of every valid run (trained exactly to this)";
  BatchingWording batching = {};
  EvaluationWording evaluation = {};
};
// token_budget, batch_tokens, sequence_length, eval_interval_tokens, validation_tokens.
void declare_token_schedule(Fields<TokenSchedule>& fields, const TokenScheduleWording& wording);

struct OptimizerWording {
  std::string object = "the one optimizer configuration every arm uses";
  std::string name = "optimizer of every arm";
  std::string learning_rate = "peak learning rate (one predeclared configuration for every arm)";
  std::string decay = "learning-rate decay after warmup";
  bool warmup_fraction = true;  // false when warmup is counted in updates elsewhere
};
// "optimizer": AdamW {name, learning_rate, weight_decay, beta1, beta2, [warmup_fraction], decay}.
void declare_optimizer(Fields<OptimizerBlock>& fields, const OptimizerWording& wording);

struct BootstrapWording {
  std::string confidence = "two-sided confidence of the paired bootstrap intervals";
  std::string resamples = "resamples of the paired (by seed) bootstrap";
};
// confidence, bootstrap_resamples, bootstrap_seed (inside the module's decision or analysis object).
void declare_bootstrap(Fields<Bootstrap>& fields, const BootstrapWording& wording);

// ---- Rules across fields.

// Every seed distinct; with `paired`, at least two (the decision rule is a paired bootstrap over them).
void check_seeds(const std::vector<std::uint64_t>& seeds, const std::string& path, bool paired, Issues& issues);
// batch_tokens is whole sequences.
void check_batching(const Batching& batching, Issues& issues);
// Whole sequences per batch and per validation, whole steps per evaluation interval, and a token
// budget of whole intervals so the last evaluation falls exactly on it.
void check_token_schedule(const TokenSchedule& schedule, Issues& issues);
// Another budget (e.g. a pilot budget) of whole evaluation intervals.
void check_whole_intervals(std::int64_t budget, const std::string& path, const TokenSchedule& schedule, Issues& issues);
// Another sampling interval: whole steps that divide the token budget, so the last sample falls on it.
void check_sampling_interval(std::int64_t interval, const std::string& path, const TokenSchedule& schedule,
                             Issues& issues);

// Approximate trainable parameters of a dense decoder: tied embedding, attention (q, k, v, o) and three
// FFN matrices per layer; norms not counted.
double approximate_parameters(const DenseModel& model);

}  // namespace k3lab::experiments::training
