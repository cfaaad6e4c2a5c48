#pragma once
// Test-only: the bytes LibTorch's CPU tensors hold right now and at their peak, by wrapping the CPU
// allocator (LibTorch 1.13 keeps no CPU statistics).
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <mutex>
#include <unordered_map>

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>

namespace k3lab::models::testing {

class CountingCpuAllocator final : public c10::Allocator {
 public:
  // The process's counting allocator, installed as the CPU allocator on first use and kept for the rest
  // of the process (tensors it allocated may outlive any test).
  static CountingCpuAllocator& installed() {
    static CountingCpuAllocator* const allocator = new CountingCpuAllocator();
    return *allocator;
  }
  CountingCpuAllocator(const CountingCpuAllocator&) = delete;
  CountingCpuAllocator& operator=(const CountingCpuAllocator&) = delete;

  c10::DataPtr allocate(std::size_t bytes) const override {
    c10::DataPtr inner = base_->allocate(bytes);
    void* data = inner.release_context();  // the default CPU allocator's context is its data pointer
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      sizes_[data] = bytes;
      current_ += static_cast<std::int64_t>(bytes);
      peak_ = std::max(peak_, current_);
    }
    return {data, data, &release, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &release; }

  // Starts a new peak from the bytes held now.
  void reset_peak() {
    const std::lock_guard<std::mutex> lock(mutex_);
    peak_ = current_;
  }
  std::int64_t current() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return current_;
  }
  std::int64_t peak() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return peak_;
  }

 private:
  CountingCpuAllocator() : base_(c10::GetCPUAllocator()) { c10::SetCPUAllocator(this, /*priority=*/255); }

  static void release(void* data) {
    auto* self = &installed();
    {
      const std::lock_guard<std::mutex> lock(self->mutex_);
      const auto it = self->sizes_.find(data);
      if (it != self->sizes_.end()) {
        self->current_ -= static_cast<std::int64_t>(it->second);
        self->sizes_.erase(it);
      }
    }
    self->base_->raw_deleter()(data);
  }

  c10::Allocator* base_;
  mutable std::mutex mutex_;
  mutable std::unordered_map<void*, std::size_t> sizes_;
  mutable std::int64_t current_ = 0;
  mutable std::int64_t peak_ = 0;
};

}  // namespace k3lab::models::testing
