#include "situ_qat/parameters.hpp"

#include <memory>
#include <set>
#include <stdexcept>

namespace k3lab::experiments::situ_qat {
namespace {

std::shared_ptr<core::Schema> model_schema() {
  auto s = std::make_shared<core::Schema>();
  s->integer("vocab_size", "embedding rows (tokenizer vocabulary, padded)").at_least(2);
  s->integer("d_model", "residual width; a multiple of the MX block size").at_least(1);
  s->integer("n_layers", "decoder layers").at_least(1);
  s->integer("n_heads", "attention heads").at_least(1);
  s->integer("head_dim", "per-head width").at_least(1);
  s->integer("ffn_hidden", "gated FFN hidden width, the same in both arms; a multiple of the MX block size")
      .at_least(1);
  return s;
}

std::shared_ptr<core::Schema> situ_schema() {
  auto s = std::make_shared<core::Schema>();
  s->number("beta1", "SiTU-GLU gate cap: beta1 * tanh(z / beta1) (K3 released value 4)").above(0);
  s->number("beta2", "SiTU-GLU up-branch cap: beta2 * tanh(z / beta2) (K3 released value 25)").above(0);
  return s;
}

std::shared_ptr<core::Schema> quantization_schema() {
  auto s = std::make_shared<core::Schema>();
  s->string("weight_format", "fake-quantized format of the FFN weights").one_of({"mxfp4-e2m1"});
  s->string("activation_format", "fake-quantized format of the FFN input activations").one_of({"mxfp8-e4m3", "mxfp8-e5m2"});
  s->integer("block_size", "elements sharing one E8M0 scale, along the reduction dimension (OCP MX: 32)").at_least(1);
  s->string("scale_rounding", "shared-exponent rule: floor (OCP spec) or rceil (never clips)").one_of({"floor", "rceil"});
  s->string("element_rounding", "element rounding").one_of({"nearest-even", "nearest-away"});
  return s;
}

std::shared_ptr<core::Schema> data_schema() {
  auto s = std::make_shared<core::Schema>();
  s->string("dataset", "training/validation corpus id the data loader resolves (pinned with the freeze)");
  s->string("tokenizer", "tokenizer id, the same for both arms");
  s->integer("order_seed", "seeds the example order, identical for both arms and every seed").at_least(0);
  return s;
}

std::shared_ptr<core::Schema> histogram_schema() {
  auto s = std::make_shared<core::Schema>();
  s->integer("interval_tokens", "sample activation histograms every this many training tokens").at_least(1);
  s->integer("sample_tokens", "tokens whose FFN activations are recorded at each sample").at_least(1);
  s->integer("bins", "histogram bins (log-magnitude)").at_least(2);
  return s;
}

std::shared_ptr<core::Schema> loss_spike_schema() {
  auto s = std::make_shared<core::Schema>();
  s->integer("window_updates", "trailing window of training losses a spike is measured against").at_least(2);
  s->number("threshold_sigma", "a spike is a loss above the trailing mean by more than this many trailing stds")
      .above(0);
  return s;
}

std::shared_ptr<core::Schema> optimizer_schema() {
  auto s = std::make_shared<core::Schema>();
  s->string("name", "optimizer of both arms").one_of({"adamw"});
  s->number("learning_rate", "peak learning rate (one predeclared configuration for both arms)").above(0);
  s->number("weight_decay", "decoupled weight decay").at_least(0);
  s->number("beta1", "AdamW beta1").at_least(0).at_most(0.9999);
  s->number("beta2", "AdamW beta2").at_least(0).at_most(0.9999);
  s->number("warmup_fraction", "linear warmup as a fraction of the token budget").at_least(0).at_most(1);
  s->string("decay", "learning-rate decay after warmup").one_of({"cosine", "linear", "constant"});
  return s;
}

std::shared_ptr<core::Schema> analysis_schema() {
  auto s = std::make_shared<core::Schema>();
  s->number("confidence", "two-sided confidence of the paired bootstrap intervals").above(0).at_most(0.999);
  s->integer("bootstrap_resamples", "resamples of the paired (by seed) bootstrap").at_least(100);
  s->integer("bootstrap_seed", "seed of the bootstrap draws").at_least(0);
  return s;
}

core::Schema make_schema() {
  core::Schema s;
  s.array_of("seeds", core::FieldType::Integer, "predeclared seeds, paired across the two arms").at_least(0).non_empty();
  s.object("model", model_schema(), "shape shared by both arms");
  s.object("situ", situ_schema(), "SiTU-GLU caps, frozen before training and never changed after seeing tails");
  s.object("quantization", quantization_schema(), "the one QAT setup both arms train under");
  s.object("data", data_schema(), "corpus, tokenizer and example order");
  s.integer("token_budget", "training tokens of every valid run (trained exactly to this)").at_least(1);
  s.integer("batch_tokens", "tokens per optimizer step").at_least(1);
  s.integer("sequence_length", "training window in tokens").at_least(1);
  s.integer("eval_interval_tokens", "evaluate validation loss every this many training tokens").at_least(1);
  s.integer("validation_tokens", "held-out tokens scored at every evaluation").at_least(1);
  s.object("activation_histograms", histogram_schema(), "activation histograms at fixed checkpoints");
  s.object("loss_spike", loss_spike_schema(), "the predeclared definition of a loss spike");
  s.number("saturation_tanh_level", "a pre-activation counts as saturated when |tanh(z / beta)| reaches this level")
      .above(0)
      .at_most(1);
  s.object("optimizer", optimizer_schema(), "the one optimizer configuration both arms use");
  s.object("analysis", analysis_schema(), "predeclared analysis settings");
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
    const auto block = j.at("quantization").at("block_size").get<std::int64_t>();
    for (const char* field : {"d_model", "ffn_hidden"}) {
      if (j.at("model").at(field).get<std::int64_t>() % block != 0) {
        issues.push_back({std::string("parameters.model.") + field,
                          "must be a multiple of quantization.block_size (" + std::to_string(block) +
                              "): MX blocks run along the reduction dimension"});
      }
    }
    const auto budget = j.at("token_budget").get<std::int64_t>();
    const auto batch = j.at("batch_tokens").get<std::int64_t>();
    const auto seq = j.at("sequence_length").get<std::int64_t>();
    if (batch % seq != 0) {
      issues.push_back({"parameters.batch_tokens", "must be whole sequences: a multiple of sequence_length"});
    }
    auto check_interval = [&](const std::string& path, std::int64_t interval) {
      if (interval % batch != 0 || budget % interval != 0) {
        issues.push_back({path, "must be a whole number of steps (a multiple of batch_tokens) that divides "
                                "token_budget, so the last sample falls exactly on the budget"});
      }
    };
    check_interval("parameters.eval_interval_tokens", j.at("eval_interval_tokens").get<std::int64_t>());
    check_interval("parameters.activation_histograms.interval_tokens",
                   j.at("activation_histograms").at("interval_tokens").get<std::int64_t>());
    if (j.at("validation_tokens").get<std::int64_t>() % seq != 0) {
      issues.push_back({"parameters.validation_tokens", "must be whole sequences: a multiple of sequence_length"});
    }
  }
  if (!issues.empty()) {
    std::string message = "situ-qat parameters are invalid:";
    for (const auto& issue : issues) message += "\n  " + issue.path + ": " + issue.message;
    throw std::invalid_argument(message);
  }
  Parameters p;
  p.seeds = j.at("seeds").get<std::vector<std::uint64_t>>();
  const auto& m = j.at("model");
  p.model = {m.at("vocab_size").get<std::int64_t>(), m.at("d_model").get<std::int64_t>(), m.at("n_layers").get<int>(),
             m.at("n_heads").get<int>(), m.at("head_dim").get<std::int64_t>(), m.at("ffn_hidden").get<std::int64_t>()};
  p.beta1 = j.at("situ").at("beta1").get<double>();
  p.beta2 = j.at("situ").at("beta2").get<double>();
  const auto& q = j.at("quantization");
  p.quantization = {q.at("weight_format").get<std::string>(), q.at("activation_format").get<std::string>(),
                    q.at("block_size").get<int>(), q.at("scale_rounding").get<std::string>(),
                    q.at("element_rounding").get<std::string>()};
  p.dataset = j.at("data").at("dataset").get<std::string>();
  p.tokenizer = j.at("data").at("tokenizer").get<std::string>();
  p.data_order_seed = j.at("data").at("order_seed").get<std::uint64_t>();
  p.token_budget = j.at("token_budget").get<std::int64_t>();
  p.batch_tokens = j.at("batch_tokens").get<std::int64_t>();
  p.sequence_length = j.at("sequence_length").get<std::int64_t>();
  p.eval_interval_tokens = j.at("eval_interval_tokens").get<std::int64_t>();
  p.validation_tokens = j.at("validation_tokens").get<std::int64_t>();
  const auto& h = j.at("activation_histograms");
  p.histogram_interval_tokens = h.at("interval_tokens").get<std::int64_t>();
  p.histogram_sample_tokens = h.at("sample_tokens").get<std::int64_t>();
  p.histogram_bins = h.at("bins").get<int>();
  p.loss_spike_window_updates = j.at("loss_spike").at("window_updates").get<int>();
  p.loss_spike_threshold_sigma = j.at("loss_spike").at("threshold_sigma").get<double>();
  p.saturation_tanh_level = j.at("saturation_tanh_level").get<double>();
  p.optimizer = j.at("optimizer");
  const auto& a = j.at("analysis");
  p.confidence = a.at("confidence").get<double>();
  p.bootstrap_resamples = a.at("bootstrap_resamples").get<int>();
  p.bootstrap_seed = a.at("bootstrap_seed").get<std::uint64_t>();
  return p;
}

}  // namespace k3lab::experiments::situ_qat
