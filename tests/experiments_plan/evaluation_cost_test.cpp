// The evaluation cost each proxy plan prints, against hand computations from the protocol files: what
// is evaluated per run, its share of training (2 FLOPs per parameter and evaluated token against 6
// per training token), its hours at the floor's rate, and the warning above 10%.
#include <gtest/gtest.h>

#include "plan_test_support.hpp"

namespace k3lab::experiments::plan_test {
namespace {

nlohmann::json evaluation_of(const std::string& id, const std::string& profile = "full") {
  const auto& c = case_for(id);
  const auto protocol = load(c);
  const auto experiment = c.make();
  const auto parameters = protocol.parameters_for(profile);
  const auto units = experiment->enumerate(protocol, parameters);
  return experiment->plan_details(protocol, parameters, units).at("evaluation_cost");
}

double part_tokens(const nlohmann::json& cost, const std::string& what_prefix) {
  for (const auto& part : cost.at("parts")) {
    if (part.at("what").get<std::string>().rfind(what_prefix, 0) == 0) return part.at("tokens_per_run").get<double>();
  }
  ADD_FAILURE() << "no evaluation part " << what_prefix << " in " << cost.dump();
  return 0;
}

TEST(EvaluationCost, HybridAttentionFullProfileByHand) {
  const auto cost = evaluation_of("hybrid-attention");
  // experiments/hybrid-attention.json: 1B tokens, evaluated every 25M (40 evaluations), 4M validation
  // tokens, probe lengths 8k/16k/32k/64k with 100 examples each at the last evaluation and 6 at the 39
  // before it, T 8,000, 120M parameters.
  const double evaluations = 1e9 / 25e6;
  const double examples = 39 * 6 + 100;                                              // 334 per length
  const double validation = evaluations * 4e6;                                       // 1.6e8
  const double retrieval = 2 * examples * (8000 + 16000 + 32000 + 64000);            // MQAR + needle: 8.016e7
  const double by_position = examples * 64000;                                       // 2.1376e7
  const double final_probes = (8032 + 16032 + 32032 + 64032) + 2 * 16000;            // + drift over 2 x T
  // HellaSwag at 250M, 500M, 750M and 1B: 10,042 items x 4 rows x an assumed 100 tokens each time.
  const double downstream = 4 * 10042 * 4 * 100.0;                                  // 16,067,200
  EXPECT_DOUBLE_EQ(part_tokens(cost, "validation loss"), validation);
  EXPECT_DOUBLE_EQ(part_tokens(cost, "MQAR and needle"), retrieval);
  EXPECT_DOUBLE_EQ(part_tokens(cost, "loss by position"), by_position);
  EXPECT_DOUBLE_EQ(part_tokens(cost, "final inference"), final_probes);
  EXPECT_DOUBLE_EQ(part_tokens(cost, "downstream suite hellaswag-val-llmc"), downstream);
  const double tokens = validation + retrieval + by_position + final_probes + downstream;  // 277,755,328
  EXPECT_DOUBLE_EQ(cost.at("forward_tokens_per_run").get<double>(), tokens);
  EXPECT_NEAR(cost.at("share_of_training").get<double>(), 2 * tokens / (6 * 1e9), 1e-12);  // 9.26%
  const double hours = 2 * 120e6 * tokens / (0.4 * 795e12) / 3600;
  EXPECT_NEAR(cost.at("gpu_hours_per_run").get<double>(), hours, 1e-9);
  EXPECT_NEAR(cost.at("gpu_hours_total").get<double>(), 9 * hours, 1e-8);
  EXPECT_FALSE(cost.contains("warning")) << cost.dump();
}

TEST(EvaluationCost, SituQatStaysUnderTheWarningShare) {
  const auto cost = evaluation_of("situ-qat");
  // 500M tokens, validation every 25M (20 x 4M), histograms every 50M (10 x 64,000 tokens) and HellaSwag
  // at 250M and 500M (2 x 10,042 items x 4 rows x an assumed 100 tokens).
  const double tokens = 20 * 4e6 + 10 * 64000.0 + 2 * 10042 * 4 * 100.0;
  EXPECT_DOUBLE_EQ(cost.at("forward_tokens_per_run").get<double>(), tokens);
  EXPECT_NEAR(cost.at("share_of_training").get<double>(), 2 * tokens / (6 * 5e8), 1e-12);  // 5.9%
  EXPECT_FALSE(cost.contains("warning")) << cost.dump();
}

TEST(EvaluationCost, RouterBalanceHasNoEvaluationPass) {
  const auto cost = evaluation_of("router-balance");
  EXPECT_EQ(cost.at("forward_tokens_per_run").get<double>(), 0.0);
  EXPECT_EQ(cost.at("share_of_training").get<double>(), 0.0);
}

}  // namespace
}  // namespace k3lab::experiments::plan_test
