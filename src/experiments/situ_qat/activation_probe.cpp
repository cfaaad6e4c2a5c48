#include "situ_qat/activation_probe.hpp"

#include <torch/torch.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "k3lab/models/activations.hpp"
#include "k3lab/models/fake_quant.hpp"
#include "k3lab/train/data_order.hpp"
#include "situ_qat/activation_stats.hpp"

namespace k3lab::experiments::situ_qat {
namespace {

// Wraps a layer's quantizer for one probe forward and keeps the activations it is handed. The FFN
// quantizes activations in a fixed order per forward (x for gate, x for up, hidden for down), so the
// call index tells them apart; weights pass through untouched.
class RecordingQuantizer final : public models::FakeQuantizer {
 public:
  explicit RecordingQuantizer(std::shared_ptr<const models::FakeQuantizer> inner) : inner_(std::move(inner)) {}
  torch::Tensor quantize_weight(const torch::Tensor& w) const override { return inner_->quantize_weight(w); }
  torch::Tensor quantize_activation(const torch::Tensor& x) const override {
    const auto slot = calls_++ % 3;
    if (slot == 0) inputs.push_back(x.detach());
    if (slot == 2) hidden.push_back(x.detach());
    return inner_->quantize_activation(x);
  }
  std::string name() const override { return "recording(" + inner_->name() + ")"; }

  mutable std::vector<torch::Tensor> inputs, hidden;  // one per forward

 private:
  std::shared_ptr<const models::FakeQuantizer> inner_;
  mutable std::int64_t calls_ = 0;
};

// Installs recorders on every FFN and puts the original quantizers back when it goes out of scope.
class Recorders {
 public:
  explicit Recorders(models::DecoderLM& model) {
    for (const auto& block : *model->blocks) {
      auto ffn = block->as<models::DecoderBlockImpl>()->ffn;
      auto original = ffn->fake_quantizer();
      if (!original) {
        throw std::logic_error("situ-qat: the activation probe needs the model's FFN quantizers; the arm model has none");
      }
      auto recorder = std::make_shared<RecordingQuantizer>(original);
      ffn->set_fake_quantizer(recorder);
      ffns_.push_back(ffn);
      originals_.push_back(original);
      recorders_.push_back(recorder);
    }
  }
  ~Recorders() {
    for (std::size_t i = 0; i < ffns_.size(); ++i) ffns_[i]->set_fake_quantizer(originals_[i]);
  }
  Recorders(const Recorders&) = delete;
  Recorders& operator=(const Recorders&) = delete;

  std::size_t layers() const { return ffns_.size(); }
  models::FeedForward& ffn(std::size_t layer) { return ffns_[layer]; }
  const models::FakeQuantizer& quantizer(std::size_t layer) const { return *originals_[layer]; }
  RecordingQuantizer& recorder(std::size_t layer) { return *recorders_[layer]; }

