// SiTU-GLU LibTorch adapter: the LibTorch path, and with a CUDA LibTorch the autograd Function
// around the fused CUDA kernels.
#include <torch/torch.h>

#include <stdexcept>
#include <string>

#include "k3lab/kernels/situ_glu.hpp"
#include "k3lab/kernels/torch_ops.hpp"

#if K3LAB_TORCH_CUDA
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace k3lab::kernels {
namespace {

void check_pair(const torch::Tensor& gate, const torch::Tensor& up, double beta_gate,
                double beta_up) {
  if (!gate.defined() || !up.defined() || gate.sizes() != up.sizes()) {
    throw std::invalid_argument("situ_glu: gate and up must be defined tensors of one shape");
  }
  if (gate.device() != up.device()) {
    throw std::invalid_argument("situ_glu: gate and up must be on the same device");
  }
  if (!(beta_gate > 0.0) || !(beta_up > 0.0)) {
    throw std::invalid_argument("situ_glu: betas must be > 0 (K3 uses gate 4, up 25)");
  }
}

}  // namespace

torch::Tensor situ_glu_torch(const torch::Tensor& gate, const torch::Tensor& up, double beta_gate,
                             double beta_up) {
  check_pair(gate, up, beta_gate, beta_up);
  const auto compute = gate.scalar_type() == torch::kFloat64 ? torch::kFloat64 : torch::kFloat32;
  const torch::Tensor g = gate.to(compute), u = up.to(compute);
  const torch::Tensor out = beta_gate * torch::tanh(g / beta_gate) * torch::sigmoid(g) *
                            (beta_up * torch::tanh(u / beta_up));
  return out.to(gate.scalar_type());
}

#if K3LAB_TORCH_CUDA
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// A (rows, cols) view of t: cols = last dimension, rows equally spaced (contiguous tensors, and
// the column halves of a fused projection output). Returns the row stride, or 0 when the layout
// needs a copy.
std::int64_t row_stride_of(const torch::Tensor& t) {
  if (t.dim() == 0 || t.stride(-1) != 1) return 0;
  if (t.dim() == 1) return t.size(0);
  const std::int64_t row_stride = t.stride(-2);
  std::int64_t expected = row_stride * t.size(-2);
  for (std::int64_t d = t.dim() - 3; d >= 0; --d) {
    if (t.size(d) != 1 && t.stride(d) != expected) return 0;
    expected *= t.size(d);
  }
  return row_stride >= t.size(-1) ? row_stride : 0;
}

torch::Tensor kernel_layout(const torch::Tensor& t) {
  const bool dtype_ok = t.scalar_type() == torch::kBFloat16 || t.scalar_type() == torch::kFloat32;
  const torch::Tensor typed = dtype_ok ? t : t.to(torch::kFloat32);
  return row_stride_of(typed) > 0 ? typed : typed.contiguous();
}

template <class Launch>
void with_pointers(const torch::Tensor& like, Launch&& launch) {
  if (like.scalar_type() == torch::kBFloat16) {
    launch([](const torch::Tensor& t) { return reinterpret_cast<Bf16*>(t.data_ptr<at::BFloat16>()); });
  } else {
    launch([](const torch::Tensor& t) { return t.data_ptr<float>(); });
  }
}

class SituGluFunction : public torch::autograd::Function<SituGluFunction> {
 public:
  static variable_list forward(AutogradContext* ctx, const torch::Tensor& gate,
                               const torch::Tensor& up, double beta_gate, double beta_up) {
    const c10::cuda::CUDAGuard guard(gate.device());
    torch::Tensor g = kernel_layout(gate);
    torch::Tensor u = kernel_layout(up).to(g.scalar_type());
    if (row_stride_of(u) == 0) u = u.contiguous();
    torch::Tensor out = torch::empty(gate.sizes(), g.options().memory_format(at::MemoryFormat::Contiguous));
    const std::int64_t cols = gate.dim() == 0 ? 1 : gate.size(-1);
    const std::int64_t rows = cols == 0 ? 0 : gate.numel() / cols;
    const SituGluShape shape{rows, cols, std::max<std::int64_t>(row_stride_of(g), cols),
                             std::max<std::int64_t>(row_stride_of(u), cols), cols};
    const SituGluBetas betas{static_cast<float>(beta_gate), static_cast<float>(beta_up)};
    const auto stream = c10::cuda::getCurrentCUDAStream(gate.device().index()).stream();
    with_pointers(g, [&](auto ptr) { situ_glu_forward(shape, betas, ptr(g), ptr(u), ptr(out), stream); });
    ctx->save_for_backward({g, u});
    ctx->saved_data["beta_gate"] = beta_gate;
    ctx->saved_data["beta_up"] = beta_up;
    ctx->saved_data["gate_dtype"] = static_cast<std::int64_t>(gate.scalar_type());
    ctx->saved_data["up_dtype"] = static_cast<std::int64_t>(up.scalar_type());
    return {out.to(gate.scalar_type())};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const variable_list saved = ctx->get_saved_variables();
    const torch::Tensor& g = saved[0];
    const torch::Tensor& u = saved[1];
    const c10::cuda::CUDAGuard guard(g.device());
    const torch::Tensor d_out = grad_outputs[0].to(g.scalar_type()).contiguous();
    torch::Tensor d_gate = torch::empty(g.sizes(), g.options().memory_format(at::MemoryFormat::Contiguous));
    torch::Tensor d_up = torch::empty_like(d_gate);
    const std::int64_t cols = g.dim() == 0 ? 1 : g.size(-1);
    const std::int64_t rows = cols == 0 ? 0 : g.numel() / cols;
    const SituGluShape read{rows, cols, std::max<std::int64_t>(row_stride_of(g), cols),
                            std::max<std::int64_t>(row_stride_of(u), cols), cols};
    const SituGluBetas betas{static_cast<float>(ctx->saved_data["beta_gate"].toDouble()),
                             static_cast<float>(ctx->saved_data["beta_up"].toDouble())};
    const auto stream = c10::cuda::getCurrentCUDAStream(g.device().index()).stream();
    if (read.gate_stride == cols && read.up_stride == cols) {
      with_pointers(g, [&](auto ptr) {
        situ_glu_backward(read, betas, ptr(g), ptr(u), ptr(d_out), ptr(d_gate), ptr(d_up), stream);
      });
    } else {
      // The gradients are written with the inputs' strides: run on packed copies instead.
      const torch::Tensor gc = g.contiguous(), uc = u.contiguous();
      const SituGluShape packed = SituGluShape::contiguous(rows, cols);
      with_pointers(g, [&](auto ptr) {
        situ_glu_backward(packed, betas, ptr(gc), ptr(uc), ptr(d_out), ptr(d_gate), ptr(d_up), stream);
      });
    }
    const auto gate_dtype = static_cast<c10::ScalarType>(ctx->saved_data["gate_dtype"].toInt());
    const auto up_dtype = static_cast<c10::ScalarType>(ctx->saved_data["up_dtype"].toInt());
    return {d_gate.to(gate_dtype), d_up.to(up_dtype), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace
#endif  // K3LAB_TORCH_CUDA

torch::Tensor situ_glu_cuda(const torch::Tensor& gate, const torch::Tensor& up, double beta_gate,
                            double beta_up) {
  check_pair(gate, up, beta_gate, beta_up);
  if (!gate.is_cuda()) return situ_glu_torch(gate, up, beta_gate, beta_up);
#if K3LAB_TORCH_CUDA
  return SituGluFunction::apply(gate, up, beta_gate, beta_up)[0];
#else
  throw std::runtime_error(
      "situ_glu_cuda: CUDA tensors need k3lab built against a CUDA LibTorch (this build's "
      "LibTorch is CPU-only); move the tensors to the CPU or rebuild on the GPU machine");
#endif
}

}  // namespace k3lab::kernels
