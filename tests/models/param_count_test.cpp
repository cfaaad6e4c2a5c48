// The closed-form parameter count against the built modules, and the width-matching rule.
#include <k3lab/models/decoder_lm.hpp>
#include <k3lab/models/param_count.hpp>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "model_test_configs.hpp"

namespace k3lab::models {
namespace {

std::vector<ModelConfig> varied_configs() {
  std::vector<ModelConfig> configs;
  configs.push_back(testing::tiny_config(k3_schedule(8)));  // hybrid, K3 gates, tied
  auto kimi_linear = testing::tiny_config("KKKK");
  kimi_linear.kda.gate_lower_bound = std::nullopt;
  kimi_linear.kda.full_rank_output_gate = false;
  kimi_linear.kda.gate_rank = 8;
  kimi_linear.kda.conv_kernel = 3;
  kimi_linear.tie_embeddings = false;
  configs.push_back(kimi_linear);
  auto mla_lora = testing::tiny_config("MMM");
  mla_lora.mla.q_lora_rank = 12;
  mla_lora.mla.output_gate = false;
  configs.push_back(mla_lora);
  auto attention = testing::tiny_config("AAAA");
  attention.tie_embeddings = false;
  attention.ffn.kind = FfnKind::SituGlu;
  configs.push_back(attention);
  auto mixed = testing::tiny_config("KAMKA");
  mixed.ffn.quant.weights = MxElement::Fp4E2M1;
  configs.push_back(mixed);
  return configs;
}

TEST(ParameterCount, FormulaMatchesBuiltModel) {
  for (const auto& config : varied_configs()) {
    DecoderLM model(config, 1);
    EXPECT_EQ(count_parameters(config), parameter_count(*model)) << config.schedule;
  }
}

TEST(ParameterCount, BreakdownSeparatesEmbeddings) {
  auto c = testing::tiny_config("KM");
  const auto tied = parameter_breakdown(c);
  EXPECT_EQ(tied.embedding, 50 * 32);
  EXPECT_EQ(tied.lm_head, 0);
  c.tie_embeddings = false;
  EXPECT_EQ(parameter_breakdown(c).total() - tied.total(), 50 * 32);
  EXPECT_EQ(tied.non_embedding(), tied.total() - 50 * 32);
}

TEST(MatchParameters, EveryArmLandsWithinHalfAPercent) {
  // Three arms of the hybrid-attention ablation at one proxy size.
  auto base = testing::tiny_config("K");
  base.vocab_size = 512;
  base.hidden_size = 128;
  base.kda.num_heads = 2;
  base.kda.head_dim = 64;
  base.mla.num_heads = 2;
  base.mla.kv_lora_rank = 64;
  base.mla.qk_nope_head_dim = 64;
  base.mla.qk_rope_head_dim = 32;
  base.mla.v_head_dim = 64;
  base.attention.num_heads = 2;
  base.attention.head_dim = 64;
  const std::int64_t target = 3'000'000;
  for (const auto& schedule : {k3_schedule(12), uniform_schedule(MixerKind::Kda, 12), uniform_schedule(MixerKind::Attention, 12)}) {
    auto c = base;
    c.schedule = schedule;
    const auto matched = match_parameters(c, target);
    EXPECT_EQ(matched.ffn.intermediate_size % 8, 0);
    const auto total = count_parameters(matched);
    EXPECT_LE(std::abs(static_cast<double>(total - target)) / target, 0.005) << schedule << " " << total;
    // One step of 8 further away would be worse: the closest width was chosen.
    auto wider = matched;
    wider.ffn.intermediate_size += 8;
    EXPECT_GE(std::abs(count_parameters(wider) - target), std::abs(total - target));
  }
}

TEST(MatchParameters, ExplainsImpossibleTargets) {
  auto c = testing::tiny_config(k3_schedule(4));
  try {
    match_parameters(c, 1000);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("above the target"), std::string::npos) << e.what();
  }
  // Halfway between two widths: one step of 8 is 3 * 32 * 4 * 8 = 3072 parameters, so the best
  // width misses by 1536, more than 1% of the ~125k target.
  c.ffn.intermediate_size = 256;
  const auto between = count_parameters(c) + 1536;
  EXPECT_THROW(match_parameters(c, between, 0.01), std::invalid_argument);
  EXPECT_NO_THROW(match_parameters(c, between, 0.02));
}

TEST(MatchParameters, QuantisedWidthsStayInWholeMxBlocks) {
  auto c = testing::tiny_config("KKKM");
  c.ffn.intermediate_size = 1024;
  const auto target = count_parameters(c) + 3000;  // 3000 is about one step of 8 (3072)
  EXPECT_EQ(match_parameters(c, target, 0.01).ffn.intermediate_size, 1032);
  c.ffn.quant.weights = MxElement::Fp4E2M1;  // steps of 32 now (12288 parameters)
  EXPECT_EQ(match_parameters(c, target, 0.01).ffn.intermediate_size, 1024);
}

}  // namespace
}  // namespace k3lab::models
