#!/usr/bin/python3
"""PyTorch eager baseline for `k3lab bench train` (issue 19).

This script rebuilds the model that `build/k3lab bench train` trains, op for op, in plain eager
PyTorch. It then times the same training step with the same options, so that k3lab's LibTorch C++
step can be compared with PyTorch eager in the same session. Both link the same Debian LibTorch 1.13,
so the difference is the front end (Python and the autograd graph it records), not the kernels.

Run it with Debian's torch. That is /usr/bin/python3, not the pyenv python3 on PATH:

    /usr/bin/python3 scripts/eager_baseline.py --threads 1 --steps 3
    build/k3lab bench train --no-record --opt threads=1 --opt steps=3      # the same measurement in k3lab

What it mirrors (C++ sources under src/ and include/k3lab/):
  train/bench.cpp         options and defaults, the three arms ("M", "K", "KKKM" repeated over the
                          layers), bench_model_config, the token window, the step (zero_grad; per
                          micro-batch forward, cross-entropy, backward; AdamW step, no clipping),
                          warm-up, timing, cores busy
  train/optimizer.cpp     AdamW: lr 6e-4 (bench sets no schedule), betas (0.9, 0.95), eps 1e-8, weight
                          decay 0.1 on tensors with dim >= 2 and 0 on all others
  train/thread_pools.cpp  intra-op threads, one inter-op thread, the same number of OpenBLAS threads
  core/thread_policy.cpp  threads 0 means the cores in the CPU affinity; OMP_WAIT_POLICY=PASSIVE unless
                          it is set (k3lab runs itself again with it, and so does this script)
  core/allocator_policy   mallopt(M_ARENA_MAX, 1) unless the user set a MALLOC_* variable
  core/rng.hpp            xoshiro256** seeded by splitmix64 and Lemire's below(), so the token window is
                          the same as k3lab's (seed 20240520)
  models/*                the decoder, see the section comments below. The chunkwise KDA is kda_chunkwise.cpp
                          step by step: 16-token sub-chunks, the factorised/pairwise choice with its
                          .item() sync, the triangular solve and the per-chunk state loop. The "A" mixer
                          (only reachable with --schedule) uses AttentionConfig's defaults, as bench does.

What is not mirrored exactly:
  * Parameter values. k3lab draws every parameter from its own generator, with one stream per
    parameter name (models/init.cpp). Doing that in pure Python would take tens of seconds per arm,
    so this script draws from the same distributions with torch's generator (--seed). The losses
    therefore differ from what k3lab's model computes. bench train prints no loss, and this script
    prints the step-0 loss only as a check that it is near ln(vocab).
  * AdamW's bookkeeping. Python's AdamW (foreach off by default in 1.13, as LibTorch's loop) also
    calls param.mul_(1 - lr * 0) on the undecayed parameters and keeps each step count as a
    tensor. LibTorch skips the multiply and keeps an integer. Same update, a few more small ops.
  * Casts to the compute dtype (`.to(float32)` in rms_norm.cpp, kda_chunkwise.cpp and elsewhere)
    do nothing for this float32 model, so they are left out.
  * The chunk loop's batched products. k3lab splits each stack of 64 x 64 products across its threads
    (models/batched_matmul.cpp, the same values bit for bit); eager's torch.matmul multiplies them one
    after another. That is a k3lab optimisation, so this script keeps eager's own matmul.
  * Micro-batches side by side. On the CPU with two or more threads k3lab trains a step's micro-batches
    at once, one per thread (train/micro_batch_lanes.hpp); eager PyTorch's usual gradient accumulation
    runs them one after another, as this script does.
  * Devices. Debian's torch is CPU-only, so only the CPU is measured (bench's device option is auto).
Parameter counts match exactly. The script checks its module count against a copy of
models/param_count.cpp, which is the count k3lab prints.
"""

import argparse
import ctypes
import json
import math
import os
import statistics
import sys
import time
from dataclasses import dataclass


def run_with_passive_openmp():
    """Re-executes this script with OMP_WAIT_POLICY=PASSIVE when it is unset, as k3lab's main does.

    OpenMP reads the variable once, when libgomp loads (at `import torch`). So this must run before
    that import. Otherwise idle workers spin on the cores that OpenBLAS threads need.
    """
    if "OMP_WAIT_POLICY" in os.environ:
        return
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
    os.execv(sys.executable, [sys.executable] + sys.argv)


if __name__ == "__main__":
    run_with_passive_openmp()

import torch  # noqa: E402  (after the OpenMP restart on purpose)
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

ARMS = {"full-attention": "M", "all-kda": "K", "hybrid-3kda-1mla": "KKKM"}  # default_bench_arms()
TOKEN_SEED = 20240520  # bench.cpp's core::Rng seed for the token window
NORM_EPS = 1e-5  # ModelConfig::norm_eps
MLA_LATENT_EPS = 1e-6  # MlaOptions::latent_norm_eps
KDA_CONV_KERNEL = 4  # KdaConfig::conv_kernel
KDA_GATE_LOWER_BOUND = -5.0  # KdaConfig::gate_lower_bound (K3's bounded gate)
KDA_SUB_CHUNK = 16  # kda_chunkwise.cpp kSubChunk
ATTENTION_HEADS, ATTENTION_HEAD_DIM, ROPE_THETA = 4, 64, 10000.0  # AttentionConfig defaults ("A" only)
INIT_STDDEV = 0.02  # InitOptions::stddev


