// SiTU-GLU CUDA kernels against the double reference (label gpu; skipped without a GPU): bf16 and
// fp32, packed rows, the two halves of a fused projection (row stride 2 * cols), and odd widths
// that take the scalar path. Outputs NaN-poisoned before each launch.
#include <gtest/gtest.h>

#include <type_traits>

#include "cuda_test_support.hpp"
#include "k3lab/kernels/situ_glu.hpp"
#include "k3lab/kernels/situ_glu_reference.hpp"
#include "kernel_test_support.hpp"

namespace k3lab::kernels {
namespace {

using testing::DeviceBuffer;

struct Layout {
  const char* name;
  std::int64_t rows;
  std::int64_t cols;
  bool fused;  // gate and up are the halves of one (rows, 2 * cols) matrix
};

const Layout kLayouts[] = {
    {"packed", 257, 1024, false},
    {"fused_halves", 129, 768, true},
    {"odd_width", 33, 13, false},
};

// Rows of gate/up stored at their strides; the reference reads the same (bf16-rounded) values.
template <class T>
void run_layout(const Layout& layout, bool bf16, testing::TestRng& rng) {
  SCOPED_TRACE(layout.name);
  const std::int64_t R = layout.rows, C = layout.cols;
  SituGluShape shape = SituGluShape::contiguous(R, C);
  if (layout.fused) shape.gate_stride = shape.up_stride = 2 * C;
  std::vector<double> gate = testing::normals(rng, R * C, 0.0, 6.0);
  std::vector<double> up = testing::normals(rng, R * C, 0.0, 30.0);
  std::vector<double> d_out = testing::normals(rng, R * C);
  if (bf16) {
    for (auto* v : {&gate, &up, &d_out}) testing::round_to_bf16_in_place(*v);
  } else {
    for (auto* v : {&gate, &up, &d_out}) for (auto& x : *v) x = static_cast<float>(x);
  }
  const auto pack = [&](const std::vector<double>& values, std::int64_t stride, std::int64_t offset) {
    std::vector<T> out(R * stride + offset);
    for (std::int64_t r = 0; r < R; ++r)
      for (std::int64_t c = 0; c < C; ++c) {
        if constexpr (std::is_same_v<T, Bf16>) {
          out[r * stride + offset + c] = float_to_bf16(static_cast<float>(values[r * C + c]));
        } else {
          out[r * stride + offset + c] = static_cast<float>(values[r * C + c]);
        }
      }
    return out;
  };
  const auto unpack = [&](const std::vector<T>& values, std::int64_t stride, std::int64_t offset) {
    std::vector<double> out(R * C);
    for (std::int64_t r = 0; r < R; ++r)
      for (std::int64_t c = 0; c < C; ++c) {
        if constexpr (std::is_same_v<T, Bf16>) {
          out[r * C + c] = bf16_to_float(values[r * stride + offset + c]);
        } else {
          out[r * C + c] = values[r * stride + offset + c];
        }
      }
    return out;
  };
  // Fused layout: one buffer, gate in columns [0, C), up in [C, 2C) of every row.
  DeviceBuffer<T> gate_dev, up_dev, fused_dev, d_gate_dev, d_up_dev, d_fused_dev;
  const T* gate_ptr;
  const T* up_ptr;
  T* d_gate_ptr;
  T* d_up_ptr;
  if (layout.fused) {
    const std::vector<T> g = pack(gate, 2 * C, 0), u = pack(up, 2 * C, C);
    std::vector<T> fused(R * 2 * C);
    for (std::size_t i = 0; i < fused.size(); ++i) {
      fused[i] = static_cast<std::int64_t>(i) % (2 * C) < C ? g[i] : u[i];
    }
    fused_dev = DeviceBuffer<T>(fused);
    d_fused_dev = DeviceBuffer<T>(fused.size());
    gate_ptr = fused_dev.get();
    up_ptr = fused_dev.get() + C;
    d_gate_ptr = d_fused_dev.get();
    d_up_ptr = d_fused_dev.get() + C;
  } else {
    gate_dev = DeviceBuffer<T>(pack(gate, C, 0));
    up_dev = DeviceBuffer<T>(pack(up, C, 0));
    d_gate_dev = DeviceBuffer<T>(R * C);
    d_up_dev = DeviceBuffer<T>(R * C);
    gate_ptr = gate_dev.get();
    up_ptr = up_dev.get();
    d_gate_ptr = d_gate_dev.get();
    d_up_ptr = d_up_dev.get();
  }
  DeviceBuffer<T> out(R * C);
  DeviceBuffer<T> d_out_dev(pack(d_out, C, 0));
  const SituGluBetas betas;
  situ_glu_forward(shape, betas, gate_ptr, up_ptr, out.get(), nullptr);
  situ_glu_backward(shape, betas, gate_ptr, up_ptr, d_out_dev.get(), d_gate_ptr, d_up_ptr, nullptr);
  testing::synchronize(nullptr);

  const std::vector<double> gold = situ_glu_forward_reference(gate, up, betas);
  std::vector<double> gold_dg, gold_du;
  situ_glu_backward_reference(gate, up, d_out, gold_dg, gold_du, betas);
  const double tol = bf16 ? 0.005 : 1e-5;
  K3LAB_EXPECT_CLOSE("out", gold, unpack(out.download(), C, 0), tol);
  if (layout.fused) {
    const std::vector<T> d_fused = d_fused_dev.download();
    K3LAB_EXPECT_CLOSE("d_gate", gold_dg, unpack(d_fused, 2 * C, 0), tol);
    K3LAB_EXPECT_CLOSE("d_up", gold_du, unpack(d_fused, 2 * C, C), tol);
  } else {
    K3LAB_EXPECT_CLOSE("d_gate", gold_dg, unpack(d_gate_dev.download(), C, 0), tol);
    K3LAB_EXPECT_CLOSE("d_up", gold_du, unpack(d_up_dev.download(), C, 0), tol);
  }
  if constexpr (std::is_same_v<T, Bf16>) {
    if (!layout.fused) {
      DeviceBuffer<float> scratch(3 * R * C);
      DeviceBuffer<Bf16> out_unfused(R * C);
      situ_glu_forward_unfused(shape, betas, gate_ptr, up_ptr, out_unfused.get(), scratch.get(),
                               nullptr);
      testing::synchronize(nullptr);
      K3LAB_EXPECT_CLOSE("out_unfused", gold, unpack(out_unfused.download(), C, 0), tol);
    }
  }
}

class SituGluGpu : public testing::GpuTest {};

TEST_F(SituGluGpu, Bf16MatchesReference) {
  testing::TestRng rng = testing::seeded_rng();
  for (const Layout& layout : kLayouts) run_layout<Bf16>(layout, true, rng);
}

TEST_F(SituGluGpu, Fp32MatchesReference) {
  testing::TestRng rng = testing::seeded_rng();
  for (const Layout& layout : kLayouts) run_layout<float>(layout, false, rng);
}

}  // namespace
}  // namespace k3lab::kernels
