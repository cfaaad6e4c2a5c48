// The training-step benchmark runs every arm its caller names at a tiny shape and prints one row per
// arm; bad options are rejected with a message. (Speed itself is never asserted.)
#include <gtest/gtest.h>

#include <sstream>
#include <vector>

#include "k3lab/train/bench.hpp"

namespace k3lab::train {
namespace {

const nlohmann::json kTiny = {{"d_model", 16}, {"n_layers", 4},  {"n_heads", 2},         {"head_dim", 8},
                              {"mla_kv_latent_dim", 8}, {"kda_chunk_size", 16}, {"ffn_size", 32},
                              {"sequence_length", 32}, {"batch_rows", 2}, {"steps", 1}, {"warmup", 0},
                              {"device", "cpu"}, {"threads", 1}};

// Arms as hybrid-attention passes them.
const std::vector<BenchArm> kArms = {{"full-attention", "M"}, {"all-kda", "K"}, {"hybrid-3kda-1mla", "KKKM"}};

TEST(TrainBench, PrintsOneRowPerArm) {
  std::ostringstream out;
  ASSERT_EQ(run_train_bench(kTiny, out, kArms), 0);
  const auto text = out.str();
  for (const char* arm : {"| full-attention | MMMM |", "| all-kda | KKKK |", "| hybrid-3kda-1mla | KKKM |"}) {
    EXPECT_NE(text.find(arm), std::string::npos) << text;
  }
  EXPECT_NE(text.find("n/a"), std::string::npos);  // no MFU on CPU without a peak
}

TEST(TrainBench, JsonOutputWithAPeakGivesMfu) {
  auto options = kTiny;
  options["output"] = "json";
  options["peak_flops"] = 1e12;
  options["arms"] = {"all-kda"};
  std::ostringstream out;
  ASSERT_EQ(run_train_bench(options, out, kArms), 0);
  const auto report = nlohmann::json::parse(out.str());
  ASSERT_EQ(report.at("arms").size(), 1u);
  const auto& row = report.at("arms")[0];
  EXPECT_GT(row.at("tokens_per_s").get<double>(), 0.0);
  EXPECT_NEAR(row.at("mfu").get<double>(),
              row.at("model_flops_per_token").get<double>() * row.at("tokens_per_s").get<double>() / 1e12, 1e-12);
}

TEST(TrainBench, TheCallersPatternsBecomeTheSchedules) {
  auto options = kTiny;
  options["n_layers"] = 6;
  options["output"] = "json";
  std::ostringstream out;
  ASSERT_EQ(run_train_bench(options, out, {{"two-to-one", "KKM"}}), 0);
  EXPECT_EQ(nlohmann::json::parse(out.str()).at("arms")[0].at("schedule"), "KKMKKM");
}

TEST(TrainBench, RejectsBadOptions) {
  std::ostringstream out;
  EXPECT_EQ(run_train_bench({{"n_layers", 6}}, out, kArms), 2);  // not a multiple of KKKM
  EXPECT_EQ(run_train_bench({{"unknown", 1}}, out, kArms), 2);
  EXPECT_EQ(run_train_bench({{"arms", {"moe"}}, {"device", "cpu"}, {"steps", 1}}, out, kArms), 2);
  EXPECT_EQ(run_train_bench(kTiny, out, {{"bad-letter", "KX"}}), 2);
  EXPECT_EQ(run_train_bench(kTiny, out), 2);  // no arms: the caller must name them
}

}  // namespace
}  // namespace k3lab::train
