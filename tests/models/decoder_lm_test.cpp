// The decoder LM: shapes, incremental decoding against the full forward for every mixer kind,
// deterministic initialisation, input checks, and that a few optimiser steps learn.
#include <k3lab/core/rng.hpp>
#include <k3lab/models/decoder_lm.hpp>
#include <k3lab/models/init.hpp>
#include <k3lab/models/tensor_compare.hpp>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "model_test_configs.hpp"

namespace k3lab::models {
namespace {

torch::Tensor tokens_for(std::int64_t B, std::int64_t T, std::uint64_t seed) {
  core::Rng rng(seed);
  auto t = torch::empty({B, T}, torch::kLong);
  auto a = t.accessor<std::int64_t, 2>();
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t i = 0; i < T; ++i) a[b][i] = static_cast<std::int64_t>(rng.below(50));
  return t;
}

TEST(DecoderLM, ForwardGivesLogitsPerToken) {
  DecoderLM model(testing::tiny_config("KKKM"), 1);
  const auto logits = model->forward(tokens_for(2, 11, 1));
  EXPECT_EQ(logits.sizes(), (std::vector<std::int64_t>{2, 11, 50}));
  EXPECT_TRUE(torch::isfinite(logits).all().item<bool>());
}

class DecoderLMDecode : public ::testing::TestWithParam<std::string> {};

TEST_P(DecoderLMDecode, PrefillThenDecodeMatchesForward) {
  auto config = testing::tiny_config(GetParam());
  config.tie_embeddings = GetParam().size() % 2 == 0;
  DecoderLM model(config, 3);
  model->to(torch::kDouble);
  const auto tokens = tokens_for(2, 21, 4);
  torch::NoGradGuard no_grad;
  const auto full = model->forward(tokens);
  auto state = model->new_inference_state();
  std::vector<torch::Tensor> pieces{model->forward_with_state(tokens.narrow(1, 0, 8), state)};
  for (std::int64_t t = 8; t < 21; ++t) pieces.push_back(model->forward_with_state(tokens.narrow(1, t, 1), state));
  const auto stats = compare_tensors(full, torch::cat(pieces, 1));
  EXPECT_LT(stats.rmse_ratio, 1e-9) << describe(stats);
}

INSTANTIATE_TEST_SUITE_P(Schedules, DecoderLMDecode, ::testing::Values("KKKMM", "KKKK", "MMMM", "AAA", "KAMK"));

TEST(DecoderLM, InitialisationIsDeterministicAndSharedAcrossArms) {
  const auto hybrid = testing::tiny_config("KKKM");
  DecoderLM a(hybrid, 5), b(hybrid, 5), c(hybrid, 6);
  const auto pa = a->named_parameters(), pb = b->named_parameters(), pc = c->named_parameters();
  for (const auto& item : pa) {
    EXPECT_TRUE(torch::equal(item.value(), pb[item.key()])) << item.key();
  }
  EXPECT_FALSE(torch::equal(pa["embed.weight"], pc["embed.weight"]));
  // Another arm with the same seed shares every parameter both models have under the same name.
  DecoderLM other(testing::tiny_config("KKKA"), 5);
  const auto po = other->named_parameters();
  EXPECT_TRUE(torch::equal(pa["embed.weight"], po["embed.weight"]));
  EXPECT_TRUE(torch::equal(pa["blocks.1.kda.q_proj.weight"], po["blocks.1.kda.q_proj.weight"]));
  // Bounded-gate A_log starts at 0 (fla safe_gate); dt_bias is an inverse softplus of dt in [1e-3, 0.1].
  EXPECT_EQ(pa["blocks.0.kda.A_log"].abs().sum().item<double>(), 0.0);
  const auto dt = torch::softplus(pa["blocks.0.kda.dt_bias"]);
  EXPECT_GE(dt.min().item<double>(), 1e-3 * 0.999);
  EXPECT_LE(dt.max().item<double>(), 0.1 * 1.001);
}

TEST(DecoderLM, InitRejectsParametersWithoutARule) {
  struct Odd : torch::nn::Module {
    Odd() { register_parameter("mystery", torch::zeros({3})); }
  };
  Odd odd;
  EXPECT_THROW(initialize_parameters(odd, 1), std::invalid_argument);
}

TEST(DecoderLM, RejectsBadTokens) {
  DecoderLM model(testing::tiny_config("KM"), 1);
  EXPECT_THROW(model->forward(torch::full({1, 3}, 50, torch::kLong)), std::invalid_argument);
  EXPECT_THROW(model->forward(torch::zeros({1, 3}, torch::kInt)), std::invalid_argument);
  EXPECT_THROW(model->forward(torch::zeros({3}, torch::kLong)), std::invalid_argument);
  auto wrong = InferenceState{};
  EXPECT_THROW(model->forward_with_state(torch::zeros({1, 3}, torch::kLong), wrong), std::invalid_argument);
}

TEST(DecoderLM, QuantisedSituArmTrainsOnARepeatedSequence) {
  auto config = testing::tiny_config("KKKM");
  config.ffn.kind = FfnKind::SituGlu;
  config.ffn.quant.weights = MxElement::Fp4E2M1;
  config.ffn.quant.activations = MxElement::Fp8E4M3;
  DecoderLM model(config, 7);
  torch::optim::Adam opt(model->parameters(), torch::optim::AdamOptions(3e-3));
  const auto tokens = tokens_for(2, 33, 8);
  const auto inputs = tokens.narrow(1, 0, 32), targets = tokens.narrow(1, 1, 32);
  auto loss_now = [&] {
    return torch::nn::functional::cross_entropy(model->forward(inputs).reshape({-1, 50}), targets.reshape({-1}));
  };
  const double first = loss_now().item<double>();
  for (int step = 0; step < 40; ++step) {
    opt.zero_grad();
    auto loss = loss_now();
    loss.backward();
    opt.step();
  }
  const double last = loss_now().item<double>();
  EXPECT_LT(last, 0.7 * first) << first << " -> " << last;
}

}  // namespace
}  // namespace k3lab::models
