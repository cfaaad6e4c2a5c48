#pragma once
// The one measured hardware peak that both `k3lab bench train` (its MFU on CUDA) and the plan's
// GPU-hour floor (experiments/training/plan_estimate.hpp) use (DESIGN.md section 8).

namespace k3lab::train {

// A measured peak an estimate may use.
struct HardwarePeak {
  const char* device;
  const char* operation;
  double flops_per_second;
};

// bf16 8192^3 matmul measured at about 795 TFLOP/s on the H200.
inline constexpr HardwarePeak kH200Bf16Matmul{"H200", "bf16 matmul", 795e12};

// The H200's memory as NVIDIA specifies it (141 GB of HBM3e), the device the plan's memory check names.
inline constexpr double kH200MemoryBytes = 141e9;

}  // namespace k3lab::train
