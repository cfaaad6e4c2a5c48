#pragma once
// The per-head metrics of per-head-muon (definitions in docs/per-head-muon.md).
//
// update_norm_dispersion: for one layer, projection (query, key, value) and logged step, the
//   coefficient of variation (population standard deviation / mean) across heads of the Frobenius
//   norm of each head's block of the applied change W_after - W_before of one optimizer step.
// head_diversity: for one layer and projection (query, key), the mean over head pairs (i < j) of the
//   normalized projection distance between the heads' row spaces: with orthonormal bases Q_i, Q_j
//   (D x d_h) of W^h rows, d(i, j) = sqrt(1 - ||Q_i^T Q_j||_F^2 / d_h), in [0, 1] (0: same subspace,
//   1: orthogonal subspaces).
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/types.h>

#include "k3lab/models/decoder_lm.hpp"

namespace k3lab::experiments::per_head_muon {

double coefficient_of_variation(const std::vector<double>& norms);

// Mean over layers and projections of the per-(layer, projection) dispersion of one logged step
// ({"layers": [{"layer": l, "query": [...], "key": [...], "value": [...]}]}).
nlohmann::json update_dispersion(const nlohmann::json& update_norms);

// weight: (H d_h, D), heads are row blocks -> mean pairwise distance.
double head_subspace_distance(const torch::Tensor& weight, std::int64_t heads);

// Per layer (query, key) and the mean over layers and both projections.
nlohmann::json head_diversity(models::DecoderLM& model, std::int64_t heads);

}  // namespace k3lab::experiments::per_head_muon
