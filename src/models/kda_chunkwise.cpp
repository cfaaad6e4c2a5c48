// Chunkwise KDA (reference/kda.md section 2.1; the WY / UT transform of the Kimi Linear report).
//
// Per chunk of C tokens with chunk-local cumulative log-decay G (C, K):
//   Aqk = Tril(scores(q, k)),  Akk = StrictTril(Diag(beta) scores(k, k))
//   (I + Akk) [W | U] = [beta * e^G * k | beta * v]          (unit lower-triangular solve)
//   v'  = U - W S
//   O   = (q * e^G) S + Aqk v'
//   S  <- Diag(e^{G_C}) S + (k * e^{G_C - G})^T v'
// Every exponent above is <= 0 when g <= 0, except inside kda_intra_chunk_scores' diagonal
// sub-blocks, which guard themselves (see IntraChunkMode).
#include <k3lab/models/kda.hpp>

#include <k3lab/models/batched_matmul.hpp>
#include <k3lab/models/kda_sub_chunk.hpp>

#include <limits>

#include "kda_checks.hpp"

namespace k3lab::models {

namespace {

double factorized_exponent_limit(torch::ScalarType dtype) {
  // e^{2 * limit} must stay finite: the masked upper triangle is formed before it is discarded.
  return dtype == torch::kDouble ? 300.0 : 40.0;
}

torch::Tensor middle_rows(const torch::Tensor& G_blocks, std::int64_t sub) {
  return G_blocks.narrow(-2, sub / 2, 1);  // (..., nsub, 1, K)
}

torch::Tensor split_sub_blocks(const torch::Tensor& x, std::int64_t nsub, std::int64_t sub) {
  auto shape = x.sizes().vec();  // (..., C, K)
  const auto K = shape.back();
  shape.pop_back();
  shape.pop_back();
  shape.push_back(nsub);
  shape.push_back(sub);
  shape.push_back(K);
  return x.reshape(shape);  // (..., nsub, sub, K)
}

bool choose_factorized(const torch::Tensor& G, std::int64_t sub_chunk, IntraChunkMode mode) {
  if (mode == IntraChunkMode::Factorized) return true;
  if (mode == IntraChunkMode::Pairwise) return false;
  if (G.numel() == 0) return true;
  const std::int64_t C = G.size(-2);
  const std::int64_t sub = std::min(sub_chunk, C);
  const auto Gb = split_sub_blocks(G.detach(), C / sub, sub);
  const double widest = (Gb - middle_rows(Gb, sub)).abs().max().item<double>();
  return widest <= factorized_exponent_limit(G.scalar_type());
}

torch::Tensor intra_scores(const torch::Tensor& x, const torch::Tensor& k, const torch::Tensor& G,
                           std::int64_t sub_chunk, bool factorized) {
  const std::int64_t C = x.size(-2);
  const std::int64_t sub = std::min(sub_chunk, C);
  const std::int64_t nsub = C / sub;
  const auto lower = torch::ones({sub, sub}, x.options().dtype(torch::kBool)).tril();  // (sub, sub)

  const auto xb = split_sub_blocks(x, nsub, sub);  // (..., nsub, sub, K)
  const auto kb = split_sub_blocks(k, nsub, sub);
  const auto Gb = split_sub_blocks(G, nsub, sub);
  torch::Tensor diag;  // (..., nsub, sub, sub)
  if (factorized) {
    const auto mid = middle_rows(Gb, sub);
    diag = batched_matmul(xb * (Gb - mid).exp(), (kb * (mid - Gb).exp()).transpose(-1, -2));
  } else {
    auto diff = Gb.unsqueeze(-2) - Gb.unsqueeze(-3);  // (..., nsub, sub_i, sub_j, K)
    auto decay = diff.masked_fill(lower.logical_not().unsqueeze(-1),
                                  -std::numeric_limits<double>::infinity())
                     .exp();
    diag = (xb.unsqueeze(-2) * kb.unsqueeze(-3) * decay).sum(-1);
  }
  diag = diag.masked_fill(lower.logical_not(), 0.0);  // select, never multiply (inf * 0 = NaN)

  std::vector<torch::Tensor> rows;
  rows.reserve(static_cast<std::size_t>(nsub));
  for (std::int64_t a = 0; a < nsub; ++a) {
    std::vector<torch::Tensor> parts;
    if (a > 0) {
      // Reference: the first row of this sub-block. Rows are later and columns earlier than it,
      // so both exponents are <= 0 for g <= 0.
      const auto ref = G.narrow(-2, a * sub, 1);                                       // (..., 1, K)
      const auto xr = x.narrow(-2, a * sub, sub) * (G.narrow(-2, a * sub, sub) - ref).exp();
      const auto kc = k.narrow(-2, 0, a * sub) * (ref - G.narrow(-2, 0, a * sub)).exp();
      parts.push_back(batched_matmul(xr, kc.transpose(-1, -2)));  // (..., sub, a * sub)
    }
    parts.push_back(diag.select(-3, a));  // (..., sub, sub)
    if (a + 1 < nsub) {
      auto shape = x.sizes().vec();
      shape[shape.size() - 2] = sub;
      shape.back() = C - (a + 1) * sub;
      parts.push_back(torch::zeros(shape, x.options()));
    }
    rows.push_back(torch::cat(parts, -1));  // (..., sub, C)
  }
  return torch::cat(rows, -2);  // (..., C, C)
}

}  // namespace

torch::Tensor kda_intra_chunk_scores(const torch::Tensor& x, const torch::Tensor& k,
                                     const torch::Tensor& G, std::int64_t sub_chunk,
                                     IntraChunkMode mode) {
  const std::string where = "kda_intra_chunk_scores";
  detail::require_float(where, "x", x);
  detail::require_float(where, "k", k);
  detail::require_float(where, "G", G);
  if (x.dim() < 2 || k.sizes() != x.sizes() || G.sizes() != x.sizes()) {
    detail::fail(where, "x, k and G must share one shape (..., C, K); got x " + detail::shape_of(x) +
                            ", k " + detail::shape_of(k) + ", G " + detail::shape_of(G));
  }
  if (sub_chunk <= 0) detail::fail(where, "sub_chunk must be positive");
  const std::int64_t C = x.size(-2);
  if (C % std::min(sub_chunk, C) != 0) {
    detail::fail(where, "chunk length " + std::to_string(C) + " is not a multiple of sub_chunk " +
                            std::to_string(sub_chunk));
  }
  return intra_scores(x, k, G, sub_chunk, choose_factorized(G, sub_chunk, mode));
}

KdaResult kda_chunkwise(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                        const torch::Tensor& g, const torch::Tensor& beta,
                        const std::optional<torch::Tensor>& initial_state,
                        std::int64_t chunk_size, std::optional<double> scale) {
  const std::string where = "kda_chunkwise";
  detail::check_sequence_args(where, q, k, v, g, beta, initial_state);
  detail::check_chunk_size(where, chunk_size);
  const auto cdt = detail::compute_dtype(q);
  const std::int64_t B = q.size(0), T = q.size(1), H = q.size(2), K = q.size(3), V = v.size(3);
  const std::int64_t C = chunk_size;
  const auto options = q.options().dtype(cdt);
  torch::Tensor S = (initial_state && initial_state->defined())
                        ? initial_state->to(cdt)
                        : torch::zeros({B, H, K, V}, options);  // (B, H, K, V)
  if (T == 0) return {torch::zeros({B, 0, H, V}, q.options()), S};

  // Padding tokens have k = v = beta = 0 and g = 0: they neither decay nor write the state.
  const std::int64_t pad = (C - T % C) % C;
  const std::int64_t N = (T + pad) / C;
  auto to_chunks = [&](const torch::Tensor& x) {  // (B, T, H, D) -> (B, H, N, C, D)
    auto y = x.to(cdt).permute({0, 2, 1, 3});
    if (pad > 0) y = torch::constant_pad_nd(y, {0, 0, 0, pad});
    return y.reshape({B, H, N, C, x.size(3)});
  };
  const auto qc = to_chunks(q) * detail::resolve_scale(scale, K);  // (B, H, N, C, K)
  const auto kc = to_chunks(k);                                     // (B, H, N, C, K)
  const auto vc = to_chunks(v);                                     // (B, H, N, C, V)
  const auto G = to_chunks(g).cumsum(-2);                           // (B, H, N, C, K)
  auto bc = beta.to(cdt).permute({0, 2, 1});                        // (B, H, T)
  if (pad > 0) bc = torch::constant_pad_nd(bc, {0, pad});
  bc = bc.reshape({B, H, N, C, 1});                                 // (B, H, N, C, 1)

  const bool factorized = choose_factorized(G, kKdaSubChunk, IntraChunkMode::Auto);
  const auto Aqk = intra_scores(qc, kc, G, kKdaSubChunk, factorized);  // (B, H, N, C, C)
  const auto strict = torch::ones({C, C}, options.dtype(torch::kBool)).tril(-1);
  const auto Akk = (intra_scores(kc, kc, G, kKdaSubChunk, factorized) * bc)
                       .masked_fill(strict.logical_not(), 0.0);  // (B, H, N, C, C)

  const auto eG = G.exp();
  const auto rhs = torch::cat({kc * eG * bc, vc * bc}, -1);         // (B, H, N, C, K + V)
  const auto eye = torch::eye(C, options);
  const auto WU = torch::linalg_solve_triangular(Akk + eye, rhs, /*upper=*/false, /*left=*/true,
                                                 /*unitriangular=*/true);
  const auto W = WU.narrow(-1, 0, K);                               // (B, H, N, C, K)
  const auto U = WU.narrow(-1, K, V);                               // (B, H, N, C, V)

  const auto G_last = G.narrow(-2, C - 1, 1);                       // (B, H, N, 1, K)
  const auto q_decayed = qc * eG;                                   // (B, H, N, C, K)
  const auto k_to_end = kc * (G_last - G).exp();                    // (B, H, N, C, K)
  const auto chunk_decay = G_last.exp().transpose(-1, -2);          // (B, H, N, K, 1)

  // unbind, not select per chunk: select's backward writes a zero-padded full-size gradient per
  // chunk, unbind's backward stacks the chunks once.
  const auto U_n = U.unbind(2), W_n = W.unbind(2), q_n = q_decayed.unbind(2), Aqk_n = Aqk.unbind(2),
             k_n = k_to_end.unbind(2), decay_n = chunk_decay.unbind(2);
  std::vector<torch::Tensor> outputs;
  outputs.reserve(static_cast<std::size_t>(N));
  for (std::int64_t n = 0; n < N; ++n) {
    const auto v_new = U_n[n] - batched_matmul(W_n[n], S);                              // (B, H, C, V)
    outputs.push_back(batched_matmul(q_n[n], S) + batched_matmul(Aqk_n[n], v_new));     // (B, H, C, V)
    S = S * decay_n[n] + batched_matmul(k_n[n].transpose(-1, -2), v_new);               // (B, H, K, V)
  }
  auto out = torch::stack(outputs, 2).reshape({B, H, N * C, V}).narrow(2, 0, T);  // (B, H, T, V)
  return {out.permute({0, 2, 1, 3}).to(q.scalar_type()), S};
}

}  // namespace k3lab::models
