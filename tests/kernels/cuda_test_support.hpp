#pragma once
// Device-memory helpers for the GPU tests: RAII buffers filled with NaN bytes (0xff) before every
// launch, so an output element the kernel forgot to write shows up as NaN.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "k3lab/kernels/cuda_runtime.hpp"

namespace k3lab::kernels::testing {

inline void cuda_ok(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
  }
}

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    if (count_ > 0) cuda_ok(cudaMalloc(&ptr_, count_ * sizeof(T)), "cudaMalloc");
    poison();
  }
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept { *this = std::move(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    std::swap(ptr_, other.ptr_);
    std::swap(count_, other.count_);
    return *this;
  }
  ~DeviceBuffer() {
    if (ptr_) cudaFree(ptr_);
  }

  T* get() const { return count_ ? ptr_ : nullptr; }
  std::size_t size() const { return count_; }

  void upload(const std::vector<T>& host) {
    if (host.size() != count_) throw std::runtime_error("DeviceBuffer::upload: size mismatch");
    if (count_) cuda_ok(cudaMemcpy(ptr_, host.data(), count_ * sizeof(T), cudaMemcpyHostToDevice), "upload");
  }
  std::vector<T> download() const {
    std::vector<T> host(count_);
    if (count_) cuda_ok(cudaMemcpy(host.data(), ptr_, count_ * sizeof(T), cudaMemcpyDeviceToHost), "download");
    return host;
  }
  // Every byte 0xff: NaN for bf16 and fp32.
  void poison() {
    if (count_) cuda_ok(cudaMemset(ptr_, 0xff, count_ * sizeof(T)), "poison");
  }

 private:
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

// Base fixture: skips (not fails) on machines without a usable CUDA device.
class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << cuda_device_summary();
  }
};

inline void synchronize(cudaStream_t stream) {
  cuda_ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  cuda_ok(cudaGetLastError(), "kernel");
}

}  // namespace k3lab::kernels::testing
