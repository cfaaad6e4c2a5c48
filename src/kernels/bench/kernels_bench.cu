// k3lab_kernels_bench: CUDA-event timings of the KDA and SiTU-GLU kernels against their floors.
//
//   k3lab_kernels_bench [--json PATH] [--reps N] [--warmup N] [--quick]
//
// For every shape: warm-up launches, then `reps` timed launches (one event pair each), median
// reported. KDA: forward and forward+backward, tensor-core tf32 path and the fp32 CUDA-core
// baseline. SiTU-GLU: fused forward/backward and the unfused one-operation-per-kernel chain.
// Achieved TB/s = the floor's bytes (the unavoidable HBM traffic: every input read once, every
// output written once) / median time; TFLOP/s = counted matrix FLOPs / median time.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "k3lab/kernels/kda.hpp"
#include "k3lab/kernels/situ_glu.hpp"

namespace k3lab::kernels::bench {
namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
  }
}

// Deterministic pseudo-random fill on the device (splitmix64 of the index): no host generation
// of gigabytes, same values every run.
__device__ float hash_uniform(std::uint64_t i, std::uint64_t seed) {
  std::uint64_t z = i * 0x9e3779b97f4a7c15ull + seed;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return static_cast<float>(z >> 40) * (1.0f / 16777216.0f);
}

template <class T>
__global__ void fill_kernel(T* out, std::int64_t count, std::uint64_t seed, float lo, float hi) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const float x = lo + (hi - lo) * hash_uniform(static_cast<std::uint64_t>(i), seed);
    if constexpr (sizeof(T) == 2) {
      out[i] = float_to_bf16(x);
    } else {
      out[i] = x;
    }
  }
}

template <class T>
class Buffer {
 public:
  explicit Buffer(std::size_t count) : count_(count) {
    check(cudaMalloc(&ptr_, std::max<std::size_t>(count, 1) * sizeof(T)), "cudaMalloc");
  }
  ~Buffer() { cudaFree(ptr_); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  T* get() const { return ptr_; }
  void fill(std::uint64_t seed, float lo, float hi) {
    fill_kernel<<<1024, 256>>>(ptr_, static_cast<std::int64_t>(count_), seed, lo, hi);
    check(cudaGetLastError(), "fill");
  }

 private:
  T* ptr_ = nullptr;
  std::size_t count_;
};

struct Timing {
  double median_ms;
  double min_ms;
};

Timing time_it(const std::function<void()>& launch, int warmup, int reps) {
  for (int i = 0; i < warmup; ++i) launch();
  check(cudaDeviceSynchronize(), "warm-up");
  std::vector<cudaEvent_t> events(2 * reps);
  for (auto& e : events) check(cudaEventCreate(&e), "cudaEventCreate");
  for (int i = 0; i < reps; ++i) {
    check(cudaEventRecord(events[2 * i]), "record");
    launch();
    check(cudaEventRecord(events[2 * i + 1]), "record");
  }
  check(cudaDeviceSynchronize(), "timed launches");
  std::vector<double> ms(reps);
  for (int i = 0; i < reps; ++i) {
    float elapsed = 0.0f;
    check(cudaEventElapsedTime(&elapsed, events[2 * i], events[2 * i + 1]), "elapsed");
    ms[i] = elapsed;
  }
  for (auto& e : events) cudaEventDestroy(e);
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms.front()};
}

struct Row {
  std::string kernel;  // e.g. "kda fwd"
  std::string shape;
  std::string path;    // "tf32 tensor cores", "fp32 baseline", "fused", "unfused"
  double ms;
  double min_ms;
  double floor_bytes;
  double flops;        // 0 when not meaningful
};

std::string fmt(double x, int digits) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(digits);
  out << x;
  return out.str();
}

struct KdaBenchShape {
  std::string name;
  std::int64_t batch, seq_len, heads, dim;
  std::vector<std::int64_t> lengths;  // non-empty: variable length (B = 1)
};

