#include "k3lab/models/moe_lm.hpp"

#include <stdexcept>
#include <string>

#include <torch/torch.h>

#include "k3lab/models/init.hpp"

namespace k3lab::models {

MoeLayerImpl::MoeLayerImpl(const AttentionOptions& attention_options, const MoeOptions& moe_options) {
  mixer_norm = register_module("mixer_norm", RMSNorm(attention_options.hidden_size));
  attention = register_module("attention", CausalSelfAttention(attention_options));
  ffn_norm = register_module("ffn_norm", RMSNorm(attention_options.hidden_size));
  moe = register_module("moe", MoeBlock(moe_options));
}

MoeLmImpl::MoeLmImpl(const MoeLmOptions& options, std::uint64_t init_seed) {
  if (options.moe.hidden_size != options.attention.hidden_size) {
    throw std::invalid_argument("MoeLm: moe.hidden_size (" + std::to_string(options.moe.hidden_size) +
                                ") must equal attention.hidden_size (" + std::to_string(options.attention.hidden_size) +
                                "), the model width");
  }
  embed = register_module("embed", torch::nn::Embedding(options.vocab_size, options.attention.hidden_size));
  layers = register_module("layers", torch::nn::ModuleList());
  for (int l = 0; l < options.n_layers; ++l) layers->push_back(MoeLayer(options.attention, options.moe));
  final_norm = register_module("final_norm", RMSNorm(options.attention.hidden_size));
  initialize_parameters(*this, init_seed, {0.02, options.n_layers});
}

MoeLmOutput MoeLmImpl::forward(const torch::Tensor& tokens) {
  MoeLmOutput out;
  auto h = embed(tokens);  // (B, T, D)
  for (const auto& module : *layers) {
    auto* layer = module->as<MoeLayerImpl>();
    h = h + layer->attention(layer->mixer_norm(h));
    auto moe = layer->moe(layer->ffn_norm(h));
    h = h + moe.output;
    if (moe.aux_loss.defined()) out.aux_loss = out.aux_loss.defined() ? out.aux_loss + moe.aux_loss : moe.aux_loss;
    out.routing.push_back(std::move(moe.stats));
  }
  out.logits = torch::matmul(final_norm(h), embed->weight.t());  // (B, T, V)
  return out;
}

void MoeLmImpl::update_biases(const std::vector<RoutingStats>& routing, double fixed_step) {
  for (std::size_t l = 0; l < routing.size(); ++l) layers[l]->as<MoeLayerImpl>()->moe->update_bias(routing[l], fixed_step);
}

std::vector<std::vector<double>> MoeLmImpl::biases() const {
  std::vector<std::vector<double>> out;
  for (const auto& module : *layers) {
    const auto b = module->as<MoeLayerImpl>()->moe->correction_bias.to(torch::kCPU, torch::kFloat64).contiguous();
    out.emplace_back(b.data_ptr<double>(), b.data_ptr<double>() + b.numel());
  }
  return out;
}

}  // namespace k3lab::models
