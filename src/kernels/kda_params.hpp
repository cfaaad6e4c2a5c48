#pragma once
// What one KDA kernel launch sees: sizes, options and raw pointers (device pointers on the GPU,
// host pointers in the emulator), plus the shared-memory layouts of the two kernel bodies.
#include <cstdint>

#include "k3lab/kernels/bf16.hpp"
#include "kernel_body.hpp"

namespace k3lab::kernels::detail {

inline constexpr int kTile = 16;
// Row reductions over a head dimension are split in this many parts (head dims are multiples of
// 16), summed in a later phase: short chains instead of one thread walking 128 elements.
inline constexpr int kNormParts = 8;

struct KdaParams {
  int num_seqs = 0;
  int heads = 0;
  int key_dim = 0;
  int value_dim = 0;
  std::int64_t seq_len = 0;                   // fixed length (ignored with cu_seqlens)
  const std::int64_t* cu_seqlens = nullptr;   // (N + 1) or null
  float scale = 0.0f;
  float lower_bound = -5.0f;
  bool l2norm_qk = true;
  bool beta_is_logits = true;

  const Bf16* q = nullptr;            // (tokens, H, K)
  const Bf16* k = nullptr;            // (tokens, H, K)
  const Bf16* v = nullptr;            // (tokens, H, V)
  const Bf16* g = nullptr;            // (tokens, H, K)
  const Bf16* beta = nullptr;         // (tokens, H)
  const float* a_log = nullptr;       // (H)
  const float* dt_bias = nullptr;     // (H, K)
  const float* g_log_decay = nullptr; // (tokens, H, K): activated gate given directly
  const float* initial_state = nullptr;  // (N, H, K, V)

  Bf16* out = nullptr;                // (tokens, H, V)
  float* final_state = nullptr;       // (N, H, K, V)
  float* tile_states = nullptr;       // (tiles, H, K, V): state at the start of each tile

  const Bf16* d_out = nullptr;            // (tokens, H, V)
  const float* d_final_state = nullptr;   // (N, H, K, V)
  Bf16* dq = nullptr;
  Bf16* dk = nullptr;
  Bf16* dv = nullptr;
  Bf16* dg = nullptr;
  float* dg_log_decay = nullptr;
  Bf16* dbeta = nullptr;
  float* d_initial_state = nullptr;       // (N, H, K, V)
  float* gate_partials = nullptr;         // (N, H, K + 1): per sequence d dt_bias, then d A_log
};

struct SequenceSpan {
  std::int64_t begin;      // first token
  std::int64_t length;     // tokens
  std::int64_t tile_base;  // index of its first tile among all sequences' tiles
};

K3LAB_KERNEL_BODY SequenceSpan sequence_span(const KdaParams& p, int n) {
  if (p.cu_seqlens == nullptr) {
    return {n * p.seq_len, p.seq_len, n * ceil_div(p.seq_len, kTile)};
  }
  std::int64_t tile_base = 0;
  for (int m = 0; m < n; ++m) tile_base += ceil_div(p.cu_seqlens[m + 1] - p.cu_seqlens[m], kTile);
  return {p.cu_seqlens[n], p.cu_seqlens[n + 1] - p.cu_seqlens[n], tile_base};
}

// Row strides padded by 4 floats: keeps WMMA's ld a multiple of 4 and spreads the rows of the
// column-wise loops over different shared-memory banks.
K3LAB_KERNEL_BODY int padded_stride(int dim) { return dim + 4; }

// Carves a float buffer into 32-byte aligned pieces (WMMA fragment loads need that alignment).
class SmemCarver {
 public:
  K3LAB_KERNEL_BODY explicit SmemCarver(float* base) : base_(base) {}
  K3LAB_KERNEL_BODY float* take(int floats) {
    float* piece = base_ == nullptr ? nullptr : base_ + used_;
    used_ += (floats + 7) / 8 * 8;
    return piece;
  }
  K3LAB_KERNEL_BODY int used_floats() const { return used_; }