// Matrix FLOPs of the chunkwise algorithm per 16-token tile and head (what the kernels compute):
// [q_d; k_d] S, U = minv X, O += aqk U, S += k_rest^T U, and the lower triangles of akk and aqk.
double kda_forward_tile_flops(double K, double V) {
  return 2 * 32 * K * V + 2 * 2 * 16 * 16 * V + 2 * K * 16 * V + 2 * 16 * 16 * K;
}
// Backward tile: its ten products (inner dimensions K, V, 16 or 32) plus the dP/dA dots.
double kda_backward_tile_flops(double K, double V) {
  return 2 * (16 * V * K + 3 * 16 * V * 16 + 16 * V * K + 16 * K * V + 32 * K * V + 32 * K * 16 +
              16 * K * 32 + K * V * 32) + 2 * 2 * 16 * 16 * V / 2;
}

void bench_kda(const KdaBenchShape& s, int warmup, int reps, std::vector<Row>& rows) {
  KdaShape shape;
  std::vector<std::int64_t> offsets;
  if (s.lengths.empty()) {
    shape = {s.batch, s.seq_len, s.heads, s.dim, s.dim, s.batch};
  } else {
    offsets.push_back(0);
    for (std::int64_t len : s.lengths) offsets.push_back(offsets.back() + len);
    shape = {1, offsets.back(), s.heads, s.dim, s.dim, static_cast<std::int64_t>(s.lengths.size())};
  }
  const std::int64_t T = shape.tokens(), H = shape.heads, K = shape.key_dim, V = shape.value_dim;
  const std::int64_t N = shape.num_seqs;
  Buffer<Bf16> q(T * H * K), k(T * H * K), v(T * H * V), g(T * H * K), beta(T * H), out(T * H * V);
  Buffer<Bf16> d_out(T * H * V), dq(T * H * K), dk(T * H * K), dv(T * H * V), dg(T * H * K),
      dbeta(T * H);
  Buffer<float> a_log(H), dt_bias(H * K), h0(N * H * K * V), ht(N * H * K * V), dh0(N * H * K * V),
      da_log(H), ddt(H * K);
  Buffer<std::int64_t> cu(offsets.size());
  Buffer<unsigned char> workspace(kda_backward_workspace_bytes(shape));
  q.fill(1, 0.0f, 1.0f);
  k.fill(2, 0.0f, 1.0f);
  v.fill(3, -1.0f, 1.0f);
  g.fill(4, -2.0f, 2.0f);
  beta.fill(5, -2.0f, 2.0f);
  a_log.fill(6, -0.5f, 0.5f);
  dt_bias.fill(7, -1.0f, 1.0f);
  h0.fill(8, -1.0f, 1.0f);
  d_out.fill(9, -1.0f, 1.0f);
  if (!offsets.empty()) {
    check(cudaMemcpy(cu.get(), offsets.data(), offsets.size() * sizeof(std::int64_t),
                     cudaMemcpyHostToDevice), "cu_seqlens");
  }
  KdaForwardArgs fwd;
  fwd.q = q.get();
  fwd.k = k.get();
  fwd.v = v.get();
  fwd.g = g.get();
  fwd.beta = beta.get();
  fwd.a_log = a_log.get();
  fwd.dt_bias = dt_bias.get();
  fwd.initial_state = h0.get();
  fwd.cu_seqlens = offsets.empty() ? nullptr : cu.get();
  fwd.out = out.get();
  fwd.final_state = ht.get();
  KdaBackwardArgs bwd;
  bwd.forward = fwd;
  bwd.d_out = d_out.get();
  bwd.dq = dq.get();
  bwd.dk = dk.get();
  bwd.dv = dv.get();
  bwd.dg = dg.get();
  bwd.dbeta = dbeta.get();
  bwd.da_log = da_log.get();
  bwd.ddt_bias = ddt.get();
  bwd.d_initial_state = dh0.get();
  bwd.workspace = workspace.get();

  const double tokens_heads = static_cast<double>(T) * H;
  const double state_bytes = 2.0 * N * H * K * V * 4;  // read h0, write ht
  const double fwd_bytes = tokens_heads * (3 * K + 2 * V + 1) * 2 + state_bytes;
  // Backward floor: inputs and d_out read once more, every gradient written once, h0 / d h0.
  const double bwd_bytes = tokens_heads * (3 * K + 2 * V + 1) * 2 + tokens_heads * (3 * K + V + 1) * 2 +
                           state_bytes;
  const double tiles = static_cast<double>(kda_tile_count_bound(shape) - N) * H;
  const double fwd_flops = tiles * kda_forward_tile_flops(K, V);
  const double bwd_flops = tiles * (kda_forward_tile_flops(K, V) + kda_backward_tile_flops(K, V));
  const std::string shape_name = s.name;
  for (KdaMath math : {KdaMath::kTensorCoreTf32, KdaMath::kFp32Scalar}) {
    KdaOptions options;
    options.math = math;
    const std::string path = math == KdaMath::kTensorCoreTf32 ? "tf32 tensor cores" : "fp32 baseline";
    const Timing f = time_it([&] { kda_forward(shape, options, fwd, nullptr); }, warmup, reps);
    rows.push_back({"kda fwd", shape_name, path, f.median_ms, f.min_ms, fwd_bytes, fwd_flops});
    const Timing fb = time_it(
        [&] {
          kda_forward(shape, options, fwd, nullptr);
          kda_backward(shape, options, bwd, nullptr);
        },
        warmup, reps);
    rows.push_back({"kda fwd+bwd", shape_name, path, fb.median_ms, fb.min_ms, fwd_bytes + bwd_bytes,
                    fwd_flops + bwd_flops});
    std::cerr << "  " << shape_name << " " << path << ": fwd " << fmt(f.median_ms, 3)
              << " ms, fwd+bwd " << fmt(fb.median_ms, 3) << " ms\n";
  }
}

