// models::decoder_training_memory and moe_training_memory against the CPU allocator's measured peak of
// a real training step (forward, next-token loss, backward, optimizer step, with the optimizer's state
// already created), for every kind of arm the five proxy experiments train, at reduced shapes chosen
// so that activations are most of the step's memory.
#include <k3lab/models/decoder_lm.hpp>
#include <k3lab/models/moe_lm.hpp>
#include <k3lab/models/training_memory.hpp>
#include <k3lab/train/muon_optimizer.hpp>
#include <k3lab/train/optimizer.hpp>
#include <k3lab/train/thread_pools.hpp>
#include <k3lab/train/training_task.hpp>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <functional>

#include "../models/counting_cpu_allocator.hpp"
#include "../models/model_test_configs.hpp"

namespace k3lab::train {
namespace {

using models::testing::CountingCpuAllocator;

constexpr double kTolerance = 0.20;  // issue 18: estimates within 20% of measured peaks
// Two micro-batch shapes with the same tokens: rows scale what is per token, the sequence length also
// the attention probabilities (T^2).
struct StepShape {
  std::int64_t rows = 0;
  std::int64_t sequence = 0;
};
constexpr StepShape kShapes[] = {{2, 128}, {1, 320}};

// The model tests' tiny shapes, with a 64-token KDA chunk so that the intra-chunk sub-blocks are counted.
models::ModelConfig reduced_config(const std::string& schedule) {
  auto c = models::testing::tiny_config(schedule);
  c.kda.chunk_size = 64;
  return c;
}

struct Measured {
  std::int64_t peak = 0;      // bytes above what the process held before the model existed
  std::int64_t resident = 0;  // parameters, gradients and optimizer state between steps
};

// Two steps; the peak is the second's, when gradients and optimizer state exist as in every later step.
Measured measure_steps(const std::function<torch::nn::Module&()>& build,
                       const std::function<torch::Tensor(const torch::Tensor&)>& logits_of,
                       const std::function<std::unique_ptr<torch::optim::Optimizer>(torch::nn::Module&)>& optimizer_of,
                       std::int64_t vocab, StepShape shape) {
  // One thread: the measured peak is then the operators' own tensors, not per-thread scratch buffers.
  apply_thread_policy(core::choose_thread_policy(1));
  torch::manual_seed(7);
  auto& allocator = CountingCpuAllocator::installed();
  const auto before = allocator.current();
  Measured m;
  {
    auto& model = build();
    auto optimizer = optimizer_of(model);
    const auto tokens = torch::randint(vocab, {shape.rows, shape.sequence + 1}, torch::kLong);
    const auto inputs = tokens.narrow(1, 0, shape.sequence), targets = tokens.narrow(1, 1, shape.sequence);
    auto step = [&] {
      optimizer->zero_grad();
      next_token_loss(logits_of(inputs), targets).backward();
      optimizer->step();
    };
    step();
    m.resident = allocator.current() - before;
    allocator.reset_peak();
    step();
    m.peak = allocator.peak() - before;
  }
  return m;
}

enum class Optimizer { AdamW, PerHeadMuon };

Measured measure_decoder(const models::ModelConfig& config, Optimizer optimizer, StepShape shape) {
  models::DecoderLM model{nullptr};
  return measure_steps(
      [&]() -> torch::nn::Module& {
        model = models::DecoderLM(config, 7);
        return *model;
      },
      [&](const torch::Tensor& inputs) { return model->forward(inputs); },
      [&](torch::nn::Module& m) {
        if (optimizer == Optimizer::AdamW) return make_adamw(OptimizerSpec{}, m);
        return muon_optimizer_factory(MuonVariant::PerHeadMuon)(OptimizerSpec{}, m);
      },
      config.vocab_size, shape);
}

void expect_within_tolerance(const models::TrainingMemory& estimate, const Measured& measured,
                             const std::string& arm) {
  const double total = static_cast<double>(estimate.total());
  const double resident =
      static_cast<double>(estimate.parameters + estimate.gradients + estimate.optimizer_state);
  // The shapes must make activations the larger part, or the check would only test the parameter count.
  EXPECT_GT(static_cast<double>(estimate.activation_bytes() + estimate.largest_transient().bytes), 0.5 * total) << arm;
  EXPECT_NEAR(resident, static_cast<double>(measured.resident), 0.02 * resident) << arm << ": resident state";
  std::printf("%s (%lld x %lld): estimated %lld bytes, measured peak %lld, ratio %.3f\n", arm.c_str(),
              static_cast<long long>(estimate.rows), static_cast<long long>(estimate.sequence_length),
              static_cast<long long>(estimate.total()), static_cast<long long>(measured.peak),
              total / static_cast<double>(measured.peak));
  EXPECT_NEAR(total, static_cast<double>(measured.peak), kTolerance * static_cast<double>(measured.peak))
      << arm << ": estimated " << estimate.total() << " bytes, measured peak " << measured.peak << " ("
      << estimate.to_json().dump() << ")";
}

struct DecoderArm {
  std::string name;
  std::function<void(models::ModelConfig&)> adjust;
  Optimizer optimizer = Optimizer::AdamW;
};

class DecoderArmMemory : public ::testing::TestWithParam<DecoderArm> {};

TEST_P(DecoderArmMemory, EstimateIsWithinTwentyPercentOfTheMeasuredPeak) {
  auto config = reduced_config("MMMM");
  GetParam().adjust(config);
  for (const auto shape : kShapes) {
    const auto estimate = models::decoder_training_memory(config, shape.rows, shape.sequence);
    expect_within_tolerance(estimate, measure_decoder(config, GetParam().optimizer, shape), GetParam().name);
  }
}

INSTANTIATE_TEST_SUITE_P(
    EveryArmKind, DecoderArmMemory,
    ::testing::Values(
        DecoderArm{"mla", [](models::ModelConfig&) {}},
        DecoderArm{"kda", [](models::ModelConfig& c) { c.schedule = "KKKK"; }},
        DecoderArm{"hybrid", [](models::ModelConfig& c) { c.schedule = "KKKM"; }},
        DecoderArm{"attention", [](models::ModelConfig& c) { c.schedule = "AAAA"; }},
        DecoderArm{"full_attn_res",
                   [](models::ModelConfig& c) {
                     c.schedule = "AAAA";
                     c.residual.mode = models::ResidualMode::FullAttnRes;
                   }},
        DecoderArm{"block_attn_res",
                   [](models::ModelConfig& c) {
                     c.schedule = "AAAA";
                     c.residual.mode = models::ResidualMode::BlockAttnRes;
                     c.residual.block_size = 2;
                   }},
        DecoderArm{"situ_glu_mx",
                   [](models::ModelConfig& c) {
                     c.schedule = "AA";
                     c.ffn.kind = models::FfnKind::SituGlu;
                     c.ffn.quant.weights = models::MxElement::Fp4E2M1;
                     c.ffn.quant.activations = models::MxElement::Fp8E4M3;
                   }},
        DecoderArm{"swiglu_mx",
                   [](models::ModelConfig& c) {
                     c.schedule = "AA";
                     c.ffn.quant.weights = models::MxElement::Fp4E2M1;
                     c.ffn.quant.activations = models::MxElement::Fp8E4M3;
                   }},
        DecoderArm{"per_head_muon", [](models::ModelConfig& c) { c.schedule = "AAAA"; },
                   Optimizer::PerHeadMuon}),
    [](const auto& info) { return info.param.name; });

TEST(MoeArmMemory, EstimateIsWithinTwentyPercentOfTheMeasuredPeak) {
  models::MoeMemoryShape shape{.vocab_size = 256, .hidden_size = 64, .layers = 2, .heads = 2, .head_dim = 32,
                               .experts = 8, .top_k = 2, .expert_hidden = 64};
  models::MoeLmOptions options;
  options.vocab_size = shape.vocab_size;
  options.n_layers = static_cast<int>(shape.layers);
  options.attention.hidden_size = shape.hidden_size;
  options.attention.num_heads = shape.heads;
  options.attention.head_dim = shape.head_dim;
  options.moe.hidden_size = shape.hidden_size;
  options.moe.n_experts = static_cast<int>(shape.experts);
  options.moe.top_k = static_cast<int>(shape.top_k);
  options.moe.expert_hidden = shape.expert_hidden;
  for (const auto step : kShapes) {
    options.moe.capacity = step.rows * step.sequence;  // no token dropped: every assignment is computed
    models::MoeLm model{nullptr};
    const auto measured = measure_steps(
        [&]() -> torch::nn::Module& {
          model = models::MoeLm(options, 7);
          return *model;
        },
        [&](const torch::Tensor& inputs) { return model->forward(inputs).logits; },
        [&](torch::nn::Module& m) { return make_adamw(OptimizerSpec{}, m); }, shape.vocab_size, step);
    expect_within_tolerance(models::moe_training_memory(shape, step.rows, step.sequence), measured, "moe");
  }
}

}  // namespace
}  // namespace k3lab::train
