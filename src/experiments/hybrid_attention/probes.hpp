#pragma once
// The long-context probes of hybrid-attention, built once per unit from the protocol and the
// validation text, so every arm and seed sees the same examples:
//   at every evaluation: MQAR and needle retrieval at each long_context_eval length, loss by position
//     (buckets of sequence_length) and the KDA state norm at each length on clean held-out text of
//     the longest length; evaluations before the last score the fixed, evenly spaced subset of
//     long_context_eval.checkpoint_examples examples (and text rows) when the protocol sets it, the
//     last one all of them (the page and the decision read only the last);
//   once, at the token budget: batch-1 inference memory and throughput at each length, and the
//     decode-vs-chunkwise drift over min(longest length, 2 x sequence_length) tokens.
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/types.h>

#include "hybrid_attention/parameters.hpp"
#include "k3lab/models/decoder_lm.hpp"
#include "k3lab/train/dataset.hpp"
#include "hybrid_attention/retrieval_task.hpp"

namespace k3lab::experiments::hybrid_attention {

// Decode steps timed after the prefill in the inference probe.
inline constexpr std::int64_t kProbeDecodeTokens = 32;
// Rows per streamed forward in the retrieval and loss probes: at most 8, and at most as many as keep
// one chunk's attention scores (rows x heads x chunk x length float32) near 4 GiB; at least 1.
std::int64_t probe_rows(std::int64_t chunk, std::int64_t length, std::int64_t heads);
// `count` indices of 0..total-1, evenly spaced from 0 (all of them when count >= total).
std::vector<std::size_t> evenly_spaced(std::size_t total, std::size_t count);

struct FinalProbes {
  nlohmann::json data;    // bytes and drift (deterministic on CPU)
  nlohmann::json timing;  // seconds and tokens/s
};

class LongContextProbes {
 public:
  LongContextProbes(const Parameters& p, const train::Dataset& data);

  // `final`: the evaluation at the token budget, which scores every example.
  nlohmann::json evaluate(models::DecoderLM& model, const torch::Device& device, bool final) const;
  FinalProbes final_probes(models::DecoderLM& model, const torch::Device& device) const;

  std::int64_t chunk() const { return chunk_; }
  // Whether held-out text was shorter than a probe length and had to be repeated.
  bool haystack_tiled() const { return tiled_; }

 private:
  std::vector<std::int64_t> text(std::int64_t length, std::int64_t index, std::int64_t count) const;
  nlohmann::json retrieval(models::DecoderLM& model, const torch::Device& device,
                           const std::vector<std::size_t>& chosen) const;
  nlohmann::json position_probes(models::DecoderLM& model, const torch::Device& device,
                                 const std::vector<std::size_t>& chosen) const;

  Parameters p_;
  const train::Dataset& data_;
  std::int64_t chunk_ = 0;
  mutable bool tiled_ = false;
  struct LengthExamples {
    std::int64_t length = 0;
    std::vector<RetrievalExample> mqar, needle;
  };
  std::vector<LengthExamples> examples_;
  std::int64_t longest_ = 0;
  std::vector<std::int64_t> clean_;  // (examples, longest) row-major held-out text
};

}  // namespace k3lab::experiments::hybrid_attention
