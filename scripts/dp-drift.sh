#!/usr/bin/env bash
# Measures how far a data-parallel unit drifts from the one-process run of the same global batch, as a
# function of steps: one hybrid-attention smoke unit trained for --steps optimizer steps by one process
# and by two Gloo ranks on this machine (torchrun-style variables), then the largest difference of the
# training loss within each range of steps and of the validation loss at each evaluation. The update is
# the same mathematically; only the order of float additions differs (docs/slurm.md, "What stays the
# protocol's"), and the optimizer carries each rounding difference into later steps.
#
#   scripts/dp-drift.sh                      # 512 steps of arm all-kda, build/k3lab
#   scripts/dp-drift.sh --steps 128 --arm full-attention --binary /other/build/k3lab
#
# Needs python3 for the comparison. Prints a Markdown table; docs/slurm.md records one.
set -euo pipefail
cd "$(dirname "$0")/.."

binary=build/k3lab
steps=512
arm=all-kda
while [[ $# -gt 0 ]]; do
  case "$1" in
    --binary) binary=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --arm) arm=$2; shift 2 ;;
    -h | --help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -x "$binary" ]] || { echo "no $binary: build it first (scripts/setup.sh)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 is needed for the comparison: apt-get install python3" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
batch_tokens=128  # the smoke profile's: two rows of 64 tokens per step, one per rank
eval_every=$(( steps >= 8 ? steps / 8 : 1 ))
common=(run hybrid-attention --profile smoke --unfrozen --unit "arm=$arm/seed=3101" --threads 1 --device cpu
  --set "token_budget=$((steps * batch_tokens))" --set "eval_interval_tokens=$((eval_every * batch_tokens))"
  --set "downstream.at_tokens=[$((steps * batch_tokens))]")

"$binary" "${common[@]}" --out "$work/one" >"$work/one.log" 2>&1 || { cat "$work/one.log" >&2; exit 1; }
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
pids=()
for rank in 0 1; do
  WORLD_SIZE=2 RANK=$rank LOCAL_RANK=$rank MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
    "$binary" "${common[@]}" --out "$work/two" >"$work/rank-$rank.log" 2>&1 &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || { cat "$work"/rank-*.log >&2; exit 1; }; done

python3 - "$work/one" "$work/two" "$steps" <<'EOF'
import glob, json, sys

def result(root):
    for path in glob.glob(root + "/hybrid-attention/*/ledger*.jsonl"):
        for line in open(path):
            record = json.loads(line)
            if record.get("kind") == "result":
                return record
    sys.exit("no result record under " + root)

one, two, steps = result(sys.argv[1]), result(sys.argv[2]), int(sys.argv[3])
world = two["timing"]["training"]["world_size"]
a, b = one["data"]["training"]["losses"], two["data"]["training"]["losses"]
print(f"| steps | max abs difference of the training loss ({world} ranks vs 1 process) |")
print("|---|---|")
low = 1
for high in [s for s in (1, 4, 16, 64, 128, 256, 512, 1024, 2048) if s <= steps] + ([steps] if steps not in (1, 4, 16, 64, 128, 256, 512, 1024, 2048) else []):
    if high < low:
        continue
    worst = max(abs(x - y) for x, y in zip(a[low - 1:high], b[low - 1:high]))
    print(f"| {low}-{high} | {worst:.3g} |")
    low = high + 1
print()
print("| tokens | validation loss, 1 process | difference |")
print("|---|---|---|")
for e1, e2 in zip(one["data"]["training"]["evaluations"], two["data"]["training"]["evaluations"]):
    print(f"| {e1['tokens']:,} | {e1['validation_loss']:.5f} | {abs(e1['validation_loss'] - e2['validation_loss']):.3g} |")
EOF