 private:
  std::vector<models::FeedForward> ffns_;
  std::vector<std::shared_ptr<const models::FakeQuantizer>> originals_;
  std::vector<std::shared_ptr<RecordingQuantizer>> recorders_;
};

torch::Tensor activation(const models::FeedForwardOptions& o, const torch::Tensor& gate, const torch::Tensor& up) {
  return o.kind == models::FfnKind::SwiGlu ? models::swiglu(gate, up)
                                           : models::situ_glu(gate, up, o.situ_beta_gate, o.situ_beta_up);
}

struct TailSet {
  TailSet(std::int64_t total, int bins) : pooled(total, 0.99), histogram(bins) {}
  TailQuantiles pooled;
  LogHistogram histogram;
  std::vector<TailQuantiles> per_layer;
  void add(std::size_t layer, const torch::Tensor& values) {
    pooled.add(values);
    histogram.add(values);
    per_layer.at(layer).add(values);
  }
  nlohmann::json to_json() const {
    nlohmann::json layers = nlohmann::json::array();
    for (const auto& t : per_layer) layers.push_back({{"p999", t.quantile(0.999)}, {"max", t.max()}});
    return {{"p99", pooled.quantile(0.99)}, {"p999", pooled.quantile(0.999)}, {"max", pooled.max()},
            {"values", pooled.seen()},      {"per_layer", layers},             {"histogram", histogram.to_json()}};
  }
};

}  // namespace

std::int64_t probe_rows(std::int64_t sample_rows, std::int64_t sequence_length) {
  return std::max<std::int64_t>(1, std::min(sample_rows, 16384 / std::max<std::int64_t>(1, sequence_length)));
}

ActivationProbe::ActivationProbe(const Parameters& p, const train::Dataset& data) : p_(p), data_(data) {
  if (p.histogram_sample_tokens % p.sequence_length != 0) {
    throw std::invalid_argument("situ-qat: activation_histograms.sample_tokens (" + std::to_string(p.histogram_sample_tokens) +
                                ") must be whole windows: a multiple of sequence_length (" +
                                std::to_string(p.sequence_length) + ")");
  }
  rows_ = p.histogram_sample_tokens / p.sequence_length;
  if (rows_ * p.sequence_length + 1 > data.validation.size()) {
    throw std::invalid_argument("situ-qat: activation_histograms.sample_tokens (" + std::to_string(p.histogram_sample_tokens) +
                                ") exceeds the validation text of " + data.id + " (" +
                                std::to_string(data.validation.size()) + " tokens); lower it or use a larger dataset");
  }
}

nlohmann::json ActivationProbe::measure(models::DecoderLM& model, const torch::Device& device) const {
  torch::NoGradGuard no_grad;
  Recorders recorders(model);
  const auto layers = recorders.layers();
  const auto D = p_.model.d_model, F = p_.model.ffn_hidden, T = p_.sequence_length;
  const auto tokens = rows_ * T;
  TailSet inputs(tokens * D * static_cast<std::int64_t>(layers), p_.histogram_bins);
  TailSet hidden(tokens * F * static_cast<std::int64_t>(layers), p_.histogram_bins);
  for (std::size_t l = 0; l < layers; ++l) {
    inputs.per_layer.emplace_back(tokens * D, 0.999);
    hidden.per_layer.emplace_back(tokens * F, 0.999);
  }
  RelativeError weight_error, input_error, hidden_error, output_error;
  SaturationCount gate_saturation, up_saturation;

  for (std::size_t l = 0; l < layers; ++l) {
    const auto& ffn = recorders.ffn(l);
    const auto& q = recorders.quantizer(l);
    for (const auto* w : {&ffn->gate_proj->weight, &ffn->up_proj->weight, &ffn->down_proj->weight}) {
      weight_error.add(*w, q.quantize_weight(*w));
    }
  }

  const auto micro = probe_rows(rows_, T);
  for (std::int64_t first = 0; first < rows_; first += micro) {
    const auto n = std::min(micro, rows_ - first);
    const auto batch = train::validation_batch(data_.validation, T, first, n, data_.vocab_size);
    const auto input_ids = torch::tensor(batch.inputs, torch::kLong).reshape({n, T}).to(device);  // (n, T)
    model->forward(input_ids);
    for (std::size_t l = 0; l < layers; ++l) {
      auto& rec = recorders.recorder(l);
      if (rec.inputs.size() != 1 || rec.hidden.size() != 1) {
        throw std::logic_error("situ-qat: layer " + std::to_string(l) + " FFN ran " + std::to_string(rec.inputs.size()) +
                               " times in one probe forward; the recorder expects exactly one");
      }
      const auto x = rec.inputs.front();   // (n, T, D)
      const auto h = rec.hidden.front();   // (n, T, F)
      rec.inputs.clear();
      rec.hidden.clear();
      const auto& ffn = recorders.ffn(l);
      const auto& q = recorders.quantizer(l);
      inputs.add(l, x);
      hidden.add(l, h);
      const auto xq = q.quantize_activation(x);
      input_error.add(x, xq);
      const auto hq = q.quantize_activation(h);
      hidden_error.add(h, hq);
      const auto gate_q = torch::linear(xq, q.quantize_weight(ffn->gate_proj->weight));  // (n, T, F)
      const auto up_q = torch::linear(xq, q.quantize_weight(ffn->up_proj->weight));      // (n, T, F)
      gate_saturation.add(gate_q, p_.beta1, p_.saturation_tanh_level);
      up_saturation.add(up_q, p_.beta2, p_.saturation_tanh_level);
      const auto out_q = torch::linear(hq, q.quantize_weight(ffn->down_proj->weight));  // (n, T, D)
      const auto& o = ffn->options();
      const auto h_full = activation(o, torch::linear(x, ffn->gate_proj->weight), torch::linear(x, ffn->up_proj->weight));
      const auto out_full = torch::linear(h_full, ffn->down_proj->weight);  // (n, T, D)
      output_error.add(out_full, out_q);
    }
  }
  const double saturated = static_cast<double>(gate_saturation.saturated() + up_saturation.saturated());
  const double total = static_cast<double>(gate_saturation.total() + up_saturation.total());
  return {{"sample_tokens", tokens},
          {"hidden", hidden.to_json()},
          {"inputs", inputs.to_json()},
          {"quantization_error",
           {{"weights", weight_error.value()},
            {"inputs", input_error.value()},
            {"hidden", hidden_error.value()},
            {"outputs", output_error.value()}}},
          {"saturation",
           {{"tanh_level", p_.saturation_tanh_level},
            {"beta1", p_.beta1},
            {"beta2", p_.beta2},
            {"gate", gate_saturation.fraction()},
            {"up", up_saturation.fraction()},
            {"both", total > 0 ? saturated / total : 0.0}}}};
}

}  // namespace k3lab::experiments::situ_qat
