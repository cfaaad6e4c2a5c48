// The trainer with a task of its own: a one-parameter model whose loss and optimizer steps are worked
// out by hand, so the trainer's step (micro-batches, auxiliary loss, schedule, optimizer factory),
// extras, after_step, evaluations, task state and resume are checked against independent numbers.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include <torch/torch.h>

#include "k3lab/train/task_trainer.hpp"
#include "test_support.hpp"

namespace k3lab::train {
namespace {

using testing::TempDir;

constexpr std::uint32_t kToken = 3;  // every token: inputs and targets are all 3

// A corpus of one repeated token, so every batch is the same whatever the data order.
const Dataset& constant_corpus() {
  static const Dataset d = [] {
    Dataset data;
    data.id = "constant";
    data.vocab_size = 8;
    data.train = TokenStream::from_tokens(std::vector<std::uint32_t>(256, kToken));
    data.validation = TokenStream::from_tokens(std::vector<std::uint32_t>(64, kToken));
    return data;
  }();
  return d;
}

struct Scalar : torch::nn::Module {
  explicit Scalar(double w0) { w = register_parameter("w", torch::full({1}, w0, torch::kFloat64)); }
  torch::Tensor w;  // (1)
};

// loss = mean over tokens of (w x - t)^2 with x = t = 3, i.e. 9 (w - 1)^2, gradient 18 (w - 1);
// auxiliary (when set) = c w^2, for the gradient only.
class ScalarTask : public TrainingTask {
 public:
  explicit ScalarTask(double w0, double aux_coefficient = 0) : scalar_(w0), aux_(aux_coefficient) {}
  torch::nn::Module& model() override { return scalar_; }
  nlohmann::json identity() const override { return {{"task", "scalar"}, {"aux", aux_}}; }
  TaskLoss loss(const Batch& batch) override {
    const auto x = batch.inputs.to(torch::kFloat64), t = batch.targets.to(torch::kFloat64);  // (rows, T)
    TaskLoss out{(scalar_.w * x - t).pow(2).mean(), {}, {{"w_before", w()}, {"rows", batch.inputs.size(0)}}};
    if (aux_ != 0) out.auxiliary = aux_ * scalar_.w.pow(2).sum();
    return out;
  }
  nlohmann::json after_step(const StepReport& report) override {
    ++after_steps_;
    return {{"w_after", w()}, {"loss", report.loss}, {"micro_batches", report.extras}};
  }
  nlohmann::json evaluate(const EvalPoint& point) override {
    if (!measure_) return nullptr;
    return {{"w", w()}, {"final", point.final}};
  }
  bool has_state() const override { return true; }
  void save_state(torch::serialize::OutputArchive& archive) const override {
    archive.write("after_steps", torch::tensor(after_steps_, torch::kInt64));
  }
  void restore_state(torch::serialize::InputArchive& archive) override {
    torch::Tensor n;
    archive.read("after_steps", n);
    after_steps_ = n.item<std::int64_t>();
  }
  void begin(std::int64_t step) override { began_at_ = step; }

  double w() const { return scalar_.w.item<double>(); }
  std::int64_t after_steps_ = 0;
  std::int64_t began_at_ = -1;
  bool measure_ = false;

