// The token-by-token KDA recurrence (fla naive_recurrent_kda order: decay -> delta -> read).
#include <k3lab/models/kda.hpp>

#include "kda_checks.hpp"

namespace k3lab::models {

namespace {

// One step in the compute dtype. q, k, g (B, H, K); v (B, H, V); beta (B, H); S (B, H, K, V).
KdaResult step(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
               const torch::Tensor& g, const torch::Tensor& beta, const torch::Tensor& S,
               double scale) {
  auto decayed = S * g.exp().unsqueeze(-1);                               // (B, H, K, V)
  auto recalled = torch::matmul(k.unsqueeze(-2), decayed).squeeze(-2);     // (B, H, V) = S^T k
  auto delta = (v - recalled) * beta.unsqueeze(-1);                       // (B, H, V)
  auto updated = decayed + k.unsqueeze(-1) * delta.unsqueeze(-2);         // (B, H, K, V)
  auto out = torch::matmul((q * scale).unsqueeze(-2), updated).squeeze(-2);  // (B, H, V)
  return {out, updated};
}

}  // namespace

torch::Tensor l2_normalize(const torch::Tensor& x, double eps) {
  return x * torch::rsqrt(x.pow(2).sum(-1, /*keepdim=*/true) + eps);
}

KdaResult kda_decode_step(const torch::Tensor& q_t, const torch::Tensor& k_t,
                          const torch::Tensor& v_t, const torch::Tensor& g_t,
                          const torch::Tensor& beta_t, const torch::Tensor& state,
                          std::optional<double> scale) {
  const std::string where = "kda_decode_step";
  for (const auto& [name, t] : {std::pair{"q_t", &q_t}, {"k_t", &k_t}, {"v_t", &v_t},
                                {"g_t", &g_t}, {"beta_t", &beta_t}, {"state", &state}}) {
    detail::require_float(where, name, *t);
  }
  if (q_t.dim() != 3) detail::fail(where, "q_t must be (B, H, K), got " + detail::shape_of(q_t));
  if (k_t.sizes() != q_t.sizes() || g_t.sizes() != q_t.sizes()) {
    detail::fail(where, "k_t and g_t must match q_t's shape " + detail::shape_of(q_t));
  }
  if (v_t.dim() != 3 || v_t.size(0) != q_t.size(0) || v_t.size(1) != q_t.size(1)) {
    detail::fail(where, "v_t must be (B, H, V), got " + detail::shape_of(v_t));
  }
  if (beta_t.dim() != 2 || beta_t.size(0) != q_t.size(0) || beta_t.size(1) != q_t.size(1)) {
    detail::fail(where, "beta_t must be (B, H), got " + detail::shape_of(beta_t));
  }
  if (state.dim() != 4 || state.size(0) != q_t.size(0) || state.size(1) != q_t.size(1) ||
      state.size(2) != q_t.size(2) || state.size(3) != v_t.size(2)) {
    detail::fail(where, "state must be (B, H, K, V), got " + detail::shape_of(state));
  }
  const auto cdt = detail::compute_dtype(q_t);
  auto result = step(q_t.to(cdt), k_t.to(cdt), v_t.to(cdt), g_t.to(cdt), beta_t.to(cdt),
                     state.to(cdt), detail::resolve_scale(scale, q_t.size(2)));
  result.output = result.output.to(q_t.scalar_type());
  return result;
}

KdaResult kda_recurrent(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                        const torch::Tensor& g, const torch::Tensor& beta,
                        const std::optional<torch::Tensor>& initial_state,
                        std::optional<double> scale) {
  detail::check_sequence_args("kda_recurrent", q, k, v, g, beta, initial_state);
  const auto cdt = detail::compute_dtype(q);
  const std::int64_t B = q.size(0), T = q.size(1), H = q.size(2), K = q.size(3), V = v.size(3);
  const double s = detail::resolve_scale(scale, K);
  const auto qc = q.to(cdt), kc = k.to(cdt), vc = v.to(cdt), gc = g.to(cdt), bc = beta.to(cdt);
  torch::Tensor S = (initial_state && initial_state->defined())
                        ? initial_state->to(cdt)
                        : torch::zeros({B, H, K, V}, qc.options());  // (B, H, K, V)
  std::vector<torch::Tensor> outputs;
  outputs.reserve(static_cast<std::size_t>(T));
  for (std::int64_t t = 0; t < T; ++t) {
    auto r = step(qc.select(1, t), kc.select(1, t), vc.select(1, t), gc.select(1, t),
                  bc.select(1, t), S, s);
    outputs.push_back(r.output);  // (B, H, V)
    S = r.final_state;
  }
  auto out = T > 0 ? torch::stack(outputs, 1) : torch::zeros({B, 0, H, V}, qc.options());
  return {out.to(q.scalar_type()), S};  // (B, T, H, V), (B, H, K, V)
}

}  // namespace k3lab::models
