#pragma once
// Argument checks shared by the KDA forms (private to src/models).
#include <torch/torch.h>

#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>

namespace k3lab::models::detail {

inline std::string shape_of(const torch::Tensor& t) {
  std::ostringstream out;
  out << t.sizes();
  return out.str();
}

[[noreturn]] inline void fail(const std::string& where, const std::string& what) {
  throw std::invalid_argument(where + ": " + what);
}

inline void require_float(const std::string& where, const char* name, const torch::Tensor& t) {
  if (!t.defined()) fail(where, std::string(name) + " is undefined");
  if (!t.is_floating_point()) fail(where, std::string(name) + " must be a floating-point tensor");
}

// Sequence form: q, k, g (B, T, H, K); v (B, T, H, V); beta (B, T, H); state (B, H, K, V).
inline void check_sequence_args(const std::string& where, const torch::Tensor& q,
                                const torch::Tensor& k, const torch::Tensor& v,
                                const torch::Tensor& g, const torch::Tensor& beta,
                                const std::optional<torch::Tensor>& initial_state) {
  require_float(where, "q", q);
  require_float(where, "k", k);
  require_float(where, "v", v);
  require_float(where, "g", g);
  require_float(where, "beta", beta);
  if (q.dim() != 4) fail(where, "q must be (B, T, H, K), got " + shape_of(q));
  if (k.sizes() != q.sizes()) fail(where, "k must match q's shape " + shape_of(q) + ", got " + shape_of(k));
  if (g.sizes() != q.sizes()) fail(where, "g must match q's shape " + shape_of(q) + ", got " + shape_of(g));
  if (v.dim() != 4 || v.size(0) != q.size(0) || v.size(1) != q.size(1) || v.size(2) != q.size(2)) {
    fail(where, "v must be (B, T, H, V) with B, T, H from q " + shape_of(q) + ", got " + shape_of(v));
  }
  if (beta.dim() != 3 || beta.size(0) != q.size(0) || beta.size(1) != q.size(1) ||
      beta.size(2) != q.size(2)) {
    fail(where, "beta must be (B, T, H) matching q " + shape_of(q) + ", got " + shape_of(beta));
  }
  for (const auto* t : {&k, &v, &g, &beta}) {
    if (t->device() != q.device()) fail(where, "all inputs must be on q's device");
  }
  if (initial_state && initial_state->defined()) {
    const auto& s = *initial_state;
    require_float(where, "initial_state", s);
    if (s.dim() != 4 || s.size(0) != q.size(0) || s.size(1) != q.size(2) || s.size(2) != q.size(3) ||
        s.size(3) != v.size(3)) {
      fail(where, "initial_state must be (B, H, K, V) = [" + std::to_string(q.size(0)) + ", " +
                      std::to_string(q.size(2)) + ", " + std::to_string(q.size(3)) + ", " +
                      std::to_string(v.size(3)) + "], got " + shape_of(s));
    }
    if (s.device() != q.device()) fail(where, "initial_state must be on q's device");
  }
}

// Chunks are split into 16-token sub-chunks (kda_intra_chunk_scores), so longer chunks must be
// multiples of 16.
inline void check_chunk_size(const std::string& where, std::int64_t chunk_size) {
  if (chunk_size <= 0 || (chunk_size > 16 && chunk_size % 16 != 0)) {
    fail(where, "chunk_size must be positive and either <= 16 or a multiple of 16 (e.g. 16, 32, "
                "64), got " + std::to_string(chunk_size));
  }
}

// float64 inputs compute in float64; everything else in float32 (fla keeps the state in fp32).
inline torch::ScalarType compute_dtype(const torch::Tensor& q) {
  return q.scalar_type() == torch::kDouble ? torch::kDouble : torch::kFloat;
}

inline double resolve_scale(std::optional<double> scale, std::int64_t key_dim) {
  return scale ? *scale : 1.0 / std::sqrt(static_cast<double>(key_dim));
}

}  // namespace k3lab::models::detail
