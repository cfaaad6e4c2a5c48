// Inference memory accounting against Kimi K3's published dimensions (reference/kda.md 5.2) and
// against the bytes a real decode leaves in the caches.
#include <k3lab/models/decoder_lm.hpp>
#include <k3lab/models/memory_accounting.hpp>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "model_test_configs.hpp"

namespace k3lab::models {
namespace {

ModelConfig k3_attention_dims() {
  ModelConfig c;
  c.vocab_size = 163840;
  c.hidden_size = 7168;
  c.schedule = k3_schedule(93);
  c.kda.num_heads = 96;
  c.kda.head_dim = 128;
  c.mla.num_heads = 96;
  c.mla.q_lora_rank = 1536;
  c.mla.kv_lora_rank = 512;
  c.mla.qk_nope_head_dim = 128;
  c.mla.qk_rope_head_dim = 64;
  c.mla.v_head_dim = 128;
  c.ffn.intermediate_size = 33792;
  return c;
}

TEST(MemoryAccounting, MatchesKimiK3PublishedFigures) {
  const auto m = inference_memory(k3_attention_dims());
  EXPECT_EQ(m.kv_bytes_per_token, 27648);                       // 24 MLA x 1,152 B (bf16)
  EXPECT_EQ(m.recurrent_state_bytes, 69LL * 96 * 128 * 128 * 4);  // 414 MiB fp32
  EXPECT_NEAR(m.recurrent_state_bytes / (1024.0 * 1024.0), 414.0, 0.5);
  EXPECT_EQ(m.conv_state_bytes, 69LL * 3 * 12288 * 3 * 2);       // 14.6 MiB bf16
  // 1M-token request: 27.0 GiB of MLA latents.
  EXPECT_NEAR(1048576.0 * m.kv_bytes_per_token / (1024.0 * 1024.0 * 1024.0), 27.0, 0.01);
}

TEST(MemoryAccounting, FullAttentionGrowsTwoHeadsWidthsPerTokenPerLayer) {
  auto c = testing::tiny_config("AAA");
  const auto m = inference_memory(c, {4, 2, 2});
  EXPECT_EQ(m.fixed_bytes(), 0);
  EXPECT_EQ(m.kv_bytes_per_token, 3 * 2 * 2 * 16 * 2);
  EXPECT_EQ(m.per_request(100), 100 * m.kv_bytes_per_token);
}

TEST(MemoryAccounting, EqualsBytesHeldAfterARealDecode) {
  for (const auto& schedule : {std::string("KKKM"), std::string("KAMK")}) {
    const auto config = testing::tiny_config(schedule);
    DecoderLM model(config, 2);
    auto state = model->new_inference_state();
    torch::NoGradGuard no_grad;
    const auto tokens = torch::arange(0, 2 * 9, torch::kLong).remainder(50).view({2, 9});
    model->forward_with_state(tokens.narrow(1, 0, 5), state);
    for (int t = 5; t < 9; ++t) model->forward_with_state(tokens.narrow(1, t, 1), state);
    // A float32 model keeps every cache in float32.
    const auto expected = inference_memory(config, {4, 4, 4}).per_request(9) * 2;
    EXPECT_EQ(state.bytes(), expected) << schedule;
    EXPECT_EQ(state.position, 9);
  }
}

}  // namespace
}  // namespace k3lab::models