@dataclass
class Shape:
    """bench.cpp's ThroughputShape plus the derived fields of bench_model_config."""

    d_model: int
    n_heads: int
    head_dim: int
    mla_kv_latent_dim: int
    kda_chunk_size: int
    ffn_size: int
    vocab_size: int
    seq_len: int
    rows: int

    @property
    def mla_rope_dim(self):
        return max(1, self.head_dim // 2)  # qk_rope_head_dim = max(1, head_dim / 2)


# ---------------------------------------------------------------------------------------------
# k3lab's generator (core/rng.hpp), used for the token window only.

MASK64 = (1 << 64) - 1


def splitmix64(state):
    """Returns (new state, output), as core::splitmix64 does through its reference argument."""
    state = (state + 0x9E3779B97F4A7C15) & MASK64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return state, z ^ (z >> 31)


class K3Rng:
    """core::Rng: xoshiro256** seeded by splitmix64."""

    def __init__(self, seed):
        self.s = []
        for _ in range(4):
            seed, word = splitmix64(seed)
            self.s.append(word)

    @staticmethod
    def rotl(x, k):
        return ((x << k) | (x >> (64 - k))) & MASK64

    def next_u64(self):
        s = self.s
        result = (self.rotl((s[1] * 5) & MASK64, 7) * 9) & MASK64
        t = (s[1] << 17) & MASK64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = self.rotl(s[3], 45)
        return result

    def below(self, n):
        """Uniform integer in [0, n) by Lemire's method, as core::Rng::below."""
        m = self.next_u64() * n
        if (m & MASK64) < n:
            threshold = ((1 << 64) - n) % n
            while (m & MASK64) < threshold:
                m = self.next_u64() * n
        return m >> 64


def token_window(rows, seq_len, vocab):
    """bench.cpp's (B, T + 1) window of uniform token ids from core::Rng(20240520)."""
    rng = K3Rng(TOKEN_SEED)
    ids = [rng.below(vocab) for _ in range(rows * (seq_len + 1))]
    return torch.tensor(ids, dtype=torch.int64).view(rows, seq_len + 1)  # (B, T + 1)


# ---------------------------------------------------------------------------------------------
# Norms (rms_norm.cpp), short convolution (short_conv.cpp), feed-forward (feed_forward.cpp,
# activations.cpp).


def rms_normalize(x, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)  # (..., dim)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):  # (..., dim) -> (..., dim)
        return rms_normalize(x, self.eps) * self.weight


class GatedRMSNorm(nn.Module):
    """fla's FusedRMSNormGated with a sigmoid gate: RMSNorm(x) * weight * sigmoid(gate)."""

    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x, gate):  # (..., dim) x2 -> (..., dim)
        return rms_normalize(x, self.eps) * self.weight * torch.sigmoid(gate)


class ShortConv(nn.Module):
    """Causal depthwise conv (no bias) + SiLU as shifted multiply-adds, like short_conv.cpp;
    weight[c, kernel - 1] multiplies the current token."""

    def __init__(self, channels, kernel_size):
        super().__init__()
        self.channels, self.kernel_size = channels, kernel_size
        self.weight = nn.Parameter(torch.zeros(channels, kernel_size))  # (C, W)

    def forward(self, x):  # (B, T, C) -> (B, T, C)
        cache = torch.zeros(x.size(0), self.kernel_size - 1, self.channels)  # (B, W - 1, C)
        window = torch.cat([cache, x], 1)  # (B, W - 1 + T, C)
        T = x.size(1)
        y = window.narrow(1, 0, T) * self.weight.select(1, 0)  # (B, T, C)
        for i in range(1, self.kernel_size):
            y = torch.addcmul(y, window.narrow(1, i, T), self.weight.select(1, i))
        return F.silu(y)  # (B, T, C)


def linear(d_in, d_out):
    return nn.Linear(d_in, d_out, bias=False)


class FeedForward(nn.Module):
    """SwiGLU: down(silu(gate(x)) * up(x)), no biases."""

    def __init__(self, d_model, ffn_size):
        super().__init__()
        self.gate_proj = linear(d_model, ffn_size)
        self.up_proj = linear(d_model, ffn_size)
        self.down_proj = linear(ffn_size, d_model)

    def forward(self, x):  # (B, T, D) -> (B, T, D)
        hidden = F.silu(self.gate_proj(x)) * self.up_proj(x)  # (B, T, F)
        return self.down_proj(hidden)


# ---------------------------------------------------------------------------------------------
# Softmax attention (causal_attention.cpp, rope.cpp) and MLA (mla.cpp, plain form, NoPE).


