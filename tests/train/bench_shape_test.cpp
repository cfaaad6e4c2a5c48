// The benchmark's shape (train/bench.hpp): a model the benchmark builds exactly has a shape, and the
// model built from that shape is the same model; any other model has none and the reason names where
// it differs; `schedule` and `record` run one arm and append a record with that shape.
#include <gtest/gtest.h>

#include <sstream>

#include "common/temp_dir.hpp"
#include "k3lab/train/bench.hpp"

namespace k3lab::train {
namespace {

models::ModelConfig hybrid_like_model() {
  models::ModelConfig c;
  c.vocab_size = 256;
  c.hidden_size = 32;
  c.schedule = "KKKM";
  c.kda.num_heads = 2;
  c.kda.head_dim = 16;
  c.kda.chunk_size = 16;
  c.mla.num_heads = 2;
  c.mla.kv_lora_rank = 8;
  c.mla.qk_nope_head_dim = 16;
  c.mla.qk_rope_head_dim = 8;
  c.mla.v_head_dim = 16;
  c.ffn.intermediate_size = 48;
  return c;
}

TEST(BenchShape, AModelTheBenchBuildsHasAShapeThatRebuildsIt) {
  const auto model = hybrid_like_model();
  const auto found = bench_shape(model, 32, 2);
  ASSERT_TRUE(found.shape.has_value()) << found.reason;
  EXPECT_EQ(nlohmann::json(bench_model_config(*found.shape)), nlohmann::json(model));
  EXPECT_EQ(found.shape->key(), "KKKM d32 h2x16 kv8 c16 ffn48 v256 T32 B2 float32");
}

TEST(BenchShape, OtherModelsHaveNoShapeAndTheReasonSaysWhere) {
  auto attn_res = hybrid_like_model();
  attn_res.residual.mode = models::ResidualMode::FullAttnRes;
  const auto residual = bench_shape(attn_res, 32, 2);
  EXPECT_FALSE(residual.shape.has_value());
  EXPECT_NE(residual.reason.find("/residual/mode"), std::string::npos) << residual.reason;
  auto situ = hybrid_like_model();
  situ.ffn.kind = models::FfnKind::SituGlu;
  EXPECT_NE(bench_shape(situ, 32, 2).reason.find("/ffn/kind"), std::string::npos);
  auto rope = hybrid_like_model();
  rope.mla.qk_rope_head_dim = 4;
  EXPECT_FALSE(bench_shape(rope, 32, 2).shape.has_value());
}

TEST(BenchShape, TheScheduleOptionRunsOneArmAndRecordsItsShape) {
  const ::k3lab::testing::TempDir dir("k3lab-bench-shape");
  const auto file = dir.path() / "records.jsonl";
  const auto shape = *bench_shape(hybrid_like_model(), 32, 2).shape;
  const nlohmann::json options = {{"schedule", "KKKM"},
                                  {"d_model", 32},
                                  {"n_heads", 2},
                                  {"head_dim", 16},
                                  {"mla_kv_latent_dim", 8},
                                  {"kda_chunk_size", 16},
                                  {"ffn_size", 48},
                                  {"vocab_size", 256},
                                  {"sequence_length", 32},
                                  {"batch_rows", 2},
                                  {"steps", 1},
                                  {"warmup", 0},
                                  {"device", "cpu"},
                                  {"threads", 1},
                                  {"record", file.string()}};
  std::ostringstream out;
  ASSERT_EQ(run_train_bench(options, out), 0) << out.str();
  const auto read = read_throughput_records(file);
  EXPECT_TRUE(read.warnings.empty());
  ASSERT_EQ(read.records.size(), 1u);
  EXPECT_EQ(read.records[0].shape, shape);
  EXPECT_EQ(read.records[0].device.rfind("cpu: ", 0), 0u) << read.records[0].device;
  EXPECT_GT(read.records[0].tokens_per_s, 0.0);
  const auto command = bench_train_command(shape, "cpu", file);
  EXPECT_EQ(command,
            "k3lab bench train --opt schedule=KKKM --opt d_model=32 --opt n_heads=2 --opt head_dim=16 "
            "--opt mla_kv_latent_dim=8 --opt kda_chunk_size=16 --opt ffn_size=48 --opt vocab_size=256 "
            "--opt sequence_length=32 --opt batch_rows=2 --opt device=cpu --record " +
                file.string());
  std::ostringstream both;
  EXPECT_EQ(run_train_bench({{"schedule", "KKKM"}, {"arms", {"all-kda"}}}, both, default_bench_arms()), 2);
}

}  // namespace
}  // namespace k3lab::train
