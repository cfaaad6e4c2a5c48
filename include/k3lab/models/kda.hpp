#pragma once
// Kimi Delta Attention (KDA) math in plain LibTorch (reference/kda.md sections 1-2).
//
// Per batch element and head, with state S in R^{K x V}, per-channel decay alpha_t = exp(g_t) and
// scalar beta_t:
//     S   <- Diag(exp(g_t)) S                      decay the rows (the key channels)
//     u   =  v_t - S^T k_t                         uses the decayed state
//     S   <- S + beta_t k_t u^T                    rank-1 delta update
//     o_t =  S^T (scale * q_t)                     reads the updated state
//
// Layouts: q, k, g (B, T, H, K); v (B, T, H, V); beta (B, T, H); state (B, H, K, V).
// q and k are used as given (the layer L2-normalises them first). g is the log-decay (<= 0; see
// kda_gate.hpp). scale defaults to K^-0.5. Computation runs in float64 when q is float64 and in
// float32 otherwise; the output has q's dtype and the final state the compute dtype.
// All three forms are differentiable by LibTorch autograd.
#include <torch/types.h>
#include <k3lab/models/kda_sub_chunk.hpp>

#include <cstdint>
#include <optional>

namespace k3lab::models {

struct KdaResult {
  torch::Tensor output;       // (B, T, H, V), or (B, H, V) for a decode step
  torch::Tensor final_state;  // (B, H, K, V) in the compute dtype
};

// Token-by-token recurrence: the reference every other form is tested against.
KdaResult kda_recurrent(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                        const torch::Tensor& g, const torch::Tensor& beta,
                        const std::optional<torch::Tensor>& initial_state = std::nullopt,
                        std::optional<double> scale = std::nullopt);

// Chunkwise (WY / UT transform) form, the fast path for training. T need not be a multiple of
// chunk_size (the tail is padded internally with tokens that leave the state unchanged).
// chunk_size must be a multiple of 16 or at most 16 (e.g. 16, 32, 64).
KdaResult kda_chunkwise(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                        const torch::Tensor& g, const torch::Tensor& beta,
                        const std::optional<torch::Tensor>& initial_state = std::nullopt,
                        std::int64_t chunk_size = 64, std::optional<double> scale = std::nullopt);

// One token with a fixed-size state: q_t, k_t, g_t (B, H, K); v_t (B, H, V); beta_t (B, H);
// state (B, H, K, V). Returns output (B, H, V) and the new state.
KdaResult kda_decode_step(const torch::Tensor& q_t, const torch::Tensor& k_t,
                          const torch::Tensor& v_t, const torch::Tensor& g_t,
                          const torch::Tensor& beta_t, const torch::Tensor& state,
                          std::optional<double> scale = std::nullopt);

// How the diagonal sub-blocks of the intra-chunk score matrices are formed.
//  Factorized: (x * e^{G - G_mid}) (k * e^{G_mid - G})^T about the sub-block's middle row; matmuls
//              only, exact while |G - G_mid| stays small (always true for the -5 bounded gate).
//  Pairwise:   sum_d x_i k_j exp(G_i - G_j) element-wise ("secondary chunking"); never overflows,
//              costs O(C_sub * K) memory per token.
//  Auto:       Factorized when max |G - G_mid| <= 40 (float32) or 300 (float64), else Pairwise.
enum class IntraChunkMode { Auto, Factorized, Pairwise };

// Decayed causal scores inside each chunk: out[i, j] = sum_d x_i[d] k_j[d] exp(G_i[d] - G_j[d])
// for j <= i and 0 above the diagonal. x, k, G: (..., C, K) with G the chunk-local cumulative sum
// of g; returns (..., C, C). Off-diagonal sub-blocks use the first row of the later sub-block as
// the reference, so both exponents are <= 0 there.
torch::Tensor kda_intra_chunk_scores(const torch::Tensor& x, const torch::Tensor& k, const torch::Tensor& G,
                                     std::int64_t sub_chunk = kKdaSubChunk, IntraChunkMode mode = IntraChunkMode::Auto);

// x / sqrt(sum(x^2) + eps) over the last dimension (fla's l2norm, eps = 1e-6).
torch::Tensor l2_normalize(const torch::Tensor& x, double eps = 1e-6);

}  // namespace k3lab::models
