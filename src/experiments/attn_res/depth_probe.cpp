#include "attn_res/depth_probe.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>

#include <torch/torch.h>

#include "attn_res/depth_statistics.hpp"
#include "k3lab/models/residual.hpp"
#include "k3lab/train/data_order.hpp"

namespace k3lab::experiments::attn_res {
namespace {

// Above this the probe's weights do not reproduce AttnResidualImpl::mix (float32 sums of O(1) values).
constexpr double kMixTolerance = 1e-3;

struct DepthRecord {
  std::vector<AggregationStats> aggregations;  // consumer 0 .. 2L in execution order
  double max_mix_error = 0;
};

// Mirrors the source bookkeeping of the model's Full/Block stream (models/residual.cpp) on detached
// copies, while the model's own stream computes the forward pass.
class RecordingStream final : public models::ResidualStream {
 public:
  RecordingStream(std::unique_ptr<models::ResidualStream> inner, const models::AttnResidualImpl& path,
                  const torch::Tensor& embedding, DepthRecord& record)
      : inner_(std::move(inner)), path_(path), record_(record) {
    if (full()) sources_.push_back(embedding.detach());
    else partial_ = embedding.detach();
  }

  torch::Tensor input(std::int64_t sublayer) override {
    auto h = inner_->input(sublayer);
    observe(sublayer, h);
    const bool mixer = sublayer % 2 == 0;
    if (!full() && mixer && (sublayer / 2) % path_.block_size() == 0) {
      blocks_.push_back(partial_);
      partial_ = torch::Tensor();
    }
    return h;
  }

  void add(std::int64_t sublayer, const torch::Tensor& output) override {
    inner_->add(sublayer, output);
    const auto y = output.detach();
    if (full()) sources_.push_back(y);
    else partial_ = partial_.defined() ? partial_ + y : y;
  }

  torch::Tensor output() override {
    auto h = inner_->output();
    observe(2 * path_.num_layers(), h);
    return h;
  }

 private:
  bool full() const { return path_.mode() == models::ResidualMode::FullAttnRes; }

  std::vector<torch::Tensor> current() const {
    if (full()) return sources_;
    auto all = blocks_;
    if (partial_.defined()) all.push_back(partial_);
    return all;
  }

  void observe(std::int64_t consumer, const torch::Tensor& h) {
    torch::NoGradGuard no_grad;
    const auto sources = current();
    const auto w = depth_weights(path_.queries[consumer].detach(), path_.key_gains[consumer].detach(), sources,
                                 kAttnResEps);                                        // (N, B, T)
    const auto values = torch::stack(sources, 0).to(w.scalar_type());                 // (N, B, T, D)
    const auto mixed = (w.unsqueeze(-1) * values).sum(0);                             // (B, T, D)
    const double error = (mixed - h.detach().to(w.scalar_type())).abs().max().item<double>();
    record_.max_mix_error = std::max(record_.max_mix_error, error);
    record_.aggregations.push_back(aggregation_stats(w));
  }

  std::unique_ptr<models::ResidualStream> inner_;
  const models::AttnResidualImpl& path_;
  DepthRecord& record_;
  std::vector<torch::Tensor> sources_;  // Full: embedding, f_0, f_1, ...
  std::vector<torch::Tensor> blocks_;   // Block: b_0 = embedding, completed block sums
  torch::Tensor partial_;               // Block: running sum of the current block
};

class RecordingPath final : public models::ResidualPathImpl {
 public:
  RecordingPath(std::shared_ptr<models::ResidualPathImpl> inner, const models::AttnResidualImpl& path,
                DepthRecord& record)
      : inner_(std::move(inner)), path_(path), record_(record) {}
  std::unique_ptr<models::ResidualStream> start(const torch::Tensor& embedding) override {
    return std::make_unique<RecordingStream>(inner_->start(embedding), path_, embedding, record_);
  }
  models::ResidualMode mode() const override { return inner_->mode(); }

 private:
  std::shared_ptr<models::ResidualPathImpl> inner_;
  const models::AttnResidualImpl& path_;
  DepthRecord& record_;
};

// Puts the recording path in place for one forward and the model's own path back afterwards.
class PathSwap {
 public:
  PathSwap(models::DecoderLMImpl& model, std::shared_ptr<models::ResidualPathImpl> replacement)
      : model_(model), original_(model.residual) {
    model_.residual = std::move(replacement);
  }
  ~PathSwap() { model_.residual = original_; }
  PathSwap(const PathSwap&) = delete;
  PathSwap& operator=(const PathSwap&) = delete;

