#include "router_balance/moe_model.hpp"

#include "k3lab/models/init.hpp"

namespace k3lab::experiments::router_balance {

MoeOptions moe_options(const Parameters& p, Control control) {
  MoeOptions o;
  o.hidden_size = p.model.d_model;
  o.n_experts = p.model.n_experts;
  o.top_k = p.model.top_k;
  o.expert_hidden = p.model.expert_hidden;
  o.capacity = p.expert_capacity();
  o.control = control;
  o.aux_coefficient = p.aux_loss_coefficient;
  return o;
}

MoeLayerImpl::MoeLayerImpl(const Parameters& p, const MoeOptions& moe_opts) {
  mixer_norm = register_module("mixer_norm", models::RMSNorm(p.model.d_model));
  attention = register_module("attention", models::CausalSelfAttention(models::AttentionOptions{
                                               p.model.d_model, p.model.n_heads, p.model.head_dim, 10000.0}));
  ffn_norm = register_module("ffn_norm", models::RMSNorm(p.model.d_model));
  moe = register_module("moe", MoeBlock(moe_opts));
}

MoeLmImpl::MoeLmImpl(const Parameters& p, Control control, std::uint64_t init_seed) {
  embed = register_module("embed", torch::nn::Embedding(p.model.vocab_size, p.model.d_model));
  layers = register_module("layers", torch::nn::ModuleList());
  const auto opts = moe_options(p, control);
  for (int l = 0; l < p.model.n_layers; ++l) layers->push_back(MoeLayer(p, opts));
  final_norm = register_module("final_norm", models::RMSNorm(p.model.d_model));
  models::initialize_parameters(*this, init_seed, {0.02, p.model.n_layers});
}

LmOutput MoeLmImpl::forward(const torch::Tensor& tokens) {
  LmOutput out;
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

}  // namespace k3lab::experiments::router_balance
