// models::decoder_training_memory against the CUDA caching allocator's peak (issue 18: estimates
// checked against the CPU allocator here, the CUDA allocator on a GPU). The step is the CPU test's
// (training_memory_test.cpp): forward, next-token loss, backward, AdamW, the peak of the second step
// above what was allocated before the model existed. The shape is the benchmark's model at a size
// where the activations are gigabytes, so cuBLAS's workspace (a few MiB) is small beside them. On
// CUDA the KDA layers run the registered kernels, which keep their own tensors for backward: this
// test is what says whether the LibTorch-path estimate still holds there. Skipped without a CUDA
// device; run by scripts/gpu-check.sh.
#include <k3lab/models/decoder_lm.hpp>
#include <k3lab/models/kernel_registration.hpp>
#include <k3lab/models/training_memory.hpp>
#include <k3lab/train/bench.hpp>
#include <k3lab/train/device.hpp>
#include <k3lab/train/optimizer.hpp>
#include <k3lab/train/training_task.hpp>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdio>
#include <string>

namespace k3lab::train {
namespace {

constexpr double kTolerance = 0.20;

ThroughputShape gpu_shape(const std::string& pattern) {
  ThroughputShape shape;
  for (int layer = 0; layer < 8; ++layer) shape.schedule += pattern[static_cast<std::size_t>(layer) % pattern.size()];
  shape.d_model = 512;
  shape.n_heads = 8;
  shape.head_dim = 64;
  shape.mla_kv_latent_dim = 128;
  shape.kda_chunk_size = 64;
  shape.ffn_size = 1536;
  shape.vocab_size = 8192;
  shape.sequence_length = 2048;
  shape.batch_rows = 4;
  return shape;
}

std::int64_t allocated_now(const torch::Device& device) {
  synchronize(device);
  reset_peak_memory(device);
  return peak_memory_bytes(device).value_or(0);  // right after a reset the peak is what is allocated
}

std::int64_t measured_peak(const models::ModelConfig& config, const ThroughputShape& shape, const torch::Device& device) {
  torch::manual_seed(7);
  const auto before = allocated_now(device);
  std::int64_t peak = 0;
  {
    models::DecoderLM model(config, 7);
    model->to(device);
    auto optimizer = make_adamw(OptimizerSpec{}, *model);
    const auto tokens = torch::randint(shape.vocab_size, {shape.batch_rows, shape.sequence_length + 1},
                                       torch::TensorOptions(torch::kLong).device(device));  // (B, T + 1)
    const auto inputs = tokens.narrow(1, 0, shape.sequence_length);
    const auto targets = tokens.narrow(1, 1, shape.sequence_length);
    auto step = [&] {
      optimizer->zero_grad();
      next_token_loss(model->forward(inputs), targets).backward();
      optimizer->step();
    };
    step();
    allocated_now(device);
    step();
    synchronize(device);
    peak = peak_memory_bytes(device).value_or(0) - before;
  }
  return peak;
}

TEST(CudaArmMemory, EstimateIsWithinTwentyPercentOfTheAllocatorPeak) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device: run scripts/gpu-check.sh on a GPU machine";
  models::register_cuda_kernels();
  const torch::Device cuda(torch::kCUDA, 0);
  for (const std::string pattern : {"M", "K", "KKKM"}) {
    const auto shape = gpu_shape(pattern);
    const auto config = bench_model_config(shape);
    const auto estimate = models::decoder_training_memory(config, shape.batch_rows, shape.sequence_length);
    const auto peak = measured_peak(config, shape, cuda);
    std::printf("[ compare  ] %s: estimated %lld bytes, CUDA allocator peak %lld, ratio %.3f\n",
                shape.schedule.c_str(), static_cast<long long>(estimate.total()), static_cast<long long>(peak),
                static_cast<double>(estimate.total()) / static_cast<double>(peak));
    EXPECT_NEAR(static_cast<double>(estimate.total()), static_cast<double>(peak), kTolerance * static_cast<double>(peak))
        << shape.schedule << ": " << estimate.to_json().dump();
  }
}

}  // namespace
}  // namespace k3lab::train
