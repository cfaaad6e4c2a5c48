#pragma once
// Random KDA inputs for the tests, drawn from k3lab's generator (fla's test recipe, kda.md sec. 3:
// L2-normalised q and k, bounded-gate g, beta = sigmoid(N(0, 1)), h0 ~ N(0, 1)).
#include <k3lab/core/rng.hpp>
#include <k3lab/models/kda.hpp>
#include <k3lab/models/kda_gate.hpp>
#include <k3lab/models/random_tensor.hpp>

#include <torch/torch.h>

#include <optional>

namespace k3lab::models::testing {

struct KdaInputs {
  torch::Tensor q, k, v, g, beta, h0;  // (B,T,H,K) x2, (B,T,H,V), (B,T,H,K), (B,T,H), (B,H,K,V)

  KdaInputs to(torch::ScalarType dtype) const {
    return {q.to(dtype), k.to(dtype), v.to(dtype), g.to(dtype), beta.to(dtype), h0.to(dtype)};
  }
};

inline KdaInputs make_kda_inputs(std::int64_t B, std::int64_t T, std::int64_t H, std::int64_t K,
                                 std::int64_t V, std::uint64_t seed, double lower_bound = -5.0) {
  core::Rng rng(seed);
  KdaInputs in;
  in.q = l2_normalize(normal_tensor({B, T, H, K}, rng, 0, 1, torch::kDouble));
  in.k = l2_normalize(normal_tensor({B, T, H, K}, rng, 0, 1, torch::kDouble));
  in.v = normal_tensor({B, T, H, V}, rng, 0, 1, torch::kDouble);
  in.g = kda_gate_lower_bound(normal_tensor({B, T, H, K}, rng, 0, 1, torch::kDouble), std::nullopt,
                              std::nullopt, lower_bound);
  in.beta = torch::sigmoid(normal_tensor({B, T, H}, rng, 0, 1, torch::kDouble));
  in.h0 = normal_tensor({B, H, K, V}, rng, 0, 1, torch::kDouble);
  return in;
}

// Output, final state and the gradients of every input under the loss sum(o * d_o) + sum(S * d_S).
struct KdaRun {
  torch::Tensor o, state, dq, dk, dv, dg, dbeta, dh0;
};

template <typename Fn>
KdaRun run_with_grads(const KdaInputs& in, bool with_h0, const torch::Tensor& d_o,
                      const torch::Tensor& d_state, Fn fn) {
  auto leaf = [](const torch::Tensor& t) { return t.detach().clone().requires_grad_(true); };
  auto q = leaf(in.q), k = leaf(in.k), v = leaf(in.v), g = leaf(in.g), beta = leaf(in.beta), h0 = leaf(in.h0);
  const auto r = fn(q, k, v, g, beta, with_h0 ? std::optional<torch::Tensor>(h0) : std::nullopt);
  const auto loss = (r.output.to(torch::kDouble) * d_o).sum() + (r.final_state.to(torch::kDouble) * d_state).sum();
  loss.backward();
  KdaRun run{r.output.detach(), r.final_state.detach(), q.grad(), k.grad(), v.grad(), g.grad(), beta.grad(),
             with_h0 ? h0.grad() : torch::Tensor()};
  return run;
}

}  // namespace k3lab::models::testing
