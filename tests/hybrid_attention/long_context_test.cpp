// Long-context probes against independent references: the streamed (chunked, stateful) forward
// against one plain forward over the whole sequence, decode drift small for a consistent model,
// state norms against a direct computation.
#include <gtest/gtest.h>

#include <cmath>

#include <torch/torch.h>

#include "k3lab/core/rng.hpp"
#include "k3lab/models/memory_accounting.hpp"
#include "hybrid_attention/long_context.hpp"
#include "train/tiny_training.hpp"

namespace k3lab::experiments::hybrid_attention {
namespace {

// The trainer tests' tiny model with a 64-token vocabulary.
models::ModelConfig tiny(const std::string& schedule) {
  auto c = train::testing::tiny_model(schedule);
  c.vocab_size = 64;
  return c;
}

std::vector<std::int64_t> random_tokens(std::int64_t n, std::uint64_t seed) {
  core::Rng rng(seed);
  std::vector<std::int64_t> t(static_cast<std::size_t>(n));
  for (auto& x : t) x = static_cast<std::int64_t>(rng.below(64));
  return t;
}

class StreamedForwardTest : public ::testing::TestWithParam<std::string> {};

TEST_P(StreamedForwardTest, MatchesOnePlainForward) {
  models::DecoderLM model(tiny(GetParam()), 3);
  model->eval();
  const std::int64_t rows = 2, length = 48;
  const auto tokens = random_tokens(rows * length, 9);
  StreamOptions options;
  options.chunk = 16;
  options.norm_positions = {16, 48};
  const torch::Device cpu(torch::kCPU);
  const auto streamed = streamed_forward(model, tokens, rows, length, options, cpu);

  torch::NoGradGuard no_grad;
  const auto input = torch::tensor(tokens).reshape({rows, length});
  const auto logits = model->forward(input);  // (rows, L, V)
  const auto argmax = logits.argmax(-1).contiguous();
  const auto log_probs = torch::log_softmax(logits.slice(1, 0, length - 1), -1);
  const auto nll = -log_probs.gather(-1, input.slice(1, 1, length).unsqueeze(-1)).squeeze(-1).contiguous();
  int mismatched = 0;
  for (std::int64_t i = 0; i < rows * length; ++i) mismatched += streamed.predictions[i] != argmax.data_ptr<std::int64_t>()[i];
  EXPECT_EQ(mismatched, 0);
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t t = 0; t < length - 1; ++t) {
      EXPECT_NEAR(streamed.losses[r * (length - 1) + t], nll[r][t].item<float>(), 1e-4);
    }
  }
  const auto counts = models::count_mixers(GetParam());
  if (counts.kda > 0) {
    ASSERT_EQ(streamed.kda_state_norms.size(), 2u);
    ASSERT_EQ(streamed.kda_state_norms[0].size(), 2u);
    EXPECT_GT(streamed.kda_state_norms[1][0], 0.0);
  } else {
    EXPECT_TRUE(streamed.kda_state_norms[0].empty());
  }
  // Measured state bytes grow with the cache exactly as the accounting says (float32 everywhere here).
  models::MemoryPrecision fp32{4, 4, 4};
  const auto accounting = models::inference_memory(tiny(GetParam()), fp32);
  EXPECT_EQ(streamed.state_bytes, rows * accounting.per_request(length));
}

INSTANTIATE_TEST_SUITE_P(Arms, StreamedForwardTest, ::testing::Values("MMMM", "KKKK", "KKKM"));

TEST(StreamedForward, RejectsNormPositionsOffChunkBoundaries) {
  models::DecoderLM model(tiny("KKKM"), 3);
  const auto tokens = random_tokens(32, 1);
  StreamOptions options;
  options.chunk = 16;
  options.norm_positions = {20};
  EXPECT_THROW(streamed_forward(model, tokens, 1, 32, options, torch::Device(torch::kCPU)), std::invalid_argument);
}

TEST(DecodeDrift, DecodeStepsAgreeWithChunkedPrefill) {
  models::DecoderLM model(tiny("KKKM"), 4);
  model->eval();
  const auto tokens = random_tokens(40, 2);
  const auto drift = decode_drift(model, tokens, 16, torch::Device(torch::kCPU));
  EXPECT_EQ(drift.tokens, 40);
  EXPECT_LT(drift.max_abs_logit_difference, 1e-3);
  EXPECT_LT(drift.relative_state_difference, 1e-4);
  EXPECT_GE(drift.relative_state_difference, 0.0);
}

TEST(KdaStateNorms, MeanFrobeniusOverLayersAndHeads) {
  models::InferenceState state;
  state.layers.resize(3);
  state.layers[0].kda.recurrent = torch::full({1, 2, 2, 2}, 1.0);  // per head norm 2
  state.layers[2].kda.recurrent = torch::full({1, 2, 2, 2}, 2.0);  // per head norm 4
  const auto norms = kda_state_norms(state);
  ASSERT_EQ(norms.size(), 1u);
  EXPECT_DOUBLE_EQ(norms[0], 3.0);
  EXPECT_TRUE(kda_state_norms(models::InferenceState{}).empty());
}

TEST(InferenceProbe, MeasuresStateBytesAndTimes) {
  models::DecoderLM model(tiny("KKKM"), 4);
  const auto tokens = random_tokens(32, 3);
  const auto probe = inference_probe(model, tokens, 16, 4, torch::Device(torch::kCPU));
  models::MemoryPrecision fp32{4, 4, 4};
  EXPECT_EQ(probe.state_bytes, models::inference_memory(tiny("KKKM"), fp32).per_request(36));
  EXPECT_FALSE(probe.peak_bytes.has_value());  // CPU: not measured, never guessed
  EXPECT_GT(probe.prefill_seconds, 0.0);
}

TEST(PrefillChunk, DividesTheTrainingWindow) {
  EXPECT_EQ(prefill_chunk(8000), 2000);
  EXPECT_EQ(prefill_chunk(64), 64);
  EXPECT_EQ(prefill_chunk(4099), 1);  // a prime above the limit
  EXPECT_EQ(prefill_chunk(3000, 1000), 1000);
}

}  // namespace
}  // namespace k3lab::experiments::hybrid_attention
