// KDA LibTorch adapter: the LibTorch path (CPU, or any device) and, with a CUDA LibTorch, the
// torch::autograd::Function that runs the CUDA forward and backward kernels.
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "k3lab/kernels/torch_ops.hpp"

#if K3LAB_TORCH_CUDA
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace k3lab::kernels {
namespace {

constexpr std::int64_t kChunk = kKdaTile;

[[noreturn]] void bad_input(const std::string& message) {
  throw std::invalid_argument("kda_chunkwise: " + message);
}

std::string shape_of(const torch::Tensor& t) {
  std::string out = "(";
  for (std::int64_t d = 0; d < t.dim(); ++d) out += (d ? ", " : "") + std::to_string(t.size(d));
  return out + ")";
}

// Shapes shared by both paths; throws with the expected layout.
struct KdaDims {
  std::int64_t B, T, H, K, V, N;
  bool varlen;
};

KdaDims check_inputs(const KdaTorchInputs& in) {
  if (!in.q.defined() || in.q.dim() != 4) bad_input("q must be (B, T, H, K)");
  KdaDims d{in.q.size(0), in.q.size(1), in.q.size(2), in.q.size(3), 0, 0, in.cu_seqlens.defined()};
  const auto expect = [&](const torch::Tensor& t, std::vector<std::int64_t> shape, const char* name) {
    if (!t.defined() || t.sizes().vec() != shape) {
      std::string want = "(";
      for (std::size_t i = 0; i < shape.size(); ++i) want += (i ? ", " : "") + std::to_string(shape[i]);
      bad_input(std::string(name) + " must be " + want + ")" +
                (t.defined() ? ", got " + shape_of(t) : ", got an undefined tensor"));
    }
    if (t.device() != in.q.device()) bad_input(std::string(name) + " must be on q's device");
  };
  if (!in.v.defined() || in.v.dim() != 4) bad_input("v must be (B, T, H, V)");
  d.V = in.v.size(3);
  expect(in.k, {d.B, d.T, d.H, d.K}, "k");
  expect(in.v, {d.B, d.T, d.H, d.V}, "v");
  expect(in.g, {d.B, d.T, d.H, d.K}, "g");
  expect(in.beta, {d.B, d.T, d.H}, "beta");
  if (in.a_log.defined() != in.dt_bias.defined()) {
    bad_input("pass a_log and dt_bias together (raw gate), or neither (g is the log decay)");
  }
  if (in.a_log.defined()) {
    expect(in.a_log, {d.H}, "a_log");
    if (in.dt_bias.numel() != d.H * d.K || in.dt_bias.device() != in.q.device()) {
      bad_input("dt_bias must be (H, K) or (H * K) on q's device, got " + shape_of(in.dt_bias));
    }
  }
  if (d.varlen) {
    if (d.B != 1) bad_input("with cu_seqlens the batch must be 1 (sequences packed along T)");
    if (in.cu_seqlens.dim() != 1 || in.cu_seqlens.numel() < 2 ||
        in.cu_seqlens.scalar_type() != torch::kInt64) {
      bad_input("cu_seqlens must be a 1-D int64 tensor of N + 1 offsets");
    }
    d.N = in.cu_seqlens.numel() - 1;
  } else {
    d.N = d.B;
  }
  if (in.initial_state.defined()) expect(in.initial_state, {d.N, d.H, d.K, d.V}, "initial_state");
  return d;
}

torch::Tensor l2_normalize(const torch::Tensor& x) {
  return x / torch::sqrt((x * x).sum(-1, true) + 1e-6);
}

// Pads dimension 1 (tokens) of x with zeros up to `length`.
torch::Tensor pad_tokens(const torch::Tensor& x, std::int64_t length) {
  const std::int64_t pad = length - x.size(1);
  if (pad == 0) return x;
  std::vector<std::int64_t> spec(2 * (x.dim() - 2), 0);
  spec.push_back(0);
  spec.push_back(pad);
  return torch::constant_pad_nd(x, spec, 0);
}

// (N, Tpad, H, D) -> (N, H, chunks, 16, D); (N, Tpad, H) -> (N, H, chunks, 16).
torch::Tensor to_chunks(const torch::Tensor& x) {
  const std::int64_t chunks = x.size(1) / kChunk;
  if (x.dim() == 4) {
    return x.reshape({x.size(0), chunks, kChunk, x.size(2), x.size(3)}).permute({0, 3, 1, 2, 4});
  }
  return x.reshape({x.size(0), chunks, kChunk, x.size(2)}).permute({0, 3, 1, 2});
}

}  // namespace

KdaTorchResult kda_chunkwise_torch(const KdaTorchInputs& in, const KdaTorchOptions& options) {
  const KdaDims d = check_inputs(in);
  const auto compute = in.q.scalar_type() == torch::kFloat64 ? torch::kFloat64 : torch::kFloat32;
  torch::Tensor q = in.q.to(compute), k = in.k.to(compute), v = in.v.to(compute);
  torch::Tensor g = in.g.to(compute), beta = in.beta.to(compute);
  if (options.l2norm_qk) {
    q = l2_normalize(q);
    k = l2_normalize(k);
  }
  const double scale = options.scale != 0.0 ? options.scale : 1.0 / std::sqrt(static_cast<double>(d.K));
  q = q * scale;
  if (in.a_log.defined()) {
    const auto a = in.a_log.to(compute).exp().view({1, 1, d.H, 1});
    g = options.lower_bound * torch::sigmoid(a * (g + in.dt_bias.to(compute).view({1, 1, d.H, d.K})));
  } else if (g.numel() > 0 && g.min().item<double>() < options.lower_bound) {
    bad_input("the log-decay gate has values below lower_bound = " +
              std::to_string(options.lower_bound) + "; the chunkwise form needs them bounded");
  }
  if (options.beta_is_logits) beta = torch::sigmoid(beta);

  // Sequences as rows of a zero-padded batch (padding leaves the state unchanged).
  std::vector<std::int64_t> offsets;
  if (d.varlen) {
    const torch::Tensor cpu = in.cu_seqlens.cpu();
    offsets.assign(cpu.data_ptr<std::int64_t>(), cpu.data_ptr<std::int64_t>() + cpu.numel());
    if (offsets.front() != 0 || offsets.back() != d.T) {
      bad_input("cu_seqlens must start at 0 and end at T = " + std::to_string(d.T));
    }
  }
  std::int64_t longest = d.T;
  if (d.varlen) {
    longest = 0;
    for (std::int64_t n = 0; n < d.N; ++n) {
      if (offsets[n + 1] < offsets[n]) bad_input("cu_seqlens must be non-decreasing");
      longest = std::max(longest, offsets[n + 1] - offsets[n]);
    }
  }
  const std::int64_t padded = std::max<std::int64_t>(kChunk, (longest + kChunk - 1) / kChunk * kChunk);
  const auto batch_rows = [&](const torch::Tensor& x) {
    if (!d.varlen) return pad_tokens(x, padded);
    std::vector<torch::Tensor> rows;
    for (std::int64_t n = 0; n < d.N; ++n) {
      rows.push_back(pad_tokens(x.narrow(1, offsets[n], offsets[n + 1] - offsets[n]), padded));
    }
    return torch::cat(rows, 0);
  };
  q = to_chunks(batch_rows(q));        // (N, H, C, 16, K)
  k = to_chunks(batch_rows(k));
  v = to_chunks(batch_rows(v));        // (N, H, C, 16, V)
  g = to_chunks(batch_rows(g));
  beta = to_chunks(batch_rows(beta));  // (N, H, C, 16)

  const torch::Tensor G = g.cumsum(-2);                     // (N, H, C, 16, K)
  const torch::Tensor G_last = G.select(-2, kChunk - 1);     // (N, H, C, K)
  const torch::Tensor q_d = q * G.exp();
  const torch::Tensor k_d = k * G.exp();
  const torch::Tensor k_inv = k * (-G).exp();
  const torch::Tensor k_rest = k * (G_last.unsqueeze(-2) - G).exp();
  const auto tri_options = torch::TensorOptions().dtype(torch::kBool).device(q.device());
  const torch::Tensor strict_lower = torch::ones({kChunk, kChunk}, tri_options).tril(-1);
  const torch::Tensor lower = torch::ones({kChunk, kChunk}, tri_options).tril(0);
  // Masks by selection: above the diagonal the products can be huge and must never be multiplied.
  const torch::Tensor A = (k_d.matmul(k_inv.transpose(-1, -2)) * beta.unsqueeze(-1))
                              .masked_fill(strict_lower.logical_not(), 0.0);  // (N, H, C, 16, 16)
  const torch::Tensor P =
      q_d.matmul(k_inv.transpose(-1, -2)).masked_fill(lower.logical_not(), 0.0);
  // (I + A)^-1 = (I - A)(I + A^2)(I + A^4)(I + A^8): exact, A is strictly lower 16 x 16.
  const torch::Tensor eye = torch::eye(kChunk, q.options());
  const torch::Tensor A2 = A.matmul(A), A4 = A2.matmul(A2), A8 = A4.matmul(A4);
  const torch::Tensor M = (eye - A).matmul(eye + A2).matmul(eye + A4).matmul(eye + A8);

  torch::Tensor S = in.initial_state.defined()
                        ? in.initial_state.to(compute)
                        : torch::zeros({d.N, d.H, d.K, d.V}, q.options());  // (N, H, K, V)
  std::vector<torch::Tensor> outputs;
  const std::int64_t chunks = padded / kChunk;
  for (std::int64_t c = 0; c < chunks; ++c) {
    const torch::Tensor W = k_d.select(2, c).matmul(S);                            // (N, H, 16, V)
    const torch::Tensor U = M.select(2, c).matmul(beta.select(2, c).unsqueeze(-1) * (v.select(2, c) - W));
    outputs.push_back(q_d.select(2, c).matmul(S) + P.select(2, c).matmul(U));
    S = G_last.select(2, c).exp().unsqueeze(-1) * S + k_rest.select(2, c).transpose(-1, -2).matmul(U);
  }
  // (N, H, C, 16, V) -> (N, C * 16, H, V)
  torch::Tensor out = torch::stack(outputs, 2).permute({0, 2, 3, 1, 4}).reshape({d.N, padded, d.H, d.V});
  if (d.varlen) {
    std::vector<torch::Tensor> pieces;
    for (std::int64_t n = 0; n < d.N; ++n) {
      pieces.push_back(out.narrow(0, n, 1).narrow(1, 0, offsets[n + 1] - offsets[n]));
    }
    out = torch::cat(pieces, 1);
  } else {
    out = out.narrow(1, 0, d.T);
  }
  return {out.to(in.q.scalar_type()), S};
}

#if K3LAB_TORCH_CUDA
namespace {

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

KdaShape shape_from(const KdaDims& d) { return {d.B, d.T, d.H, d.K, d.V, d.N}; }

KdaOptions kernel_options(const KdaTorchOptions& o) {
  KdaOptions k;
  k.scale = static_cast<float>(o.scale);
  k.lower_bound = static_cast<float>(o.lower_bound);
  k.l2norm_qk = o.l2norm_qk;
  k.beta_is_logits = o.beta_is_logits;
  k.math = o.math;
  return k;
}

class KdaChunkwiseFunction : public torch::autograd::Function<KdaChunkwiseFunction> {
 public:
  // Tensor arguments in KdaTorchInputs order; undefined optional tensors are allowed.
  static variable_list forward(AutogradContext* ctx, const torch::Tensor& q, const torch::Tensor& k,
                               const torch::Tensor& v, const torch::Tensor& g,
                               const torch::Tensor& beta, const c10::optional<torch::Tensor>& a_log,
                               const c10::optional<torch::Tensor>& dt_bias,
                               const c10::optional<torch::Tensor>& initial_state,
                               const c10::optional<torch::Tensor>& cu_seqlens,
                               const KdaTorchOptions& options) {
    const KdaTorchInputs inputs{q, k, v, g, beta, a_log.value_or(torch::Tensor()),
                                dt_bias.value_or(torch::Tensor()),
                                initial_state.value_or(torch::Tensor()),
                                cu_seqlens.value_or(torch::Tensor())};
    const KdaDims d = check_inputs(inputs);
    const c10::cuda::CUDAGuard guard(q.device());
    const bool raw_gate = inputs.a_log.defined();
    const torch::Tensor qb = as_bf16(q), kb = as_bf16(k), vb = as_bf16(v), betab = as_bf16(beta);
    const torch::Tensor gc = raw_gate ? as_bf16(g) : as_f32(g);
    const torch::Tensor a_logf = as_f32(inputs.a_log), dtf = as_f32(inputs.dt_bias);
    const torch::Tensor h0 = as_f32(inputs.initial_state);
    const torch::Tensor cu = d.varlen ? inputs.cu_seqlens.contiguous() : torch::Tensor();
    if (!raw_gate && g.numel() > 0 && gc.min().item<double>() < options.lower_bound) {
      bad_input("the log-decay gate has values below lower_bound = " +
                std::to_string(options.lower_bound) + "; the CUDA kernels need them bounded");
    }
    torch::Tensor out = torch::empty({d.B, d.T, d.H, d.V}, qb.options());
    torch::Tensor final_state = torch::empty({d.N, d.H, d.K, d.V}, q.options().dtype(torch::kFloat32));

    KdaForwardArgs args;
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
    args.out = bf16_out(out);
    args.final_state = final_state.data_ptr<float>();
    kda_forward(shape_from(d), kernel_options(options), args,
                c10::cuda::getCurrentCUDAStream(q.device().index()).stream());

    ctx->save_for_backward({qb, kb, vb, gc, betab, a_logf, dtf, h0, cu});
    ctx->saved_data["raw_gate"] = raw_gate;
    ctx->saved_data["scale"] = options.scale;
    ctx->saved_data["lower_bound"] = options.lower_bound;
    ctx->saved_data["l2norm_qk"] = options.l2norm_qk;
    ctx->saved_data["beta_is_logits"] = options.beta_is_logits;
    ctx->saved_data["tf32"] = options.math == KdaMath::kTensorCoreTf32;
    ctx->saved_data["dtypes"] = std::vector<std::int64_t>{
        static_cast<std::int64_t>(q.scalar_type()), static_cast<std::int64_t>(k.scalar_type()),
        static_cast<std::int64_t>(v.scalar_type()), static_cast<std::int64_t>(g.scalar_type()),
        static_cast<std::int64_t>(beta.scalar_type())};
    ctx->saved_data["dt_bias_shape"] =
        raw_gate ? inputs.dt_bias.sizes().vec() : std::vector<std::int64_t>{};
    ctx->saved_data["dims"] = std::vector<std::int64_t>{d.B, d.T, d.H, d.K, d.V, d.N, d.varlen};
    return {out.to(q.scalar_type()), final_state};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const variable_list saved = ctx->get_saved_variables();
    const torch::Tensor &qb = saved[0], &kb = saved[1], &vb = saved[2], &gc = saved[3],
                        &betab = saved[4], &a_logf = saved[5], &dtf = saved[6], &h0 = saved[7],
                        &cu = saved[8];
    const std::vector<std::int64_t> dv_ = ctx->saved_data["dims"].toIntVector();
    const KdaDims d{dv_[0], dv_[1], dv_[2], dv_[3], dv_[4], dv_[5], dv_[6] != 0};
    const bool raw_gate = ctx->saved_data["raw_gate"].toBool();
    KdaTorchOptions options;
    options.scale = ctx->saved_data["scale"].toDouble();
    options.lower_bound = ctx->saved_data["lower_bound"].toDouble();
    options.l2norm_qk = ctx->saved_data["l2norm_qk"].toBool();
    options.beta_is_logits = ctx->saved_data["beta_is_logits"].toBool();
    options.math = ctx->saved_data["tf32"].toBool() ? KdaMath::kTensorCoreTf32 : KdaMath::kFp32Scalar;
    const c10::cuda::CUDAGuard guard(qb.device());

    const torch::Tensor d_out = grad_outputs[0].defined() ? as_bf16(grad_outputs[0])
                                                          : torch::zeros_like(vb);
    const torch::Tensor d_final = as_f32(grad_outputs[1]);
    torch::Tensor dq = torch::empty_like(qb), dk = torch::empty_like(kb), dv = torch::empty_like(vb);
    torch::Tensor dbeta = torch::empty_like(betab), dg = torch::empty_like(gc);
    const auto f32 = qb.options().dtype(torch::kFloat32);
    torch::Tensor da_log = raw_gate ? torch::empty({d.H}, f32) : torch::Tensor();
    torch::Tensor ddt = raw_gate ? torch::empty({d.H, d.K}, f32) : torch::Tensor();
    torch::Tensor dh0 = h0.defined() ? torch::empty_like(h0) : torch::Tensor();
    const KdaShape shape = shape_from(d);
    torch::Tensor workspace = torch::empty(
        {static_cast<std::int64_t>(kda_backward_workspace_bytes(shape))}, qb.options().dtype(torch::kUInt8));

    KdaBackwardArgs args;
    args.forward.q = bf16_ptr(qb);
    args.forward.k = bf16_ptr(kb);
    args.forward.v = bf16_ptr(vb);
    args.forward.beta = bf16_ptr(betab);
    if (raw_gate) {
      args.forward.g = bf16_ptr(gc);
      args.forward.a_log = f32_ptr(a_logf);
      args.forward.dt_bias = f32_ptr(dtf);
      args.dg = bf16_out(dg);
      args.da_log = da_log.data_ptr<float>();
      args.ddt_bias = ddt.data_ptr<float>();
    } else {
      args.forward.g_log_decay = f32_ptr(gc);
      args.dg_log_decay = dg.numel() > 0 ? dg.data_ptr<float>() : nullptr;
    }
    args.forward.initial_state = f32_ptr(h0);
    args.forward.cu_seqlens = cu.defined() ? cu.data_ptr<std::int64_t>() : nullptr;
    args.d_out = bf16_ptr(d_out);
    args.d_final_state = f32_ptr(d_final);
    args.dq = bf16_out(dq);
    args.dk = bf16_out(dk);
    args.dv = bf16_out(dv);
    args.dbeta = bf16_out(dbeta);
    args.d_initial_state = dh0.defined() ? dh0.data_ptr<float>() : nullptr;
    args.workspace = workspace.data_ptr();
    kda_backward(shape, kernel_options(options), args,
                 c10::cuda::getCurrentCUDAStream(qb.device().index()).stream());

    const std::vector<std::int64_t> dtypes = ctx->saved_data["dtypes"].toIntVector();
    const auto cast = [&](const torch::Tensor& t, int i) {
      return t.to(static_cast<c10::ScalarType>(dtypes[i]));
    };
    torch::Tensor ddt_out;
    if (raw_gate) ddt_out = ddt.reshape(ctx->saved_data["dt_bias_shape"].toIntVector());
    return {cast(dq, 0), cast(dk, 1), cast(dv, 2), cast(dg, 3), cast(dbeta, 4),
            da_log, ddt_out, dh0, torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace
#endif  // K3LAB_TORCH_CUDA

bool torch_cuda_path_available() { return K3LAB_TORCH_CUDA != 0 && built_with_cuda(); }

KdaTorchResult kda_chunkwise_cuda(const KdaTorchInputs& in, const KdaTorchOptions& options) {
  if (!in.q.defined() || !in.q.is_cuda()) return kda_chunkwise_torch(in, options);
#if K3LAB_TORCH_CUDA
  const auto optional = [](const torch::Tensor& t) {
    return t.defined() ? c10::optional<torch::Tensor>(t) : c10::optional<torch::Tensor>();
  };
  const variable_list out = KdaChunkwiseFunction::apply(
      in.q, in.k, in.v, in.g, in.beta, optional(in.a_log), optional(in.dt_bias),
      optional(in.initial_state), optional(in.cu_seqlens), options);
  return {out[0], out[1]};
#else
  throw std::runtime_error(
      "kda_chunkwise_cuda: CUDA tensors need k3lab built against a CUDA LibTorch (this build's "
      "LibTorch is CPU-only); move the tensors to the CPU or rebuild on the GPU machine");
#endif
}

}  // namespace k3lab::kernels
