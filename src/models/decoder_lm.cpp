#include <k3lab/models/decoder_lm.hpp>

#include <k3lab/models/init.hpp>

#include <torch/torch.h>

#include <stdexcept>
#include <string>

namespace k3lab::models {

std::int64_t InferenceState::bytes() const {
  std::int64_t total = 0;
  for (const auto& layer : layers) total += layer.bytes();
  return total;
}

DecoderBlockImpl::DecoderBlockImpl(const ModelConfig& c, MixerKind kind_) : kind(kind_) {
  const auto D = c.hidden_size;
  mixer_norm = register_module("mixer_norm", RMSNorm(D, c.norm_eps));
  switch (kind) {
    case MixerKind::Kda: {
      KdaLayerOptions o;
      o.hidden_size = D;
      o.num_heads = c.kda.num_heads;
      o.head_dim = c.kda.head_dim;
      o.conv_kernel = c.kda.conv_kernel;
      o.gate_lower_bound = c.kda.gate_lower_bound;
      o.gate_rank = c.kda.gate_rank;
      o.full_rank_output_gate = c.kda.full_rank_output_gate;
      o.norm_eps = c.norm_eps;
      o.chunk_size = c.kda.chunk_size;
      kda = register_module("kda", KdaLayer(o));
      break;
    }
    case MixerKind::Mla: {
      MlaOptions o;
      o.hidden_size = D;
      o.num_heads = c.mla.num_heads;
      o.q_lora_rank = c.mla.q_lora_rank;
      o.kv_lora_rank = c.mla.kv_lora_rank;
      o.qk_nope_head_dim = c.mla.qk_nope_head_dim;
      o.qk_rope_head_dim = c.mla.qk_rope_head_dim;
      o.v_head_dim = c.mla.v_head_dim;
      o.output_gate = c.mla.output_gate;
      mla = register_module("mla", Mla(o));
      break;
    }
    case MixerKind::Attention: {
      AttentionOptions o;
      o.hidden_size = D;
      o.num_heads = c.attention.num_heads;
      o.head_dim = c.attention.head_dim;
      o.rope_theta = c.attention.rope_theta;
      attention = register_module("attention", CausalSelfAttention(o));
      break;
    }
  }
  ffn_norm = register_module("ffn_norm", RMSNorm(D, c.norm_eps));
  FeedForwardOptions f;
  f.hidden_size = D;
  f.intermediate_size = c.ffn.intermediate_size;
  f.kind = c.ffn.kind;
  f.situ_beta_gate = c.ffn.situ_beta_gate;
  f.situ_beta_up = c.ffn.situ_beta_up;
  ffn = register_module("ffn", FeedForward(f));
}

torch::Tensor DecoderBlockImpl::mix(const torch::Tensor& h) {
  const auto x = mixer_norm(h);
  switch (kind) {
    case MixerKind::Kda: return kda(x);
    case MixerKind::Mla: return mla(x);
    case MixerKind::Attention: return attention(x);
  }
  throw std::logic_error("DecoderBlock: unknown mixer kind");
}

torch::Tensor DecoderBlockImpl::mix_with_cache(const torch::Tensor& h, LayerCache& cache) {
  const auto x = mixer_norm(h);
  switch (kind) {
    case MixerKind::Kda: return kda->forward_with_state(x, cache.kda);
    case MixerKind::Mla: return mla->forward_absorbed(x, cache.mla);
    case MixerKind::Attention: return attention->forward_with_cache(x, cache.attention);
  }
  throw std::logic_error("DecoderBlock: unknown mixer kind");
}

torch::Tensor DecoderBlockImpl::feed_forward(const torch::Tensor& h) { return ffn(ffn_norm(h)); }

DecoderLMImpl::DecoderLMImpl(ModelConfig config, std::uint64_t init_seed) : config_(std::move(config)) {
  config_.validate();
  const auto D = config_.hidden_size, V = config_.vocab_size;
  embed = register_module("embed", torch::nn::Embedding(V, D));
  blocks = register_module("blocks", torch::nn::ModuleList());
  for (auto kind : config_.mixers()) blocks->push_back(DecoderBlock(config_, kind));
  final_norm = register_module("final_norm", RMSNorm(D, config_.norm_eps));
  if (!config_.tie_embeddings) {
    lm_head = register_module("lm_head", torch::nn::Linear(torch::nn::LinearOptions(D, V).bias(false)));
  }
  residual = register_module("residual", make_residual_path(config_));
  if (config_.ffn.quant.enabled()) {
    set_ffn_fake_quantizer(std::make_shared<MxFakeQuantizer>(
        config_.ffn.quant.weights, config_.ffn.quant.activations, config_.ffn.quant.block_size));
  }
  InitOptions init;
  init.num_layers = config_.num_layers();
  initialize_parameters(*this, init_seed, init);
}

void DecoderLMImpl::set_ffn_fake_quantizer(const std::shared_ptr<const FakeQuantizer>& quantizer) {
  for (const auto& block : *blocks) block->as<DecoderBlockImpl>()->ffn->set_fake_quantizer(quantizer);
}

InferenceState DecoderLMImpl::new_inference_state() const {
  InferenceState state;
  state.layers.resize(static_cast<std::size_t>(config_.num_layers()));
  return state;
}

torch::Tensor DecoderLMImpl::forward(const torch::Tensor& tokens) { return run(tokens, nullptr); }

torch::Tensor DecoderLMImpl::forward_with_state(const torch::Tensor& tokens, InferenceState& state) {
  if (state.layers.size() != static_cast<std::size_t>(config_.num_layers())) {
    throw std::invalid_argument("DecoderLM: inference state has " + std::to_string(state.layers.size()) +
                                " layers, the model " + std::to_string(config_.num_layers()) +
                                "; create it with new_inference_state()");
  }
  return run(tokens, &state);
}

torch::Tensor DecoderLMImpl::run(const torch::Tensor& tokens, InferenceState* state) {
  if (!tokens.defined() || tokens.dim() != 2 || tokens.scalar_type() != torch::kLong) {
    throw std::invalid_argument("DecoderLM: tokens must be a (B, T) int64 tensor");
  }
  if (tokens.numel() > 0) {
    const auto lo = tokens.min().item<std::int64_t>(), hi = tokens.max().item<std::int64_t>();
    if (lo < 0 || hi >= config_.vocab_size) {
      throw std::invalid_argument("DecoderLM: token ids must lie in [0, " + std::to_string(config_.vocab_size) +
                                  "), got [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    }
  }
  auto stream = residual->start(embed(tokens));  // (B, T, D)
  std::int64_t sublayer = 0;
  for (std::size_t l = 0; l < blocks->size(); ++l) {
    auto* block = blocks[l]->as<DecoderBlockImpl>();
    const auto x = stream->input(sublayer);
    stream->add(sublayer, state ? block->mix_with_cache(x, state->layers[l]) : block->mix(x));
    ++sublayer;
    stream->add(sublayer, block->feed_forward(stream->input(sublayer)));
    ++sublayer;
  }
  const auto h = final_norm(stream->output());
  if (state) state->position += tokens.size(1);
  return config_.tie_embeddings ? torch::linear(h, embed->weight) : lm_head(h);  // (B, T, V)
}

std::int64_t parameter_count(torch::nn::Module& module) {
  std::int64_t total = 0;
  for (const auto& p : module.parameters()) total += p.numel();
  return total;
}

}  // namespace k3lab::models
