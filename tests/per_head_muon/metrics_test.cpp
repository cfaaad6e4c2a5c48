// Metric definitions against hand values: dispersion (CV across heads), head subspace distance,
// the pilot selection rule and the decision rule.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include <torch/torch.h>

#include "per_head_muon/decision.hpp"
#include "per_head_muon/head_metrics.hpp"
#include "per_head_muon/selection.hpp"
#include "per_head_muon/units.hpp"

namespace k3lab::experiments::per_head_muon {
namespace {

TEST(UpdateDispersion, IsThePopulationCoefficientOfVariationAcrossHeads) {
  EXPECT_DOUBLE_EQ(coefficient_of_variation({1.0, 3.0}), 0.5);  // mean 2, population sd 1
  EXPECT_DOUBLE_EQ(coefficient_of_variation({2.0, 2.0, 2.0}), 0.0);
  const nlohmann::json norms = {{"step", 4},
                                {"layers", {{{"layer", 0}, {"query", {1.0, 3.0}}, {"key", {2.0, 2.0}}, {"value", {1.0, 1.0}}},
                                            {{"layer", 1}, {"query", {1.0, 3.0}}, {"key", {1.0, 3.0}}, {"value", {2.0, 2.0}}}}}};
  const auto d = update_dispersion(norms);
  EXPECT_DOUBLE_EQ(d.at("layers")[0].at("query").get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(d.at("mean").get<double>(), (0.5 + 0 + 0 + 0.5 + 0.5 + 0) / 6.0);
}

TEST(HeadDiversity, SubspaceDistanceOfHandPickedHeads) {
  // D = 4, d_h = 2, two heads (rows 0-1 and 2-3).
  auto w = torch::zeros({4, 4}, torch::kFloat64);
  w[0][0] = 1; w[1][1] = 2;  // head 0: span{e1, e2}
  w[2][2] = 1; w[3][3] = 1;  // head 1: span{e3, e4}
  EXPECT_NEAR(head_subspace_distance(w, 2), 1.0, 1e-12);
  auto same = torch::zeros({4, 4}, torch::kFloat64);
  same[0][0] = 1; same[1][1] = 1; same[2][0] = 3; same[3][1] = -1;  // both span{e1, e2}
  EXPECT_NEAR(head_subspace_distance(same, 2), 0.0, 1e-7);
  auto half = torch::zeros({4, 4}, torch::kFloat64);
  half[0][0] = 1; half[1][1] = 1; half[2][0] = 1; half[3][2] = 1;  // span{e1, e2} vs span{e1, e3}: sqrt(1 - 1/2)
  EXPECT_NEAR(head_subspace_distance(half, 2), std::sqrt(0.5), 1e-12);
}

nlohmann::json pilot(const std::string& arm, int config, std::uint64_t seed, double loss) {
  return {{"kind", "result"},
          {"unit", pilot_unit_id(arm, config, seed)},
          {"data", {{"training", {{"evaluations", {{{"tokens", 256}, {"validation_loss", loss + 1}},
                                                   {{"tokens", 512}, {"validation_loss", loss}}}}}}}}};
}

Parameters grid() {
  Parameters p;
  p.pilot_seeds = {1, 2};
  p.learning_rates = {0.001, 0.004};
  p.weight_decays = {0.1};
  return p;
}

TEST(Selection, LowestMeanPilotLossFailuresInfiniteTiesToLowerId) {
  const auto p = grid();
  std::vector<nlohmann::json> records = {pilot("muon", 1, 1, 3.0), pilot("muon", 1, 2, 5.0), pilot("muon", 2, 1, 3.5),
                                         pilot("muon", 2, 2, 3.6)};
  auto s = select_configuration(p, "muon", records);
  ASSERT_TRUE(s.selected);
  EXPECT_EQ(s.selected->id, 2);  // mean 3.55 < 4.0
  EXPECT_DOUBLE_EQ(s.scores[0].mean_loss, 4.0);
  records[3] = {{"kind", "failure"}, {"unit", pilot_unit_id("muon", 2, 2)}, {"reason", "nan-loss"}};
  s = select_configuration(p, "muon", records);
  EXPECT_TRUE(std::isinf(s.scores[1].mean_loss));
  EXPECT_EQ(s.selected->id, 1);
  records[3] = pilot("muon", 2, 2, 4.5);  // mean 4.0: a tie with config 1
  EXPECT_EQ(select_configuration(p, "muon", records).selected->id, 1);
  records.pop_back();
  s = select_configuration(p, "muon", records);
  EXPECT_FALSE(s.selected);
  ASSERT_EQ(s.missing.size(), 1u);
  EXPECT_EQ(s.missing[0], pilot_unit_id("muon", 2, 2));
}

TEST(Decision, NeedsLowerDispersionBetterLossAndAcceptableCost) {
  const report::Interval lower{0.3, 0.1, 0.5, 0.95}, better{-0.02, -0.03, -0.01, 0.95}, unclear{-0.01, -0.03, 0.01, 0.95};
  EXPECT_TRUE(decide(lower, better, 0.05, 0.10).supported());
  EXPECT_FALSE(decide(lower, unclear, 0.05, 0.10).supported());
  EXPECT_FALSE(decide(lower, better, 0.12, 0.10).supported());
  EXPECT_FALSE(decide(report::Interval{0.3, -0.1, 0.5, 0.95}, better, 0.0, 0.10).supported());
}

// "Convergence or end-task quality": an end-task gain whose interval excludes zero stands in for an
// unclear loss; an unclear or negative one does not.
TEST(Decision, AnEndTaskGainAloneSatisfiesTheQualityCondition) {
  const report::Interval lower{0.3, 0.1, 0.5, 0.95}, unclear_loss{-0.01, -0.03, 0.01, 0.95};
  const report::Interval gain{0.04, 0.01, 0.07, 0.95}, unclear_gain{0.04, -0.01, 0.07, 0.95}, drop{-0.04, -0.07, -0.01, 0.95};
  const auto d = decide(lower, unclear_loss, 0.05, 0.10, gain);
  EXPECT_FALSE(d.loss_better);
  EXPECT_TRUE(d.end_task_better);
  EXPECT_TRUE(d.supported());
  EXPECT_FALSE(decide(lower, unclear_loss, 0.05, 0.10, unclear_gain).supported());
  EXPECT_FALSE(decide(lower, unclear_loss, 0.05, 0.10, drop).supported());
  EXPECT_FALSE(decide(lower, unclear_loss, 0.05, 0.10).end_task_better);  // not measured
  EXPECT_FALSE(decide(lower, unclear_loss, 0.12, 0.10, gain).supported());  // the cost still counts
}

}  // namespace
}  // namespace k3lab::experiments::per_head_muon
