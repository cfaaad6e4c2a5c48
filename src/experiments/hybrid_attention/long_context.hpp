#pragma once
// Long-context measurements of a decoder LM, run by streaming a sequence through the model's
// inference state in chunks (prefill with a KV cache / recurrent state), which reaches lengths far
// beyond the training window without a full (T x T) attention matrix:
//   - greedy predictions and per-token losses (retrieval scoring, loss by position)
//   - the KDA recurrent-state norm at chosen positions (state drift over length)
//   - measured inference-state bytes (KV/latent cache + recurrent and conv state)
//   - decode-vs-chunkwise drift: the same tokens fed one at a time through the fixed-size decode
//     step against the chunked prefill, compared by logits and by KDA state
//   - batch-1 inference memory and throughput at a length (prefill, then decode steps)
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/types.h>

#include "k3lab/models/decoder_lm.hpp"

namespace k3lab::experiments::hybrid_attention {

struct StreamOptions {
  std::int64_t chunk = 1024;                    // tokens per prefill call
  std::vector<std::int64_t> norm_positions;     // token counts after which to read KDA state norms
  bool losses = true;
};

struct StreamedForward {
  std::int64_t rows = 0, length = 0;
  std::vector<std::int64_t> predictions;  // (rows, length) row-major: argmax at each position
  std::vector<float> losses;              // (rows, length - 1): -log p(token t+1 | ..t)
  // For each norm position: per row, the mean Frobenius norm of the KDA states (over KDA layers and
  // heads); empty when the model has no KDA layer.
  std::vector<std::vector<double>> kda_state_norms;
  std::int64_t state_bytes = 0;           // inference state after the last token (all rows)
};

// tokens: (rows, length) row-major. Norm positions must be multiples of options.chunk or the length.
StreamedForward streamed_forward(models::DecoderLM& model, std::span<const std::int64_t> tokens, std::int64_t rows,
                                 std::int64_t length, const StreamOptions& options, const torch::Device& device);

// The largest divisor of sequence_length that is at most `limit` (so chunk boundaries fall on the
// training-window edge, where state norms are read).
std::int64_t prefill_chunk(std::int64_t sequence_length, std::int64_t limit = 2048);

// Mean Frobenius norm of the KDA recurrent states, per batch row; empty without KDA layers.
std::vector<double> kda_state_norms(const models::InferenceState& state);

struct DecodeDrift {
  std::int64_t tokens = 0;
  double max_abs_logit_difference = 0;     // over every position
  double relative_state_difference = 0;    // ||S_decode - S_chunk|| / ||S_chunk|| over KDA layers (0 without KDA)
  nlohmann::json to_json() const;
};

// One row of tokens through the chunked prefill and through single-token decode steps.
DecodeDrift decode_drift(models::DecoderLM& model, std::span<const std::int64_t> tokens, std::int64_t chunk,
                         const torch::Device& device);

struct InferenceProbe {
  std::int64_t length = 0;
  std::int64_t decode_tokens = 0;
  std::int64_t state_bytes = 0;                  // measured, after prefill and decode
  std::optional<std::int64_t> peak_bytes;        // allocator peak during prefill + decode (CUDA only)
  double prefill_seconds = 0, decode_seconds = 0;
  nlohmann::json to_json() const;                // bytes (deterministic apart from peak) and seconds
};

// Batch-1: prefill `tokens` in chunks, then decode `decode_tokens` greedy tokens one at a time.
InferenceProbe inference_probe(models::DecoderLM& model, std::span<const std::int64_t> tokens, std::int64_t chunk,
                               std::int64_t decode_tokens, const torch::Device& device);

}  // namespace k3lab::experiments::hybrid_attention