void bench_situ(std::int64_t R, std::int64_t C, int warmup, int reps, std::vector<Row>& rows) {
  const std::string name = std::to_string(R) + "x" + std::to_string(C) + " bf16";
  const std::int64_t count = R * C;
  Buffer<Bf16> gate(count), up(count), out(count), d_out(count), d_gate(count), d_up(count);
  Buffer<float> scratch(3 * count);
  gate.fill(11, -8.0f, 8.0f);
  up.fill(12, -40.0f, 40.0f);
  d_out.fill(13, -1.0f, 1.0f);
  const SituGluShape shape = SituGluShape::contiguous(R, C);
  const SituGluBetas betas;
  const Timing f = time_it([&] { situ_glu_forward(shape, betas, gate.get(), up.get(), out.get(), nullptr); },
                           warmup, reps);
  rows.push_back({"situ-glu fwd", name, "fused", f.median_ms, f.min_ms, 3.0 * count * 2, 0});
  const Timing u = time_it(
      [&] { situ_glu_forward_unfused(shape, betas, gate.get(), up.get(), out.get(), scratch.get(), nullptr); },
      warmup, reps);
  rows.push_back({"situ-glu fwd", name, "unfused (5 kernels)", u.median_ms, u.min_ms, 3.0 * count * 2, 0});
  const Timing b = time_it(
      [&] {
        situ_glu_backward(shape, betas, gate.get(), up.get(), d_out.get(), d_gate.get(), d_up.get(), nullptr);
      },
      warmup, reps);
  rows.push_back({"situ-glu bwd", name, "fused", b.median_ms, b.min_ms, 5.0 * count * 2, 0});
}

void print_table(const std::vector<Row>& rows, double peak_tbps) {
  std::printf("\n%-13s %-30s %-20s %10s %10s %12s %9s %10s %10s\n", "kernel", "shape", "path",
              "median ms", "min ms", "floor GB", "TB/s", "of peak", "TFLOP/s");
  for (const Row& r : rows) {
    const double tbps = r.floor_bytes / (r.ms * 1e-3) / 1e12;
    std::printf("%-13s %-30s %-20s %10.3f %10.3f %12.3f %9.3f %9.1f%% %10s\n", r.kernel.c_str(),
                r.shape.c_str(), r.path.c_str(), r.ms, r.min_ms, r.floor_bytes / 1e9, tbps,
                100.0 * tbps / peak_tbps,
                r.flops > 0 ? fmt(r.flops / (r.ms * 1e-3) / 1e12, 1).c_str() : "-");
  }
}

