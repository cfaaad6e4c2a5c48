// Micro-batches side by side (train/micro_batch_lanes.hpp): the rule for how many lanes, that lanes
// really overlap and each runs on one intra-op thread, the order results arrive in, exceptions, and
// that a trained run is bitwise the same with lanes as with one thread.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <vector>

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include "k3lab/train/micro_batch_lanes.hpp"
#include "k3lab/train/thread_pools.hpp"
#include "k3lab/train/trainer.hpp"
#include "tiny_training.hpp"

namespace k3lab::train {
namespace {

using testing::corpus;
using testing::tiny_config;

const torch::Device kCpu(torch::kCPU);

TEST(MicroBatchLanes, OneLanePerThreadAtMostOnePerMicroBatchNoneOnAGpu) {
  EXPECT_EQ(micro_batch_lanes(1, 8, kCpu), 1);
  EXPECT_EQ(micro_batch_lanes(2, 8, kCpu), 2);
  EXPECT_EQ(micro_batch_lanes(4, 3, kCpu), 3);
  EXPECT_EQ(micro_batch_lanes(2, 1, kCpu), 1);
  EXPECT_EQ(micro_batch_lanes(8, 8, torch::Device(torch::kCUDA, 0)), 1);
}

// Every job of a wave is inside at once (each waits, up to a generous bound, for the others to arrive):
// the number seen together is a count, not a time.
TEST(MicroBatchLanes, AWavesJobsOverlapEachOnOneIntraOpThreadAndThePoolsComeBack) {
  apply_thread_policy(core::choose_thread_policy(2));
  std::mutex mutex;
  std::condition_variable arrived;
  int inside = 0, most_inside = 0;
  std::vector<int> intra_op_threads(4, 0);
  std::vector<std::int64_t> consumed;
  run_in_lanes(
      2, 2, 4,
      [&](std::int64_t index, bool apart) {
        EXPECT_TRUE(apart);
        intra_op_threads[static_cast<std::size_t>(index)] = at::get_num_threads();
        std::unique_lock lock(mutex);
        ++inside;
        most_inside = std::max(most_inside, inside);
        arrived.notify_all();
        arrived.wait_for(lock, std::chrono::seconds(20), [&] { return inside >= 2 || most_inside >= 2; });
        --inside;
        return MicroBatchGradient{static_cast<double>(index), nullptr, {}};
      },
      [&](std::int64_t index, MicroBatchGradient& g) {
        EXPECT_EQ(g.loss, static_cast<double>(index));
        consumed.push_back(index);
        return true;
      });
  EXPECT_EQ(most_inside, 2);
  EXPECT_EQ(intra_op_threads, std::vector<int>(4, 1));
  EXPECT_EQ(consumed, (std::vector<std::int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(at::get_num_threads(), 2);
  const auto blas = set_blas_threads(2);
  if (blas.is_number()) {
    EXPECT_EQ(blas, 2);
  }
}

TEST(MicroBatchLanes, TheFirstFailureInJobOrderIsRethrownAndLaterWavesDoNotRun) {
  std::atomic<int> ran{0};
  std::vector<std::int64_t> consumed;
  const auto job = [&](std::int64_t index, bool) {
    ++ran;
    if (index == 3) throw std::runtime_error("job 3 failed");
    if (index == 2) throw std::invalid_argument("job 2 failed");
    return MicroBatchGradient{};
  };
  const auto consume = [&](std::int64_t index, MicroBatchGradient&) {
    consumed.push_back(index);
    return true;
  };
  try {
    run_in_lanes(2, 2, 6, job, consume);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "job 2 failed");
  }
  EXPECT_EQ(ran.load(), 4);
  EXPECT_EQ(consumed, (std::vector<std::int64_t>{0, 1}));
}

TEST(MicroBatchLanes, ConsumeCanStopBeforeTheNextWave) {
  std::atomic<int> ran{0};
  run_in_lanes(
      2, 2, 6,
      [&](std::int64_t, bool) {
        ++ran;
        return MicroBatchGradient{};
      },
      [](std::int64_t index, MicroBatchGradient&) { return index < 1; });
  EXPECT_EQ(ran.load(), 2);
}

// The trainer's promise: micro-batches side by side give bitwise the run one thread gives (every
// micro-batch's gradient computed on one intra-op thread and added in order). tiny_config has two
// micro-batches of one row per step.
TEST(MicroBatchLanes, ATrainedRunWithTwoLanesEqualsTheOneThreadRunBitwise) {
  auto one = tiny_config();
  one.batch_tokens = 64;  // four rows of 16 tokens: two waves of two lanes
  one.eval_interval_tokens = 64;
  one.token_budget = 128;
  auto two = one;
  two.threads = 2;
  const auto a = train(one, corpus());
  const auto b = train(two, corpus());
  ASSERT_EQ(a.status, TrainResult::Status::Completed) << a.detail;
  ASSERT_EQ(b.status, TrainResult::Status::Completed) << b.detail;
  EXPECT_EQ(a.lanes, 1);
  EXPECT_EQ(b.lanes, 2);
  EXPECT_EQ(a.state.losses, b.state.losses);            // doubles compared exactly
  EXPECT_EQ(a.state.evaluations, b.state.evaluations);  // validation loss: its micro-batches side by side too
  const auto pa = a.model->parameters(), pb = b.model->parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (std::size_t i = 0; i < pa.size(); ++i) EXPECT_TRUE(torch::equal(pa[i], pb[i])) << "parameter " << i;
}

// The gradient kept apart and added in order equals backward()'s accumulation into .grad.
TEST(MicroBatchLanes, GradientsKeptApartAddUpToBackwardsAccumulation) {
  torch::manual_seed(3);
  torch::nn::Linear layer(4, 3);
  const auto params = trainable_parameters(*layer);
  const auto x1 = torch::randn({2, 4}), x2 = torch::randn({2, 4});  // (2, 4) each
  layer->zero_grad();
  for (const auto& x : {x1, x2}) backward_micro_batch(layer(x).pow(2).sum(), params, false);
  std::vector<torch::Tensor> expected;
  for (const auto& p : params) expected.push_back(p.grad().clone());
  for (auto& p : params) const_cast<torch::Tensor&>(p).mutable_grad().reset();
  auto first = backward_micro_batch(layer(x1).pow(2).sum(), params, true);
  for (const auto& p : params) EXPECT_FALSE(p.grad().defined()) << "kept apart: .grad untouched";
  accumulate_gradients(params, first);
  auto second = backward_micro_batch(layer(x2).pow(2).sum(), params, true);
  accumulate_gradients(params, second);
  for (std::size_t i = 0; i < params.size(); ++i) EXPECT_TRUE(torch::equal(params[i].grad(), expected[i]));
}

}  // namespace
}  // namespace k3lab::train
