#include <k3lab/models/batched_matmul.hpp>

#include <ATen/Parallel.h>
#include <torch/autograd.h>
#include <torch/torch.h>

#include <stdexcept>

namespace k3lab::models {

namespace {

// ATen's bmm computes products with fewer multiply-adds than this per matrix in its own kernel,
// which is parallel over the batch already and sums in a different order.
constexpr std::int64_t kAtenSmallProduct = 400;

// out[i] = a[i] b[i] for each i, the i split across the intra-op threads; a (N, m, k), b (N, k, n).
torch::Tensor parallel_bmm(const torch::Tensor& a, const torch::Tensor& b) {
  auto out = torch::empty({a.size(0), a.size(1), b.size(2)}, a.options());  // (N, m, n)
  at::parallel_for(0, a.size(0), 1, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      auto slice = out.select(0, i);
      at::mm_out(slice, a.select(0, i), b.select(0, i));
    }
  });
  return out;
}

// The derivatives are autograd's own for bmm: grad b^T and a^T grad.
struct ParallelBmm : public torch::autograd::Function<ParallelBmm> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& a,
                               const torch::Tensor& b) {
    ctx->save_for_backward({a, b});
    return parallel_bmm(a, b);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto& grad = grads[0];  // (N, m, n)
    torch::Tensor grad_a, grad_b;
    if (ctx->needs_input_grad(0)) grad_a = parallel_bmm(grad, saved[1].transpose(1, 2));  // (N, m, k)
    if (ctx->needs_input_grad(1)) grad_b = parallel_bmm(saved[0].transpose(1, 2), grad);  // (N, k, n)
    return {grad_a, grad_b};
  }
};

bool worth_splitting(const torch::Tensor& a, const torch::Tensor& b) {
  if (!a.device().is_cpu() || at::get_num_threads() < 2 || a.dim() < 3) return false;
  // float32 and float64 only: ATen's reduced-precision bmm may take oneDNN's path, which would not
  // match mm slice by slice.
  const auto dtype = a.scalar_type();
  if ((dtype != torch::kFloat && dtype != torch::kDouble) || b.scalar_type() != dtype) return false;
  if (a.sizes().slice(0, a.dim() - 2) != b.sizes().slice(0, b.dim() - 2)) return false;
  const auto batch = c10::multiply_integers(a.sizes().slice(0, a.dim() - 2));
  return batch >= 2 && a.size(-2) * a.size(-1) * b.size(-1) >= kAtenSmallProduct;
}

}  // namespace

torch::Tensor batched_matmul(const torch::Tensor& a, const torch::Tensor& b) {
  if (a.dim() != b.dim() || a.dim() < 2 || a.size(-1) != b.size(-2)) {
    throw std::invalid_argument("batched_matmul: expected a (..., m, k) and b (..., k, n) with the "
                                "same batch sizes");
  }
  if (!worth_splitting(a, b)) return torch::matmul(a, b);
  const auto m = a.size(-2), k = a.size(-1), n = b.size(-1);
  auto out_shape = a.sizes().vec();
  out_shape.back() = n;
  const auto product = ParallelBmm::apply(a.reshape({-1, m, k}), b.reshape({-1, k, n}));  // (N, m, n)
  return product.view(out_shape);  // (..., m, n)
}

}  // namespace k3lab::models
