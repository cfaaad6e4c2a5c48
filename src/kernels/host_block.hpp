#pragma once
// The host emulator of a thread block: a phase runs every simulated thread to completion, one after
// another, and the end of a phase stands for __syncthreads(). Reversing the thread order changes
// the result exactly when threads of one phase depend on each other (a race on a real GPU).
#include "block_gemm.hpp"

namespace k3lab::kernels::detail {

class HostBlock {
 public:
  // tf32_operands: round every product's operands as the tensor-core path does.
  HostBlock(bool reverse_order, bool tf32_operands)
      : reverse_(reverse_order), tf32_(tf32_operands) {}

  static constexpr int threads() { return kBlockThreads; }

  template <class Fn>
  void phase(Fn&& fn) {
    for (int i = 0; i < kBlockThreads; ++i) fn(reverse_ ? kBlockThreads - 1 - i : i);
  }

  void gemm(const GemmSpec& spec) {
    phase([&](int tid) { gemm_thread(tid, kBlockThreads, spec, tf32_ && !spec.fp32_operands); });
  }

 private:
  bool reverse_;
  bool tf32_;
};

}  // namespace k3lab::kernels::detail
