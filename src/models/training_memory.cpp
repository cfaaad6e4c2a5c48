// Each count below is "elements autograd keeps per token" for one layer, read off that layer's
// forward: an operator keeps the inputs its backward needs (linear and matmul their inputs, mul both
// factors, silu and pow their input, sigmoid, exp, tanh, rsqrt and softmax their result; add, cat,
// views and scalar products keep nothing), and a tensor nothing keeps is freed once the forward
// moves on. Reshapes of transposed tensors copy, and the copy is what is kept.
#include <k3lab/models/training_memory.hpp>

#include <k3lab/models/kda_sub_chunk.hpp>
#include <k3lab/models/param_count.hpp>

#include <algorithm>
#include <cstdio>

namespace k3lab::models {
namespace {

constexpr std::int64_t kFloat = 4;  // every arm trains in float32

// Per-token element counts, split by the kind of memory `plan` prints.
struct Saved {
  double general = 0;
  double attention_probabilities = 0;
  double kda_states = 0;
  double router = 0;
  double fixed_bytes = 0;  // per layer, not per token (masks, quantised weights)
  double mx_fixed_bytes = 0;
  // Per-token elements a layer allocates only for a moment, the largest layer's (not summed).
  double attention_backward = 0;
  double depth_mix_workspace = 0;

