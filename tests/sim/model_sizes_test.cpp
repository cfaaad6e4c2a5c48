// Sizes against the numbers in reference/memsim.md (sections 0, 1.1, 2.1 and 3.2), computed there
// independently from the model configs.
#include <gtest/gtest.h>

#include "k3lab/sim/fixed_split_pool.hpp"
#include "k3lab/sim/model_sizes.hpp"

namespace k3lab::sim {
namespace {

HybridModelConfig kimi_k3(std::uint32_t tp) {
  HybridModelConfig m;
  m.name = "kimi-k3";
  m.kda_layers = 69;
  m.mla_layers = 24;
  m.kda_heads = 96;
  m.kda_head_dim = 128;
  m.kda_conv_kernel = 4;
  m.tensor_parallel = tp;
  m.kv_lora_rank = 512;
  m.qk_rope_head_dim = 64;
  return m;
}

HybridModelConfig kimi_linear(std::uint32_t tp) {
  HybridModelConfig m = kimi_k3(tp);
  m.name = "kimi-linear-48b-a3b";
  m.kda_layers = 20;
  m.mla_layers = 7;
  m.kda_heads = 32;
  return m;
}

TEST(ModelSizes, KimiK3MatchesTheReferenceTable) {
  EXPECT_EQ(kimi_k3(1).kda_state_bytes_per_layer(), 6'512'640);
  EXPECT_EQ(kimi_k3(1).state_bytes_per_request(), 449'372'160);
  EXPECT_EQ(kimi_k3(8).kda_state_bytes_per_layer(), 814'080);
  EXPECT_EQ(kimi_k3(8).state_bytes_per_request(), 56'171'520);
  EXPECT_EQ(kimi_k3(16).kda_state_bytes_per_layer(), 407'040);
  EXPECT_EQ(kimi_k3(16).state_bytes_per_request(), 28'085'760);
  EXPECT_EQ(kimi_k3(8).mla_bytes_per_token(), 27'648);
  EXPECT_EQ(kimi_k3(8).mla_bytes_per_token() * 64, 1'769'472);  // one 64-token page
}

TEST(ModelSizes, KimiLinearMatchesTheReferenceTable) {
  EXPECT_EQ(kimi_linear(1).kda_state_bytes_per_layer(), 2'170'880);
  EXPECT_EQ(kimi_linear(1).state_bytes_per_request(), 43'417'600);
  EXPECT_EQ(kimi_linear(2).state_bytes_per_request(), 21'708'800);
  EXPECT_EQ(kimi_linear(4).kda_state_bytes_per_layer(), 542'720);
  EXPECT_EQ(kimi_linear(1).mla_bytes_per_token(), 8'064);
  EXPECT_EQ(kimi_linear(1).mla_bytes_per_token() * 64, 516'096);
}

TEST(ModelSizes, VllmPaddedBlockSizesMatchTheReference) {
  EXPECT_EQ(padded_layout(kimi_linear(1), 16).block_tokens, 1888u);
  EXPECT_EQ(padded_layout(kimi_linear(1), 64).block_tokens, 1920u);
  EXPECT_EQ(padded_layout(kimi_k3(8), 16).block_tokens, 720u);
  EXPECT_EQ(padded_layout(kimi_k3(8), 64).block_tokens, 768u);
  const PaddedLayout k3 = padded_layout(kimi_k3(16), 16);
  EXPECT_EQ(k3.block_tokens, 368u);  // ceil(407040 / 1152) = 354 -> 368
  EXPECT_EQ(k3.group_layers, 24u);
  EXPECT_EQ(k3.state_groups, 3u);    // ceil(69 / 24)
  EXPECT_EQ(k3.kv_groups, 1u);
  EXPECT_EQ(k3.layer_page_bytes, 368 * 1152);
  EXPECT_EQ(k3.block_bytes, 24 * 368 * 1152);
}

TEST(ModelSizes, SglangSplitOfTheKimiLinearExample) {
  // memsim.md 1.1: 25 GiB, ratio 0.9 -> 292 state slots and ~1.75 M MLA tokens at page size 1.
  const Bytes budget = 25LL << 30;
  const auto g = FixedSplitPool::split(budget, kimi_linear(1).state_bytes_per_request(),
                                       kimi_linear(1).mla_bytes_per_token(), 1, 0.9, 0.0);
  EXPECT_EQ(g.state_slots, 292u);
  EXPECT_EQ(g.kv_pages, 1'756'647u);  // (25 GiB - 292 * 43,417,600) / 8,064, rounded down
  EXPECT_EQ(g.rounding_bytes(), budget - 292LL * 43'417'600 - 1'756'647LL * 8'064);
}

TEST(ModelSizes, RejectsConfigsThatCannotShard) {
  HybridModelConfig m = kimi_k3(7);
  EXPECT_THROW(m.validate(), std::invalid_argument);
  m.tensor_parallel = 8;
  EXPECT_NO_THROW(m.validate());
  m.kda_layers = 0;
  EXPECT_THROW(m.validate(), std::invalid_argument);
}

}  // namespace
}  // namespace k3lab::sim
