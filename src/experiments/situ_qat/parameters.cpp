#include "situ_qat/parameters.hpp"

namespace k3lab::experiments::situ_qat {
namespace {

using training::Fields;

void declare_model(Fields<Model>& m) {
  training::declare_dense_model(m, {.n_layers = "decoder layers", .d_model = "residual width; a multiple of the MX block size"},
                                "gated FFN hidden width, the same in both arms; a multiple of the MX block size");
}

void declare_quantization(Fields<Quantization>& q) {
  q.string("weight_format", "fake-quantized format of the FFN weights", &Quantization::weight_format).one_of({"mxfp4-e2m1"});
  q.string("activation_format", "fake-quantized format of the FFN input activations", &Quantization::activation_format)
      .one_of({"mxfp8-e4m3", "mxfp8-e5m2"});
  q.integer("block_size", "elements sharing one E8M0 scale, along the reduction dimension (OCP MX: 32)",
            &Quantization::block_size)
      .at_least(1);
  q.string("scale_rounding", "shared-exponent rule: floor (OCP spec) or rceil (never clips)", &Quantization::scale_rounding)
      .one_of({"floor", "rceil"});
  q.string("element_rounding", "element rounding", &Quantization::element_rounding).one_of({"nearest-even", "nearest-away"});
}

void declare(Fields<Parameters>& f) {
  f.part(training::declare_seeds, "predeclared seeds, paired across the two arms");
  f.object("model", "shape shared by both arms", &Parameters::model, declare_model);
  f.group("situ", "SiTU-GLU caps, frozen before training and never changed after seeing tails", [](Fields<Parameters>& s) {
    s.number("beta1", "SiTU-GLU gate cap: beta1 * tanh(z / beta1) (K3 released value 4)", &Parameters::beta1).above(0);
    s.number("beta2", "SiTU-GLU up-branch cap: beta2 * tanh(z / beta2) (K3 released value 25)", &Parameters::beta2).above(0);
  });
  f.object("quantization", "the one QAT setup both arms train under", &Parameters::quantization, declare_quantization);
  f.part(training::declare_data, {.tokenizer = "tokenizer id, the same for both arms",
                                  .order_seed = "seeds the example order, identical for both arms and every seed"});
  f.part(training::declare_token_schedule,
         {.evaluation = {.eval_interval_tokens = "evaluate validation loss every this many training tokens",
                         .validation_tokens = "held-out tokens scored at every evaluation"}});
  f.group("activation_histograms", "activation histograms at fixed checkpoints", [](Fields<Parameters>& h) {
    h.integer("interval_tokens", "sample activation histograms every this many training tokens",
              &Parameters::histogram_interval_tokens)
        .at_least(1);
    h.integer("sample_tokens", "tokens whose FFN activations are recorded at each sample", &Parameters::histogram_sample_tokens)
        .at_least(1);
    h.integer("bins", "histogram bins (log-magnitude)", &Parameters::histogram_bins).at_least(2);
  });
  f.group("loss_spike", "the predeclared definition of a loss spike", [](Fields<Parameters>& s) {
    s.integer("window_updates", "trailing window of training losses a spike is measured against",
              &Parameters::loss_spike_window_updates)
        .at_least(2);
    s.number("threshold_sigma", "a spike is a loss above the trailing mean by more than this many trailing stds",
             &Parameters::loss_spike_threshold_sigma)
        .above(0);
  });
  f.part(training::declare_downstream, "the predeclared downstream suite, scored at at_tokens and at the budget (docs/downstream.md)");
  f.number("saturation_tanh_level", "a pre-activation counts as saturated when |tanh(z / beta)| reaches this level",
           &Parameters::saturation_tanh_level)
      .above(0)
      .at_most(1);
  f.part(training::declare_optimizer, {.object = "the one optimizer configuration both arms use",
                                       .name = "optimizer of both arms",
                                       .learning_rate = "peak learning rate (one predeclared configuration for both arms)"});
  f.group("analysis", "predeclared analysis settings",
          [](Fields<Parameters>& a) { a.part(training::declare_bootstrap, {}); });
}

void check(const Parameters& p, training::Issues& issues) {
  training::check_seeds(p.seeds, "parameters.seeds", true, issues);
  const auto block = p.quantization.block_size;
  for (const auto& [field, width] : {std::pair{"d_model", p.model.d_model}, std::pair{"ffn_hidden", p.model.ffn_hidden}}) {
    if (width % block != 0) {
      issues.push_back({std::string("parameters.model.") + field,
                        "must be a multiple of quantization.block_size (" + std::to_string(block) +
                            "): MX blocks run along the reduction dimension"});
    }
  }
  training::check_token_schedule(p, issues);
  training::check_downstream(p, p, p.model.vocab_size, p, issues);
  training::check_sampling_interval(p.histogram_interval_tokens, "parameters.activation_histograms.interval_tokens", p,
                                    issues);
}

}  // namespace

const training::ParameterSet<Parameters>& parameter_set() {
  return training::parameter_set_of<Parameters>("situ-qat", declare, check);
}

}  // namespace k3lab::experiments::situ_qat