 private:
  models::DecoderLMImpl& model_;
  std::shared_ptr<models::ResidualPathImpl> original_;
};

torch::Tensor token_tensor(const std::vector<std::int64_t>& values, std::int64_t rows, std::int64_t cols,
                           const torch::Device& device) {
  return torch::tensor(values, torch::kInt64).reshape({rows, cols}).to(device);  // (rows, cols)
}

// "blocks.3.attention.q_proj.weight" -> sublayer 6; "blocks.3.ffn.up_proj.weight" -> 7; else -1.
std::int64_t sublayer_of(const std::string& name) {
  if (name.rfind("blocks.", 0) != 0) return -1;
  const auto dot = name.find('.', 7);
  const auto layer = std::stoll(name.substr(7, dot - 7));
  const auto part = name.substr(dot + 1, name.find('.', dot + 1) - dot - 1);
  return 2 * layer + ((part == "ffn" || part == "ffn_norm") ? 1 : 0);
}

}  // namespace

std::int64_t probe_rows(const Parameters& p, std::int64_t micro_batch_rows) {
  const std::int64_t available = p.validation_tokens / p.sequence_length;
  return std::clamp<std::int64_t>(micro_batch_rows, 1, std::max<std::int64_t>(1, available));
}

DepthProbe::DepthProbe(const Parameters& p, const train::Dataset& data, std::int64_t micro_batch_rows)
    : rows_(probe_rows(p, micro_batch_rows)), sequence_length_(p.sequence_length) {
  const auto batch = train::validation_batch(data.validation, p.sequence_length, 0, rows_, data.vocab_size);
  inputs_ = batch.inputs;
  targets_ = batch.targets;
}

nlohmann::json DepthProbe::evaluate(models::DecoderLM& model, const torch::Device& device) const {
  torch::AutoGradMode grad_mode(true);
  const auto inputs = token_tensor(inputs_, rows_, sequence_length_, device);
  const auto targets = token_tensor(targets_, rows_, sequence_length_, device);
  const auto L = model->config().num_layers();
  auto* attn = dynamic_cast<models::AttnResidualImpl*>(model->residual.get());

  DepthRecord record;
  torch::Tensor logits;  // (rows, T, V)
  if (attn) {
    PathSwap swap(*model, std::make_shared<RecordingPath>(model->residual, *attn, record));
    logits = model->forward(inputs);
  } else {
    logits = model->forward(inputs);
  }
  const auto loss = torch::nn::functional::cross_entropy(logits.reshape({-1, logits.size(-1)}).to(torch::kFloat32),
                                                         targets.reshape({-1}));

  std::vector<std::string> names;
  std::vector<torch::Tensor> parameters;
  for (const auto& item : model->named_parameters(true)) {
    names.push_back(item.key());
    parameters.push_back(item.value());
  }
  const auto grads = torch::autograd::grad({loss}, parameters, {}, false, false, /*allow_unused=*/true);
  std::vector<double> sublayer_sq(static_cast<std::size_t>(2 * L), 0.0);
  std::map<std::string, double> other_sq;  // embed, final_norm, residual, lm_head
  for (std::size_t i = 0; i < names.size(); ++i) {
    const double sq = grads[i].defined() ? grads[i].to(torch::kDouble).pow(2).sum().item<double>() : 0.0;
    const auto s = sublayer_of(names[i]);
    if (s >= 0) sublayer_sq.at(static_cast<std::size_t>(s)) += sq;
    else other_sq[names[i].substr(0, names[i].find('.'))] += sq;
  }
  nlohmann::json sublayers = nlohmann::json::array();
  for (std::int64_t s = 0; s < 2 * L; ++s) {
    sublayers.push_back({{"sublayer", s},
                         {"layer", s / 2},
                         {"kind", s % 2 == 0 ? "attention" : "mlp"},
                         {"grad_norm", std::sqrt(sublayer_sq[static_cast<std::size_t>(s)])}});
  }
  nlohmann::json others = nlohmann::json::object();
  for (const auto& [group, sq] : other_sq) others[group] = std::sqrt(sq);

  nlohmann::json depth = nullptr;
  if (attn) {
    if (record.max_mix_error > kMixTolerance) {
      throw std::logic_error("attn-res depth probe: its weights reproduce AttnResidualImpl::mix only to " +
                             std::to_string(record.max_mix_error) + "; update depth_weights/kAttnResEps to "
                             "match models/residual.cpp");
    }
    nlohmann::json aggregations = nlohmann::json::array();
    for (std::size_t c = 0; c < record.aggregations.size(); ++c) {
      auto a = record.aggregations[c].to_json();
      a["consumer"] = c;
      aggregations.push_back(std::move(a));
    }
    depth = {{"aggregations", std::move(aggregations)},
             {"summary", summarise_depth(record.aggregations).to_json()},
             {"max_mix_reconstruction_error", record.max_mix_error}};
  }
  return {{"probe_batch", {{"first_row", 0}, {"rows", rows_}, {"tokens", rows_ * sequence_length_}}},
          {"probe_loss", loss.item<double>()},
          {"gradient_norm_by_depth",
           {{"method", "dedicated backward of the mean loss on the probe batch (unclipped, .grad untouched)"},
            {"sublayers", std::move(sublayers)},
            {"other", std::move(others)}}},
          {"depth_attention", std::move(depth)}};
}

}  // namespace k3lab::experiments::attn_res
