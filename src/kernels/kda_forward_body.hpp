#pragma once
// Forward body for one (sequence, head): the state S (K x V, fp32) stays in shared memory while
// the block walks the sequence tile by tile:
//   [O; W] = [q_d; k_d] S          X = diag(beta) (v - W)          U = minv X
//   O += aqk U  -> out             S = diag(e^G_last) S + k_rest^T U
#include "kda_tile.hpp"

namespace k3lab::kernels::detail {

template <class Block>
K3LAB_KERNEL_BODY void kda_forward_sequence(Block& blk, const KdaParams& p, int n, int h,
                                            float* smem) {
  const int K = p.key_dim, V = p.value_dim, H = p.heads;
  const ForwardSmem s = carve_forward_smem(smem, K, V);
  const TileBuffers& t = s.tile;
  const int sk = t.sk, sv = t.sv;
  const SequenceSpan span = sequence_span(p, n);
  const std::int64_t state_at = (static_cast<std::int64_t>(n) * H + h) * K * V;

  blk.phase([&](int tid) {
    for (int e = tid; e < K * V; e += kBlockThreads) {
      s.state[(e / V) * sv + e % V] = p.initial_state ? p.initial_state[state_at + e] : 0.0f;
    }
  });

  const std::int64_t tiles = ceil_div(span.length, kTile);
  for (std::int64_t tile = 0; tile < tiles; ++tile) {
    const std::int64_t row0 = span.begin + tile * kTile;
    const std::int64_t left = span.length - tile * kTile;
    const int rows = static_cast<int>(left < kTile ? left : kTile);
    TileExtras extras;
    if (p.tile_states) {
      extras.state = s.state;
      extras.tile_state = p.tile_states + ((span.tile_base + tile) * H + h) * K * V;
    }
    prepare_tile(blk, p, t, h, row0, rows, extras);

    blk.gemm({2 * kTile, V, K, {t.qk, sk, 1}, {s.state, sv, 1}, s.ow, sv, false});
    blk.phase([&](int tid) {
      for (int e = tid; e < kTile * V; e += kBlockThreads) {
        const int i = e / V, c = e % V;
        t.vx[i * sv + c] = t.beta[i] * (t.vx[i * sv + c] - s.ow[(kTile + i) * sv + c]);
      }
    });
    blk.gemm({kTile, V, kTile, {t.minv, kTile, 1}, {t.vx, sv, 1}, s.u, sv, false, true});
    blk.gemm({kTile, V, kTile, {t.aqk, kTile, 1}, {s.u, sv, 1}, s.ow, sv, true, true});
    blk.phase([&](int tid) {
      if (p.out) {
        for (int e = tid; e < rows * V; e += kBlockThreads) {
          const int i = e / V, c = e % V;
          p.out[((row0 + i) * H + h) * V + c] = float_to_bf16(s.ow[i * sv + c]);
        }
      }
      for (int e = tid; e < K * V; e += kBlockThreads) {
        const int r = e / V, c = e % V;
        s.state[r * sv + c] *= t.decay_last[r];
      }
    });
    blk.gemm({K, V, kTile, {t.k_rest, 1, sk}, {s.u, sv, 1}, s.state, sv, true});
  }

  blk.phase([&](int tid) {
    if (p.final_state) {
      for (int e = tid; e < K * V; e += kBlockThreads) {
        p.final_state[state_at + e] = s.state[(e / V) * sv + e % V];
      }
    }
  });
}

}  // namespace k3lab::kernels::detail
