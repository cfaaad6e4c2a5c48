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

  // Partial sums of squares of the q and k rows; cumulative decay per channel.
  blk.phase([&](int tid) {
    const int part_len = K / kNormParts;
    for (int e = tid; e < 2 * kTile * kNormParts; e += kBlockThreads) {
      const float* row = t.qk + (e / kNormParts) * sk + (e % kNormParts) * part_len;
      float sum = 0.0f;
      for (int c = 0; c < part_len; ++c) sum += row[c] * row[c];
      t.norm_part[e] = sum;
    }
    if (tid < K) {
      float running = 0.0f;
      for (int i = 0; i < kTile; ++i) {
        running += t.gcum[i * sk + tid];
        t.gcum[i * sk + tid] = running;
      }
      t.decay_last[tid] = expf(running);
    }
  });

  // Inverse row norms.
  blk.phase([&](int tid) {
    if (tid < 2 * kTile) {
      float sum = 0.0f;
      for (int part = 0; part < kNormParts; ++part) sum += t.norm_part[tid * kNormParts + part];
      const float inv = p.l2norm_qk ? 1.0f / sqrtf(sum + 1e-6f) : 1.0f;
      if (tid < kTile) {
        t.inv_qnorm[tid] = inv;
      } else {
        t.inv_knorm[tid - kTile] = inv;
      }
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

  // minv = (I + akk)^-1. akk is strictly lower triangular (nilpotent), so with L = -akk the
  // Neumann series is finite and factors as (I + L)(I + L^2)(I + L^4)(I + L^8): four phases of
  // 16-long dot products, one entry per thread, instead of a 120-step serial substitution.
  // P <- P + P X multiplies P by (I + X).
  const auto entry = [](const float* a, const float* b, int i, int j) {
    float acc = 0.0f;
    for (int m = 0; m < kTile; ++m) acc += a[i * kTile + m] * b[m * kTile + j];
    return acc;
  };
  blk.phase([&](int tid) {
    for (int e = tid; e < kTile * kTile; e += kBlockThreads) {
      const int i = e / kTile, j = e % kTile;
      t.pow2[e] = entry(t.akk, t.akk, i, j);                 // L^2 = akk^2
      t.prod_a[e] = (i == j ? 1.0f : 0.0f) - t.akk[e];        // I + L
    }
  });
  blk.phase([&](int tid) {
    for (int e = tid; e < kTile * kTile; e += kBlockThreads) {
      const int i = e / kTile, j = e % kTile;
      t.pow4[e] = entry(t.pow2, t.pow2, i, j);
      t.prod_b[e] = t.prod_a[e] + entry(t.prod_a, t.pow2, i, j);
    }
  });
  blk.phase([&](int tid) {
    for (int e = tid; e < kTile * kTile; e += kBlockThreads) {
      const int i = e / kTile, j = e % kTile;
      t.pow8[e] = entry(t.pow4, t.pow4, i, j);
      t.prod_a[e] = t.prod_b[e] + entry(t.prod_b, t.pow4, i, j);
    }
  });
  blk.phase([&](int tid) {
    for (int e = tid; e < kTile * kTile; e += kBlockThreads) {
      const int i = e / kTile, j = e % kTile;
      t.minv[e] = t.prod_a[e] + entry(t.prod_a, t.pow8, i, j);
    }
  });
}

}  // namespace k3lab::kernels::detail
