// Residual paths: the AttnRes source bookkeeping traced by hand (zero queries = uniform averages),
// the depth softmax against an element-wise reference, and AttnRes inside the decoder.
#include <k3lab/core/rng.hpp>
#include <k3lab/models/decoder_lm.hpp>
#include <k3lab/models/memory_accounting.hpp>
#include <k3lab/models/param_count.hpp>
#include <k3lab/models/random_tensor.hpp>
#include <k3lab/models/residual.hpp>
#include <k3lab/models/tensor_compare.hpp>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "model_test_configs.hpp"

namespace k3lab::models {
namespace {

std::vector<torch::Tensor> distinct_vectors(int n) {
  core::Rng rng(42);
  std::vector<torch::Tensor> out;
  for (int i = 0; i < n; ++i) out.push_back(normal_tensor({1, 2, 4}, rng, 0, 1, torch::kDouble));
  return out;
}

torch::Tensor mean_of(const std::vector<torch::Tensor>& xs) {
  auto sum = xs[0];
  for (std::size_t i = 1; i < xs.size(); ++i) sum = sum + xs[i];
  return sum / static_cast<double>(xs.size());
}

void expect_same(const torch::Tensor& expected, const torch::Tensor& got, const char* what) {
  EXPECT_LT((expected - got).abs().max().item<double>(), 1e-12) << what;
}

TEST(StandardResidual, AccumulatesSublayerOutputs) {
  StandardResidualImpl path;
  const auto v = distinct_vectors(3);
  auto s = path.start(v[0]);
  s->add(0, v[1]);
  expect_same(v[0] + v[1], s->input(1), "input 1");
  s->add(1, v[2]);
  expect_same(v[0] + v[1] + v[2], s->output(), "output");
}

TEST(FullAttnRes, ZeroQueriesAverageEmbeddingAndEveryEarlierOutput) {
  AttnResidualImpl path(ResidualMode::FullAttnRes, 2, 4, 1);
  path.to(torch::kDouble);
  const auto v = distinct_vectors(5);  // e, f0, f1, f2, f3
  auto s = path.start(v[0]);
  expect_same(v[0], s->input(0), "input 0");
  s->add(0, v[1]);
  expect_same(mean_of({v[0], v[1]}), s->input(1), "input 1");
  s->add(1, v[2]);
  expect_same(mean_of({v[0], v[1], v[2]}), s->input(2), "input 2");
  s->add(2, v[3]);
  s->add(3, v[4]);
  expect_same(mean_of(v), s->output(), "output");
}

TEST(BlockAttnRes, SealsBlocksAtMultiplesOfTheBlockSize) {
  // 3 decoder layers (6 sublayers), blocks of 2 layers. Sources seen by each consumer:
  //   s0: [e]                 then seal e
  //   s1: [e, f0]             s2: [e, f0+f1]          s3: [e, f0+f1+f2]
  //   s4: [e, f0..f3]         then seal f0..f3        s5: [e, f0..f3, f4]
  //   out: [e, f0..f3, f4+f5]
  AttnResidualImpl path(ResidualMode::BlockAttnRes, 3, 4, 2);
  path.to(torch::kDouble);
  const auto v = distinct_vectors(7);
  const auto& e = v[0];
  auto s = path.start(e);
  expect_same(e, s->input(0), "s0");
  s->add(0, v[1]);
  expect_same(mean_of({e, v[1]}), s->input(1), "s1");
  s->add(1, v[2]);
  expect_same(mean_of({e, v[1] + v[2]}), s->input(2), "s2");
  s->add(2, v[3]);
  expect_same(mean_of({e, v[1] + v[2] + v[3]}), s->input(3), "s3");
  s->add(3, v[4]);
  const auto block1 = v[1] + v[2] + v[3] + v[4];
  expect_same(mean_of({e, block1}), s->input(4), "s4");
  s->add(4, v[5]);
  expect_same(mean_of({e, block1, v[5]}), s->input(5), "s5");
  s->add(5, v[6]);
  expect_same(mean_of({e, block1, v[5] + v[6]}), s->output(), "output");
}

TEST(AttnResidual, DepthSoftmaxMatchesElementwiseReference) {
  AttnResidualImpl path(ResidualMode::FullAttnRes, 1, 4, 1);
  path.to(torch::kDouble);
  core::Rng rng(3);
  {
    torch::NoGradGuard no_grad;
    path.queries.copy_(normal_tensor({3, 4}, rng, 0, 1, torch::kDouble));
    path.key_gains.copy_(uniform_tensor({3, 4}, rng, 0.5, 1.5, torch::kDouble));
  }
  const auto v = distinct_vectors(3);
  const auto got = path.mix(v, 1);
  auto va = [&](int i, int t, int d) { return v[i][0][t][d].item<double>(); };
  for (int t = 0; t < 2; ++t) {
    double logits[3];
    for (int i = 0; i < 3; ++i) {
      double ms = 0.0;
      for (int d = 0; d < 4; ++d) ms += va(i, t, d) * va(i, t, d) / 4.0;
      logits[i] = 0.0;
      for (int d = 0; d < 4; ++d) {
        logits[i] += path.queries[1][d].item<double>() * path.key_gains[1][d].item<double>() * va(i, t, d) / std::sqrt(ms + 1e-6);
      }
    }
    const double z = std::exp(logits[0]) + std::exp(logits[1]) + std::exp(logits[2]);
    for (int d = 0; d < 4; ++d) {
      double expected = 0.0;
      for (int i = 0; i < 3; ++i) expected += std::exp(logits[i]) / z * va(i, t, d);
      EXPECT_NEAR(got[0][t][d].item<double>(), expected, 1e-12);
    }
  }
}

class AttnResDecoder : public ::testing::TestWithParam<ResidualMode> {};

TEST_P(AttnResDecoder, CountsTrainsAndDecodesLikeForward) {
  auto config = testing::tiny_config("KKKMA");
  config.residual.mode = GetParam();
  config.residual.block_size = 2;
  DecoderLM model(config, 4);
  EXPECT_EQ(count_parameters(config), parameter_count(*model));
  EXPECT_EQ(parameter_breakdown(config).residual, 2 * 11 * 32);

  const auto tokens = torch::arange(0, 24, torch::kLong).remainder(50).view({2, 12});
  // The pseudo-queries start at zero but receive gradient, so the depth mixing can learn.
  model->forward(tokens).pow(2).mean().backward();
  const auto params = model->named_parameters();
  EXPECT_GT(params["residual.queries"].grad().abs().sum().item<double>(), 0.0);

  model->to(torch::kDouble);
  {
    torch::NoGradGuard no_grad;
    params["residual.queries"].normal_(0.0, 0.5);  // away from the uniform start
    const auto full = model->forward(tokens);
    auto state = model->new_inference_state();
    std::vector<torch::Tensor> pieces{model->forward_with_state(tokens.narrow(1, 0, 5), state)};
    for (int t = 5; t < 12; ++t) pieces.push_back(model->forward_with_state(tokens.narrow(1, t, 1), state));
    EXPECT_LT(rmse_ratio(full, torch::cat(pieces, 1)), 1e-9);
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, AttnResDecoder, ::testing::Values(ResidualMode::FullAttnRes, ResidualMode::BlockAttnRes),
                         [](const auto& info) { return to_string(info.param); });

TEST(ResidualBank, SourcesPerTokenFollowTheMode) {
  auto c = testing::tiny_config(k3_schedule(93));
  EXPECT_EQ(residual_sources_per_token(c), 1);
  c.residual.mode = ResidualMode::FullAttnRes;
  EXPECT_EQ(residual_sources_per_token(c), 187);
  c.residual.mode = ResidualMode::BlockAttnRes;
  c.residual.block_size = 12;
  EXPECT_EQ(residual_sources_per_token(c), 9);  // 8 sealed blocks incl. the embedding + the partial one
}

}  // namespace
}  // namespace k3lab::models
