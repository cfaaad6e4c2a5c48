#pragma once
// The decoder-only proxy model's configuration, with a JSON form (nlohmann). Torch-free, so that
// planning code can count parameters and memory without LibTorch.
//
// JSON: every field is optional except vocab_size, hidden_size, schedule and
// ffn.intermediate_size; omitted fields take the defaults below, and to_json always writes every
// field so a recorded config is complete. Unknown keys and wrong types are errors that name the
// field (e.g. "model.kda.num_heads: expected an integer"). from_json also runs validate().
#include <k3lab/models/layer_schedule.hpp>
#include <k3lab/models/mx_format.hpp>

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace k3lab::models {

enum class FfnKind { SwiGlu, SituGlu };
std::string to_string(FfnKind kind);                    // "swiglu" | "situ_glu"
FfnKind ffn_kind_from_string(const std::string& name);  // throws std::invalid_argument

// How sublayer outputs are combined along depth (residual.hpp):
//   Standard      h <- h + f(norm(h))
//   FullAttnRes   each sublayer attends over the embedding and every earlier sublayer output
//   BlockAttnRes  each sublayer attends over the embedding, completed block sums and the current
//                 partial block sum (blocks of `block_size` decoder layers; Kimi K3 uses 12)
enum class ResidualMode { Standard, FullAttnRes, BlockAttnRes };
std::string to_string(ResidualMode mode);
ResidualMode residual_mode_from_string(const std::string& name);

struct KdaConfig {
  std::int64_t num_heads = 4;
  std::int64_t head_dim = 64;  // K = V
  std::int64_t conv_kernel = 4;
  std::optional<double> gate_lower_bound = -5.0;  // null in JSON: softplus gate (Kimi Linear)
  std::int64_t gate_rank = 0;                     // 0: head_dim
  bool full_rank_output_gate = true;
  std::int64_t chunk_size = 64;
};

struct MlaConfig {
  std::int64_t num_heads = 4;
  std::int64_t q_lora_rank = 0;  // 0: full-rank query
  std::int64_t kv_lora_rank = 128;
  std::int64_t qk_nope_head_dim = 64;
  std::int64_t qk_rope_head_dim = 32;
  std::int64_t v_head_dim = 64;
  bool output_gate = true;
};

struct AttentionConfig {
  std::int64_t num_heads = 4;
  std::int64_t head_dim = 64;
  double rope_theta = 10000.0;  // 0: NoPE
};

struct QuantConfig {
  MxElement weights = MxElement::None;      // K3 routed experts: mxfp4
  MxElement activations = MxElement::None;  // K3 routed experts: mxfp8_e4m3
  std::int64_t block_size = 32;
  bool enabled() const { return weights != MxElement::None || activations != MxElement::None; }
};

struct FfnConfig {
  FfnKind kind = FfnKind::SwiGlu;
  std::int64_t intermediate_size = 0;
  double situ_beta_gate = 4.0;
  double situ_beta_up = 25.0;
  QuantConfig quant;
};

struct ResidualConfig {
  ResidualMode mode = ResidualMode::Standard;
  std::int64_t block_size = 12;  // decoder layers per block (BlockAttnRes only)
};

struct ModelConfig {
  std::int64_t vocab_size = 0;
  std::int64_t hidden_size = 0;
  std::string schedule;  // one character per layer, see layer_schedule.hpp
  KdaConfig kda;
  MlaConfig mla;
  AttentionConfig attention;
  FfnConfig ffn;
  double norm_eps = 1e-5;
  bool tie_embeddings = true;
  ResidualConfig residual;

  std::int64_t num_layers() const { return static_cast<std::int64_t>(schedule.size()); }
  std::vector<MixerKind> mixers() const { return parse_schedule(schedule); }
  // Throws std::invalid_argument naming the field ("model.kda.num_heads ...") and the fix.
  // Sections of mixers absent from the schedule are not checked.
  void validate() const;
};

void to_json(nlohmann::json& j, const ModelConfig& config);
void from_json(const nlohmann::json& j, ModelConfig& config);

}  // namespace k3lab::models
