// MLA: the absorbed (latent-cache) form against the plain per-head form, cache accounting, and
// causality.
#include <k3lab/models/init.hpp>
#include <k3lab/models/mla.hpp>
#include <k3lab/models/random_tensor.hpp>
#include <k3lab/models/tensor_compare.hpp>

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace k3lab::models {
namespace {

MlaOptions small_mla_options(bool k3_style) {
  MlaOptions o;
  o.hidden_size = 48;
  o.num_heads = 3;
  o.kv_lora_rank = 24;
  o.qk_nope_head_dim = 16;
  o.qk_rope_head_dim = 8;
  o.v_head_dim = 12;
  o.q_lora_rank = k3_style ? 20 : 0;
  o.output_gate = k3_style;
  return o;
}

class MlaForms : public ::testing::TestWithParam<bool> {};

TEST_P(MlaForms, AbsorbedDecodeMatchesPlainForm) {
  Mla mla(small_mla_options(GetParam()));
  initialize_parameters(*mla, 3);
  mla->to(torch::kDouble);
  core::Rng rng(4);
  const auto x = normal_tensor({2, 17, 48}, rng, 0, 1, torch::kDouble);
  torch::NoGradGuard no_grad;
  const auto plain = mla->forward(x);
  MlaCache cache;
  std::vector<torch::Tensor> pieces{mla->forward_absorbed(x.narrow(1, 0, 6), cache)};  // prefill
  for (std::int64_t t = 6; t < 17; ++t) pieces.push_back(mla->forward_absorbed(x.narrow(1, t, 1), cache));
  const auto stats = compare_tensors(plain, torch::cat(pieces, 1));
  EXPECT_LT(stats.rmse_ratio, 1e-10) << describe(stats);
  EXPECT_EQ(cache.length(), 17);
  EXPECT_EQ(cache.bytes(), 2 * 17 * MlaImpl::cache_bytes_per_token(mla->options(), 8));
}

INSTANTIATE_TEST_SUITE_P(Variants, MlaForms, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "K3" : "KimiLinear"; });

TEST(Mla, FutureTokensDoNotChangeEarlierOutputs) {
  Mla mla(small_mla_options(true));
  initialize_parameters(*mla, 5);
  core::Rng rng(6);
  auto x = normal_tensor({1, 10, 48}, rng);
  torch::NoGradGuard no_grad;
  const auto before = mla->forward(x);
  x.narrow(1, 7, 3).normal_();
  const auto after = mla->forward(x);
  EXPECT_TRUE(torch::allclose(before.narrow(1, 0, 7), after.narrow(1, 0, 7)));
  EXPECT_FALSE(torch::allclose(before.narrow(1, 7, 3), after.narrow(1, 7, 3)));
}

TEST(Mla, K3CacheIs1152BytesPerTokenInBf16) {
  MlaOptions k3;  // defaults: kv_lora_rank 512, qk_rope_head_dim 64
  EXPECT_EQ(MlaImpl::cache_bytes_per_token(k3, 2), 1152);
}

}  // namespace
}  // namespace k3lab::models
