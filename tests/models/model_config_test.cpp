// ModelConfig JSON round trip and validation messages; the layer-schedule helpers.
#include <k3lab/models/layer_schedule.hpp>
#include <k3lab/models/model_config.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model_test_configs.hpp"

namespace k3lab::models {
namespace {

using nlohmann::json;

std::string error_of(const json& j) {
  try {
    j.get<ModelConfig>();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(LayerSchedule, K3PatternGives69KdaAnd24MlaFor93Layers) {
  const auto schedule = k3_schedule(93);
  ASSERT_EQ(schedule.size(), 93u);
  const auto counts = count_mixers(schedule);
  EXPECT_EQ(counts.kda, 69);
  EXPECT_EQ(counts.mla, 24);
  EXPECT_EQ(counts.attention, 0);
  EXPECT_EQ(schedule.substr(0, 8), "KKKMKKKM");
  EXPECT_EQ(schedule.substr(88), "KKKMM");  // 23rd group, then the final MLA
  EXPECT_EQ(k3_schedule(1), "M");
  EXPECT_EQ(k3_schedule(6), "KKKMKM");
  EXPECT_EQ(uniform_schedule(MixerKind::Attention, 3), "AAA");
}

TEST(LayerSchedule, ParseRejectsUnknownCharactersWithPosition) {
  try {
    parse_schedule("KKxM");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("at layer 2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_schedule(""), std::invalid_argument);
}

TEST(ModelConfigJson, RoundTripsEveryField) {
  auto c = testing::tiny_config("KKKMA");
  c.kda.gate_lower_bound = std::nullopt;
  c.kda.gate_rank = 8;
  c.kda.full_rank_output_gate = false;
  c.mla.q_lora_rank = 12;
  c.mla.output_gate = false;
  c.attention.rope_theta = 0.0;
  c.ffn.kind = FfnKind::SituGlu;
  c.ffn.situ_beta_gate = 3.0;
  c.ffn.situ_beta_up = 20.0;
  c.ffn.quant.weights = MxElement::Fp4E2M1;
  c.ffn.quant.activations = MxElement::Fp8E4M3;
  c.norm_eps = 1e-6;
  c.tie_embeddings = false;
  c.residual.mode = ResidualMode::BlockAttnRes;
  c.residual.block_size = 3;
  const json j = c;
  EXPECT_TRUE(j["kda"]["gate_lower_bound"].is_null());
  const auto back = j.get<ModelConfig>();
  EXPECT_EQ(json(back), j);
  EXPECT_FALSE(back.kda.gate_lower_bound.has_value());
  EXPECT_EQ(back.ffn.quant.weights, MxElement::Fp4E2M1);
  EXPECT_EQ(back.ffn.kind, FfnKind::SituGlu);
  EXPECT_EQ(back.num_layers(), 5);
  EXPECT_EQ(back.residual.mode, ResidualMode::BlockAttnRes);
  EXPECT_EQ(back.residual.block_size, 3);
}

TEST(ModelConfigJson, OmittedFieldsTakeDocumentedDefaults) {
  const json j = {{"vocab_size", 10}, {"hidden_size", 64}, {"schedule", "KM"}, {"ffn", {{"intermediate_size", 128}}}};
  const auto c = j.get<ModelConfig>();
  EXPECT_EQ(c.kda.gate_lower_bound, -5.0);
  EXPECT_EQ(c.kda.chunk_size, 64);
  EXPECT_TRUE(c.tie_embeddings);
  EXPECT_EQ(c.ffn.kind, FfnKind::SwiGlu);
}

TEST(ModelConfigJson, ErrorsNameTheField) {
  json j = testing::tiny_config("KKKM");
  {
    auto bad = j;
    bad["kda"]["num_heads"] = "four";
    EXPECT_NE(error_of(bad).find("model.kda.num_heads: expected an integer"), std::string::npos) << error_of(bad);
  }
  {
    auto bad = j;
    bad["kda"]["num_head"] = 4;
    EXPECT_NE(error_of(bad).find("model.kda.num_head: unknown key (did you mean 'num_heads'?)"), std::string::npos)
        << error_of(bad);
  }
  {
    auto bad = j;
    bad.erase("vocab_size");
    EXPECT_NE(error_of(bad).find("model.vocab_size: required field is missing"), std::string::npos) << error_of(bad);
  }
  {
    auto bad = j;
    bad["mla"]["kv_lora_rank"] = 0;
    EXPECT_NE(error_of(bad).find("model.mla.kv_lora_rank"), std::string::npos) << error_of(bad);
  }
  {
    auto bad = j;
    bad["ffn"]["kind"] = "gelu";
    EXPECT_NE(error_of(bad).find("model.ffn.kind"), std::string::npos) << error_of(bad);
  }
  {
    auto bad = j;
    bad["kda"]["gate_lower_bound"] = 1.0;
    EXPECT_NE(error_of(bad).find("model.kda.gate_lower_bound"), std::string::npos) << error_of(bad);
  }
  {
    auto bad = j;
    bad["schedule"] = "KKQ";
    EXPECT_NE(error_of(bad).find("model.schedule"), std::string::npos) << error_of(bad);
  }
  {
    auto bad = j;
    bad["ffn"]["quant"]["weights"] = "mxfp4";
    bad["ffn"]["intermediate_size"] = 72;  // not whole MX blocks
    EXPECT_NE(error_of(bad).find("model.ffn.intermediate_size"), std::string::npos) << error_of(bad);
  }
}

TEST(ModelConfig, UnusedMixerSectionsAreNotValidated) {
  auto c = testing::tiny_config("AA");
  c.kda.num_heads = 0;  // no KDA layer in the schedule
  EXPECT_NO_THROW(c.validate());
  c.schedule = "KA";
  EXPECT_THROW(c.validate(), std::invalid_argument);
}

}  // namespace
}  // namespace k3lab::models
