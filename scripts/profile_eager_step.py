#!/usr/bin/python3
"""Where a training step of the bench-train model spends its time, operator by operator (issue 19).

Builds one arm of scripts/eager_baseline.py's mirror of `k3lab bench train` (the same operators k3lab
calls, in the same LibTorch 1.13), runs warm-up steps, then profiles a few steps with torch.profiler
and prints the operators by self CPU time. Run it at --threads 1 and 2 and compare the rows: an
operator whose time does not halve is what keeps the second core idle.

    OMP_WAIT_POLICY=PASSIVE /usr/bin/python3 scripts/profile_eager_step.py --threads 1 --schedule KKKK
    OMP_WAIT_POLICY=PASSIVE /usr/bin/python3 scripts/profile_eager_step.py --threads 2 --schedule KKKK

(k3lab itself runs with OMP_WAIT_POLICY=PASSIVE; set it here so the two match.)
"""

import argparse
import os
import sys

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import eager_baseline as eb  # noqa: E402  (the mirror lives beside this script)


def parse_args():
    d = " (default: %(default)s)"
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", type=int, default=1, help="torch intra-op and OpenBLAS threads" + d)
    p.add_argument("--schedule", default="KKKK", help="one letter per layer: K (KDA), M (MLA), A (attention)" + d)
    p.add_argument("--steps", type=int, default=3, help="profiled steps" + d)
    p.add_argument("--warmup", type=int, default=2, help="steps before them" + d)
    p.add_argument("--rows", type=int, default=20, help="operator rows printed" + d)
    return p.parse_args()


def main():
    args = parse_args()
    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(1)
    eb.set_blas_threads(args.threads)
    # bench train's default shape (eager_baseline.py's defaults).
    shape = eb.Shape(d_model=256, n_heads=4, head_dim=64, mla_kv_latent_dim=128, kda_chunk_size=64,
                     ffn_size=1024, vocab_size=256, seq_len=512, rows=4)
    model = eb.DecoderLM(args.schedule, shape)
    eb.initialize(model, len(args.schedule), torch.Generator().manual_seed(1))
    optimizer = eb.make_adamw(model)
    tokens = torch.randint(shape.vocab_size, (shape.rows, shape.seq_len + 1))  # (B, T + 1)

    def step():
        optimizer.zero_grad(set_to_none=False)
        logits = model(tokens[:, :-1])  # (B, T, V)
        F.cross_entropy(logits.reshape(-1, shape.vocab_size), tokens[:, 1:].reshape(-1)).backward()
        optimizer.step()

    for _ in range(args.warmup):
        step()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(args.steps):
            step()
    print(f"threads {args.threads}, schedule {args.schedule}, {args.steps} steps")
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=args.rows))


if __name__ == "__main__":
    main()
