#pragma once
// The memory one training step holds at its peak, per arm, before anything runs: parameters,
// gradients, optimizer state, and what autograd keeps for backward for one micro-batch, counted from
// each layer's forward (float32, LibTorch's own operators, as every arm trains today). Torch-free, so
// that `plan` can refuse an arm that cannot fit before the first unit. tests/models/
// training_memory_test.cpp checks every figure against the CPU allocator's measured peak.
//
// What is not counted: allocator rounding and fragmentation (CUDA's caching allocator adds some),
// LibTorch's and CUDA's own workspaces, and the CUDA kernels' smaller saved state (KDA and SiTU-GLU on
// a GPU keep less than the LibTorch operators counted here, so on a GPU the figure is an upper bound).
#include <k3lab/models/model_config.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace k3lab::models {

struct MemoryPart {
  std::string what;
  std::int64_t bytes = 0;
};

struct TrainingMemory {
  std::int64_t rows = 0;             // micro-batch rows
  std::int64_t sequence_length = 0;  // tokens per row
  std::int64_t parameters = 0;       // bytes, float32
  std::int64_t gradients = 0;
  std::int64_t optimizer_state = 0;  // two buffers per parameter: AdamW, Muon and Per-Head Muon alike
  // Saved for backward at the end of the forward pass, by kind (attention probabilities, KDA chunk
  // states, MX fake-quantised copies, router scores, the rest), each in bytes.
  std::vector<MemoryPart> activations;
  // Held only for a moment, one at a time: the logits and their gradients at the loss, one attention
  // layer's backward, depth attention's backward (Attention Residuals).
  std::vector<MemoryPart> transients;

  std::int64_t activation_bytes() const;
  const MemoryPart& largest_transient() const;
  // The step's peak: parameters, gradients, optimizer state, every saved activation and the largest
  // transient at once (it comes at the start of backward, when the saved activations are all held).
  std::int64_t total() const;
  nlohmann::json to_json() const;
};

// A DecoderLM arm (hybrid-attention, attn-res, situ-qat, per-head-muon).
TrainingMemory decoder_training_memory(const ModelConfig& config, std::int64_t rows, std::int64_t sequence_length);

// The MoE LM router-balance trains: attention + routed SwiGLU experts, tied embeddings, AdamW.
struct MoeMemoryShape {
  std::int64_t vocab_size = 0;
  std::int64_t hidden_size = 0;
  std::int64_t layers = 0;
  std::int64_t heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t experts = 0;
  std::int64_t top_k = 0;
  std::int64_t expert_hidden = 0;
};
TrainingMemory moe_training_memory(const MoeMemoryShape& shape, std::int64_t rows, std::int64_t sequence_length);

// "52.1 GB" (decimal gigabytes, as GPU memory is sold and nvidia-smi's MiB are not).
std::string gigabytes(std::int64_t bytes);

}  // namespace k3lab::models