def causal_softmax_attention(q, k, v, scale):
    """q (B, H, T, d), k (B, H, S, d), v (B, H, S, dv) -> (B, H, T, dv); queries are the last T keys."""
    T, S = q.size(2), k.size(2)
    scores = torch.matmul(q, k.transpose(-1, -2)) * scale  # (B, H, T, S)
    allowed = torch.arange(S).unsqueeze(0) <= (torch.arange(T) + (S - T)).unsqueeze(1)  # (T, S)
    scores = scores.masked_fill(allowed.logical_not(), -math.inf)
    return torch.matmul(torch.softmax(scores, -1), v)  # (B, H, T, dv)


def apply_rope(x, theta):
    """Half-split RoPE from position 0. x (B, H, T, d) -> (B, H, T, d)."""
    T, half = x.size(2), x.size(3) // 2
    inv_freq = torch.pow(theta, torch.arange(0, half, dtype=torch.float64) * (-2.0 / x.size(3)))  # (half)
    angles = torch.arange(0, T, dtype=torch.float64).unsqueeze(1) * inv_freq.unsqueeze(0)  # (T, half)
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    x1, x2 = x.narrow(-1, 0, half), x.narrow(-1, half, half)
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], -1)


class CausalSelfAttention(nn.Module):
    """The "A" mixer (only with --schedule; bench's arms never use it): MHA with RoPE."""

    def __init__(self, d_model, heads, head_dim, rope_theta):
        super().__init__()
        self.heads, self.head_dim, self.rope_theta = heads, head_dim, rope_theta
        self.q_proj = linear(d_model, heads * head_dim)
        self.k_proj = linear(d_model, heads * head_dim)
        self.v_proj = linear(d_model, heads * head_dim)
        self.o_proj = linear(heads * head_dim, d_model)

    def forward(self, x):  # (B, T, D) -> (B, T, D)
        B, T, H, d = x.size(0), x.size(1), self.heads, self.head_dim
        q, k, v = (proj(x).view(B, T, H, d).transpose(1, 2) for proj in (self.q_proj, self.k_proj, self.v_proj))
        q, k = apply_rope(q, self.rope_theta), apply_rope(k, self.rope_theta)  # (B, H, T, d)
        o = causal_softmax_attention(q, k, v, 1.0 / math.sqrt(d))  # (B, H, T, d)
        return self.o_proj(o.transpose(1, 2).reshape(B, T, H * d))


class Mla(nn.Module):
    """Multi-head latent attention: full-rank query, NoPE rope slice, sigmoid output gate."""

    def __init__(self, d_model, heads, kv_rank, nope, rope, v_dim):
        super().__init__()
        self.heads, self.kv_rank, self.nope, self.rope, self.v_dim = heads, kv_rank, nope, rope, v_dim
        self.q_proj = linear(d_model, heads * (nope + rope))
        self.kv_a_proj = linear(d_model, kv_rank + rope)
        self.kv_a_norm = RMSNorm(kv_rank, MLA_LATENT_EPS)
        self.kv_b_proj = linear(kv_rank, heads * (nope + v_dim))
        self.g_proj = linear(d_model, heads * v_dim)
        self.o_proj = linear(heads * v_dim, d_model)

    def forward(self, x):  # (B, T, D) -> (B, T, D)
        B, T, H = x.size(0), x.size(1), self.heads
        q = self.q_proj(x).view(B, T, H, self.nope + self.rope)  # (B, T, H, nope + rope)
        kv_a = self.kv_a_proj(x)  # (B, T, kv_rank + rope)
        latent = self.kv_a_norm(kv_a.narrow(-1, 0, self.kv_rank))  # (B, T, kv_rank)
        rope_key = kv_a.narrow(-1, self.kv_rank, self.rope)  # (B, T, rope), shared by the heads
        kv = self.kv_b_proj(latent).view(B, T, H, self.nope + self.v_dim)
        k = torch.cat([kv.narrow(-1, 0, self.nope), rope_key.unsqueeze(2).expand(B, T, H, self.rope)], -1)
        v = kv.narrow(-1, self.nope, self.v_dim)  # (B, T, H, v)
        q_full = torch.cat([q.narrow(-1, 0, self.nope), q.narrow(-1, self.nope, self.rope)], -1)
        scale = 1.0 / math.sqrt(self.nope + self.rope)
        o = causal_softmax_attention(q_full.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), scale)
        y = o.transpose(1, 2) * torch.sigmoid(self.g_proj(x).view(B, T, H, self.v_dim))  # (B, T, H, v)
        return self.o_proj(y.reshape(B, T, H * self.v_dim))


# ---------------------------------------------------------------------------------------------
# Chunkwise KDA (kda_chunkwise.cpp: WY / UT transform), in plain torch ops.


def split_sub_blocks(x, nsub, sub):
    return x.reshape(*x.shape[:-2], nsub, sub, x.size(-1))  # (..., C, K) -> (..., nsub, sub, K)


