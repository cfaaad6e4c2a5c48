#pragma once
// Statistics of one AttnRes aggregation's softmax over its depth sources, from the weights on a
// batch of tokens (the protocol's depth_attention_entropy, block_preference_diversity and
// recent_source_collapse), and the weights themselves from the learned parameters.
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/types.h>

namespace k3lab::experiments::attn_res {

// A weight above this on the most recent source, averaged over tokens, is a collapse (protocol).
inline constexpr double kCollapseThreshold = 0.9;

struct AggregationStats {
  std::int64_t sources = 0;
  double entropy = 0;        // mean over tokens of -sum_i a_i ln a_i (nats)
  double max_entropy = 0;    // ln(sources): the uniform mixture
  double diversity = 0;      // fraction of tokens whose argmax source is not the most common argmax
  double recent_weight = 0;  // mean over tokens of the weight on the last (most recent) source
  bool collapsed() const { return recent_weight > kCollapseThreshold; }
  nlohmann::json to_json() const;
};

// weights: (N, B, T) softmax over N sources for every token. Ties in a token's argmax go to the
// earliest source, ties between most common argmaxes to the earliest source, so a uniform mixture
// (zero-initialised queries) has diversity 0.
AggregationStats aggregation_stats(const torch::Tensor& weights);

// The depth weights of one aggregation, as AttnResidualImpl::mix computes them:
//   softmax_i( query . (gain * RMSNorm(v_i)) ), in float32 (float64 stays).
// query, gain: (D); sources: N tensors (B, T, D). Returns (N, B, T).
torch::Tensor depth_weights(const torch::Tensor& query, const torch::Tensor& gain,
                            const std::vector<torch::Tensor>& sources, double eps);

// Means over the aggregations with at least two sources (one source is a weight of 1 by
// construction and says nothing about selection): entropy, diversity, and the fraction collapsed.
struct DepthSummary {
  std::int64_t aggregations = 0;  // counted (sources >= 2)
  double mean_entropy = 0;
  double mean_normalised_entropy = 0;  // entropy / ln(sources)
  double mean_diversity = 0;
  double collapse_fraction = 0;
  nlohmann::json to_json() const;
};
DepthSummary summarise_depth(const std::vector<AggregationStats>& aggregations);

}  // namespace k3lab::experiments::attn_res
