#pragma once
// Backward body for one (sequence, head): walks the tiles last to first, carrying dS (the gradient
// of the state at the end of the tile) in shared memory. The state at the start of each tile, S0,
// was saved by the forward body (tile_states). Per tile, with the forward quantities recomputed:
//   W = k_d S0,  X = diag(beta)(v - W),  U = minv X
//   dU = aqk^T dO + k_rest dS                 dk_rest = U dS^T
//   dX = minv^T dU;  dv = diag(beta) dX;  dW = -diag(beta) dX
//   dP = Tril(dO U^T);  dA = -StrictTril(dX U^T)   (the diagonal of dP is handled in closed form)
//   [dq_d; dk_d] = [dO; dW] S0^T + [dP; diag(beta) dA] k_inv
//   dk_inv = [dP; diag(beta) dA]^T [q_d; k_d]
//   dS0 = diag(e^G_last) dS + [q_d; k_d]^T [dO; dW]
// then the chain rule through the decays, the tile-local cumsum, the gate, the L2 norms and beta.
// Products with a 16- or 32-long inner dimension keep fp32 operands even in the tf32 mode: their
// operands carry e^(+-G) factors whose gate-gradient terms cancel pairwise, and tf32 rounding of
// them cost up to 1e-2 in dg near the gate bound (host emulation with tf32 rounding); they are a
// small share of the work. The state products (inner dimension K or V) use tensor cores.
#include "kda_tile.hpp"

