// The trainer's contract on a tiny hybrid model and the built-in corpus: exact token budget,
// evaluation cadence, determinism, bitwise resume, failure outcomes and the learning-rate schedule.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>

#include <torch/torch.h>

#include "k3lab/core/resume_refused.hpp"
#include "k3lab/models/residual.hpp"
#include "k3lab/train/checkpoint.hpp"
#include "k3lab/train/data_order.hpp"
#include "k3lab/train/muon_optimizer.hpp"
#include "k3lab/train/optimizer.hpp"
#include "k3lab/train/trainer.hpp"
#include "test_support.hpp"
#include "tiny_training.hpp"

namespace k3lab::train {
namespace {

using testing::TempDir;
using testing::corpus;
using testing::tiny_config;
using testing::tiny_model;


TEST(Trainer, TrainsExactlyTheBudgetAndEvaluatesOnCadence) {
  const auto config = tiny_config();
  int evaluations_seen = 0;
  TrainerHooks hooks;
  hooks.on_evaluation = [&](const nlohmann::json&) { ++evaluations_seen; };
  hooks.evaluate = [](EvalContext& context) { return nlohmann::json{{"final", context.final}}; };
  const auto result = train(config, corpus(), hooks);
  ASSERT_EQ(result.status, TrainResult::Status::Completed) << result.detail;
  EXPECT_EQ(result.state.tokens, 128);
  EXPECT_EQ(result.state.step, 4);
  EXPECT_EQ(result.state.losses.size(), 4u);
  ASSERT_EQ(result.state.evaluations.size(), 2u);
  EXPECT_EQ(evaluations_seen, 2);
  EXPECT_EQ(result.state.evaluations[0].at("tokens"), 64);
  EXPECT_EQ(result.state.evaluations[1].at("tokens"), 128);
  EXPECT_FALSE(result.state.evaluations[0].at("probes").at("final").get<bool>());
  EXPECT_TRUE(result.state.evaluations[1].at("probes").at("final").get<bool>());
  for (double loss : result.state.losses) EXPECT_TRUE(std::isfinite(loss));
  // A byte-level model starts near ln(256) = 5.55.
  EXPECT_NEAR(result.state.losses.front(), std::log(256.0), 0.5);
  EXPECT_EQ(result.parameters, models::parameter_count(*result.model.ptr()));
}

TEST(Trainer, RejectsBudgetsThatDoNotDivide) {
  auto config = tiny_config();
  config.token_budget = 100;
  EXPECT_THROW(train(config, corpus()), std::invalid_argument);
  config = tiny_config();
  config.eval_interval_tokens = 48;
  EXPECT_THROW(train(config, corpus()), std::invalid_argument);
  config = tiny_config();
  config.batch_tokens = 24;
  EXPECT_THROW(train(config, corpus()), std::invalid_argument);
}

TEST(Trainer, SameSeedSameLosses) {
  const auto a = train(tiny_config(), corpus());
  const auto b = train(tiny_config(), corpus());
  EXPECT_EQ(a.state.losses, b.state.losses);
  auto other = tiny_config();
  other.init_seed = 12;
  EXPECT_NE(train(other, corpus()).state.losses, a.state.losses);
}

TEST(Trainer, MicroBatchingMatchesOneBatchClosely) {
  auto whole = tiny_config();
  whole.micro_batch_rows = 2;
  const auto a = train(tiny_config(), corpus());
  const auto b = train(whole, corpus());
  ASSERT_EQ(a.state.losses.size(), b.state.losses.size());
  for (std::size_t i = 0; i < a.state.losses.size(); ++i) EXPECT_NEAR(a.state.losses[i], b.state.losses[i], 1e-4);
}

TEST(Trainer, ResumeAfterAKillGivesBitwiseTheSameRun) {
  const auto uninterrupted = train(tiny_config(), corpus());
  TempDir dir("resume");
  auto config = tiny_config();
  config.checkpoint_dir = dir.path / "ckpt";
  TrainerHooks crash;
  crash.crash_after_step = [](std::int64_t step) { return step == 3; };  // after the checkpoint at step 2
  const auto killed = train(config, corpus(), crash);
  ASSERT_EQ(killed.status, TrainResult::Status::Interrupted);
  EXPECT_EQ(killed.state.step, 3);
  const auto resumed = train(config, corpus());
  ASSERT_EQ(resumed.status, TrainResult::Status::Completed);
  ASSERT_TRUE(resumed.resumed_from_step.has_value());
  EXPECT_EQ(*resumed.resumed_from_step, 2);
  EXPECT_EQ(resumed.state.losses, uninterrupted.state.losses);  // bitwise: doubles compared exactly
  EXPECT_EQ(resumed.state.evaluations, uninterrupted.state.evaluations);
  for (std::size_t i = 0; i < resumed.model->parameters().size(); ++i) {
    EXPECT_TRUE(torch::equal(resumed.model->parameters()[i], uninterrupted.model->parameters()[i]));
  }
  // Resuming a finished run trains nothing more and reports the same result.
  const auto again = train(config, corpus());
  EXPECT_EQ(*again.resumed_from_step, 4);
  EXPECT_EQ(again.state.losses, uninterrupted.state.losses);
}

TEST(Trainer, StopRequestCheckpointsMidIntervalAndResumes) {
  const auto uninterrupted = train(tiny_config(), corpus());
  TempDir dir("stop");
  auto config = tiny_config();
  config.checkpoint_dir = dir.path;
  std::atomic<bool> stop{false};
  TrainerHooks hooks;
  hooks.stop_requested = &stop;
  hooks.progress = [&](double fraction) { stop.store(fraction >= 0.25); };  // after step 1
  const auto stopped = train(config, corpus(), hooks);
  ASSERT_EQ(stopped.status, TrainResult::Status::Interrupted);
  EXPECT_EQ(stopped.state.step, 1);
  const auto resumed = train(config, corpus());
  EXPECT_EQ(*resumed.resumed_from_step, 1);
  EXPECT_EQ(resumed.state.losses, uninterrupted.state.losses);
}

TEST(Trainer, CheckpointOfAnotherConfigurationIsRefused) {
  TempDir dir("mismatch");
  auto config = tiny_config();
  config.checkpoint_dir = dir.path;
  ASSERT_EQ(train(config, corpus()).status, TrainResult::Status::Completed);
  config.optimizer.learning_rate = 1e-3;
  try {
    train(config, corpus());
    FAIL();
  } catch (const core::ResumeRefused& e) {
    EXPECT_NE(std::string(e.what()).find("another training configuration"), std::string::npos) << e.what();
  }
}

TEST(Trainer, NanLossIsAFailureOutcomeNotACrash) {
  TrainerHooks hooks;
  hooks.transform_loss = [](std::int64_t step, const torch::Tensor& loss) {
    return step == 2 ? loss * std::numeric_limits<double>::quiet_NaN() : loss;
  };
  const auto result = train(tiny_config(), corpus(), hooks);
  EXPECT_EQ(result.status, TrainResult::Status::Failed);
  EXPECT_EQ(result.failure_class, "nan-loss");
  EXPECT_NE(result.detail.find("step 2"), std::string::npos) << result.detail;
  EXPECT_EQ(result.state.losses.size(), 2u);  // the steps before the failure are kept
  EXPECT_EQ(result.to_json().at("status"), "failed");
}

TEST(Trainer, LossSpikesAreRecordedAndTrainingContinues) {
  auto config = tiny_config();
  config.spikes.window = 2;
  TrainerHooks hooks;
  hooks.transform_loss = [](std::int64_t step, const torch::Tensor& loss) { return step == 3 ? loss * 10.0 : loss; };
  const auto result = train(config, corpus(), hooks);
  EXPECT_EQ(result.status, TrainResult::Status::Completed);
  ASSERT_EQ(result.state.loss_spikes.size(), 1u);
  EXPECT_EQ(result.state.loss_spikes[0].at("step"), 3);
}

TEST(Trainer, SafetyTimeoutMarksTheRunIncomplete) {
  auto config = tiny_config();
  config.safety_timeout_seconds = 1e-9;
  const auto result = train(config, corpus());
  EXPECT_EQ(result.status, TrainResult::Status::TimedOut);
  EXPECT_LT(result.state.tokens, config.token_budget);
  EXPECT_NE(result.detail.find("incomplete"), std::string::npos);
}

TEST(Trainer, ValidationLossMatchesADirectComputation) {
  const auto config = tiny_config();
  models::DecoderLM model(config.model, 5);
  const torch::Device cpu(torch::kCPU);
  const double streamed = validation_loss(model, corpus(), 16, 64, 1, cpu);
  const auto batch = validation_batch(corpus().validation, 16, 0, 4, 256);
  torch::NoGradGuard no_grad;
  const auto inputs = torch::tensor(batch.inputs).reshape({4, 16});
  const auto targets = torch::tensor(batch.targets).reshape({4, 16});
  const auto logits = model->forward(inputs);
  const double direct = torch::nn::functional::cross_entropy(logits.reshape({-1, 256}), targets.reshape({-1})).item<double>();
  EXPECT_NEAR(streamed, direct, 1e-5);
}

TEST(Optimizer, ScheduleWarmsUpThenDecaysToTheFloor) {
  OptimizerSpec s;
  s.learning_rate = 1.0;
  s.warmup_fraction = 0.1;  // 10 of 100 steps
  s.min_lr_ratio = 0.1;
  EXPECT_DOUBLE_EQ(scheduled_learning_rate(s, 0, 100), 0.1);
  EXPECT_DOUBLE_EQ(scheduled_learning_rate(s, 9, 100), 1.0);
  EXPECT_DOUBLE_EQ(scheduled_learning_rate(s, 10, 100), 1.0);        // cosine starts at the peak
  EXPECT_NEAR(scheduled_learning_rate(s, 99, 100), 0.1, 1e-12);      // and ends at the floor
  const double mid = 0.1 + 0.9 * 0.5 * (1 + std::cos(M_PI * 44.0 / 89.0));
  EXPECT_NEAR(scheduled_learning_rate(s, 54, 100), mid, 1e-12);
  s.decay = "linear";
  EXPECT_NEAR(scheduled_learning_rate(s, 99, 100), 0.1, 1e-12);
  s.decay = "constant";
  EXPECT_DOUBLE_EQ(scheduled_learning_rate(s, 99, 100), 1.0);
  EXPECT_THROW(scheduled_learning_rate(s, 100, 100), std::invalid_argument);
}

TEST(Optimizer, AFactoryBuildsWhatIsNotBuiltInAndNamesTheFix) {
  models::DecoderLM model(tiny_model(), 1);
  OptimizerSpec s;
  s.name = "sgd";
  try {
    make_optimizer(s, *model);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("built in: adamw"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("optimizer_factory"), std::string::npos) << e.what();
  }
  int built = 0;
  const OptimizerFactory sgd = [&](const OptimizerSpec& spec, torch::nn::Module& m) {
    ++built;
    return std::make_unique<torch::optim::SGD>(m.parameters(), torch::optim::SGDOptions(spec.learning_rate));
  };
  const auto optimizer = make_optimizer(s, *model, sgd);
  EXPECT_EQ(built, 1);
  EXPECT_NE(dynamic_cast<torch::optim::SGD*>(optimizer.get()), nullptr);
  // The trainer builds its optimizer through the configuration's factory.
  auto config = tiny_config();
  config.optimizer.name = "sgd";
  config.optimizer_factory = sgd;
  ASSERT_EQ(train(config, corpus()).status, TrainResult::Status::Completed);
  EXPECT_EQ(built, 2);
  const auto parsed = OptimizerSpec::from_json({{"name", "adamw"}, {"learning_rate", 0.01}, {"decay", "linear"}});
  EXPECT_EQ(parsed.decay, "linear");
  EXPECT_THROW(OptimizerSpec::from_json({{"decay", "step"}}), std::invalid_argument);
  auto with_extra = OptimizerSpec::from_json({{"momentum", 0.95}});
  EXPECT_THROW(make_optimizer(with_extra, *model), std::invalid_argument);  // adamw has no momentum key
}

TEST(Optimizer, WeightDecaySkipsGainsAndBiases) {
  models::DecoderLM model(tiny_model(), 1);
  auto optimizer = make_optimizer(OptimizerSpec{}, *model);
  ASSERT_EQ(optimizer->param_groups().size(), 2u);
  const auto& decayed = static_cast<const torch::optim::AdamWOptions&>(optimizer->param_groups()[0].options());
  const auto& plain = static_cast<const torch::optim::AdamWOptions&>(optimizer->param_groups()[1].options());
  EXPECT_DOUBLE_EQ(decayed.weight_decay(), 0.1);
  EXPECT_DOUBLE_EQ(plain.weight_decay(), 0.0);
  for (const auto& p : optimizer->param_groups()[1].params()) EXPECT_LT(p.dim(), 2);
}

// The rule reads the model itself too, and works for a model that is not held in a shared_ptr (a
// task's own module on the stack).
TEST(Optimizer, DecayRuleReadsAStackAllocatedTopLevelModule) {
  models::AttnResidualImpl residual(models::ResidualMode::FullAttnRes, 2, 8, 1);
  const DecayRule rule(residual);
  EXPECT_FALSE(rule.decays(residual.queries));
  EXPECT_FALSE(rule.decays(residual.key_gains));
  EXPECT_TRUE(rule.decays(torch::zeros({4, 4})));
  EXPECT_FALSE(rule.decays(torch::zeros({4})));
}

// AttnRes's pseudo-queries and key gains are 2-D stacks of per-consumer vectors: the shape rule alone
// would decay them in the two AttnRes arms only, an unintended difference between the arms.
TEST(Optimizer, AttnResQueriesAndKeyGainsAreNeverDecayedInAnyArm) {
  for (const auto mode : {models::ResidualMode::Standard, models::ResidualMode::FullAttnRes,
                          models::ResidualMode::BlockAttnRes}) {
    auto config = tiny_model();
    config.residual.mode = mode;
    config.residual.block_size = 2;
    models::DecoderLM model(config, 1);
    std::set<const c10::TensorImpl*> vectors_in_role;
    std::int64_t matrices = 0;
    for (const auto& item : model->named_parameters()) {
      const bool attn_res = item.key().ends_with("residual.queries") || item.key().ends_with("residual.key_gains");
      if (attn_res) vectors_in_role.insert(item.value().unsafeGetTensorImpl());
      if (!attn_res && item.value().dim() >= 2) ++matrices;
    }
    EXPECT_EQ(vectors_in_role.size(), mode == models::ResidualMode::Standard ? 0u : 2u);
    auto adamw = make_optimizer(OptimizerSpec{}, *model);
    const auto& decayed = adamw->param_groups()[0];
    EXPECT_DOUBLE_EQ(static_cast<const torch::optim::AdamWOptions&>(decayed.options()).weight_decay(), 0.1);
    EXPECT_EQ(static_cast<std::int64_t>(decayed.params().size()), matrices);
    for (const auto& p : decayed.params()) EXPECT_FALSE(vectors_in_role.count(p.unsafeGetTensorImpl()));
    const DecayRule rule(*model);
    for (const auto& item : model->named_parameters()) {
      if (vectors_in_role.count(item.value().unsafeGetTensorImpl())) {
        EXPECT_FALSE(plan_parameters(MuonVariant::Muon, {item.key()}, {item.value()}, {}, &rule)[0].decayed);
      }
    }
  }
}

}  // namespace
}  // namespace k3lab::train
