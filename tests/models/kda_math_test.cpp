// KDA math: the recurrence against a hand-computed trace, and the chunkwise form and the decode
// step against the recurrence (outputs, final states, gradients of every input), with fla's
// RMSE-ratio tolerances (reference/kda.md section 3).
#include <k3lab/models/kda.hpp>
#include <k3lab/models/tensor_compare.hpp>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "kda_test_inputs.hpp"

namespace k3lab::models {
namespace {

using testing::KdaInputs;
using testing::make_kda_inputs;
using testing::run_with_grads;

void expect_close(const torch::Tensor& ref, const torch::Tensor& test, double tolerance, const char* what) {
  ASSERT_TRUE(ref.defined() && test.defined()) << what;
  const auto stats = compare_tensors(ref, test);
  EXPECT_TRUE(within_rmse_ratio(stats, tolerance)) << what << ": " << describe(stats) << " (tolerance " << tolerance << ")";
}

TEST(KdaRecurrent, MatchesHandComputedTwoStepTrace) {
  // K = 2, V = 1, scale = 1. Step 1 writes k1 = e1 with beta 0.5 and v 2: S = [1, 0]^T, o1 = q1.S = 0.
  // Step 2 decays channel 0 by 0.5 (S = [0.5, 0]), recalls k2.S = 0.3, writes beta (1 - 0.3) k2:
  // S = [0.5 + 0.42, 0.56], then reads q2 = e1: o2 = 0.92 (reading before the write would give 0.5).
  auto opts = torch::TensorOptions().dtype(torch::kDouble);
  auto q = torch::tensor({0.0, 1.0, 1.0, 0.0}, opts).view({1, 2, 1, 2});
  auto k = torch::tensor({1.0, 0.0, 0.6, 0.8}, opts).view({1, 2, 1, 2});
  auto v = torch::tensor({2.0, 1.0}, opts).view({1, 2, 1, 1});
  auto g = torch::tensor({std::log(0.5), std::log(0.25), std::log(0.5), 0.0}, opts).view({1, 2, 1, 2});
  auto beta = torch::tensor({0.5, 1.0}, opts).view({1, 2, 1});
  const auto r = kda_recurrent(q, k, v, g, beta, std::nullopt, 1.0);
  EXPECT_NEAR(r.output[0][0][0][0].item<double>(), 0.0, 1e-12);
  EXPECT_NEAR(r.output[0][1][0][0].item<double>(), 0.92, 1e-12);
  EXPECT_NEAR(r.final_state[0][0][0][0].item<double>(), 0.92, 1e-12);
  EXPECT_NEAR(r.final_state[0][0][1][0].item<double>(), 0.56, 1e-12);
}

TEST(KdaRecurrent, DefaultScaleIsInverseSqrtOfKeyDim) {
  const auto in = make_kda_inputs(1, 5, 2, 16, 8, 11);
  const auto a = kda_recurrent(in.q, in.k, in.v, in.g, in.beta);
  const auto b = kda_recurrent(in.q * 0.25, in.k, in.v, in.g, in.beta, std::nullopt, 1.0);
  expect_close(b.output, a.output, 1e-12, "scale");
}

TEST(KdaRecurrent, RejectsMismatchedShapes) {
  const auto in = make_kda_inputs(1, 4, 2, 8, 8, 1);
  try {
    kda_recurrent(in.q, in.k.narrow(3, 0, 4), in.v, in.g, in.beta);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("k must match q"), std::string::npos) << e.what();
  }
  EXPECT_THROW(kda_recurrent(in.q, in.k, in.v, in.g, in.beta.unsqueeze(-1)), std::invalid_argument);
  EXPECT_THROW(kda_recurrent(in.q, in.k, in.v, in.g, in.beta, torch::zeros({1, 2, 8, 7}, torch::kDouble)),
               std::invalid_argument);
  EXPECT_THROW(kda_chunkwise(in.q, in.k, in.v, in.g, in.beta, std::nullopt, 24), std::invalid_argument);
}

struct ChunkCase {
  std::int64_t B, T, H, K, V, chunk;
  bool with_h0;
};

void PrintTo(const ChunkCase& c, std::ostream* os) {
  *os << "B=" << c.B << " T=" << c.T << " H=" << c.H << " K=" << c.K << " V=" << c.V << " chunk=" << c.chunk
      << (c.with_h0 ? " with h0" : " no h0");
}

class KdaChunkwiseVsRecurrent : public ::testing::TestWithParam<ChunkCase> {};

TEST_P(KdaChunkwiseVsRecurrent, Float64OutputsStatesAndGradientsAgree) {
  const auto c = GetParam();
  const auto in = make_kda_inputs(c.B, c.T, c.H, c.K, c.V, 1000 + c.T * 7 + c.chunk);
  core::Rng rng(77);
  const auto d_o = normal_tensor({c.B, c.T, c.H, c.V}, rng, 0, 1, torch::kDouble);
  const auto d_s = normal_tensor({c.B, c.H, c.K, c.V}, rng, 0, 1, torch::kDouble);
  const auto ref = run_with_grads(in, c.with_h0, d_o, d_s, [](auto q, auto k, auto v, auto g, auto b, auto h0) {
    return kda_recurrent(q, k, v, g, b, h0);
  });
  const auto chunk = c.chunk;
  const auto got = run_with_grads(in, c.with_h0, d_o, d_s, [chunk](auto q, auto k, auto v, auto g, auto b, auto h0) {
    return kda_chunkwise(q, k, v, g, b, h0, chunk);
  });
  const double tol = 1e-10;
  expect_close(ref.o, got.o, tol, "o");
  expect_close(ref.state, got.state, tol, "final state");
  expect_close(ref.dq, got.dq, tol, "dq");
  expect_close(ref.dk, got.dk, tol, "dk");
  expect_close(ref.dv, got.dv, tol, "dv");
  expect_close(ref.dg, got.dg, tol, "dg");
  expect_close(ref.dbeta, got.dbeta, tol, "dbeta");
  if (c.with_h0) expect_close(ref.dh0, got.dh0, tol, "dh0");
}

TEST_P(KdaChunkwiseVsRecurrent, Float32AgainstFloat64RecurrenceWithinFlaTolerances) {
  const auto c = GetParam();
  const auto in = make_kda_inputs(c.B, c.T, c.H, c.K, c.V, 2000 + c.T * 7 + c.chunk);
  core::Rng rng(78);
  const auto d_o = normal_tensor({c.B, c.T, c.H, c.V}, rng, 0, 1, torch::kDouble);
  const auto d_s = normal_tensor({c.B, c.H, c.K, c.V}, rng, 0, 1, torch::kDouble);
  const auto gold = run_with_grads(in, c.with_h0, d_o, d_s, [](auto q, auto k, auto v, auto g, auto b, auto h0) {
    return kda_recurrent(q, k, v, g, b, h0);
  });
  const auto chunk = c.chunk;
  const auto got = run_with_grads(in.to(torch::kFloat), c.with_h0, d_o, d_s,
                                  [chunk](auto q, auto k, auto v, auto g, auto b, auto h0) {
                                    return kda_chunkwise(q, k, v, g, b, h0, chunk);
                                  });
  EXPECT_EQ(got.o.scalar_type(), torch::kFloat);
  EXPECT_EQ(got.state.scalar_type(), torch::kFloat);
  expect_close(gold.o, got.o, 0.005, "o");
  expect_close(gold.state, got.state, 0.005, "final state");
  expect_close(gold.dq, got.dq, 0.008, "dq");
  expect_close(gold.dk, got.dk, 0.008, "dk");
  expect_close(gold.dv, got.dv, 0.008, "dv");
  expect_close(gold.dg, got.dg, 0.02, "dg");
  expect_close(gold.dbeta, got.dbeta, 0.02, "dbeta");
  if (c.with_h0) expect_close(gold.dh0, got.dh0, 0.008, "dh0");
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, KdaChunkwiseVsRecurrent,
    ::testing::Values(ChunkCase{2, 128, 2, 16, 12, 64, true},   // exact multiple, C = 64 (4 sub-chunks)
                      ChunkCase{1, 100, 2, 16, 16, 64, false},  // padded tail, no initial state
                      ChunkCase{2, 37, 1, 8, 8, 16, true},      // C = 16: one sub-chunk per chunk
                      ChunkCase{1, 5, 3, 8, 4, 64, true},       // shorter than one chunk
                      ChunkCase{1, 70, 2, 32, 16, 32, false}),  // C = 32
    [](const ::testing::TestParamInfo<ChunkCase>& info) {
      const auto& c = info.param;
      return "T" + std::to_string(c.T) + "_C" + std::to_string(c.chunk) + (c.with_h0 ? "_h0" : "_noh0");
    });

TEST(KdaIntraChunkScores, MatchesElementwiseDefinitionInBothModes) {
  core::Rng rng(5);
  const std::int64_t C = 32, K = 6;
  const auto x = normal_tensor({2, C, K}, rng, 0, 1, torch::kDouble);
  const auto k = normal_tensor({2, C, K}, rng, 0, 1, torch::kDouble);
  const auto G = (-5.0 * torch::sigmoid(normal_tensor({2, C, K}, rng, 0, 1, torch::kDouble))).cumsum(1);
  auto expected = torch::zeros({2, C, C}, torch::kDouble);
  auto xa = x.accessor<double, 3>(), ka = k.accessor<double, 3>(), Ga = G.accessor<double, 3>();
  auto ea = expected.accessor<double, 3>();
  for (int b = 0; b < 2; ++b)
    for (int i = 0; i < C; ++i)
      for (int j = 0; j <= i; ++j) {
        double sum = 0.0;
        for (int d = 0; d < K; ++d) sum += xa[b][i][d] * ka[b][j][d] * std::exp(Ga[b][i][d] - Ga[b][j][d]);
        ea[b][i][j] = sum;
      }
  for (auto mode : {IntraChunkMode::Factorized, IntraChunkMode::Pairwise, IntraChunkMode::Auto}) {
    const auto got = kda_intra_chunk_scores(x, k, G, 16, mode);
    EXPECT_LT((got - expected).abs().max().item<double>(), 1e-12) << static_cast<int>(mode);
  }
}

TEST(KdaChunkwise, SteepDecayTakesThePairwisePathAndStaysFinite) {
  // g down to -30 per token: one 16-token sub-chunk spans ~200 nats, beyond the float32 factorised
  // limit, so Auto must switch to the pairwise form; the result must still match the recurrence.
  auto in = make_kda_inputs(1, 96, 2, 16, 16, 21, /*lower_bound=*/-30.0);
  const auto gold = kda_recurrent(in.q, in.k, in.v, in.g, in.beta, in.h0);
  const auto f = in.to(torch::kFloat);
  const auto got = kda_chunkwise(f.q, f.k, f.v, f.g, f.beta, f.h0, 64);
  EXPECT_TRUE(torch::isfinite(got.output).all().item<bool>());
  expect_close(gold.output, got.output, 0.005, "o");
  expect_close(gold.final_state, got.final_state, 0.005, "final state");
}

TEST(KdaDecodeStep, RepeatedStepsMatchChunkwiseForm) {
  const auto in = make_kda_inputs(2, 45, 2, 16, 8, 31);
  const auto parallel = kda_chunkwise(in.q, in.k, in.v, in.g, in.beta, in.h0, 16);
  auto state = in.h0;
  std::vector<torch::Tensor> outputs;
  for (std::int64_t t = 0; t < in.q.size(1); ++t) {
    auto r = kda_decode_step(in.q.select(1, t), in.k.select(1, t), in.v.select(1, t), in.g.select(1, t),
                             in.beta.select(1, t), state);
    EXPECT_EQ(r.final_state.sizes(), state.sizes());  // fixed-size state
    state = r.final_state;
    outputs.push_back(r.output);
  }
  expect_close(parallel.output, torch::stack(outputs, 1), 1e-10, "o");
  expect_close(parallel.final_state, state, 1e-10, "final state");
}

TEST(KdaChunkwise, SplittingASequenceThroughTheStateIsExact) {
  const auto in = make_kda_inputs(1, 80, 2, 8, 8, 41);
  const auto whole = kda_chunkwise(in.q, in.k, in.v, in.g, in.beta, in.h0, 16);
  auto part = [&](const torch::Tensor& t, std::int64_t start, std::int64_t len) { return t.narrow(1, start, len); };
  const auto a = kda_chunkwise(part(in.q, 0, 33), part(in.k, 0, 33), part(in.v, 0, 33), part(in.g, 0, 33),
                               part(in.beta, 0, 33), in.h0, 16);
  const auto b = kda_chunkwise(part(in.q, 33, 47), part(in.k, 33, 47), part(in.v, 33, 47), part(in.g, 33, 47),
                               part(in.beta, 33, 47), a.final_state, 64);
  expect_close(whole.output, torch::cat({a.output, b.output}, 1), 1e-10, "o");
  expect_close(whole.final_state, b.final_state, 1e-10, "final state");
}

}  // namespace
}  // namespace k3lab::models
