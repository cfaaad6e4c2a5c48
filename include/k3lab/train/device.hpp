#pragma once
// Device choice and the accelerator's allocator statistics. Peak memory comes from the CUDA caching
// allocator (bytes held by tensors, not the reserved pool); on CPU there is no allocator statistic
// in LibTorch 1.13, so peak memory is reported as not measured rather than guessed.
#include <cstdint>
#include <optional>
#include <string>

#include <torch/types.h>

namespace k3lab::train {

// "auto" (CUDA when LibTorch has it and a GPU is visible, else CPU), "cpu", or "cuda" / "cuda:N".
// Throws std::invalid_argument for "cuda" without a usable GPU, saying what to do.
torch::Device resolve_device(const std::string& name);

// Whether this build's LibTorch was compiled with CUDA.
bool torch_has_cuda();

void synchronize(const torch::Device& device);
void reset_peak_memory(const torch::Device& device);
// Peak bytes allocated since the last reset; nullopt on CPU.
std::optional<std::int64_t> peak_memory_bytes(const torch::Device& device);
// Where peak_memory_bytes comes from, for records ("cuda caching allocator" / "not measured on cpu").
std::string peak_memory_source(const torch::Device& device);

// The memory a training step on `device` may use: the GPU's total memory, or this machine's RAM on
// the CPU; with the device's name for messages ("NVIDIA H200 (cuda:0)", "this machine's RAM").
struct DeviceMemory {
  double bytes = 0;
  std::string name;
};
DeviceMemory device_memory(const torch::Device& device);

// True for LibTorch's out-of-memory errors (CUDA and CPU allocators) and std::bad_alloc.
bool is_out_of_memory(const std::exception& error);

}  // namespace k3lab::train