  Saved& operator+=(const Saved& o) {
    general += o.general;
    attention_probabilities += o.attention_probabilities;
    kda_states += o.kda_states;
    router += o.router;
    fixed_bytes += o.fixed_bytes;
    mx_fixed_bytes += o.mx_fixed_bytes;
    attention_backward = std::max(attention_backward, o.attention_backward);
    depth_mix_workspace = std::max(depth_mix_workspace, o.depth_mix_workspace);
    return *this;
  }
};

// RMSNorm (rms_norm.cpp): the squared input (LibTorch 1.13's mean keeps its input for backward), the
// per-row rsqrt, the normalised input and the output the next projection keeps. The input itself is
// the residual stream's, counted there.
double norm_elements(std::int64_t width) { return 3.0 * static_cast<double>(width) + 1.0; }

// Softmax attention (causal_attention.cpp): contiguous copies of q, k and v for the batched matmuls,
// the (T, T) probabilities per head, the output's (B, T, H * dv) copy for o_proj, and the bool mask.
Saved softmax_attention(std::int64_t heads, std::int64_t qk_dim, std::int64_t v_dim, std::int64_t T) {
  Saved s;
  s.general = static_cast<double>(heads * (2 * qk_dim + 2 * v_dim));
  s.attention_probabilities = static_cast<double>(heads * T);
  s.fixed_bytes = static_cast<double>(T * T);
  // Backward: the probabilities' gradient and softmax's result gradient beside the kept probabilities.
  s.attention_backward = 2.0 * static_cast<double>(heads * T);
  return s;
}

Saved attention_layer(const AttentionConfig& a, std::int64_t T) {
  return softmax_attention(a.num_heads, a.head_dim, a.head_dim, T);
}

// MLA (mla.cpp): the latent projection (kept whole by the norm's view of it), the latent norm, the
// attention above, and with the output gate the attention output and its sigmoid.
Saved mla_layer(const MlaConfig& m, std::int64_t T) {
  Saved s = softmax_attention(m.num_heads, m.qk_nope_head_dim + m.qk_rope_head_dim, m.v_head_dim, T);
  s.general += static_cast<double>(m.kv_lora_rank + m.qk_rope_head_dim) + norm_elements(m.kv_lora_rank);
  if (m.q_lora_rank > 0) s.general += static_cast<double>(m.q_lora_rank) + norm_elements(m.q_lora_rank);
  if (m.output_gate) s.general += static_cast<double>(2 * m.num_heads * m.v_head_dim);
  return s;
}

// One kda_intra_chunk_scores call, factorised form, in units of H*K: the two decayed operands of the
// diagonal sub-blocks and their exponentials (4), and for the off-diagonal rows the decayed rows
// ((nsub - 1) / nsub, twice) and the decayed earlier keys ((nsub - 1) / 2, twice).
double intra_scores_units(std::int64_t chunk) {
  const double nsub = static_cast<double>(chunk / std::min(kKdaSubChunk, chunk));
  return 4.0 + 2.0 * (nsub - 1.0) / nsub + (nsub - 1.0);
}

// KDA layer (kda_layer.cpp, kda_gate.cpp, short_conv.cpp, kda_chunkwise.cpp), K = V.
Saved kda_layer(const KdaConfig& k) {
  const double H = static_cast<double>(k.num_heads), K = static_cast<double>(k.head_dim);
  const double C = static_cast<double>(k.chunk_size), HK = H * K;
  const double rank = static_cast<double>(k.gate_rank > 0 ? k.gate_rank : k.head_dim);
  Saved s;
  // q and k: conv window, conv output, silu output, l2 rsqrt; v: conv window and output.
  const double projections = 2 * (3 * HK + H) + 2 * HK;
  // gate: the low-rank input, the biased logits and their sigmoid; beta's sigmoid.
  const double gate = rank + 2 * HK + H;
  // chunkwise: q, k, v and beta in chunks; two intra-chunk score calls and their (C, C) outputs; the
  // solve's matrix and its [W | U]; e^G, k e^G, q e^G, the decay to chunk end and k's decayed copy;
  // v' per chunk and the stacked output.
  const double chunkwise = 3 * HK + H + 2 * intra_scores_units(k.chunk_size) * HK + 3 * H * C + 2 * HK +
                           2 * HK + 3 * HK + 2 * HK;
  // output: the gated RMSNorm (square, normalised, scaled, gate sigmoid, the product's copy), the gate's
  // input.
  const double output = 5 * HK + H + (k.full_rank_output_gate ? 0.0 : rank);
  s.general = projections + gate + chunkwise + output;
  s.kda_states = H * K * K / C + HK / C;  // the state entering each chunk and its decay
  return s;
}

// Feed-forward (feed_forward.cpp, activations.cpp): SwiGLU keeps gate, up, silu(gate) and the
// product; the SiTU-GLU reference keeps the two tanh results, the two soft caps, the sigmoid, the
// first product and the output. MX fake quantisation keeps a quantised copy of each linear's input
// (one more D: gate and up each quantise x) and of each weight.
Saved feed_forward(const FfnConfig& f, std::int64_t D) {
  const double F = static_cast<double>(f.intermediate_size);
  Saved s;
  s.general = (f.kind == FfnKind::SwiGlu ? 4.0 : 7.0) * F;
  if (f.quant.enabled()) {
    s.general += static_cast<double>(D);
    s.mx_fixed_bytes = static_cast<double>(3 * D * f.intermediate_size * kFloat);
  }
  return s;
}

// Residual path: the stream's sums (Standard) or, for Attention Residuals, every source the depth
// attention keeps plus each sublayer's mixed input (models::depth_mix keeps references, no copies).
double residual_elements(const ModelConfig& c) {
  const double D = static_cast<double>(c.hidden_size), L = static_cast<double>(c.num_layers());
  return c.residual.mode == ResidualMode::Standard ? (2 * L + 1) * D : (4 * L + 2) * D;
}

// depth_mix's backward recomputes its forward over the stacked sources (values, normalised, keys) and
// holds the keys', normalised and values' gradients with their temporaries: about eight copies of
// the widest consumer's (N sources, B, T, D) stack, at the final norm's mix.
double depth_mix_workspace(const ModelConfig& c) {
  if (c.residual.mode == ResidualMode::Standard) return 0;
  const std::int64_t L = c.num_layers();
  const std::int64_t sources = c.residual.mode == ResidualMode::FullAttnRes
                                   ? 2 * L + 1
                                   : (L + c.residual.block_size - 1) / c.residual.block_size + 1;
  return 8.0 * static_cast<double>(sources * c.hidden_size);
}

Saved decoder_saved(const ModelConfig& c, std::int64_t T) {
  Saved total;
  total.general = residual_elements(c) + norm_elements(c.hidden_size);  // + the final norm
  total.depth_mix_workspace = depth_mix_workspace(c);
  for (const auto kind : c.mixers()) {
    Saved layer = kind == MixerKind::Kda   ? kda_layer(c.kda)
                  : kind == MixerKind::Mla ? mla_layer(c.mla, T)
                                           : attention_layer(c.attention, T);
    layer += feed_forward(c.ffn, c.hidden_size);
    layer.general += 2 * norm_elements(c.hidden_size);
    total += layer;
  }
  return total;
}

std::int64_t bytes_for(double elements_per_token, std::int64_t tokens) {
  return static_cast<std::int64_t>(elements_per_token * static_cast<double>(tokens) * kFloat);
}

// Every optimizer keeps two parameter-sized buffers: AdamW its moments, MuonOptimizer (Muon and
// Per-Head Muon) a momentum and a second moment for every parameter, the second unused by its Muon
// matrices.
TrainingMemory assemble(const Saved& saved, std::int64_t rows, std::int64_t T, std::int64_t parameters,
                        std::int64_t vocab) {
  const std::int64_t tokens = rows * T;
  TrainingMemory m;
  m.rows = rows;
  m.sequence_length = T;
  m.parameters = parameters * kFloat;
  m.gradients = parameters * kFloat;
  m.optimizer_state = 2 * parameters * kFloat;
  const auto layers_fixed = static_cast<std::int64_t>(saved.fixed_bytes);
  m.activations = {{"attention probabilities", bytes_for(saved.attention_probabilities, tokens)},
                   {"KDA chunk states", bytes_for(saved.kda_states, tokens)},
                   {"MX fake-quantised weights", static_cast<std::int64_t>(saved.mx_fixed_bytes)},
                   {"router scores", bytes_for(saved.router, tokens)},
                   {"other activations", bytes_for(saved.general, tokens) + layers_fixed}};
  // Backward starts with the log-probabilities, their gradient and the logits' gradient held at once.
  m.transients = {{"logits and their gradients at the loss", 3 * tokens * vocab * kFloat},
                  {"one attention layer's backward", bytes_for(saved.attention_backward, tokens)},
                  {"depth attention's backward", bytes_for(saved.depth_mix_workspace, tokens)}};
  return m;
}

}  // namespace

std::int64_t TrainingMemory::activation_bytes() const {
  std::int64_t total = 0;
  for (const auto& part : activations) total += part.bytes;
  return total;
}

const MemoryPart& TrainingMemory::largest_transient() const {
  static const MemoryPart none{"none", 0};
  const auto it = std::max_element(transients.begin(), transients.end(),
                                   [](const auto& a, const auto& b) { return a.bytes < b.bytes; });
  return it == transients.end() ? none : *it;
}

std::int64_t TrainingMemory::total() const {
  return parameters + gradients + optimizer_state + activation_bytes() + largest_transient().bytes;
}

nlohmann::json TrainingMemory::to_json() const {
  nlohmann::json parts = nlohmann::json::object(), moments = nlohmann::json::object();
  for (const auto& part : activations) parts[part.what] = part.bytes;
  for (const auto& part : transients) moments[part.what] = part.bytes;
  return {{"micro_batch_rows", rows},
          {"sequence_length", sequence_length},
          {"parameters_bytes", parameters},
          {"gradients_bytes", gradients},
          {"optimizer_state_bytes", optimizer_state},
          {"activation_bytes", activation_bytes()},
          {"activations", parts},
          {"transients", moments},
          {"largest_transient", largest_transient().what},
          {"total_bytes", total()}};
}

TrainingMemory decoder_training_memory(const ModelConfig& config, std::int64_t rows, std::int64_t sequence_length) {
  return assemble(decoder_saved(config, sequence_length), rows, sequence_length, count_parameters(config),
                  config.vocab_size);
}

TrainingMemory moe_training_memory(const MoeMemoryShape& s, std::int64_t rows, std::int64_t sequence_length) {
  const double D = static_cast<double>(s.hidden_size), E = static_cast<double>(s.experts);
  const double k = static_cast<double>(s.top_k), F = static_cast<double>(s.expert_hidden);
  Saved total;
  total.general = static_cast<double>(2 * s.layers + 1) * D + norm_elements(s.hidden_size);
  for (std::int64_t l = 0; l < s.layers; ++l) {
    Saved layer = softmax_attention(s.heads, s.head_dim, s.head_dim, sequence_length);
    layer.general += 2 * norm_elements(s.hidden_size);
    // Each routed token: its gathered input, the expert's SwiGLU, the expert output and its weight.
    layer.general += k * (D + 4 * F + D + 1);
    layer.router = 2 * E;  // the sigmoid scores autograd keeps and the detached copy the statistics keep
    total += layer;
  }
  const std::int64_t attention = s.layers * 4 * s.hidden_size * s.heads * s.head_dim;
  const std::int64_t experts = s.layers * (s.experts * 3 * s.hidden_size * s.expert_hidden + s.hidden_size * s.experts);
  const std::int64_t parameters = s.vocab_size * s.hidden_size + attention + experts + (2 * s.layers + 1) * s.hidden_size;
  return assemble(total, rows, sequence_length, parameters, s.vocab_size);
}

std::string gigabytes(std::int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GB", static_cast<double>(bytes) / 1e9);
  return text;
}

}  // namespace k3lab::models
