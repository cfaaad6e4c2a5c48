// AttnRes depth attention with O(sources) stored memory (models/depth_mix.hpp) against its plain
// autograd form: bitwise outputs, gradients to float64 rounding, and stored memory that grows linearly
// with depth where the autograd form grows quadratically.
#include <k3lab/models/decoder_lm.hpp>
#include <k3lab/models/depth_mix.hpp>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <functional>
#include <vector>

#include "counting_cpu_allocator.hpp"
#include "model_test_configs.hpp"

namespace k3lab::models {
namespace {

using Mix = std::function<torch::Tensor(const std::vector<torch::Tensor>&, const torch::Tensor&,
                                        const torch::Tensor&, double)>;

struct Inputs {
  std::vector<torch::Tensor> sources;  // N x (B, T, D)
  torch::Tensor query, gain;           // (D)
};

Inputs random_inputs(std::int64_t n, torch::ScalarType dtype, std::uint64_t seed) {
  torch::manual_seed(seed);
  Inputs in;
  for (std::int64_t i = 0; i < n; ++i) {
    in.sources.push_back((torch::randn({2, 3, 8}, dtype) * (1.0 + i)).requires_grad_(true));
  }
  in.query = torch::randn({8}, dtype).requires_grad_(true);
  in.gain = (1.0 + 0.3 * torch::randn({8}, dtype)).requires_grad_(true);
  return in;
}

// Output and every input gradient of sum(out * weights).
std::vector<torch::Tensor> run(const Mix& mix, const Inputs& in) {
  const auto out = mix(in.sources, in.query, in.gain, 1e-6);
  torch::manual_seed(99);
  const auto upstream = torch::randn_like(out);
  std::vector<torch::Tensor> inputs = in.sources;
  inputs.push_back(in.query);
  inputs.push_back(in.gain);
  auto grads = torch::autograd::grad({(out * upstream).sum()}, inputs);
  grads.insert(grads.begin(), out.detach());
  return grads;
}

TEST(DepthMix, MatchesTheAutogradFormInFloat64) {
  for (const std::int64_t n : {1, 2, 5}) {
    const auto in = random_inputs(n, torch::kDouble, 7 + n);
    const auto fast = run(depth_mix, in);
    const auto reference = run(depth_mix_reference, in);
    EXPECT_TRUE(torch::equal(fast[0], reference[0])) << "outputs differ at N=" << n;
    for (std::size_t i = 1; i < fast.size(); ++i) {
      EXPECT_TRUE(torch::allclose(fast[i], reference[i], 1e-12, 1e-13)) << "gradient " << i << " at N=" << n
                                                                        << "\n" << fast[i] - reference[i];
    }
  }
}

TEST(DepthMix, MatchesTheAutogradFormInFloat32) {
  const auto in = random_inputs(4, torch::kFloat, 3);
  const auto fast = run(depth_mix, in);
  const auto reference = run(depth_mix_reference, in);
  EXPECT_TRUE(torch::equal(fast[0], reference[0]));
  for (std::size_t i = 1; i < fast.size(); ++i) EXPECT_TRUE(torch::allclose(fast[i], reference[i], 1e-5, 1e-6)) << i;
}

// A Full-AttnRes-shaped chain of `depth` sublayers (each mixes every earlier output), trained one step:
// the peak of CPU tensor bytes above what was held before, through forward and backward.
std::int64_t chain_peak_bytes(const Mix& mix, std::int64_t depth) {
  auto& allocator = testing::CountingCpuAllocator::installed();
  torch::manual_seed(5);
  std::vector<torch::Tensor> weights;
  for (std::int64_t l = 0; l <= depth; ++l) weights.push_back((0.1 * torch::randn({3, 32})).requires_grad_(true));
  const auto embedding = torch::randn({4, 64, 32}).requires_grad_(true);  // (B, T, D)
  allocator.reset_peak();
  const auto before = allocator.current();
  {
    std::vector<torch::Tensor> sources = {embedding};
    for (std::int64_t l = 0; l < depth; ++l) {
      const auto h = mix(sources, weights[l][0], weights[l][1] + 1.0, 1e-6);  // (B, T, D)
      sources.push_back(torch::tanh(h * weights[l][2]));
    }
    mix(sources, weights[depth][0], weights[depth][1] + 1.0, 1e-6).pow(2).sum().backward();
  }
  return allocator.peak() - before;
}

// Increments 12 -> 24 -> 36: equal for linear growth, (36^2 - 24^2) / (24^2 - 12^2) = 1.67 for quadratic.
double increment_ratio(const Mix& mix) {
  const double p12 = static_cast<double>(chain_peak_bytes(mix, 12));
  const double p24 = static_cast<double>(chain_peak_bytes(mix, 24));
  const double p36 = static_cast<double>(chain_peak_bytes(mix, 36));
  return (p36 - p24) / (p24 - p12);
}

TEST(DepthMix, StoredMemoryGrowsLinearlyWithDepth) {
  const double fast = increment_ratio(depth_mix);
  const double reference = increment_ratio(depth_mix_reference);
  EXPECT_NEAR(fast, 1.0, 0.15) << "depth_mix";
  EXPECT_GT(reference, 1.4) << "the autograd form should show its quadratic growth (else the measurement is broken)";
}

// The same at the model level: one training step of a Full AttnRes decoder at depths 12, 24 and 36.
std::int64_t model_step_peak_bytes(std::int64_t layers) {
  auto& allocator = testing::CountingCpuAllocator::installed();
  auto c = testing::tiny_config(std::string(static_cast<std::size_t>(layers), 'A'));
  c.residual.mode = ResidualMode::FullAttnRes;
  DecoderLM model(c, 1);
  const auto tokens = torch::randint(0, c.vocab_size, {4, 64}, torch::kLong);
  allocator.reset_peak();
  const auto before = allocator.current();
  model->forward(tokens).logsumexp(-1).sum().backward();
  return allocator.peak() - before;
}

TEST(DepthMix, AFullAttnResTrainingStepGrowsLinearlyWithDepth) {
  const double p12 = static_cast<double>(model_step_peak_bytes(12));
  const double p24 = static_cast<double>(model_step_peak_bytes(24));
  const double p36 = static_cast<double>(model_step_peak_bytes(36));
  EXPECT_NEAR((p36 - p24) / (p24 - p12), 1.0, 0.15) << p12 << " " << p24 << " " << p36;
}

}  // namespace
}  // namespace k3lab::models
