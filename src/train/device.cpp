#include "k3lab/train/device.hpp"

#include <new>
#include <stdexcept>

#include <torch/cuda.h>

#include <unistd.h>

#if K3LAB_TORCH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#endif

namespace k3lab::train {

bool torch_has_cuda() {
#if K3LAB_TORCH_CUDA
  return true;
#else
  return false;
#endif
}

torch::Device resolve_device(const std::string& name) {
  if (name == "auto") return torch::cuda::is_available() ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
  if (name == "cpu") return torch::Device(torch::kCPU);
  if (name.rfind("cuda", 0) == 0) {
    if (!torch::cuda::is_available()) {
      throw std::invalid_argument("device \"" + name + "\": " +
                                  (torch_has_cuda() ? std::string("no CUDA GPU is visible (check CUDA_VISIBLE_DEVICES and the driver)")
                                                    : std::string("this build's LibTorch has no CUDA; rebuild against a CUDA "
                                                                  "LibTorch (see docs) or use --device cpu")));
    }
    torch::Device device(name);
    if (device.has_index() && device.index() >= static_cast<int>(torch::cuda::device_count())) {
      throw std::invalid_argument("device \"" + name + "\": only " + std::to_string(torch::cuda::device_count()) +
                                  " CUDA devices are visible");
    }
    return device.has_index() ? device : torch::Device(torch::kCUDA, 0);
  }
  throw std::invalid_argument("device \"" + name + "\": expected auto, cpu or cuda[:N]");
}

void synchronize(const torch::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

void reset_peak_memory(const torch::Device& device) {
#if K3LAB_TORCH_CUDA
  if (device.is_cuda()) c10::cuda::CUDACachingAllocator::resetPeakStats(device.index());
#else
  (void)device;
#endif
}

std::optional<std::int64_t> peak_memory_bytes(const torch::Device& device) {
#if K3LAB_TORCH_CUDA
  if (device.is_cuda()) {
    // Index 0 of a StatArray is StatType::AGGREGATE in LibTorch 1.13 and 2.x alike.
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.index());
    return static_cast<std::int64_t>(stats.allocated_bytes[0].peak);
  }
#else
  (void)device;
#endif
  return std::nullopt;
}

std::string peak_memory_source(const torch::Device& device) {
  return device.is_cuda() && torch_has_cuda() ? "cuda caching allocator (peak allocated bytes)"
                                              : "not measured on cpu (LibTorch has no CPU allocator statistics)";
}

DeviceMemory device_memory(const torch::Device& device) {
#if K3LAB_TORCH_CUDA
  if (device.is_cuda()) {
    const auto* properties = at::cuda::getDeviceProperties(device.index());
    return {static_cast<double>(properties->totalGlobalMem), std::string(properties->name) + " (" + device.str() + ")"};
  }
#endif
  const auto pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGE_SIZE);
  return {static_cast<double>(pages) * static_cast<double>(page_size), "this machine's RAM"};
}

bool is_out_of_memory(const std::exception& error) {
  if (dynamic_cast<const std::bad_alloc*>(&error)) return true;
  const std::string what = error.what();
  return what.find("out of memory") != std::string::npos || what.find("not enough memory") != std::string::npos ||
         what.find("Out of memory") != std::string::npos;
}

}  // namespace k3lab::train
