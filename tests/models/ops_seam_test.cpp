// The kernel seams: a registered implementation is called for its device type, and removing it
// restores the LibTorch path.
#include <k3lab/models/kda_ops.hpp>
#include <k3lab/models/situ_glu_ops.hpp>
#include <k3lab/models/tensor_compare.hpp>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "kda_test_inputs.hpp"

namespace k3lab::models {
namespace {

TEST(KdaOps, DispatchesToRegisteredImplementationForItsDevice) {
  const auto in = testing::make_kda_inputs(1, 20, 2, 8, 8, 3).to(torch::kFloat);
  ASSERT_FALSE(has_kda_chunkwise_impl(c10::DeviceType::CPU));
  const auto libtorch = kda_chunkwise_op(in.q, in.k, in.v, in.g, in.beta, in.h0, 16);
  EXPECT_TRUE(torch::equal(libtorch.output, kda_chunkwise(in.q, in.k, in.v, in.g, in.beta, in.h0, 16).output));

  int calls = 0;
  std::int64_t seen_chunk = 0;
  register_kda_chunkwise_impl(c10::DeviceType::CPU, [&](const KdaChunkwiseArgs& a) {
    ++calls;
    seen_chunk = a.chunk_size;
    EXPECT_TRUE(a.initial_state.has_value());
    return kda_recurrent(a.q, a.k, a.v, a.g, a.beta, a.initial_state, a.scale);
  });
  EXPECT_TRUE(has_kda_chunkwise_impl(c10::DeviceType::CPU));
  EXPECT_FALSE(has_kda_chunkwise_impl(c10::DeviceType::CUDA));
  const auto routed = kda_chunkwise_op(in.q, in.k, in.v, in.g, in.beta, in.h0, 16);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(seen_chunk, 16);
  EXPECT_LT(rmse_ratio(libtorch.output, routed.output), 1e-5);

  register_kda_chunkwise_impl(c10::DeviceType::CPU, nullptr);
  EXPECT_FALSE(has_kda_chunkwise_impl(c10::DeviceType::CPU));
  kda_chunkwise_op(in.q, in.k, in.v, in.g, in.beta, in.h0, 16);
  EXPECT_EQ(calls, 1);
}

TEST(KdaOps, DecodeSeamDispatches) {
  const auto in = testing::make_kda_inputs(1, 1, 2, 8, 8, 4);
  int calls = 0;
  register_kda_decode_impl(c10::DeviceType::CPU, [&](const KdaDecodeArgs& a) {
    ++calls;
    return kda_decode_step(a.q, a.k, a.v, a.g, a.beta, a.state, a.scale);
  });
  kda_decode_op(in.q.select(1, 0), in.k.select(1, 0), in.v.select(1, 0), in.g.select(1, 0), in.beta.select(1, 0), in.h0);
  register_kda_decode_impl(c10::DeviceType::CPU, nullptr);
  kda_decode_op(in.q.select(1, 0), in.k.select(1, 0), in.v.select(1, 0), in.g.select(1, 0), in.beta.select(1, 0), in.h0);
  EXPECT_EQ(calls, 1);
}

TEST(SituGluOps, DispatchesToRegisteredImplementation) {
  const auto gate = torch::linspace(-3, 3, 16);
  const auto up = torch::linspace(2, -2, 16);
  int calls = 0;
  register_situ_glu_impl(c10::DeviceType::CPU, [&](const SituGluArgs& a) {
    ++calls;
    EXPECT_DOUBLE_EQ(a.beta_gate, 2.0);
    EXPECT_DOUBLE_EQ(a.beta_up, 9.0);
    return torch::zeros_like(a.gate);
  });
  EXPECT_EQ(situ_glu_op(gate, up, 2.0, 9.0).abs().sum().item<double>(), 0.0);
  register_situ_glu_impl(c10::DeviceType::CPU, nullptr);
  EXPECT_TRUE(torch::equal(situ_glu_op(gate, up, 2.0, 9.0), situ_glu(gate, up, 2.0, 9.0)));
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace k3lab::models