 private:
  float* base_;
  int used_ = 0;
};

// Buffers of one tile shared by the forward and backward bodies (rows are the tile's 16 tokens).
struct TileBuffers {
  int sk;             // row stride of K-wide buffers
  int sv;             // row stride of V-wide buffers
  float* qk;          // (32, sk): rows 0-15 q decayed (q e^G scale), rows 16-31 k decayed (k e^G)
  float* k_inv;       // (16, sk): k e^-G
  float* k_rest;      // (16, sk): k e^(G_last - G)
  float* gcum;        // (16, sk): cumulative log decay G within the tile
  float* vx;          // (16, sv): v, later beta (v - W) or v - W
  float* akk;         // (16, 16): StrictTril(diag(beta) kd kinv^T)
  float* aqk;         // (16, 16): Tril(qd kinv^T)
  float* minv;        // (16, 16): (I + akk)^-1
  float* pow2;        // (16, 16): akk^2, then scratch of the inverse's product form
  float* pow4;        // (16, 16): akk^4
  float* pow8;        // (16, 16): akk^8
  float* prod_a;      // (16, 16): partial products of the inverse
  float* prod_b;      // (16, 16)
  float* norm_part;   // (32, 8): partial sums of squares of the q and k rows
  float* kk_dot;      // (16, 16): kd kinv^T below the diagonal (backward only, else null)
  float* beta;        // (16)
  float* inv_qnorm;   // (16)
  float* inv_knorm;   // (16)
  float* decay_last;  // (K): e^G_last
};

K3LAB_KERNEL_BODY TileBuffers carve_tile_buffers(SmemCarver& carver, int key_dim, int value_dim,
                                                 bool backward) {
  TileBuffers t{};
  t.sk = padded_stride(key_dim);
  t.sv = padded_stride(value_dim);
  t.qk = carver.take(2 * kTile * t.sk);
  t.k_inv = carver.take(kTile * t.sk);
  t.k_rest = carver.take(kTile * t.sk);
  t.gcum = carver.take(kTile * t.sk);
  t.vx = carver.take(kTile * t.sv);
  t.akk = carver.take(kTile * kTile);
  t.aqk = carver.take(kTile * kTile);
  t.minv = carver.take(kTile * kTile);
  t.pow2 = carver.take(kTile * kTile);
  t.pow4 = carver.take(kTile * kTile);
  t.pow8 = carver.take(kTile * kTile);
  t.prod_a = carver.take(kTile * kTile);
  t.prod_b = carver.take(kTile * kTile);
  t.norm_part = carver.take(2 * kTile * kNormParts);
  t.kk_dot = backward ? carver.take(kTile * kTile) : nullptr;
  t.beta = carver.take(kTile);
  t.inv_qnorm = carver.take(kTile);
  t.inv_knorm = carver.take(kTile);
  t.decay_last = carver.take(key_dim);
  return t;
}

struct ForwardSmem {
  TileBuffers tile;
  float* state;  // (K, sv) fp32 recurrent state
  float* ow;     // (32, sv): rows 0-15 q_d S then the output, rows 16-31 W = k_d S
  float* u;      // (16, sv)
};

K3LAB_KERNEL_BODY ForwardSmem carve_forward_smem(float* base, int key_dim, int value_dim,
                                                 int* used_floats = nullptr) {
  SmemCarver carver(base);
  ForwardSmem s{};
  s.tile = carve_tile_buffers(carver, key_dim, value_dim, false);
  s.state = carver.take(key_dim * s.tile.sv);
  s.ow = carver.take(2 * kTile * s.tile.sv);
  s.u = carver.take(kTile * s.tile.sv);
  if (used_floats) *used_floats = carver.used_floats();
  return s;
}

struct BackwardSmem {
  TileBuffers tile;
  float* d_state;    // (K, sv): gradient of the state at the end of the current tile
  float* dqk;        // (32, sk): d q_decayed (rows 0-15), d k_decayed (rows 16-31)
  float* dk_inv;     // (16, sk)
  float* dk_rest;    // (16, sk)
  float* xb;         // (16, sv): W, then X = beta (v - W), then dX
  float* u;          // (16, sv)
  float* dow;        // (32, sv): d out (rows 0-15), dW (rows 16-31)
  float* du;         // (16, sv)
  float* dpa;        // (32, 16): dP (rows 0-15), diag(beta) dA (rows 16-31)
  float* dp_diag;    // (16): diagonal of dP
  float* dbeta_acc;  // (16)
  float* dglast_part;  // (K, 8): partial sums of S0 * dS per row (gradient of G_last)
  float* row_part;     // (32, 8): partial sums of the L2-norm backward dot products
  float* ddt_acc;    // (K): running d dt_bias of this (sequence, head)
  float* dalog_acc;  // (K): running d A_log, per channel
};

K3LAB_KERNEL_BODY BackwardSmem carve_backward_smem(float* base, int key_dim, int value_dim,
                                                   int* used_floats = nullptr) {
  SmemCarver carver(base);
  BackwardSmem s{};
  s.tile = carve_tile_buffers(carver, key_dim, value_dim, true);
  const int sk = s.tile.sk, sv = s.tile.sv;
  s.d_state = carver.take(key_dim * sv);
  s.dqk = carver.take(2 * kTile * sk);
  s.dk_inv = carver.take(kTile * sk);
  s.dk_rest = carver.take(kTile * sk);
  s.xb = carver.take(kTile * sv);
  s.u = carver.take(kTile * sv);
  s.dow = carver.take(2 * kTile * sv);
  s.du = carver.take(kTile * sv);
  s.dpa = carver.take(2 * kTile * kTile);
  s.dp_diag = carver.take(kTile);
  s.dbeta_acc = carver.take(kTile);
  s.dglast_part = carver.take(key_dim * kNormParts);
  s.row_part = carver.take(2 * kTile * kNormParts);
  s.ddt_acc = carver.take(key_dim);
  s.dalog_acc = carver.take(key_dim);
  if (used_floats) *used_floats = carver.used_floats();
  return s;
}

}  // namespace k3lab::kernels::detail