 private:
  Scalar scalar_;
  double aux_;
};

OptimizerFactory sgd_factory() {
  return [](const OptimizerSpec& spec, torch::nn::Module& m) {
    return std::make_unique<torch::optim::SGD>(m.parameters(), torch::optim::SGDOptions(spec.learning_rate));
  };
}

// 2 rows of 4 tokens per step, one row per forward (two micro-batches), an evaluation every 2 steps.
LoopConfig scalar_config(std::int64_t steps) {
  LoopConfig c;
  c.order_seed = 1;
  c.batch_tokens = 8;
  c.sequence_length = 4;
  c.token_budget = steps * c.batch_tokens;
  c.eval_interval_tokens = 2 * c.batch_tokens;
  c.micro_batch_rows = 1;
  c.optimizer.name = "sgd";
  c.optimizer.learning_rate = 0.01;
  c.optimizer.warmup_fraction = 0;
  c.optimizer.decay = "constant";
  c.optimizer_factory = sgd_factory();
  c.grad_clip = 0;
  c.device = "cpu";
  c.threads = 1;
  return c;
}

TEST(TaskTrainer, SgdStepsEqualTheHandComputation) {
  ScalarTask task(0.0);
  const auto result = train_task(task, scalar_config(2), constant_corpus());
  ASSERT_EQ(result.status, TrainResult::Status::Completed) << result.detail;
  // w0 = 0: loss 9, gradient -18, w1 = 0 + 0.01 * 18 = 0.18; loss 9 * 0.82^2, w2 = 0.18 + 0.01 * 18 * 0.82.
  ASSERT_EQ(result.state.losses.size(), 2u);
  EXPECT_NEAR(result.state.losses[0], 9.0, 1e-12);
  EXPECT_NEAR(result.state.losses[1], 9.0 * 0.82 * 0.82, 1e-12);
  EXPECT_NEAR(task.w(), 0.18 + 0.18 * 0.82, 1e-12);
  EXPECT_EQ(result.parameters, 1);
  EXPECT_EQ(result.state.tokens, 16);
}

TEST(TaskTrainer, BuiltInAdamWFirstStepIsTheLearningRateTimesTheGradientSign) {
  ScalarTask task(0.0);
  auto config = scalar_config(1);
  config.eval_interval_tokens = config.batch_tokens;
  config.optimizer.name = "adamw";
  config.optimizer.learning_rate = 0.001;
  config.optimizer_factory = nullptr;
  ASSERT_EQ(train_task(task, config, constant_corpus()).status, TrainResult::Status::Completed);
  // Step 1: m_hat = g, v_hat = g^2, so the update is lr g / (|g| + eps) with g = -18; no weight
  // decay on a vector.
  EXPECT_NEAR(task.w(), 0.001 * 18.0 / (18.0 + 1e-8), 1e-15);
}

TEST(TaskTrainer, TheAuxiliaryLossMovesTheGradientButNotTheRecordedLoss) {
  ScalarTask task(0.5, /*aux_coefficient=*/1.0);
  auto config = scalar_config(1);
  config.eval_interval_tokens = config.batch_tokens;
  const auto result = train_task(task, config, constant_corpus());
  ASSERT_EQ(result.status, TrainResult::Status::Completed) << result.detail;
  EXPECT_NEAR(result.state.losses[0], 9.0 * 0.25, 1e-12);  // 9 (w - 1)^2, without 1 * w^2
  // gradient 18 (0.5 - 1) + 2 * 0.5 = -8, so w1 = 0.5 + 0.01 * 8.
  EXPECT_NEAR(task.w(), 0.58, 1e-12);
}

TEST(TaskTrainer, ExtrasReachAfterStepAndAreKeptPerStep) {
  ScalarTask task(0.0);
  const auto result = train_task(task, scalar_config(2), constant_corpus());
  ASSERT_EQ(result.state.step_extras.size(), 2u);
  EXPECT_EQ(task.after_steps_, 2);
  const auto& first = result.state.step_extras[0];
  EXPECT_EQ(first.at("step"), 0);
  EXPECT_NEAR(first.at("extras").at("w_after").get<double>(), 0.18, 1e-12);
  EXPECT_EQ(first.at("extras").at("loss").get<double>(), result.state.losses[0]);
  // Two micro-batches of one row, both seen before the update.
  const auto& micro = first.at("extras").at("micro_batches");
  ASSERT_EQ(micro.size(), 2u);
  for (const auto& m : micro) {
    EXPECT_EQ(m.at("rows"), 1);
    EXPECT_EQ(m.at("w_before").get<double>(), 0.0);
  }
  EXPECT_EQ(result.state.step_extras[1].at("step"), 1);
}

TEST(TaskTrainer, EvaluationsAreKeptOnlyWhenTheTaskMeasures) {
  ScalarTask silent(0.0);
  EXPECT_TRUE(train_task(silent, scalar_config(4), constant_corpus()).state.evaluations.empty());
  ScalarTask measuring(0.0);
  measuring.measure_ = true;
  int seen = 0;
  LoopHooks hooks;
  hooks.on_evaluation = [&](const nlohmann::json&) { ++seen; };
  const auto result = train_task(measuring, scalar_config(4), constant_corpus(), hooks);
  ASSERT_EQ(result.state.evaluations.size(), 2u);
  EXPECT_EQ(seen, 2);
  EXPECT_EQ(result.state.evaluations[0].at("step"), 2);
  EXPECT_EQ(result.state.evaluations[0].at("tokens"), 16);
  EXPECT_FALSE(result.state.evaluations[0].at("final").get<bool>());
  EXPECT_TRUE(result.state.evaluations[1].at("final").get<bool>());
}

TEST(TaskTrainer, ResumeAfterAKillEndsInTheUninterruptedState) {
  ScalarTask straight(0.0);
  const auto uninterrupted = train_task(straight, scalar_config(6), constant_corpus());
  TempDir dir("task-resume");
  auto config = scalar_config(6);
  config.checkpoint_dir = dir.path;
  ScalarTask killed(0.0);
  LoopHooks crash;
  crash.crash_after_step = [](std::int64_t step) { return step == 5; };  // after the checkpoint at step 4
  ASSERT_EQ(train_task(killed, config, constant_corpus(), crash).status, TrainResult::Status::Interrupted);
  EXPECT_EQ(killed.began_at_, 0);
  ScalarTask resumed(0.0);
  const auto result = train_task(resumed, config, constant_corpus());
  ASSERT_EQ(result.status, TrainResult::Status::Completed) << result.detail;
  ASSERT_TRUE(result.resumed_from_step.has_value());
  EXPECT_EQ(*result.resumed_from_step, 4);
  EXPECT_EQ(resumed.began_at_, 4);
  EXPECT_EQ(resumed.w(), straight.w());  // bitwise
  EXPECT_EQ(result.state.losses, uninterrupted.state.losses);
  EXPECT_EQ(result.state.step_extras, uninterrupted.state.step_extras);
  EXPECT_EQ(resumed.after_steps_, straight.after_steps_);  // the task's own state came back
  // Another task identity cannot resume this checkpoint.
  ScalarTask other(0.0, /*aux_coefficient=*/0.5);
  EXPECT_THROW(train_task(other, config, constant_corpus()), std::runtime_error);
}

TEST(TaskTrainer, ANonFiniteTaskLossFailsTheRunWithItsClass) {
  ScalarTask task(0.0);
  LoopHooks hooks;
  hooks.transform_loss = [](std::int64_t step, const torch::Tensor& loss) {
    return step == 1 ? loss * std::numeric_limits<double>::infinity() : loss;
  };
  const auto result = train_task(task, scalar_config(4), constant_corpus(), hooks);
  EXPECT_EQ(result.status, TrainResult::Status::Failed);
  EXPECT_EQ(result.failure_class, "nan-loss");
  EXPECT_EQ(result.state.losses.size(), 1u);
}

}  // namespace
}  // namespace k3lab::train
