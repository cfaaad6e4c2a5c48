// `k3lab bench` through the binary: options reach the benchmark, bad options are usage errors that
// name the fix, and a benchmark's own numbers come out (small sizes, so this stays a smoke test).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/k3lab_process.hpp"
#include "common/temp_dir.hpp"

namespace k3lab::testing {
namespace {

ProcessResult bench(const std::vector<std::string>& args) {
  const TempDir dir("k3lab-bench-cli");
  ProcessOptions options;
  options.cwd = dir.path();
  return run_k3lab(args, options);
}

TEST(BenchCli, OptionsReachTheKdaBenchmark) {
  const auto r = bench({"bench", "kda", "--opt", "seq_len=96", "--opt", "heads=2", "--opt", "head_dim=16",
                        "--opt", "chunk_size=16", "--opt", "iterations=1", "--opt", "try_cuda=false"});
  ASSERT_EQ(r.exit_code, 0) << r.output();
  EXPECT_NE(r.output().find("T=96 H=2 K=V=16 chunk=16"), std::string::npos) << r.output();
  EXPECT_NE(r.output().find("libtorch chunkwise"), std::string::npos) << r.output();
}

TEST(BenchCli, TrainBenchmarkPrintsEveryArm) {
  const auto r = bench({"bench", "train", "--opt", "d_model=32", "--opt", "n_heads=2", "--opt", "head_dim=16",
                        "--opt", "mla_kv_latent_dim=16", "--opt", "kda_chunk_size=16", "--opt",
                        "sequence_length=32", "--opt", "batch_rows=2", "--opt", "steps=1", "--opt", "warmup=0",
                        "--opt", "device=cpu", "--no-record"});
  ASSERT_EQ(r.exit_code, 0) << r.output();
  for (const char* arm : {"full-attention", "all-kda", "hybrid-3kda-1mla"}) {
    EXPECT_NE(r.output().find(arm), std::string::npos) << arm << "\n" << r.output();
  }
}

TEST(BenchCli, BadOptionsAreUsageErrorsThatNameTheProblem) {
  const auto unknown = bench({"bench", "kda", "--opt", "seqlen=96"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.output().find("unknown --opt key \"seqlen\""), std::string::npos) << unknown.output();
  const auto typed = bench({"bench", "kda", "--opt", "seq_len=long"});
  EXPECT_EQ(typed.exit_code, 2);
  EXPECT_NE(typed.output().find("wrong type"), std::string::npos) << typed.output();
  const auto shape = bench({"bench", "kda", "--opt", "96"});
  EXPECT_EQ(shape.exit_code, 2);
  EXPECT_NE(shape.output().find("is not key=value"), std::string::npos) << shape.output();
  const auto none = bench({"bench", "sse", "--opt", "x=1"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.output().find("takes no --opt options"), std::string::npos) << none.output();
  const auto train = bench({"bench", "train", "--opt", "stepz=1"});
  EXPECT_EQ(train.exit_code, 2) << train.output();
  EXPECT_NE(train.output().find("stepz"), std::string::npos) << train.output();
  // Train options of the wrong JSON type name the option and what it takes, never a parser's message.
  const std::vector<std::pair<std::string, std::string>> mistyped = {
      {"arms=7", "bench option arms: expected arm names"},
      {"arms=all-kda,nope", "unknown arm \"nope\""},
      {"schedule=5", "bench option schedule: expected text"},
      {"device=1", "bench option device: expected text"},
      {"peak_flops=fast", "bench option peak_flops: expected a positive number"},
      {"output=2", "bench option output: expected text"}};
  for (const auto& [option, message] : mistyped) {
    const auto bad = bench({"bench", "train", "--no-record", "--opt", option});
    EXPECT_EQ(bad.exit_code, 2) << option << ": " << bad.output();
    EXPECT_NE(bad.output().find(message), std::string::npos) << option << ": " << bad.output();
    EXPECT_EQ(bad.output().find("json.exception"), std::string::npos) << option << ": " << bad.output();
  }
}

TEST(BenchCli, TrainArmsTakeACommaSeparatedList) {
  const auto run = bench({"bench", "train", "--no-record", "--opt", "arms=all-kda,full-attention", "--opt", "steps=1",
                          "--opt", "warmup=0", "--opt", "d_model=32", "--opt", "n_heads=2", "--opt", "head_dim=16",
                          "--opt", "sequence_length=32", "--opt", "batch_rows=1", "--opt", "mla_kv_latent_dim=16",
                          "--opt", "kda_chunk_size=16", "--opt", "threads=1"});
  ASSERT_EQ(run.exit_code, 0) << run.output();
  EXPECT_NE(run.output().find("| all-kda | KKKK |"), std::string::npos) << run.output();
  EXPECT_NE(run.output().find("| full-attention | MMMM |"), std::string::npos) << run.output();
  EXPECT_EQ(run.output().find("hybrid-3kda-1mla"), std::string::npos) << run.output();
}

}  // namespace
}  // namespace k3lab::testing