def middle_rows(G_blocks, sub):
    return G_blocks.narrow(-2, sub // 2, 1)  # (..., nsub, 1, K)


def choose_factorized(G, sub_chunk):
    """IntraChunkMode::Auto: factorised diagonal blocks when max |G - G_mid| <= 40 (float32)."""
    C = G.size(-2)
    sub = min(sub_chunk, C)
    Gb = split_sub_blocks(G.detach(), C // sub, sub)
    return (Gb - middle_rows(Gb, sub)).abs().max().item() <= 40.0


def diagonal_sub_blocks(xb, kb, Gb, sub, factorized, lower):
    """Decayed scores inside each sub-block: (..., nsub, sub, K) x3 -> (..., nsub, sub, sub)."""
    if factorized:
        mid = middle_rows(Gb, sub)
        diag = torch.matmul(xb * (Gb - mid).exp(), (kb * (mid - Gb).exp()).transpose(-1, -2))
    else:
        diff = Gb.unsqueeze(-2) - Gb.unsqueeze(-3)  # (..., nsub, sub_i, sub_j, K)
        decay = diff.masked_fill(lower.logical_not().unsqueeze(-1), -math.inf).exp()
        diag = (xb.unsqueeze(-2) * kb.unsqueeze(-3) * decay).sum(-1)
    return diag.masked_fill(lower.logical_not(), 0.0)


def intra_scores(x, k, G, sub_chunk, factorized):
    """out[i, j] = sum_d x_i[d] k_j[d] exp(G_i[d] - G_j[d]) for j <= i, else 0. (..., C, K) -> (..., C, C)."""
    C = x.size(-2)
    sub = min(sub_chunk, C)
    nsub = C // sub
    lower = torch.ones(sub, sub, dtype=torch.bool).tril()  # (sub, sub)
    xb, kb, Gb = (split_sub_blocks(t, nsub, sub) for t in (x, k, G))  # (..., nsub, sub, K)
    diag = diagonal_sub_blocks(xb, kb, Gb, sub, factorized, lower)  # (..., nsub, sub, sub)
    rows = []
    for a in range(nsub):
        parts = []
        if a > 0:  # earlier sub-blocks, against this sub-block's first row: exponents <= 0
            ref = G.narrow(-2, a * sub, 1)  # (..., 1, K)
            xr = x.narrow(-2, a * sub, sub) * (G.narrow(-2, a * sub, sub) - ref).exp()  # (..., sub, K)
            kc = k.narrow(-2, 0, a * sub) * (ref - G.narrow(-2, 0, a * sub)).exp()  # (..., a*sub, K)
            parts.append(torch.matmul(xr, kc.transpose(-1, -2)))  # (..., sub, a * sub)
        parts.append(diag.select(-3, a))  # (..., sub, sub)
        if a + 1 < nsub:
            parts.append(torch.zeros(*x.shape[:-2], sub, C - (a + 1) * sub))
        rows.append(torch.cat(parts, -1))  # (..., sub, C)
    return torch.cat(rows, -2)  # (..., C, C)


def to_chunks(x, pad, N, C):
    """(B, T, H, D) -> (B, H, N, C, D), padding T at the end with zeros."""
    B, _, H, D = x.shape
    y = x.permute(0, 2, 1, 3)  # (B, H, T, D)
    if pad > 0:
        y = F.pad(y, (0, 0, 0, pad))
    return y.reshape(B, H, N, C, D)


def kda_chunkwise(q, k, v, g, beta, C):
    """q, k, g (B, T, H, K); v (B, T, H, V); beta (B, T, H) -> o (B, T, H, V), zero initial state."""
    B, T, H, K = q.shape
    V = v.size(3)
    pad = (C - T % C) % C  # padding tokens: k = v = beta = 0, g = 0
    N = (T + pad) // C
    qc = to_chunks(q, pad, N, C) * (1.0 / math.sqrt(K))  # (B, H, N, C, K)
    kc = to_chunks(k, pad, N, C)  # (B, H, N, C, K)
    vc = to_chunks(v, pad, N, C)  # (B, H, N, C, V)
    G = to_chunks(g, pad, N, C).cumsum(-2)  # (B, H, N, C, K) chunk-local cumulative log decay
    bc = beta.permute(0, 2, 1)  # (B, H, T)
    if pad > 0:
        bc = F.pad(bc, (0, pad))
    bc = bc.reshape(B, H, N, C, 1)  # (B, H, N, C, 1)

    factorized = choose_factorized(G, KDA_SUB_CHUNK)
    Aqk = intra_scores(qc, kc, G, KDA_SUB_CHUNK, factorized)  # (B, H, N, C, C)
    strict = torch.ones(C, C, dtype=torch.bool).tril(-1)
    Akk = (intra_scores(kc, kc, G, KDA_SUB_CHUNK, factorized) * bc).masked_fill(strict.logical_not(), 0.0)

    eG = G.exp()
    rhs = torch.cat([kc * eG * bc, vc * bc], -1)  # (B, H, N, C, K + V)
    WU = torch.linalg.solve_triangular(Akk + torch.eye(C), rhs, upper=False, left=True, unitriangular=True)
    W, U = WU.narrow(-1, 0, K), WU.narrow(-1, K, V)  # (B, H, N, C, K), (B, H, N, C, V)

    G_last = G.narrow(-2, C - 1, 1)  # (B, H, N, 1, K)
    q_decayed = qc * eG  # (B, H, N, C, K)
    k_to_end = kc * (G_last - G).exp()  # (B, H, N, C, K)
    chunk_decay = G_last.exp().transpose(-1, -2)  # (B, H, N, K, 1)

    S = torch.zeros(B, H, K, V)  # (B, H, K, V)
    outputs = []
    U_n, W_n, q_n, Aqk_n, k_n, decay_n = (t.unbind(2) for t in (U, W, q_decayed, Aqk, k_to_end, chunk_decay))
    for n in range(N):
        v_new = U_n[n] - torch.matmul(W_n[n], S)  # (B, H, C, V)
        outputs.append(torch.matmul(q_n[n], S) + torch.matmul(Aqk_n[n], v_new))
        S = S * decay_n[n] + torch.matmul(k_n[n].transpose(-1, -2), v_new)
    out = torch.stack(outputs, 2).reshape(B, H, N * C, V).narrow(2, 0, T)  # (B, H, T, V)
    return out.permute(0, 2, 1, 3)  # (B, T, H, V)


def l2_normalize(x, eps=1e-6):
    return x * torch.rsqrt(x.pow(2).sum(-1, keepdim=True) + eps)  # (..., K)


def kda_gate_lower_bound(g_raw, a_log, dt_bias, lower_bound):
    """K3's gate: lower_bound * sigmoid(exp(A_log[h]) * (g_raw + dt_bias[h, :])). (B, T, H, K)."""
    H, K = g_raw.size(2), g_raw.size(3)
    x = g_raw + dt_bias.view(H, K)
    x = x * a_log.exp().view(H, 1)
    return lower_bound * torch.sigmoid(x)  # in (lower_bound, 0)


class KdaLayer(nn.Module):
    """kda_layer.cpp with K3's settings: bounded gate, gate rank = head_dim, full-rank output gate."""

    def __init__(self, d_model, heads, head_dim, chunk_size):
        super().__init__()
        if not (chunk_size > 0 and (chunk_size <= 16 or chunk_size % 16 == 0)):
            raise ValueError(f"kda chunk size must be <= 16 or a multiple of 16, got {chunk_size}")
        self.heads, self.head_dim, self.chunk_size = heads, head_dim, chunk_size
        HK, rank = heads * head_dim, head_dim
        self.q_proj, self.k_proj, self.v_proj = linear(d_model, HK), linear(d_model, HK), linear(d_model, HK)
        self.q_conv = ShortConv(HK, KDA_CONV_KERNEL)
        self.k_conv = ShortConv(HK, KDA_CONV_KERNEL)
        self.v_conv = ShortConv(HK, KDA_CONV_KERNEL)
        self.f_a_proj, self.f_b_proj = linear(d_model, rank), linear(rank, HK)
        self.b_proj = linear(d_model, heads)
        self.g_proj = linear(d_model, HK)
        self.o_norm = GatedRMSNorm(head_dim, NORM_EPS)
        self.o_proj = linear(HK, d_model)
        self.A_log = nn.Parameter(torch.zeros(heads))  # (H)
        self.dt_bias = nn.Parameter(torch.zeros(HK))  # (H * K)

    def forward(self, x):  # (B, T, D) -> (B, T, D)
        B, T, H, K = x.size(0), x.size(1), self.heads, self.head_dim
        q = l2_normalize(self.q_conv(self.q_proj(x)).view(B, T, H, K))  # (B, T, H, K)
        k = l2_normalize(self.k_conv(self.k_proj(x)).view(B, T, H, K))  # (B, T, H, K)
        v = self.v_conv(self.v_proj(x)).view(B, T, H, K)  # (B, T, H, V)
        g_raw = self.f_b_proj(self.f_a_proj(x)).view(B, T, H, K)
        g = kda_gate_lower_bound(g_raw, self.A_log, self.dt_bias, KDA_GATE_LOWER_BOUND)  # (B, T, H, K)
        beta = torch.sigmoid(self.b_proj(x))  # (B, T, H)
        o = kda_chunkwise(q, k, v, g, beta, self.chunk_size)  # (B, T, H, V)
        y = self.o_norm(o, self.g_proj(x).view(B, T, H, K))  # (B, T, H, V)
        return self.o_proj(y.reshape(B, T, H * K))


# ---------------------------------------------------------------------------------------------
# The decoder (decoder_lm.cpp, layer_schedule.cpp, residual.cpp's Standard path).


def make_mixer(letter, shape):
    if letter == "K":
        return "kda", KdaLayer(shape.d_model, shape.n_heads, shape.head_dim, shape.kda_chunk_size)
    if letter == "M":
        s = shape
        return "mla", Mla(s.d_model, s.n_heads, s.mla_kv_latent_dim, s.head_dim, s.mla_rope_dim, s.head_dim)
    if letter == "A":
        return "attention", CausalSelfAttention(shape.d_model, ATTENTION_HEADS, ATTENTION_HEAD_DIM, ROPE_THETA)
    raise ValueError(f"schedule letter {letter!r} is not K (KDA), M (MLA) or A (full attention)")


class DecoderBlock(nn.Module):
    def __init__(self, letter, shape):
        super().__init__()
        self.mixer_norm = RMSNorm(shape.d_model, NORM_EPS)
        self.mixer_name, mixer = make_mixer(letter, shape)
        self.add_module(self.mixer_name, mixer)  # named kda / mla / attention, as in k3lab
        self.ffn_norm = RMSNorm(shape.d_model, NORM_EPS)
        self.ffn = FeedForward(shape.d_model, shape.ffn_size)

    def forward(self, h):  # (B, T, D) -> (B, T, D), standard pre-norm residual
        h = h + getattr(self, self.mixer_name)(self.mixer_norm(h))
        return h + self.ffn(self.ffn_norm(h))


class DecoderLM(nn.Module):
    """Embedding, blocks, final RMSNorm, output head tied to the embedding."""

    def __init__(self, schedule, shape):
        super().__init__()
        self.vocab_size = shape.vocab_size
        self.embed = nn.Embedding(shape.vocab_size, shape.d_model)
        self.blocks = nn.ModuleList(DecoderBlock(letter, shape) for letter in schedule)
        self.final_norm = RMSNorm(shape.d_model, NORM_EPS)

    def forward(self, tokens):  # (B, T) int64 -> logits (B, T, V)
        lo, hi = tokens.min().item(), tokens.max().item()  # DecoderLM::run checks the id range
        if lo < 0 or hi >= self.vocab_size:
            raise ValueError(f"token ids must lie in [0, {self.vocab_size}), got [{lo}, {hi}]")
        h = self.embed(tokens)  # (B, T, D)
        for block in self.blocks:
            h = block(h)
        return F.linear(self.final_norm(h), self.embed.weight)  # (B, T, V)


def inverse_softplus_dt(shape, generator):
    """fla's dt_bias init: dt = exp(U(log 1e-3, log 1e-1)) clamped >= 1e-4, then softplus^-1(dt)."""
    u = torch.rand(shape, dtype=torch.float64, generator=generator)
    dt = (math.log(1e-3) + (math.log(1e-1) - math.log(1e-3)) * u).exp().clamp_min(1e-4)
    return dt + torch.log(-torch.expm1(-dt))


@torch.no_grad()
def initialize(model, num_layers, generator):
    """init.cpp's rules, drawn from torch's generator instead of k3lab's per-name streams."""
    out_std = INIT_STDDEV / math.sqrt(2.0 * num_layers)
    for name, module in model.named_modules():
        leaf = name.rsplit(".", 1)[-1]
        if isinstance(module, nn.Linear):
            std = out_std if leaf in ("o_proj", "down_proj") else INIT_STDDEV
            module.weight.normal_(0.0, std, generator=generator)
        elif isinstance(module, nn.Embedding):
            module.weight.normal_(0.0, INIT_STDDEV, generator=generator)
        elif isinstance(module, (RMSNorm, GatedRMSNorm)):
            module.weight.fill_(1.0)
        elif isinstance(module, ShortConv):
            bound = 1.0 / math.sqrt(module.kernel_size)
            module.weight.uniform_(-bound, bound, generator=generator)
        elif isinstance(module, KdaLayer):
            module.A_log.zero_()  # the bounded gate: A_log = 0
            module.dt_bias.copy_(inverse_softplus_dt(module.dt_bias.shape, generator))


# ---------------------------------------------------------------------------------------------
# Parameter count (param_count.cpp: the number k3lab's bench prints) and the optimizer.


def expected_parameters(schedule, s):
    """models::count_parameters(bench_model_config(shape)) for the Standard residual, tied head."""
    D, HK, K = s.d_model, s.n_heads * s.head_dim, s.head_dim
    kda = 3 * D * HK + 3 * HK * KDA_CONV_KERNEL + (D * K + K * HK + s.n_heads + HK) + D * s.n_heads
    kda += D * HK + K + HK * D  # output gate, gated norm, o_proj
    qk, r = s.head_dim + s.mla_rope_dim, s.mla_kv_latent_dim
    mla = D * s.n_heads * qk + D * (r + s.mla_rope_dim) + r + r * s.n_heads * (s.head_dim + s.head_dim)
    mla += 2 * D * s.n_heads * s.head_dim  # g_proj, o_proj
    attention = 4 * D * ATTENTION_HEADS * ATTENTION_HEAD_DIM
    per_mixer = {"K": kda, "M": mla, "A": attention}
    L = len(schedule)
    return s.vocab_size * D + (2 * L + 1) * D + sum(per_mixer[c] for c in schedule) + L * 3 * D * s.ffn_size


def make_adamw(model):
    """optimizer.cpp's make_adamw with the default OptimizerSpec (bench sets no lr schedule)."""
    decayed = [p for p in model.parameters() if p.requires_grad and p.dim() >= 2]
    plain = [p for p in model.parameters() if p.requires_grad and p.dim() < 2]
    groups = [{"params": decayed, "weight_decay": 0.1}, {"params": plain, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=6e-4, betas=(0.9, 0.95), eps=1e-8)


# ---------------------------------------------------------------------------------------------
# Threads, timing and the benchmark driver (bench.cpp's run_train_bench).


def set_blas_threads(threads):
    """OpenBLAS's own setter, as thread_pools.cpp does; returns its thread count or why not."""
    try:
        blas = ctypes.CDLL("libopenblas.so.0")
        blas.openblas_set_num_threads(threads)
        return blas.openblas_get_num_threads()
    except (OSError, AttributeError):
        return "not OpenBLAS"


def apply_allocator_policy():
    """allocator_policy.cpp: mallopt(M_ARENA_MAX, 1) unless the user set malloc variables."""
    names = ("MALLOC_ARENA_MAX", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")
    user = [n for n in names if n in os.environ]
    if "glibc.malloc." in os.environ.get("GLIBC_TUNABLES", ""):
        user.append("GLIBC_TUNABLES")
    if user:
        return f"the user's {user[0]} (arena_max not set)"
    m_arena_max = -8
    return "arena_max 1" if ctypes.CDLL(None).mallopt(m_arena_max, 1) == 1 else "mallopt refused"


def apply_thread_policy(requested):
    threads = requested if requested > 0 else len(os.sched_getaffinity(0))
    torch.set_num_threads(threads)
    torch.set_num_interop_threads(1)
    return {"threads": threads, "source": "--threads" if requested > 0 else "CPU affinity",
            "intra_op": torch.get_num_threads(), "inter_op": torch.get_num_interop_threads(),
            "blas": set_blas_threads(threads)}


def cpu_seconds():
    return time.clock_gettime(time.CLOCK_PROCESS_CPUTIME_ID)


def time_steps(step, steps):
    """Sorted per-step wall seconds, and process CPU seconds per wall second over the timed steps."""
    seconds = []
    cpu_start, wall_start = cpu_seconds(), time.perf_counter()
    for _ in range(steps):
        start = time.perf_counter()
        step()
        seconds.append(time.perf_counter() - start)
    wall = time.perf_counter() - wall_start
    return sorted(seconds), (cpu_seconds() - cpu_start) / wall


def arm_schedule(name, pattern, layers):
    if layers <= 0 or layers % len(pattern) != 0:
        raise SystemExit(f"--layers ({layers}) must be a positive multiple of arm {name}'s pattern "
                         f"length ({len(pattern)}, \"{pattern}\")")
    return pattern * (layers // len(pattern))


def run_arm(name, schedule, shape, inputs, targets, args):
    """Builds, warms up and times one arm; returns its result row."""
    generator = torch.Generator().manual_seed(args.seed)
    model = DecoderLM(schedule, shape)
    initialize(model, len(schedule), generator)
    params = sum(p.numel() for p in model.parameters())
    expected = expected_parameters(schedule, shape)
    if params != expected:
        raise SystemExit(f"{name}: the model has {params} parameters, param_count.cpp's formula {expected}")
    optimizer = make_adamw(model)
    losses = []

    def step():
        optimizer.zero_grad(set_to_none=False)  # LibTorch 1.13's zero_grad(): zero, keep the tensors
        step_loss = 0.0
        for rows, next_tokens in zip(inputs.split(shape.rows), targets.split(shape.rows)):  # (B, T) each
            logits = model(rows)  # (B, T, V)
            loss = F.cross_entropy(logits.reshape(-1, shape.vocab_size), next_tokens.reshape(-1)) / args.micro_batches
            loss.backward()
            step_loss += loss.detach()
        optimizer.step()
        if not losses:
            losses.append(step_loss)

    for _ in range(args.warmup):
        step()
    seconds, cores_busy = time_steps(step, args.steps)
    tokens = args.micro_batches * shape.rows * shape.seq_len
    median = statistics.median(seconds)
    return {"arm": name, "schedule": schedule, "params": params,
            "tokens_per_second_median": tokens / median,
            "tokens_per_second_min": tokens / seconds[-1], "tokens_per_second_max": tokens / seconds[0],
            "step_ms_median": 1000 * median, "step_ms_min": 1000 * seconds[0], "step_ms_max": 1000 * seconds[-1],
            "threads": torch.get_num_threads(), "cores_busy": cores_busy, "step0_loss": losses[0].item()}


def print_settings(policy, allocator, args, shape):
    env = {n: os.environ[n] for n in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                                       "OMP_WAIT_POLICY") if n in os.environ}
    print(f"train-step benchmark, PyTorch {torch.__version__} eager: device cpu, threads {policy['threads']}, "
          f"d_model {shape.d_model}, layers {args.layers}, heads {shape.n_heads}x{shape.head_dim}, "
          f"T {shape.seq_len}, {args.micro_batches} micro-batches of {shape.rows} rows per step (one after "
          f"another), {args.steps} timed steps after {args.warmup} warmup\n")
    print(f"threads: {policy['threads']} ({policy['source']}); torch intra-op {policy['intra_op']}, "
          f"inter-op {policy['inter_op']}; BLAS {policy['blas']}; env {env or 'none set'}; "
          f"allocator {allocator}\n")


def print_rows(rows, vocab):
    print("| arm | schedule | parameters | tokens/s (median step) | tokens/s [min, max] | "
          "step ms median [min, max] | cores busy | step-0 loss |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['arm']} | {r['schedule']} | {r['params']} | {r['tokens_per_second_median']:.0f} | "
              f"[{r['tokens_per_second_min']:.0f}, {r['tokens_per_second_max']:.0f}] | "
              f"{r['step_ms_median']:.2f} [{r['step_ms_min']:.2f}, {r['step_ms_max']:.2f}] | "
              f"{r['cores_busy']:.2f} | {r['step0_loss']:.4f} |")
    worst = max(abs(r["step0_loss"] - math.log(vocab)) for r in rows)
    print(f"\nstep-0 loss sanity: ln({vocab}) = {math.log(vocab):.4f}, largest difference {worst:.3f} "
          f"({'ok' if worst < 0.5 else 'TOO FAR'}: k3lab's trainer test allows 0.5; the tied head reads the "
          "input token's own embedding back, so the loss starts a little above ln V)\n")
    for r in rows:
        print(json.dumps({k: r[k] for k in ("arm", "schedule", "params", "tokens_per_second_median",
                                            "tokens_per_second_min", "tokens_per_second_max",
                                            "threads", "cores_busy")}))


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    d = " (default: %(default)s)"
    p.add_argument("--threads", type=int, default=0, help="torch intra-op and BLAS threads; 0: CPU affinity" + d)
    p.add_argument("--steps", type=int, default=5, help="timed steps" + d)
    p.add_argument("--warmup", type=int, default=2, help="untimed steps before them" + d)
    p.add_argument("--d_model", type=int, default=256, help="hidden size" + d)
    p.add_argument("--layers", "--n_layers", dest="layers", type=int, default=None,
                   help="a multiple of every arm's pattern length (default: 4, or the length of --schedule)")
    p.add_argument("--heads", "--n_heads", dest="heads", type=int, default=4, help="KDA and MLA heads" + d)
    p.add_argument("--head_dim", type=int, default=64, help="KDA K = V, MLA nope and v head size" + d)
    p.add_argument("--seq_len", "--sequence_length", dest="seq_len", type=int, default=512, help="T" + d)
    p.add_argument("--rows", "--batch_rows", dest="rows", type=int, default=2, help="micro-batch rows" + d)
    p.add_argument("--micro_batches", type=int, default=2, help="micro-batches per step" + d)
    p.add_argument("--mla_kv_latent_dim", type=int, default=128, help="MLA kv_lora_rank" + d)
    p.add_argument("--kda_chunk_size", type=int, default=64, help="chunkwise KDA chunk" + d)
    p.add_argument("--ffn_size", type=int, default=None, help="SwiGLU width (default: 4 x d_model)")
    p.add_argument("--vocab_size", type=int, default=256, help="byte vocabulary" + d)
    p.add_argument("--arms", nargs="+", choices=list(ARMS), default=None, metavar="ARM",
                   help=f"arms to run, of {', '.join(ARMS)} (default: all)")
    p.add_argument("--schedule", default=None, help="instead of --arms: one arm with exactly this schedule, "
                   "e.g. KKKMKKKM (K = KDA, M = MLA, A = full attention)")
    p.add_argument("--seed", type=int, default=1,
                   help="torch generator seed for the initial parameters (bench has no seed option and "
                   "draws them from k3lab's generator with init seed 1)" + d)
    args = p.parse_args()
    if args.schedule is not None and args.arms is not None:
        p.error("--arms and --schedule exclude each other")
    if args.steps <= 0 or args.rows <= 0 or args.micro_batches <= 0 or args.seq_len < 2:
        p.error("--steps, --rows and --micro_batches must be positive and --seq_len at least 2")
    if args.layers is None:
        args.layers = len(args.schedule) if args.schedule else 4
    return args


def main():
    args = parse_args()
    policy = apply_thread_policy(args.threads)
    allocator = apply_allocator_policy()
    shape = Shape(args.d_model, args.heads, args.head_dim, args.mla_kv_latent_dim, args.kda_chunk_size,
                  args.ffn_size or 4 * args.d_model, args.vocab_size, args.seq_len, args.rows)
    arms = {args.schedule: args.schedule} if args.schedule else {a: ARMS[a] for a in args.arms or ARMS}
    schedules = {name: arm_schedule(name, pattern, args.layers) for name, pattern in arms.items()}
    window = token_window(args.micro_batches * shape.rows, shape.seq_len, shape.vocab_size)  # (n B, T + 1)
    inputs, targets = window[:, : shape.seq_len], window[:, 1:]  # (n B, T) each
    print_settings(policy, allocator, args, shape)
    rows = [run_arm(name, schedule, shape, inputs, targets, args) for name, schedule in schedules.items()]
    print_rows(rows, shape.vocab_size)


if __name__ == "__main__":
    main()
