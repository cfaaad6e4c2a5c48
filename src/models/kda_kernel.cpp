// The KDA kernel adapter: one validation of the kernel form, then the CUDA kernels when they accept
// the call (kda_kernel_function.cpp), else the kernel form's preprocessing in LibTorch ops followed
// by kda_chunkwise, the models' one chunkwise implementation.
#include <k3lab/models/kda_kernel.hpp>

#include <k3lab/kernels/torch_ops.hpp>
#include <k3lab/models/kda_gate.hpp>

#include <string>
#include <vector>

#include "kda_checks.hpp"
#include "kda_kernel_function.hpp"

namespace k3lab::models {
namespace {

const std::string kWhere = "kda_chunkwise_kernel";

void require_on_device(const torch::Tensor& t, const torch::Tensor& q, const char* name) {
  if (t.device() != q.device()) detail::fail(kWhere, std::string(name) + " must be on q's device");
}

void check_raw_gate(const KdaChunkwiseArgs& a) {
  if (a.a_log.defined() != a.dt_bias.defined()) {
    detail::fail(kWhere, "pass a_log and dt_bias together (g is the raw gate), or neither (g is the "
                         "log decay)");
  }
  if (!a.a_log.defined()) return;
  const std::int64_t H = a.q.size(2), K = a.q.size(3);
  detail::require_float(kWhere, "a_log", a.a_log);
  detail::require_float(kWhere, "dt_bias", a.dt_bias);
  if (a.a_log.dim() != 1 || a.a_log.size(0) != H) {
    detail::fail(kWhere, "a_log must be (H) = (" + std::to_string(H) + "), got " +
                             detail::shape_of(a.a_log));
  }
  const bool flat = a.dt_bias.dim() == 1 && a.dt_bias.size(0) == H * K;
  const bool square = a.dt_bias.dim() == 2 && a.dt_bias.size(0) == H && a.dt_bias.size(1) == K;
  if (!flat && !square) {
    detail::fail(kWhere, "dt_bias must be (H, K) = (" + std::to_string(H) + ", " + std::to_string(K) +
                             ") or (H * K), got " + detail::shape_of(a.dt_bias));
  }
  require_on_device(a.a_log, a.q, "a_log");
  require_on_device(a.dt_bias, a.q, "dt_bias");
}

// The offsets of cu_seqlens on the host (one copy: a host sync for CUDA tensors), checked.
std::vector<std::int64_t> sequence_offsets(const KdaChunkwiseArgs& a) {
  const torch::Tensor& cu = a.cu_seqlens;
  if (a.q.size(0) != 1) {
    detail::fail(kWhere, "with cu_seqlens the batch must be 1 (pack the sequences along T), got B = " +
                             std::to_string(a.q.size(0)));
  }
  if (cu.dim() != 1 || cu.numel() < 2 || cu.scalar_type() != torch::kInt64) {
    detail::fail(kWhere, "cu_seqlens must be a 1-D int64 tensor of N + 1 >= 2 offsets");
  }
  require_on_device(cu, a.q, "cu_seqlens");
  const torch::Tensor host = cu.cpu().contiguous();
  std::vector<std::int64_t> offsets(host.data_ptr<std::int64_t>(),
                                    host.data_ptr<std::int64_t>() + host.numel());
  if (offsets.front() != 0 || offsets.back() != a.q.size(1)) {
    detail::fail(kWhere, "cu_seqlens must start at 0 and end at T = " + std::to_string(a.q.size(1)));
  }
  for (std::size_t n = 1; n < offsets.size(); ++n) {
    if (offsets[n] < offsets[n - 1]) detail::fail(kWhere, "cu_seqlens must be non-decreasing");
  }
  return offsets;
}

void check_initial_state(const KdaChunkwiseArgs& a, const kernels::KdaShape& shape) {
  if (!a.initial_state || !a.initial_state->defined()) return;
  const torch::Tensor& s = *a.initial_state;
  detail::require_float(kWhere, "initial_state", s);
  const std::vector<std::int64_t> want{shape.num_seqs, shape.heads, shape.key_dim, shape.value_dim};
  if (s.sizes().vec() != want) {
    detail::fail(kWhere, "initial_state must be (N, H, K, V) = [" + std::to_string(want[0]) + ", " +
                             std::to_string(want[1]) + ", " + std::to_string(want[2]) + ", " +
                             std::to_string(want[3]) + "], got " + detail::shape_of(s));
  }
  require_on_device(s, a.q, "initial_state");
}

// Every check of the kernel form, the same for both paths.
detail::KdaKernelCall check_kernel_form(const KdaChunkwiseArgs& a, kernels::KdaMath math) {
  detail::check_sequence_args(kWhere, a.q, a.k, a.v, a.g, a.beta, std::nullopt);
  detail::check_chunk_size(kWhere, a.chunk_size);
  check_raw_gate(a);
  detail::KdaKernelCall call;
  if (a.cu_seqlens.defined()) call.offsets = sequence_offsets(a);
  const std::int64_t B = a.q.size(0);
  const std::int64_t N = call.offsets.empty() ? B : static_cast<std::int64_t>(call.offsets.size()) - 1;
  call.shape = {B, a.q.size(1), a.q.size(2), a.q.size(3), a.v.size(3), N};
  check_initial_state(a, call.shape);
  call.options.scale = static_cast<float>(a.scale.value_or(0.0));
  call.options.lower_bound = static_cast<float>(a.lower_bound);
  call.options.l2norm_qk = a.l2norm_qk;
  call.options.beta_is_logits = a.beta_is_logits;
  call.options.math = math;
  kernels::kda_validate_options(call.options);
  return call;
}

bool kernels_accept(const KdaChunkwiseArgs& a, const detail::KdaKernelCall& call) {
  if (!a.q.is_cuda() || !kernels::torch_cuda_path_available()) return false;
  if (!kernels::kda_shape_problem(call.shape).empty()) return false;
  if (a.a_log.defined() || a.g.numel() == 0) return true;
  // A log decay below the bound would break the kernels' 16-token factorisation. One reduction and
  // a host sync per call: the price of never feeding them such a gate (K3's bounded gate passes).
  return a.g.min().item<double>() >= a.lower_bound;
}

// The preprocessing the kernels fuse, in LibTorch ops, then kda_chunkwise per batch or, with
// cu_seqlens, per sequence (its state carried in and out on its own).
KdaResult run_libtorch(const KdaChunkwiseArgs& a, const detail::KdaKernelCall& call) {
  const auto cdt = detail::compute_dtype(a.q);
  torch::Tensor q = a.q.to(cdt), k = a.k.to(cdt), g = a.g.to(cdt), beta = a.beta.to(cdt);
  if (a.l2norm_qk) {
    q = l2_normalize(q);
    k = l2_normalize(k);
  }
  if (a.a_log.defined()) g = kda_gate_lower_bound(g, a.a_log, a.dt_bias, a.lower_bound);
  if (a.beta_is_logits) beta = torch::sigmoid(beta);
  // As in kda.hpp, a scale of 0 means K^-0.5.
  const std::optional<double> scale =
      a.scale && *a.scale != 0.0 ? a.scale : std::optional<double>();
  const bool with_state = a.initial_state && a.initial_state->defined();
  if (call.offsets.empty()) {
    KdaResult r = kda_chunkwise(q, k, a.v, g, beta, a.initial_state, a.chunk_size, scale);
    return {r.output.to(a.q.scalar_type()), r.final_state};
  }
  std::vector<torch::Tensor> outputs, states;
  for (std::size_t n = 0; n + 1 < call.offsets.size(); ++n) {
    const std::int64_t begin = call.offsets[n], length = call.offsets[n + 1] - begin;
    const auto part = [&](const torch::Tensor& x) { return x.narrow(1, begin, length); };
    std::optional<torch::Tensor> h0;
    if (with_state) h0 = a.initial_state->narrow(0, static_cast<std::int64_t>(n), 1);  // (1, H, K, V)
    KdaResult r = kda_chunkwise(part(q), part(k), part(a.v), part(g), part(beta), h0, a.chunk_size, scale);
    outputs.push_back(r.output);     // (1, length, H, V)
    states.push_back(r.final_state);  // (1, H, K, V)
  }
  return {torch::cat(outputs, 1).to(a.q.scalar_type()), torch::cat(states, 0)};
}

}  // namespace

KdaResult kda_chunkwise_kernel(const KdaChunkwiseArgs& args, kernels::KdaMath math) {
  const detail::KdaKernelCall call = check_kernel_form(args, math);
  if (kernels_accept(args, call)) return detail::kda_chunkwise_cuda_function(args, call);
  return run_libtorch(args, call);
}

}  // namespace k3lab::models
