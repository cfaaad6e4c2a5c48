// The torch::autograd::Function around the KDA CUDA kernels: its forward and backward launch
// kernels::kda_forward and kernels::kda_backward on the current stream. Inputs are converted to the
// kernels' dtypes (bf16 q, k, v, beta and raw gate; fp32 log decay, A_log, dt_bias and states) and
// the gradients come back in the caller's dtypes. Compiled only against a CUDA LibTorch.
#include "kda_kernel_function.hpp"

#include <torch/torch.h>

#include <stdexcept>

#if K3LAB_TORCH_CUDA
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace k3lab::models::detail {

#if K3LAB_TORCH_CUDA
namespace {

using kernels::Bf16;
using kernels::KdaShape;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

const Bf16* bf16_ptr(const torch::Tensor& t) {
  return t.defined() && t.numel() > 0 ? reinterpret_cast<const Bf16*>(t.data_ptr<at::BFloat16>())
                                      : nullptr;
}
Bf16* bf16_out(const torch::Tensor& t) {
  return t.numel() > 0 ? reinterpret_cast<Bf16*>(t.data_ptr<at::BFloat16>()) : nullptr;
}
const float* f32_ptr(const torch::Tensor& t) {
  return t.defined() && t.numel() > 0 ? t.data_ptr<float>() : nullptr;
}

torch::Tensor as_bf16(const torch::Tensor& t) { return t.to(torch::kBFloat16).contiguous(); }
torch::Tensor as_f32(const torch::Tensor& t) {
  return t.defined() ? t.to(torch::kFloat32).contiguous() : t;
}

std::vector<std::int64_t> shape_fields(const KdaShape& s) {
  return {s.batch, s.seq_len, s.heads, s.key_dim, s.value_dim, s.num_seqs};
}
KdaShape shape_from_fields(const std::vector<std::int64_t>& f) {
  return {f[0], f[1], f[2], f[3], f[4], f[5]};
}

void save_options(AutogradContext* ctx, const kernels::KdaOptions& o) {
  ctx->saved_data["scale"] = static_cast<double>(o.scale);
  ctx->saved_data["lower_bound"] = static_cast<double>(o.lower_bound);
  ctx->saved_data["l2norm_qk"] = o.l2norm_qk;
  ctx->saved_data["beta_is_logits"] = o.beta_is_logits;
  ctx->saved_data["tf32"] = o.math == kernels::KdaMath::kTensorCoreTf32;
}
kernels::KdaOptions saved_options(AutogradContext* ctx) {
  kernels::KdaOptions o;
  o.scale = static_cast<float>(ctx->saved_data["scale"].toDouble());
  o.lower_bound = static_cast<float>(ctx->saved_data["lower_bound"].toDouble());
  o.l2norm_qk = ctx->saved_data["l2norm_qk"].toBool();
  o.beta_is_logits = ctx->saved_data["beta_is_logits"].toBool();
  o.math = ctx->saved_data["tf32"].toBool() ? kernels::KdaMath::kTensorCoreTf32
                                            : kernels::KdaMath::kFp32Scalar;
  return o;
}

// The kernels' view of the (converted) inputs; raw gate or log decay by what g holds.
kernels::KdaForwardArgs forward_args(const torch::Tensor& qb, const torch::Tensor& kb,
                                     const torch::Tensor& vb, const torch::Tensor& gc,
                                     const torch::Tensor& betab, const torch::Tensor& a_logf,
                                     const torch::Tensor& dtf, const torch::Tensor& h0,
                                     const torch::Tensor& cu, bool raw_gate) {
  kernels::KdaForwardArgs args;
  args.q = bf16_ptr(qb);
  args.k = bf16_ptr(kb);
  args.v = bf16_ptr(vb);
  args.beta = bf16_ptr(betab);
  if (raw_gate) {
    args.g = bf16_ptr(gc);
    args.a_log = f32_ptr(a_logf);
    args.dt_bias = f32_ptr(dtf);
  } else {
    args.g_log_decay = f32_ptr(gc);
  }
  args.initial_state = f32_ptr(h0);
  args.cu_seqlens = cu.defined() ? cu.data_ptr<std::int64_t>() : nullptr;
  return args;
}

class KdaKernelFunction : public torch::autograd::Function<KdaKernelFunction> {
 public:
  // Tensor arguments in KdaChunkwiseArgs order; undefined optional tensors are allowed.
  static variable_list forward(AutogradContext* ctx, const torch::Tensor& q, const torch::Tensor& k,
                               const torch::Tensor& v, const torch::Tensor& g,
                               const torch::Tensor& beta, const c10::optional<torch::Tensor>& a_log,
                               const c10::optional<torch::Tensor>& dt_bias,
                               const c10::optional<torch::Tensor>& initial_state,
                               const c10::optional<torch::Tensor>& cu_seqlens,
                               const KdaKernelCall& call) {
    const c10::cuda::CUDAGuard guard(q.device());
    const KdaShape& s = call.shape;
    const bool raw_gate = a_log.has_value() && a_log->defined();
    const torch::Tensor qb = as_bf16(q), kb = as_bf16(k), vb = as_bf16(v), betab = as_bf16(beta);
    const torch::Tensor gc = raw_gate ? as_bf16(g) : as_f32(g);
    const torch::Tensor a_logf = as_f32(a_log.value_or(torch::Tensor()));
    const torch::Tensor dtf = as_f32(dt_bias.value_or(torch::Tensor()));
    const torch::Tensor h0 = as_f32(initial_state.value_or(torch::Tensor()));
    const torch::Tensor cu = cu_seqlens.has_value() && cu_seqlens->defined()
                                 ? cu_seqlens->contiguous() : torch::Tensor();
    torch::Tensor out = torch::empty({s.batch, s.seq_len, s.heads, s.value_dim}, qb.options());
    torch::Tensor final_state =
        torch::empty({s.num_seqs, s.heads, s.key_dim, s.value_dim}, q.options().dtype(torch::kFloat32));

    kernels::KdaForwardArgs args = forward_args(qb, kb, vb, gc, betab, a_logf, dtf, h0, cu, raw_gate);
    args.out = bf16_out(out);
    args.final_state = final_state.data_ptr<float>();
    kernels::kda_forward(s, call.options, args,
                         c10::cuda::getCurrentCUDAStream(q.device().index()).stream());

    ctx->save_for_backward({qb, kb, vb, gc, betab, a_logf, dtf, h0, cu});
    save_options(ctx, call.options);
    ctx->saved_data["raw_gate"] = raw_gate;
    ctx->saved_data["dtypes"] = std::vector<std::int64_t>{
        static_cast<std::int64_t>(q.scalar_type()), static_cast<std::int64_t>(k.scalar_type()),
        static_cast<std::int64_t>(v.scalar_type()), static_cast<std::int64_t>(g.scalar_type()),
        static_cast<std::int64_t>(beta.scalar_type())};
    ctx->saved_data["dt_bias_shape"] = raw_gate ? dt_bias->sizes().vec() : std::vector<std::int64_t>{};
    ctx->saved_data["shape"] = shape_fields(s);
    return {out.to(q.scalar_type()), final_state};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const variable_list saved = ctx->get_saved_variables();
    const torch::Tensor &qb = saved[0], &kb = saved[1], &vb = saved[2], &gc = saved[3],
                        &betab = saved[4], &a_logf = saved[5], &dtf = saved[6], &h0 = saved[7],
                        &cu = saved[8];
    const KdaShape s = shape_from_fields(ctx->saved_data["shape"].toIntVector());
    const bool raw_gate = ctx->saved_data["raw_gate"].toBool();
    const c10::cuda::CUDAGuard guard(qb.device());

    const torch::Tensor d_out = grad_outputs[0].defined() ? as_bf16(grad_outputs[0])
                                                          : torch::zeros_like(vb);
    const torch::Tensor d_final = as_f32(grad_outputs[1]);
    torch::Tensor dq = torch::empty_like(qb), dk = torch::empty_like(kb), dv = torch::empty_like(vb);
    torch::Tensor dbeta = torch::empty_like(betab), dg = torch::empty_like(gc);
    const auto f32 = qb.options().dtype(torch::kFloat32);
    torch::Tensor da_log = raw_gate ? torch::empty({s.heads}, f32) : torch::Tensor();
    torch::Tensor ddt = raw_gate ? torch::empty({s.heads, s.key_dim}, f32) : torch::Tensor();
    torch::Tensor dh0 = h0.defined() ? torch::empty_like(h0) : torch::Tensor();
    torch::Tensor workspace =
        torch::empty({static_cast<std::int64_t>(kernels::kda_backward_workspace_bytes(s))},
                     qb.options().dtype(torch::kUInt8));

    kernels::KdaBackwardArgs args;
    args.forward = forward_args(qb, kb, vb, gc, betab, a_logf, dtf, h0, cu, raw_gate);
    if (raw_gate) {
      args.dg = bf16_out(dg);
      args.da_log = da_log.data_ptr<float>();
      args.ddt_bias = ddt.data_ptr<float>();
    } else {
      args.dg_log_decay = dg.numel() > 0 ? dg.data_ptr<float>() : nullptr;
    }
    args.d_out = bf16_ptr(d_out);
    args.d_final_state = f32_ptr(d_final);
    args.dq = bf16_out(dq);
    args.dk = bf16_out(dk);
    args.dv = bf16_out(dv);
    args.dbeta = bf16_out(dbeta);
    args.d_initial_state = dh0.defined() ? dh0.data_ptr<float>() : nullptr;
    args.workspace = workspace.data_ptr();
    kernels::kda_backward(s, saved_options(ctx), args,
                          c10::cuda::getCurrentCUDAStream(qb.device().index()).stream());

    const std::vector<std::int64_t> dtypes = ctx->saved_data["dtypes"].toIntVector();
    const auto cast = [&](const torch::Tensor& t, int i) {
      return t.to(static_cast<c10::ScalarType>(dtypes[i]));
    };
    torch::Tensor ddt_out;
    if (raw_gate) ddt_out = ddt.reshape(ctx->saved_data["dt_bias_shape"].toIntVector());
    // One gradient per forward argument: the last two (cu_seqlens and the call) have none.
    return {cast(dq, 0), cast(dk, 1), cast(dv, 2), cast(dg, 3), cast(dbeta, 4),
            da_log, ddt_out, dh0, torch::Tensor(), torch::Tensor()};
  }
};

c10::optional<torch::Tensor> optional_tensor(const torch::Tensor& t) {
  return t.defined() ? c10::optional<torch::Tensor>(t) : c10::optional<torch::Tensor>();
}

}  // namespace

KdaResult kda_chunkwise_cuda_function(const KdaChunkwiseArgs& args, const KdaKernelCall& call) {
  const c10::optional<torch::Tensor> initial_state =
      args.initial_state ? optional_tensor(*args.initial_state) : c10::optional<torch::Tensor>();
  const variable_list out = KdaKernelFunction::apply(
      args.q, args.k, args.v, args.g, args.beta, optional_tensor(args.a_log),
      optional_tensor(args.dt_bias), initial_state, optional_tensor(args.cu_seqlens), call);
  return {out[0], out[1]};
}

#else

KdaResult kda_chunkwise_cuda_function(const KdaChunkwiseArgs&, const KdaKernelCall&) {
  throw std::runtime_error(
      "kda_chunkwise_kernel: CUDA tensors need k3lab built against a CUDA LibTorch (this build's "
      "LibTorch is CPU-only); move the tensors to the CPU or rebuild on the GPU machine");
}

#endif  // K3LAB_TORCH_CUDA

}  // namespace k3lab::models::detail