namespace k3lab::kernels::detail {

template <class Block>
K3LAB_KERNEL_BODY void kda_backward_sequence(Block& blk, const KdaParams& p, int n, int h,
                                             float* smem) {
  const int K = p.key_dim, V = p.value_dim, H = p.heads;
  const BackwardSmem s = carve_backward_smem(smem, K, V);
  const TileBuffers& t = s.tile;
  const int sk = t.sk, sv = t.sv;
  const SequenceSpan span = sequence_span(p, n);
  const std::int64_t state_at = (static_cast<std::int64_t>(n) * H + h) * K * V;
  const float a = p.g_log_decay ? 0.0f : expf(p.a_log[h]);

  blk.phase([&](int tid) {
    for (int e = tid; e < K * V; e += kBlockThreads) {
      s.d_state[(e / V) * sv + e % V] = p.d_final_state ? p.d_final_state[state_at + e] : 0.0f;
    }
    if (tid < K) {
      s.ddt_acc[tid] = 0.0f;
      s.dalog_acc[tid] = 0.0f;
    }
  });

  const std::int64_t tiles = ceil_div(span.length, kTile);
  for (std::int64_t tile = tiles - 1; tile >= 0; --tile) {
    const std::int64_t row0 = span.begin + tile * kTile;
    const std::int64_t left = span.length - tile * kTile;
    const int rows = static_cast<int>(left < kTile ? left : kTile);
    const float* S0 = p.tile_states + ((span.tile_base + tile) * H + h) * K * V;  // (K, V)
    TileExtras extras;
    extras.d_out_rows = s.dow;
    prepare_tile(blk, p, t, h, row0, rows, extras);

    // W = k_d S0, then vx = v - W and xb = X = diag(beta)(v - W); dG_last through the decay.
    blk.gemm({kTile, V, K, {t.qk + kTile * sk, sk, 1}, {S0, V, 1}, s.xb, sv, false});
    blk.phase([&](int tid) {
      for (int e = tid; e < kTile * V; e += kBlockThreads) {
        const int i = e / V, c = e % V;
        const float v_minus_w = t.vx[i * sv + c] - s.xb[i * sv + c];
        t.vx[i * sv + c] = v_minus_w;
        s.xb[i * sv + c] = t.beta[i] * v_minus_w;
      }
      const int part_len = V / kNormParts;
      for (int e = tid; e < K * kNormParts; e += kBlockThreads) {
        const int r = e / kNormParts, c0 = (e % kNormParts) * part_len;
        float acc = 0.0f;
        for (int c = c0; c < c0 + part_len; ++c) acc += S0[r * V + c] * s.d_state[r * sv + c];
        s.dglast_part[e] = acc;
      }
    });
    blk.gemm({kTile, V, kTile, {t.minv, kTile, 1}, {s.xb, sv, 1}, s.u, sv, false, true});
    blk.gemm({kTile, V, kTile, {t.aqk, 1, kTile}, {s.dow, sv, 1}, s.du, sv, false, true});
    blk.gemm({kTile, V, K, {t.k_rest, sk, 1}, {s.d_state, sv, 1}, s.du, sv, true});
    blk.gemm({kTile, K, V, {s.u, sv, 1}, {s.d_state, 1, sv}, s.dk_rest, sk, false});
    blk.gemm({kTile, V, kTile, {t.minv, 1, kTile}, {s.du, sv, 1}, s.xb, sv, false, true});  // dX

    // dP, diag(beta) dA (and dA * kk_dot for d beta); dW; dv.
    blk.phase([&](int tid) {
      for (int e = tid; e < kTile * kTile; e += kBlockThreads) {
        const int i = e / kTile, j = e % kTile;
        float dp = 0.0f, da = 0.0f;
        if (j <= i) {
          for (int c = 0; c < V; ++c) {
            const float u = s.u[j * sv + c];
            dp += s.dow[i * sv + c] * u;
            da -= s.xb[i * sv + c] * u;
          }
        }
        if (j == i) {
          // The diagonal of P, q_hat . k_hat scale, does not depend on the decay: keep its
          // gradient out of the factorised products (their G terms would cancel exactly in exact
          // arithmetic but not after tf32 rounding) and add it in closed form below.
          s.dp_diag[i] = dp;
          dp = 0.0f;
          da = 0.0f;
        }
        s.dpa[e] = dp;
        s.dpa[kTile * kTile + e] = t.beta[i] * da;
        t.kk_dot[e] *= da;
      }
      for (int e = tid; e < kTile * V; e += kBlockThreads) {
        const int i = e / V, c = e % V;
        const float dx = s.xb[i * sv + c];
        s.dow[(kTile + i) * sv + c] = -t.beta[i] * dx;
        if (i < rows) p.dv[((row0 + i) * H + h) * V + c] = float_to_bf16(t.beta[i] * dx);
      }
    });
    blk.gemm({2 * kTile, K, V, {s.dow, sv, 1}, {S0, 1, V}, s.dqk, sk, false});
    blk.gemm({2 * kTile, K, kTile, {s.dpa, kTile, 1}, {t.k_inv, sk, 1}, s.dqk, sk, true, true});
    blk.gemm({kTile, K, 2 * kTile, {s.dpa, 1, kTile}, {t.qk, sk, 1}, s.dk_inv, sk, false, true});

    // dS <- diag(e^G_last) dS (all reads of the old dS are done); d beta of this tile.
    blk.phase([&](int tid) {
      for (int e = tid; e < K * V; e += kBlockThreads) {
        const int r = e / V, c = e % V;
        s.d_state[r * sv + c] *= t.decay_last[r];
      }
      if (tid < kTile) {
        float acc = 0.0f;
        for (int c = 0; c < V; ++c) acc += s.xb[tid * sv + c] * t.vx[tid * sv + c];
        for (int j = 0; j < kTile; ++j) acc += t.kk_dot[tid * kTile + j];
        s.dbeta_acc[tid] = acc;
      }
    });
    blk.gemm({K, V, 2 * kTile, {t.qk, 1, sk}, {s.dow, sv, 1}, s.d_state, sv, true});

    // Through the decays: d q_hat, d k_hat (normalised q and k) and dG per element.
    blk.phase([&](int tid) {
      for (int e = tid; e < kTile * K; e += kBlockThreads) {
        const int i = e / K, c = e % K;
        const float G = t.gcum[i * sk + c];
        const float G_last = t.gcum[(kTile - 1) * sk + c];
        const float dqd = s.dqk[i * sk + c];
        const float dkd = s.dqk[(kTile + i) * sk + c];
        const float dki = s.dk_inv[i * sk + c];
        const float dkr = s.dk_rest[i * sk + c];
        const float e_g = expf(G);
        const float e_minus_g = expf(-G);
        const float q_hat = t.qk[i * sk + c] * e_minus_g / p.scale;
        const float k_hat = t.k_inv[i * sk + c] * e_g;
        const float diag = p.scale * s.dp_diag[i];
        s.dqk[i * sk + c] = p.scale * e_g * dqd + diag * k_hat;
        s.dqk[(kTile + i) * sk + c] =
            e_g * dkd + e_minus_g * dki + expf(G_last - G) * dkr + diag * q_hat;
        // The last valid row has k_rest = k (G_last = its G): no decay dependence, so its terms
        // for G_last and G_i are both left out (they cancel exactly).
        const float rest_term = i >= rows - 1 ? 0.0f : t.k_rest[i * sk + c] * dkr;
        s.dk_inv[i * sk + c] = t.qk[i * sk + c] * dqd + t.qk[(kTile + i) * sk + c] * dkd -
                               t.k_inv[i * sk + c] * dki - rest_term;
      }
    });

    // Per channel: reverse cumsum of dG (plus dG_last) and the gate backward. Per row part: the
    // dot products the L2-norm backward needs.
    blk.phase([&](int tid) {
      if (tid < K) {
        const int c = tid;
        float state_part = 0.0f;
        for (int part = 0; part < kNormParts; ++part) state_part += s.dglast_part[c * kNormParts + part];
        float acc = t.decay_last[c] * state_part;
        for (int i = 0; i < rows - 1; ++i) acc += t.k_rest[i * sk + c] * s.dk_rest[i * sk + c];
        const float bias = p.g_log_decay ? 0.0f : p.dt_bias[h * K + c];
        for (int i = kTile - 1; i >= 0; --i) {
          acc += s.dk_inv[i * sk + c];
          if (i < rows && p.g_log_decay) {
            p.dg_log_decay[((row0 + i) * H + h) * K + c] = acc;
          } else if (i < rows) {
            const std::int64_t at = ((row0 + i) * H + h) * K + c;
            const float shifted = bf16_to_float(p.g[at]) + bias;
            // sigma(z) sigma(-z), not sigma (1 - sigma): near the bound sigma rounds to 1 in fp32.
            const float z = a * shifted;
            const float dx = acc * p.lower_bound * sigmoidf(z) * sigmoidf(-z) * a;
            p.dg[at] = float_to_bf16(dx);
            s.ddt_acc[c] += dx;
            s.dalog_acc[c] += dx * shifted;
          }
        }
      }
      const int part_len = K / kNormParts;
      for (int e = tid; e < 2 * kTile * kNormParts; e += kBlockThreads) {
        const int r = e / kNormParts, i = r % kTile, c0 = (e % kNormParts) * part_len;
        float dot = 0.0f;
        if (i < rows && p.l2norm_qk) {
          const Bf16* raw = r < kTile ? p.q : p.k;
          const float inv_norm = r < kTile ? t.inv_qnorm[i] : t.inv_knorm[i];
          const std::int64_t at = ((row0 + i) * H + h) * K;
          for (int c = c0; c < c0 + part_len; ++c) {
            dot += bf16_to_float(raw[at + c]) * inv_norm * s.dqk[r * sk + c];
          }
        }
        s.row_part[e] = dot;
      }
    });

    // L2-norm backward: dx = (d xhat - xhat (xhat . d xhat)) / |x|; d beta (through the sigmoid).
    blk.phase([&](int tid) {
      for (int e = tid; e < rows * K; e += kBlockThreads) {
        const int i = e / K, c = e % K;
        const std::int64_t at = ((row0 + i) * H + h) * K + c;
        const float dq_hat = s.dqk[i * sk + c];
        const float dk_hat = s.dqk[(kTile + i) * sk + c];
        float dq = dq_hat, dk = dk_hat;
        if (p.l2norm_qk) {
          float q_dot = 0.0f, k_dot = 0.0f;
          for (int part = 0; part < kNormParts; ++part) {
            q_dot += s.row_part[i * kNormParts + part];
            k_dot += s.row_part[(kTile + i) * kNormParts + part];
          }
          const float q_hat = bf16_to_float(p.q[at]) * t.inv_qnorm[i];
          const float k_hat = bf16_to_float(p.k[at]) * t.inv_knorm[i];
          dq = t.inv_qnorm[i] * (dq_hat - q_hat * q_dot);
          dk = t.inv_knorm[i] * (dk_hat - k_hat * k_dot);
        }
        p.dq[at] = float_to_bf16(dq);
        p.dk[at] = float_to_bf16(dk);
      }
      if (tid < rows) {
        float db = s.dbeta_acc[tid];
        if (p.beta_is_logits) {
          const float logit = bf16_to_float(p.beta[(row0 + tid) * H + h]);
          db *= sigmoidf(logit) * sigmoidf(-logit);
        }
        p.dbeta[(row0 + tid) * H + h] = float_to_bf16(db);
      }
    });
  }

  blk.phase([&](int tid) {
    if (p.d_initial_state) {
      for (int e = tid; e < K * V; e += kBlockThreads) {
        p.d_initial_state[state_at + e] = s.d_state[(e / V) * sv + e % V];
      }
    }
    float* partials = p.gate_partials + (static_cast<std::int64_t>(n) * H + h) * (K + 1);
    if (tid < K) partials[tid] = s.ddt_acc[tid];
    if (tid == 0) {
      float total = 0.0f;
      for (int c = 0; c < K; ++c) total += s.dalog_acc[c];
      partials[K] = total;
    }
  });
}

}  // namespace k3lab::kernels::detail
