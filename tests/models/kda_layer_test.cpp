// The KDA layer: decoding with its fixed-size state (conv window + S) reproduces the layer's
// training forward, for the K3 configuration and the Kimi Linear variant.
#include <k3lab/models/init.hpp>
#include <k3lab/models/kda_layer.hpp>
#include <k3lab/models/memory_accounting.hpp>
#include <k3lab/models/random_tensor.hpp>
#include <k3lab/models/tensor_compare.hpp>

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace k3lab::models {
namespace {

KdaLayerOptions small_kda_options(bool k3) {
  KdaLayerOptions o;
  o.hidden_size = 32;
  o.num_heads = 2;
  o.head_dim = 16;
  o.chunk_size = 16;
  if (!k3) {
    o.gate_lower_bound = std::nullopt;  // softplus gate
    o.full_rank_output_gate = false;
    o.gate_rank = 8;
  }
  return o;
}

torch::Tensor prefill_then_decode(KdaLayer& layer, const torch::Tensor& x, std::int64_t prefill, KdaLayerState& state) {
  std::vector<torch::Tensor> pieces{layer->forward_with_state(x.narrow(1, 0, prefill), state)};
  const auto fixed_bytes = state.bytes();
  for (std::int64_t t = prefill; t < x.size(1); ++t) {
    pieces.push_back(layer->forward_with_state(x.narrow(1, t, 1), state));
    EXPECT_EQ(state.bytes(), fixed_bytes);  // the state does not grow with the sequence
  }
  return torch::cat(pieces, 1);
}

class KdaLayerDecode : public ::testing::TestWithParam<bool> {};

TEST_P(KdaLayerDecode, PrefillPlusDecodeMatchesForwardInFloat64) {
  KdaLayer layer(small_kda_options(GetParam()));
  initialize_parameters(*layer, 7);
  layer->to(torch::kDouble);
  core::Rng rng(8);
  const auto x = normal_tensor({2, 29, 32}, rng, 0, 1, torch::kDouble);
  torch::NoGradGuard no_grad;
  const auto full = layer->forward(x);
  KdaLayerState state;
  const auto stepped = prefill_then_decode(layer, x, 11, state);
  const auto stats = compare_tensors(full, stepped);
  EXPECT_LT(stats.rmse_ratio, 1e-10) << describe(stats);
}

TEST_P(KdaLayerDecode, PureDecodeMatchesForwardInFloat32) {
  KdaLayer layer(small_kda_options(GetParam()));
  initialize_parameters(*layer, 9);
  core::Rng rng(10);
  const auto x = normal_tensor({1, 20, 32}, rng);
  torch::NoGradGuard no_grad;
  const auto full = layer->forward(x);
  KdaLayerState state = layer->initial_state(1, x.options());
  const auto stepped = prefill_then_decode(layer, x, 1, state);
  const auto stats = compare_tensors(full, stepped);
  EXPECT_LT(stats.rmse_ratio, 1e-5) << describe(stats);
}

INSTANTIATE_TEST_SUITE_P(Variants, KdaLayerDecode, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "K3Gate" : "KimiLinearGate"; });

TEST(KdaLayer, StateSizeMatchesMemoryAccounting) {
  KdaLayer layer(small_kda_options(true));
  const auto state = layer->initial_state(3, torch::TensorOptions().dtype(torch::kFloat));
  KdaConfig c;
  c.num_heads = 2;
  c.head_dim = 16;
  c.conv_kernel = 4;
  EXPECT_EQ(state.bytes(), 3 * (kda_state_bytes_per_layer(c, 4) + kda_conv_bytes_per_layer(c, 4)));
}

TEST(KdaLayer, EveryParameterReceivesGradient) {
  KdaLayer layer(small_kda_options(true));
  initialize_parameters(*layer, 11);
  core::Rng rng(12);
  const auto x = normal_tensor({2, 21, 32}, rng);
  layer->forward(x).pow(2).sum().backward();
  for (const auto& p : layer->named_parameters()) {
    ASSERT_TRUE(p.value().grad().defined()) << p.key();
    EXPECT_TRUE(torch::isfinite(p.value().grad()).all().item<bool>()) << p.key();
    EXPECT_GT(p.value().grad().abs().sum().item<double>(), 0.0) << p.key();
  }
}

TEST(KdaLayer, RejectsBadOptionsAndInputs) {
  auto o = small_kda_options(true);
  o.gate_lower_bound = 0.5;
  EXPECT_THROW(KdaLayer{o}, std::invalid_argument);
  KdaLayer layer(small_kda_options(true));
  EXPECT_THROW(layer->forward(torch::zeros({1, 4, 31})), std::invalid_argument);
}

}  // namespace
}  // namespace k3lab::models
