#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "k3lab/kernels/kda.hpp"
#include "kda_launch_params.hpp"

namespace k3lab::kernels {
namespace {

constexpr std::size_t kWorkspaceAlign = 256;

std::size_t align_up(std::size_t bytes) {
  return (bytes + kWorkspaceAlign - 1) / kWorkspaceAlign * kWorkspaceAlign;
}

std::string head_dim_problem(std::int64_t dim, const char* name) {
  if (dim >= 16 && dim <= kKdaMaxHeadDim && dim % 16 == 0) return "";
  return std::string("KDA: ") + name + " = " + std::to_string(dim) +
         " is not supported; use a multiple of 16 between 16 and " +
         std::to_string(kKdaMaxHeadDim) + " (pad the head otherwise)";
}

void require(const void* pointer, const char* name) {
  if (pointer == nullptr) {
    throw std::invalid_argument(std::string("KDA: ") + name +
                                " is null; pass a device pointer with the layout given in kda.hpp");
  }
}

std::size_t tile_state_bytes(const KdaShape& shape) {
  return static_cast<std::size_t>(kda_tile_count_bound(shape)) *
         static_cast<std::size_t>(shape.heads * shape.key_dim * shape.value_dim) * sizeof(float);
}

}  // namespace

float KdaOptions::resolved_scale(std::int64_t key_dim) const {
  return scale != 0.0f ? scale : static_cast<float>(1.0 / std::sqrt(static_cast<double>(key_dim)));
}

std::string kda_shape_problem(const KdaShape& shape) {
  if (shape.batch < 1 || shape.seq_len < 0 || shape.heads < 1) {
    return "KDA: batch and heads must be >= 1 and seq_len >= 0 (got batch=" +
           std::to_string(shape.batch) + ", seq_len=" + std::to_string(shape.seq_len) +
           ", heads=" + std::to_string(shape.heads) + ")";
  }
  if (shape.heads > 65535) {
    return "KDA: heads = " + std::to_string(shape.heads) +
           " exceeds the grid's y limit 65535; split the heads into calls";
  }
  if (shape.num_seqs < 1 || shape.num_seqs > 2147483647) {
    return "KDA: num_seqs = " + std::to_string(shape.num_seqs) +
           " must be in [1, 2^31); set it to batch, or to the number of sequences in cu_seqlens";
  }
  const std::string key = head_dim_problem(shape.key_dim, "key_dim");
  return key.empty() ? head_dim_problem(shape.value_dim, "value_dim") : key;
}

void kda_validate_options(const KdaOptions& options) {
  if (!(options.lower_bound >= -5.0f && options.lower_bound < 0.0f)) {
    throw std::invalid_argument("KDA: lower_bound = " + std::to_string(options.lower_bound) +
                                " is outside [-5, 0); the chunkwise factorisation over 16-token "
                                "tiles needs the gate bounded below by -5 (K3 uses -5)");
  }
  if (!std::isfinite(options.scale) || options.scale < 0.0f) {
    throw std::invalid_argument("KDA: scale must be finite and > 0 (or 0 for key_dim^-0.5)");
  }
}

void kda_validate(const KdaShape& shape, const KdaOptions& options) {
  const std::string problem = kda_shape_problem(shape);
  if (!problem.empty()) throw std::invalid_argument(problem);
  kda_validate_options(options);
}

std::int64_t kda_tile_count_bound(const KdaShape& shape) {
  return (shape.tokens() + kKdaTile - 1) / kKdaTile + shape.num_seqs;
}

std::size_t kda_backward_workspace_bytes(const KdaShape& shape) {
  const std::size_t partials = static_cast<std::size_t>(shape.num_seqs * shape.heads *
                                                        (shape.key_dim + 1)) * sizeof(float);
  return align_up(tile_state_bytes(shape)) + align_up(partials);
}

std::size_t kda_forward_smem_bytes(const KdaShape& shape) {
  int floats = 0;
  detail::carve_forward_smem(nullptr, static_cast<int>(shape.key_dim),
                             static_cast<int>(shape.value_dim), &floats);
  return static_cast<std::size_t>(floats) * sizeof(float);
}

std::size_t kda_backward_smem_bytes(const KdaShape& shape) {
  int floats = 0;
  detail::carve_backward_smem(nullptr, static_cast<int>(shape.key_dim),
                              static_cast<int>(shape.value_dim), &floats);
  return static_cast<std::size_t>(floats) * sizeof(float);
}

namespace detail {

void check_forward_args(const KdaShape& shape, const KdaOptions& options,
                        const KdaForwardArgs& args) {
  kda_validate(shape, options);
  if (args.cu_seqlens != nullptr) {
    if (shape.batch != 1) {
      throw std::invalid_argument("KDA: with cu_seqlens the batch must be 1 (got " +
                                  std::to_string(shape.batch) +
                                  "); pack the sequences along seq_len as fla does");
    }
  } else if (shape.num_seqs != shape.batch) {
    throw std::invalid_argument("KDA: without cu_seqlens num_seqs must equal batch (got " +
                                std::to_string(shape.num_seqs) + " and " +
                                std::to_string(shape.batch) + ")");
  }
  if (shape.tokens() > 0) {
    require(args.q, "q");
    require(args.k, "k");
    require(args.v, "v");
    require(args.beta, "beta");
  }
  if (args.g_log_decay == nullptr) {
    if (shape.tokens() > 0) require(args.g, "g (or g_log_decay)");
    require(args.a_log, "a_log");
    require(args.dt_bias, "dt_bias");
  } else if (args.g != nullptr) {
    throw std::invalid_argument(
        "KDA: pass either the raw gate g (with a_log and dt_bias) or g_log_decay, not both");
  }
}

void check_backward_args(const KdaShape& shape, const KdaOptions& options,
                         const KdaBackwardArgs& args) {
  check_forward_args(shape, options, args.forward);
  if (shape.tokens() > 0) {
    require(args.d_out, "d_out");
    require(args.dq, "dq");
    require(args.dk, "dk");
    require(args.dv, "dv");
    require(args.dbeta, "dbeta");
  }
  if (args.forward.g_log_decay == nullptr) {
    if (shape.tokens() > 0) require(args.dg, "dg");
    require(args.da_log, "da_log");
    require(args.ddt_bias, "ddt_bias");
  } else if (shape.tokens() > 0) {
    require(args.dg_log_decay, "dg_log_decay (the forward inputs carry g_log_decay)");
  }
  require(args.workspace, "workspace (size it with kda_backward_workspace_bytes)");
  if (reinterpret_cast<std::uintptr_t>(args.workspace) % kWorkspaceAlign != 0) {
    throw std::invalid_argument("KDA: workspace must be 256-byte aligned (cudaMalloc gives that)");
  }
}

KdaParams make_forward_params(const KdaShape& shape, const KdaOptions& options,
                              const KdaForwardArgs& args) {
  KdaParams p;
  p.num_seqs = static_cast<int>(shape.num_seqs);
  p.heads = static_cast<int>(shape.heads);
  p.key_dim = static_cast<int>(shape.key_dim);
  p.value_dim = static_cast<int>(shape.value_dim);
  p.seq_len = shape.seq_len;
  p.cu_seqlens = args.cu_seqlens;
  p.scale = options.resolved_scale(shape.key_dim);
  p.lower_bound = options.lower_bound;
  p.l2norm_qk = options.l2norm_qk;
  p.beta_is_logits = options.beta_is_logits;
  p.q = args.q;
  p.k = args.k;
  p.v = args.v;
  p.g = args.g;
  p.beta = args.beta;
  p.a_log = args.a_log;
  p.dt_bias = args.dt_bias;
  p.g_log_decay = args.g_log_decay;
  p.initial_state = args.initial_state;
  p.out = args.out;
  p.final_state = args.final_state;
  p.tile_states = args.tile_states;
  return p;
}

BackwardWorkspace carve_backward_workspace(const KdaShape& shape, void* workspace) {
  auto* base = static_cast<unsigned char*>(workspace);
  return {reinterpret_cast<float*>(base),
          reinterpret_cast<float*>(base + align_up(tile_state_bytes(shape)))};
}

KdaParams make_backward_params(const KdaShape& shape, const KdaOptions& options,
                               const KdaBackwardArgs& args) {
  KdaParams p = make_forward_params(shape, options, args.forward);
  const BackwardWorkspace ws = carve_backward_workspace(shape, args.workspace);
  p.out = nullptr;
  p.final_state = nullptr;
  p.tile_states = ws.tile_states;
  p.gate_partials = ws.gate_partials;
  p.d_out = args.d_out;
  p.d_final_state = args.d_final_state;
  p.dq = args.dq;
  p.dk = args.dk;
  p.dv = args.dv;
  p.dg = args.dg;
  p.dg_log_decay = args.dg_log_decay;
  p.dbeta = args.dbeta;
  p.d_initial_state = args.d_initial_state;
  return p;
}

}  // namespace detail
}  // namespace k3lab::kernels
