#pragma once
// attn-res's checkpoint probes (TrainerHooks::evaluate), on one fixed validation batch: the first
// probe_rows() windows of the validation stream, the same in every arm, seed and checkpoint. The
// batch is one training micro-batch in size, so a model that trains also fits its probe (the naive
// AttnRes mixture keeps O(L^2) activations for backward).
//   gradient_norm_by_depth: a dedicated forward and backward of the mean next-token loss on that
//     batch, through torch::autograd::grad so the trainer's .grad buffers are untouched (and the
//     norms are unclipped); the L2 norm of each sublayer's parameter gradients (sublayer 2l: block
//     l's mixer norm and attention; 2l+1: its MLP norm and feed-forward), plus the embedding, the
//     final norm and the residual path's own parameters (AttnRes queries and key gains).
//   depth_attention (AttnRes arms; null for ordinary-residual): in the same forward, the softmax
//     weights of every aggregation over its depth sources, computed from the learned queries and
//     key gains, and their statistics (depth_statistics.hpp).
#include <cstdint>

#include <nlohmann/json.hpp>
#include <torch/types.h>

#include "attn_res/parameters.hpp"
#include "k3lab/models/decoder_lm.hpp"
#include "k3lab/train/dataset.hpp"

namespace k3lab::experiments::attn_res {

// Rows of the probe batch: the trainer's rows per forward, at most the validation set's windows.
std::int64_t probe_rows(const Parameters& p, std::int64_t micro_batch_rows);

// The eps models::make_residual_path gives AttnResidualImpl (its default). The probe checks that
// its weights reproduce the model's own mixture, so a change there fails loudly, never silently.
inline constexpr double kAttnResEps = 1e-6;

class DepthProbe {
 public:
  DepthProbe(const Parameters& p, const train::Dataset& data, std::int64_t micro_batch_rows);
  nlohmann::json evaluate(models::DecoderLM& model, const torch::Device& device) const;

 private:
  std::int64_t rows_ = 0;
  std::int64_t sequence_length_ = 0;
  std::vector<std::int64_t> inputs_, targets_;  // (rows, sequence_length) row-major
};

}  // namespace k3lab::experiments::attn_res
