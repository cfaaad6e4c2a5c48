#pragma once
// The per-tile preparation shared by the forward and backward bodies: load 16 tokens of one head,
// fuse the L2 norms, the gate activation, the beta sigmoid and the tile-local cumulative decay,
// then build the decayed operands and the 16x16 matrices of the chunkwise form.
//
// With G the cumulative log decay from the tile start (G_i in [16 * lower_bound, 0]):
//   q_d = scale q e^G,  k_d = k e^G,  k_inv = k e^-G,  k_rest = k e^(G_last - G)
//   akk = StrictTril(diag(beta) k_d k_inv^T),  aqk = Tril(q_d k_inv^T),  minv = (I + akk)^-1
// Entries below the diagonal are e^(G_i - G_j) <= 1 weighted dot products of unit vectors; the
// upper triangle (which could overflow) is never computed, only assigned zero.
#include <cmath>

#include "kda_params.hpp"

namespace k3lab::kernels::detail {

// Optional work folded into the load phase.
struct TileExtras {
  const float* state = nullptr;  // (K, sv) state to save (forward, when tile states are wanted)
  float* tile_state = nullptr;   // (K, V) destination of that copy
  float* d_out_rows = nullptr;   // (16, sv) destination for this tile's d out (backward)
};

K3LAB_KERNEL_BODY float sigmoidf(float x) { return 1.0f / (1.0f + expf(-x)); }

template <class Block>
K3LAB_KERNEL_BODY void prepare_tile(Block& blk, const KdaParams& p, const TileBuffers& t, int h,
                                    std::int64_t row0, int rows, const TileExtras& extras) {
  const int K = p.key_dim, V = p.value_dim, H = p.heads;
  const int sk = t.sk, sv = t.sv;
  const float a = p.g_log_decay ? 0.0f : expf(p.a_log[h]);

  // Loads (bf16 -> fp32) and the gate activation; padded rows are zeros (no decay, no update).
  blk.phase([&](int tid) {
    for (int e = tid; e < kTile * K; e += kBlockThreads) {
      const int i = e / K, c = e % K;
      float q = 0.0f, k = 0.0f, gate = 0.0f;
      if (i < rows) {
        const std::int64_t at = ((row0 + i) * H + h) * K + c;
        q = bf16_to_float(p.q[at]);
        k = bf16_to_float(p.k[at]);
        gate = p.g_log_decay
                   ? p.g_log_decay[at]
                   : p.lower_bound * sigmoidf(a * (bf16_to_float(p.g[at]) + p.dt_bias[h * K + c]));
      }
      t.qk[i * sk + c] = q;
      t.qk[(kTile + i) * sk + c] = k;
      t.gcum[i * sk + c] = gate;
    }
    for (int e = tid; e < kTile * V; e += kBlockThreads) {
      const int i = e / V, c = e % V;
      const std::int64_t at = ((row0 + i) * H + h) * V + c;
      t.vx[i * sv + c] = i < rows ? bf16_to_float(p.v[at]) : 0.0f;
      if (extras.d_out_rows) extras.d_out_rows[i * sv + c] = i < rows ? bf16_to_float(p.d_out[at]) : 0.0f;
    }
    if (tid < kTile) {
      float beta = 0.0f;
      if (tid < rows) {
        beta = bf16_to_float(p.beta[(row0 + tid) * H + h]);
        if (p.beta_is_logits) beta = sigmoidf(beta);
      }
      t.beta[tid] = beta;
    }
    if (extras.tile_state) {
      for (int e = tid; e < K * V; e += kBlockThreads) {
        extras.tile_state[e] = extras.state[(e / V) * sv + e % V];
      }
    }
  });

  // Row norms of q and k; cumulative decay per channel.
  blk.phase([&](int tid) {
    if (tid < 2 * kTile) {
      const float* row = t.qk + tid * sk;
      float sum = 0.0f;
      for (int c = 0; c < K; ++c) sum += row[c] * row[c];
      const float inv = p.l2norm_qk ? 1.0f / sqrtf(sum + 1e-6f) : 1.0f;
      if (tid < kTile) {
        t.inv_qnorm[tid] = inv;
      } else {
        t.inv_knorm[tid - kTile] = inv;
      }
    } else if (tid < 2 * kTile + K) {
      const int c = tid - 2 * kTile;
      float running = 0.0f;
      for (int i = 0; i < kTile; ++i) {
        running += t.gcum[i * sk + c];
        t.gcum[i * sk + c] = running;
      }
      t.decay_last[c] = expf(running);
    }
  });

  // Decayed operands (each thread rewrites only its own elements).
  blk.phase([&](int tid) {
    for (int e = tid; e < kTile * K; e += kBlockThreads) {
      const int i = e / K, c = e % K;
      const float G = t.gcum[i * sk + c];
      const float G_last = t.gcum[(kTile - 1) * sk + c];
      const float q = t.qk[i * sk + c] * t.inv_qnorm[i] * p.scale;
      const float k = t.qk[(kTile + i) * sk + c] * t.inv_knorm[i];
      const float e_g = expf(G);
      t.qk[i * sk + c] = q * e_g;
      t.qk[(kTile + i) * sk + c] = k * e_g;
      t.k_inv[i * sk + c] = k * expf(-G);
      t.k_rest[i * sk + c] = k * expf(G_last - G);
    }
  });

  // The 16x16 matrices: thread (i, j) computes the lower-triangle dot products.
  blk.phase([&](int tid) {
    for (int e = tid; e < kTile * kTile; e += kBlockThreads) {
      const int i = e / kTile, j = e % kTile;
      float kk = 0.0f, qk = 0.0f;
      if (j <= i) {
        for (int c = 0; c < K; ++c) {
          const float k_inv = t.k_inv[j * sk + c];
          kk += t.qk[(kTile + i) * sk + c] * k_inv;
          qk += t.qk[i * sk + c] * k_inv;
        }
      }
      t.akk[e] = j < i ? t.beta[i] * kk : 0.0f;
      t.aqk[e] = j <= i ? qk : 0.0f;
      if (t.kk_dot) t.kk_dot[e] = j < i ? kk : 0.0f;
    }
  });

  // minv = (I + akk)^-1 by forward substitution, one column per thread.
  blk.phase([&](int tid) {
    if (tid < kTile) {
      const int j = tid;
      for (int i = 0; i < kTile; ++i) {
        float value;
        if (i < j) {
          value = 0.0f;
        } else if (i == j) {
          value = 1.0f;
        } else {
          float acc = 0.0f;
          for (int m = j; m < i; ++m) acc += t.akk[i * kTile + m] * t.minv[m * kTile + j];
          value = -acc;
        }
        t.minv[i * kTile + j] = value;
      }
    }
  });
}

}  // namespace k3lab::kernels::detail
