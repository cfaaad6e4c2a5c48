#include <k3lab/models/param_count.hpp>

#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

namespace k3lab::models {

std::int64_t ParameterBreakdown::total() const {
  return embedding + lm_head + norms + kda + mla + attention + ffn + residual;
}

std::int64_t kda_layer_parameters(const KdaConfig& c, std::int64_t D) {
  const std::int64_t H = c.num_heads, K = c.head_dim, HK = H * K;
  const std::int64_t rank = c.gate_rank > 0 ? c.gate_rank : K;
  const std::int64_t qkv = 3 * D * HK;
  const std::int64_t conv = 3 * HK * c.conv_kernel;
  const std::int64_t decay_gate = D * rank + rank * HK + H /* A_log */ + HK /* dt_bias */;
  const std::int64_t beta = D * H;
  const std::int64_t output_gate = c.full_rank_output_gate ? D * HK : D * rank + rank * HK + HK;
  const std::int64_t out = K /* gated norm */ + HK * D;
  return qkv + conv + decay_gate + beta + output_gate + out;
}

std::int64_t mla_layer_parameters(const MlaConfig& c, std::int64_t D) {
  const std::int64_t H = c.num_heads, qk = c.qk_nope_head_dim + c.qk_rope_head_dim;
  const std::int64_t query = c.q_lora_rank > 0 ? D * c.q_lora_rank + c.q_lora_rank + c.q_lora_rank * H * qk : D * H * qk;
  const std::int64_t kv = D * (c.kv_lora_rank + c.qk_rope_head_dim) + c.kv_lora_rank +
                          c.kv_lora_rank * H * (c.qk_nope_head_dim + c.v_head_dim);
  const std::int64_t gate = c.output_gate ? D * H * c.v_head_dim : 0;
  return query + kv + gate + H * c.v_head_dim * D;
}

std::int64_t attention_layer_parameters(const AttentionConfig& c, std::int64_t D) {
  return 4 * D * c.num_heads * c.head_dim;
}

std::int64_t ffn_layer_parameters(const FfnConfig& c, std::int64_t D) { return 3 * D * c.intermediate_size; }

ParameterBreakdown parameter_breakdown(const ModelConfig& config) {
  config.validate();
  const std::int64_t D = config.hidden_size;
  ParameterBreakdown b;
  b.embedding = config.vocab_size * D;
  b.lm_head = config.tie_embeddings ? 0 : config.vocab_size * D;
  b.norms = (2 * config.num_layers() + 1) * D;
  for (auto kind : config.mixers()) {
    switch (kind) {
      case MixerKind::Kda: b.kda += kda_layer_parameters(config.kda, D); break;
      case MixerKind::Mla: b.mla += mla_layer_parameters(config.mla, D); break;
      case MixerKind::Attention: b.attention += attention_layer_parameters(config.attention, D); break;
    }
  }
  b.ffn = config.num_layers() * ffn_layer_parameters(config.ffn, D);
  switch (config.residual.mode) {
    case ResidualMode::Standard: b.residual = 0; break;
    case ResidualMode::FullAttnRes:
    case ResidualMode::BlockAttnRes:
      // One pseudo-query and one key-norm gain per sublayer (2 per decoder layer) and the output.
      b.residual = 2 * (2 * config.num_layers() + 1) * D;
      break;
  }
  return b;
}

std::int64_t count_parameters(const ModelConfig& config) { return parameter_breakdown(config).total(); }

ModelConfig match_parameters(const ModelConfig& config, std::int64_t target, double tolerance, std::int64_t multiple) {
  if (target <= 0) throw std::invalid_argument("match_parameters: target must be positive");
  if (!(tolerance > 0.0)) throw std::invalid_argument("match_parameters: tolerance must be > 0");
  if (multiple <= 0) throw std::invalid_argument("match_parameters: multiple must be positive");
  // MX quantisation needs the width in whole blocks.
  const std::int64_t step = config.ffn.quant.enabled() ? std::lcm(multiple, config.ffn.quant.block_size) : multiple;

  ModelConfig probe = config;
  probe.ffn.intermediate_size = step;
  const std::int64_t at_one_step = count_parameters(probe);  // validates everything else
  const std::int64_t per_step = config.num_layers() * ffn_layer_parameters(probe.ffn, config.hidden_size);
  const std::int64_t base = at_one_step - per_step;  // everything but the feed-forwards
  if (base + per_step > target) {
    throw std::invalid_argument("match_parameters: the model without feed-forward width already has " +
                                std::to_string(base) + " parameters (plus " + std::to_string(per_step) +
                                " for the narrowest feed-forward), above the target " + std::to_string(target) +
                                "; reduce hidden_size, layers, heads or vocab_size");
  }
  const double ideal_steps = static_cast<double>(target - base) / static_cast<double>(per_step);
  std::int64_t best_steps = 1;
  double best_error = -1.0;
  for (auto steps : {static_cast<std::int64_t>(std::floor(ideal_steps)), static_cast<std::int64_t>(std::ceil(ideal_steps))}) {
    if (steps < 1) continue;
    const double error = std::abs(static_cast<double>(base + steps * per_step - target));
    if (best_error < 0.0 || error < best_error) {
      best_error = error;
      best_steps = steps;
    }
  }
  ModelConfig out = config;
  out.ffn.intermediate_size = best_steps * step;
  const std::int64_t total = count_parameters(out);
  const double relative = std::abs(static_cast<double>(total - target)) / static_cast<double>(target);
  if (relative > tolerance) {
    throw std::invalid_argument("match_parameters: the closest feed-forward width " +
                                std::to_string(out.ffn.intermediate_size) + " gives " + std::to_string(total) +
                                " parameters, " + std::to_string(relative * 100.0) + "% from the target " +
                                std::to_string(target) + " (tolerance " + std::to_string(tolerance * 100.0) +
                                "%); use a smaller width multiple or adjust another dimension");
  }
  return out;
}

}  // namespace k3lab::models