void write_json(const std::string& path, const std::vector<Row>& rows, const std::string& device,
                double peak_tbps, int warmup, int reps) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write " + path + "; check the folder exists");
  out << "{\n  \"device\": \"" << device << "\",\n  \"peak_tbps\": " << peak_tbps
      << ",\n  \"warmup\": " << warmup << ",\n  \"reps\": " << reps << ",\n  \"rows\": [\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    out << "    {\"kernel\": \"" << r.kernel << "\", \"shape\": \"" << r.shape << "\", \"path\": \""
        << r.path << "\", \"median_ms\": " << r.ms << ", \"min_ms\": " << r.min_ms
        << ", \"floor_bytes\": " << r.floor_bytes << ", \"tbps\": "
        << r.floor_bytes / (r.ms * 1e-3) / 1e12 << ", \"flops\": " << r.flops << ", \"tflops\": "
        << (r.flops > 0 ? r.flops / (r.ms * 1e-3) / 1e12 : 0.0) << "}"
        << (i + 1 < rows.size() ? ",\n" : "\n");
  }
  out << "  ]\n}\n";
}

int run(int argc, char** argv) {
  std::string json_path = "kernels-bench.json";
  int warmup = 3, reps = 15;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--json") {
      json_path = value();
    } else if (arg == "--reps") {
      reps = std::max(1, std::stoi(value()));
    } else if (arg == "--warmup") {
      warmup = std::max(0, std::stoi(value()));
    } else if (arg == "--quick") {
      quick = true;
    } else if (arg == "--help" || arg == "-h") {
      std::cout << "usage: k3lab_kernels_bench [--json PATH (default kernels-bench.json)] [--reps N "
                   "(default 15)] [--warmup N (default 3)] [--quick (small shapes only)]\n";
      return 0;
    } else {
      throw std::invalid_argument("unknown option " + arg + " (try --help)");
    }
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::cerr << "k3lab_kernels_bench: no CUDA device; nothing to measure\n";
    return 2;
  }
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  int memory_clock_khz = 0, bus_width_bits = 0;
  check(cudaDeviceGetAttribute(&memory_clock_khz, cudaDevAttrMemoryClockRate, 0), "memory clock");
  check(cudaDeviceGetAttribute(&bus_width_bits, cudaDevAttrGlobalMemoryBusWidth, 0), "bus width");
  // DDR: two transfers per clock.
  const double peak_tbps = 2.0 * memory_clock_khz * 1e3 * (bus_width_bits / 8.0) / 1e12;
  const std::string device = std::string(prop.name) + ", sm_" + std::to_string(prop.major) +
                             std::to_string(prop.minor) + ", " + std::to_string(prop.multiProcessorCount) +
                             " SMs";
  std::cerr << "device: " << device << ", peak memory bandwidth " << fmt(peak_tbps, 2) << " TB/s\n";

  std::vector<KdaBenchShape> shapes;
  if (quick) {
    shapes = {{"B1 T1024 H8 D128", 1, 1024, 8, 128, {}}};
  } else {
    shapes = {
        {"B1 T8192 H64 D128", 1, 8192, 64, 128, {}},
        {"B1 T8192 H96 D128", 1, 8192, 96, 128, {}},
        {"B2 T16384 H64 D128", 2, 16384, 64, 128, {}},
        {"varlen 6 seqs (8192) H96 D128", 1, 0, 96, 128, {1300, 547, 2048, 963, 271, 3063}},
    };
  }
  std::vector<Row> rows;
  for (const auto& s : shapes) bench_kda(s, warmup, reps, rows);
  if (quick) {
    bench_situ(1024, 3584, warmup, reps, rows);
  } else {
    bench_situ(16384, 3584, warmup, reps, rows);
  }
  write_json(json_path, rows, device, peak_tbps, warmup, reps);
  std::cerr << "wrote " << json_path << "\n";
  print_table(rows, peak_tbps);
  return 0;
}

}  // namespace
}  // namespace k3lab::kernels::bench

int main(int argc, char** argv) {
  try {
    return k3lab::kernels::bench::run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "k3lab_kernels_bench: " << e.what() << "\n";
    return 1;
  }
}
