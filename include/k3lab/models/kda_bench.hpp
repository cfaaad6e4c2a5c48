#pragma once
// KDA benchmark: accuracy of the chunkwise path against the float64 recurrence, and its speed in
// tokens per second on the CPU (and on CUDA when LibTorch sees a GPU; a registered kernel in
// kda_ops.hpp is picked up automatically). The CLI's `k3lab bench kda` calls this.
#include <cstdint>
#include <ostream>
#include <string>

namespace k3lab::models {

struct KdaBenchOptions {
  std::int64_t batch = 1;
  std::int64_t seq_len = 1024;
  std::int64_t heads = 4;
  std::int64_t head_dim = 64;  // K = V
  std::int64_t chunk_size = 64;
  double gate_lower_bound = -5.0;
  int warmup = 1;
  int iterations = 3;
  bool backward = true;      // also time forward + backward
  bool try_cuda = true;      // run the CUDA rows when a GPU is visible
  double tolerance = 0.005;  // rmse-ratio gate (reference/kda.md section 3)
  std::uint64_t seed = 0;
  std::string format = "md";  // "md" table or "json" lines
};

// Prints one row per (device, path). Returns 0 when every checked output and final state is within
// `tolerance`, 1 when one is not, 2 for invalid options (with the reason on `out`).
int run_kda_bench(const KdaBenchOptions& options, std::ostream& out);

}  // namespace k3lab::models
