#pragma once
// The routing controls of a top-k MoE router (models/moe_block.hpp), as pure functions over one layer's
// router scores, so each update can be checked by hand (tests/router_balance/router_control_test.cpp).
//   None                Top-k of the raw sigmoid scores s; no loss term, bias stays 0
//   AuxLoss             Switch-style loss  coef * n * sum_j f_j * P_j  added to the primary loss, with
//                       f_j = load_j / (m k) and P_j = mean_i s_ij / sum_r s_ir (sigmoid scores
//                       normalised over all experts, so P sums to 1 like Switch's softmax)
//   FixedStepBias       Top-k of s + b;  after the update  b_j += step * sign(mean load - load_j)
//   QuantileBalancing   Top-k of s + b;  after the update  b_hat_j = -Q_j(s_:j - alpha),
//                       b = b_hat - mean(b_hat)  (K3 Eq. 14, exact estimator; alpha_i is token i's
//                       (k+1)-th largest biased score, Q_j the (floor(q)+1)-th largest margin of
//                       expert j with q = m k / n, i.e. torch.quantile(..., 1 - k/n, "lower") when
//                       q is an integer)
// The bias only selects experts; mixture weights are s_ij / sum over the selected of s_ir.
#include <cstdint>

#include <torch/types.h>

namespace k3lab::models {

enum class RouterControl { None, AuxLoss, FixedStepBias, QuantileBalancing };

bool uses_bias(RouterControl control);

struct Selection {
  torch::Tensor experts;  // (m, k) int64, chosen by s + b
  torch::Tensor weights;  // (m, k) s_ij / sum of the selected s_ir (raw scores: the bias never enters)
  torch::Tensor cutoff;   // (m) alpha_i: the (k+1)-th largest biased score (k = n: -inf)
};

// scores (m, n) in (0, 1), bias (n) -> the Top-k selection and its cutoffs.
Selection select_experts(const torch::Tensor& scores, const torch::Tensor& bias, int top_k);

// Routes per expert: load_j = #{i : j in experts_i}. experts (m, k) -> (n) int64 on the CPU.
torch::Tensor expert_loads(const torch::Tensor& experts, int n_experts);

// Switch-style balance loss (differentiable through scores). scores (m, n), experts (m, k) -> scalar.
torch::Tensor aux_balance_loss(const torch::Tensor& scores, const torch::Tensor& experts, int top_k,
                               double coefficient);

// b_j + step * sign(mean(load) - load_j); an expert at the mean keeps its bias. bias (n), loads (n).
torch::Tensor fixed_step_update(const torch::Tensor& bias, const torch::Tensor& loads, double step);

// K3's Quantile Balancing, exact estimator: scores (m, n) raw, cutoff (m) from the selection made
// with the old bias -> the new, mean-centred bias (n). Needs m * k / n < m.
torch::Tensor quantile_balancing_update(const torch::Tensor& scores, const torch::Tensor& cutoff, int top_k);

}  // namespace k3lab::models
