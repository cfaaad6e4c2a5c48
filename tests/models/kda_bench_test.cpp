// The benchmark runs end to end at a toy size and reports an accuracy within tolerance; invalid
// options are refused with a reason.
#include <k3lab/models/kda_bench.hpp>

#include <gtest/gtest.h>

#include <sstream>

namespace k3lab::models {
namespace {

TEST(KdaBench, ReportsAccuracyAndThroughputRows) {
  KdaBenchOptions o;
  o.seq_len = 50;
  o.heads = 2;
  o.head_dim = 16;
  o.chunk_size = 16;
  o.iterations = 1;
  o.warmup = 0;
  o.try_cuda = false;
  std::ostringstream out;
  EXPECT_EQ(run_kda_bench(o, out), 0) << out.str();
  EXPECT_NE(out.str().find("libtorch chunkwise"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("libtorch recurrent"), std::string::npos) << out.str();
  o.format = "json";
  std::ostringstream json_out;
  EXPECT_EQ(run_kda_bench(o, json_out), 0);
  EXPECT_NE(json_out.str().find("\"output_rmse_ratio\""), std::string::npos) << json_out.str();
}

TEST(KdaBench, RefusesInvalidOptions) {
  KdaBenchOptions o;
  o.chunk_size = 24;
  std::ostringstream out;
  EXPECT_EQ(run_kda_bench(o, out), 2);
  EXPECT_NE(out.str().find("chunk_size"), std::string::npos);
}

}  // namespace
}  // namespace k3lab::models
