// Muon / Per-Head Muon math against hand computations: Newton-Schulz orthogonality band, the update
// scale rule, the per-head split, one and two optimizer steps, and AdamW against LibTorch's AdamW.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include "k3lab/train/muon_optimizer.hpp"

namespace k3lab::train {
namespace {

torch::Tensor random_matrix(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  torch::manual_seed(seed);
  return torch::randn({rows, cols}, torch::kFloat32);
}

// Independent quintic Newton-Schulz in double with explicit Gram products (the test's own code).
torch::Tensor reference_ns(const torch::Tensor& u, int steps) {
  auto x = u.to(torch::kFloat64);
  const bool tall = x.size(0) > x.size(1);
  if (tall) x = x.transpose(0, 1);
  x = x / (std::sqrt((x * x).sum().item<double>()) + 1e-7);
  for (int i = 0; i < steps; ++i) {
    const auto a = x.matmul(x.transpose(0, 1));
    x = 3.4445 * x + (-4.7750 * a + 2.0315 * a.matmul(a)).matmul(x);
  }
  return (tall ? x.transpose(0, 1) : x).to(torch::kFloat32);
}

TEST(NewtonSchulz, SingularValuesLandInTheMethodsBand) {
  for (auto [rows, cols] : {std::pair<std::int64_t, std::int64_t>{64, 32}, {32, 64}, {128, 16}, {16, 48}}) {
    const auto o = newton_schulz5(random_matrix(rows, cols, 11 + rows), 5);
    ASSERT_EQ(o.sizes(), (std::vector<std::int64_t>{rows, cols}));
    const auto s = torch::linalg::svdvals(o.to(torch::kFloat64), c10::nullopt);
    // Published band of the (3.4445, -4.7750, 2.0315) iteration: about [0.68, 1.13].
    EXPECT_GT(s.min().template item<double>(), 0.6) << rows << "x" << cols;
    EXPECT_LT(s.max().template item<double>(), 1.2) << rows << "x" << cols;
  }
}

TEST(NewtonSchulz, MatchesAnIndependentImplementation) {
  const auto u = random_matrix(24, 40, 3);
  EXPECT_TRUE(torch::allclose(newton_schulz5(u, 5), reference_ns(u, 5), 1e-4, 1e-5));
}

TEST(OrthogonalizedUpdate, ScalesToRmsAboutUpdateRms) {
  const auto o = orthogonalized_update(random_matrix(64, 32, 5), 5, 0.2, HeadSplit::None, 1);
  const double rms = o.pow(2).mean().sqrt().item<double>();
  EXPECT_GT(rms, 0.2 * 0.68);
  EXPECT_LT(rms, 0.2 * 1.13);
}

TEST(OrthogonalizedUpdate, PerHeadEqualsEachHeadBlockAlone) {
  const auto u = random_matrix(32, 24, 9);  // 4 heads x 8 rows, D = 24
  const auto rows = orthogonalized_update(u, 5, 0.2, HeadSplit::Rows, 4);
  for (int h = 0; h < 4; ++h) {
    const auto block = u.slice(0, 8 * h, 8 * (h + 1));
    const auto alone = reference_ns(block, 5) * (0.2 * std::sqrt(24.0));
    EXPECT_TRUE(torch::allclose(rows.slice(0, 8 * h, 8 * (h + 1)), alone, 1e-4, 1e-5)) << "head " << h;
  }
  const auto columns = orthogonalized_update(u.t().contiguous(), 5, 0.2, HeadSplit::Columns, 4);
  EXPECT_TRUE(torch::allclose(columns, rows.t(), 1e-5, 1e-6));
  const auto whole = orthogonalized_update(u, 5, 0.2, HeadSplit::None, 4);
  EXPECT_FALSE(torch::allclose(whole, rows, 1e-3, 1e-3)) << "the split must change the update";
}

TEST(OrthogonalizedUpdate, PerHeadEqualizesBlockNormsWhenOneHeadDominates) {
  auto u = random_matrix(16, 32, 13);
  u.slice(0, 0, 8).mul_(100.0);  // head 0's momentum is 100x larger
  auto block_norms = [](const torch::Tensor& o) {
    return std::pair{o.slice(0, 0, 8).norm().item<double>(), o.slice(0, 8, 16).norm().item<double>()};
  };
  const auto [split0, split1] = block_norms(orthogonalized_update(u, 5, 0.2, HeadSplit::Rows, 2));
  EXPECT_NEAR(split0 / split1, 1.0, 0.15);
}

OptimizerSpec spec(double lr, double wd) {
  OptimizerSpec s;
  s.learning_rate = lr;
  s.weight_decay = wd;
  return s;
}

TEST(MuonOptimizer, TwoStepsEqualTheHandComputation) {
  const auto w0 = random_matrix(6, 4, 21);
  const auto g1 = random_matrix(6, 4, 22), g2 = random_matrix(6, 4, 23);
  auto w = w0.clone().set_requires_grad(true);
  ParameterPlan plan{"blocks.0.ffn.up_proj.weight", Role::Muon, HeadSplit::None, true, "", 0};
  MuonSettings settings;  // momentum 0.95, Nesterov, 5 steps, RMS 0.2
  MuonOptimizer opt({w}, {plan}, spec(0.01, 0.1), settings);
  w.mutable_grad() = g1.clone();
  opt.step();
  w.mutable_grad() = g2.clone();
  opt.step();
  // Hand: M1 = G1, U1 = G1 + 0.95 M1; M2 = 0.95 M1 + G2, U2 = G2 + 0.95 M2; scale 0.2 sqrt(6).
  const double scale = 0.2 * std::sqrt(6.0), lr = 0.01, wd = 0.1;
  const auto m1 = g1, u1 = g1 + 0.95 * m1;
  auto expected = w0 * (1 - lr * wd) - lr * scale * reference_ns(u1, 5);
  const auto m2 = 0.95 * m1 + g2, u2 = g2 + 0.95 * m2;
  expected = expected * (1 - lr * wd) - lr * scale * reference_ns(u2, 5);
  EXPECT_TRUE(torch::allclose(w.detach(), expected, 1e-5, 1e-6));
  EXPECT_EQ(opt.steps_taken(), 2);
}

TEST(MuonOptimizer, PerHeadStepEqualsMuonOnEachHeadBlockAlone) {
  const auto w0 = random_matrix(8, 6, 31), g = random_matrix(8, 6, 32);
  auto whole = w0.clone().set_requires_grad(true);
  MuonSettings settings;
  settings.heads = 2;
  MuonOptimizer split({whole}, {{"q", Role::Muon, HeadSplit::Rows, true, "query", 0}}, spec(0.02, 0.1), settings);
  whole.mutable_grad() = g.clone();
  split.step();
  for (int h = 0; h < 2; ++h) {
    auto block = w0.slice(0, 4 * h, 4 * (h + 1)).clone().set_requires_grad(true);
    MuonOptimizer alone({block}, {{"b", Role::Muon, HeadSplit::None, true, "", 0}}, spec(0.02, 0.1), MuonSettings{});
    block.mutable_grad() = g.slice(0, 4 * h, 4 * (h + 1)).clone();
    alone.step();
    EXPECT_TRUE(torch::allclose(whole.detach().slice(0, 4 * h, 4 * (h + 1)), block.detach(), 1e-6, 1e-7)) << h;
  }
}

TEST(MuonOptimizer, AdamWRoleMatchesLibTorchAdamW) {
  const auto w0 = random_matrix(5, 3, 41), b0 = random_matrix(1, 3, 42).reshape({3});
  auto w = w0.clone().set_requires_grad(true), b = b0.clone().set_requires_grad(true);
  auto w_ref = w0.clone().set_requires_grad(true), b_ref = b0.clone().set_requires_grad(true);
  MuonOptimizer ours({w, b}, {{"embed.weight", Role::AdamW, HeadSplit::None, true, "", -1},
                              {"final_norm.weight", Role::AdamW, HeadSplit::None, false, "", -1}},
                     spec(0.003, 0.1), MuonSettings{});
  auto options = [](double wd) {
    return std::make_unique<torch::optim::AdamWOptions>(torch::optim::AdamWOptions(0.003).betas({0.9, 0.95}).eps(1e-8).weight_decay(wd));
  };
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<torch::Tensor>{w_ref}, options(0.1));
  groups.emplace_back(std::vector<torch::Tensor>{b_ref}, options(0.0));
  torch::optim::AdamW reference(groups, torch::optim::AdamWOptions(0.003));
  for (int step = 0; step < 3; ++step) {
    const auto gw = random_matrix(5, 3, 50 + step), gb = random_matrix(1, 3, 60 + step).reshape({3});
    w.mutable_grad() = gw.clone();
    b.mutable_grad() = gb.clone();
    w_ref.mutable_grad() = gw.clone();
    b_ref.mutable_grad() = gb.clone();
    ours.step();
    reference.step();
  }
  EXPECT_TRUE(torch::allclose(w.detach(), w_ref.detach(), 1e-6, 1e-7));
  EXPECT_TRUE(torch::allclose(b.detach(), b_ref.detach(), 1e-6, 1e-7));
}

TEST(PlanParameters, ClassifiesHiddenMatricesHeadsAndAdamWParameters) {
  const std::vector<std::string> names = {"embed.weight", "blocks.0.mixer_norm.weight", "blocks.0.attention.q_proj.weight",
                                          "blocks.0.attention.k_proj.weight", "blocks.0.attention.v_proj.weight",
                                          "blocks.0.attention.o_proj.weight", "blocks.1.ffn.up_proj.weight",
                                          "final_norm.weight"};
  std::vector<torch::Tensor> params = {torch::zeros({10, 4}), torch::zeros({4}),    torch::zeros({4, 4}),
                                       torch::zeros({4, 4}),  torch::zeros({4, 4}), torch::zeros({4, 4}),
                                       torch::zeros({8, 4}),  torch::zeros({4})};
  const auto adamw = plan_parameters(MuonVariant::AdamW, names, params, {"query", "key", "value"});
  for (const auto& p : adamw) EXPECT_EQ(p.role, Role::AdamW) << p.name;
  EXPECT_EQ(adamw[2].projection, "query");
  const auto muon = plan_parameters(MuonVariant::Muon, names, params, {"query", "key", "value"});
  const auto heads = plan_parameters(MuonVariant::PerHeadMuon, names, params, {"query", "key", "value"});
  const std::vector<Role> roles = {Role::AdamW, Role::AdamW, Role::Muon, Role::Muon, Role::Muon, Role::Muon, Role::Muon, Role::AdamW};
  const std::vector<HeadSplit> splits = {HeadSplit::None, HeadSplit::None, HeadSplit::Rows, HeadSplit::Rows,
                                         HeadSplit::Rows, HeadSplit::None, HeadSplit::None, HeadSplit::None};
  for (std::size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(muon[i].role, roles[i]) << names[i];
    EXPECT_EQ(muon[i].split, HeadSplit::None) << names[i];
    EXPECT_EQ(heads[i].role, roles[i]) << names[i];
    EXPECT_EQ(heads[i].split, splits[i]) << names[i];
  }
  EXPECT_FALSE(adamw[1].decayed);
  EXPECT_TRUE(adamw[0].decayed);
  EXPECT_EQ(heads[6].layer, 1);
}

}  // namespace
}  // namespace k3lab::train
