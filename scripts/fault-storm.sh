#!/usr/bin/env bash
# The long SIGTERM-then-SIGKILL storm (docs/reliability.md, "Fault storms"): the CI test
# SignalStorm.TermThenKillAtRandomDelaysThenResumeEqualsAnUninterruptedRun with more tries. Each round
# storms one run dir of the tiny per-head-muon with TRIES tries (SIGTERM 0-0.15 s after k3lab installs its
# stop handler, SIGKILL 0-0.3 s later, delays from the round's seed), then resumes it uninterrupted and
# compares the ledger with an uninterrupted run apart from t, seq, timing, worker.
#   scripts/fault-storm.sh [TRIES_PER_ROUND] [ROUNDS] [SEED]
#     TRIES_PER_ROUND  default 40 (about one unit per try: more than one run's worth)
#     ROUNDS           default 10; round r uses seed SEED + r
#     SEED             default 1202 (the CI test's)
#   K3LAB_BUILD_DIR    build folder with k3lab and tests/faults (default: build)
# Exits non-zero when any try ends other than 0, 130 or SIGKILL, or a resumed ledger differs.
set -euo pipefail
cd "$(dirname "$0")/.."

usage="usage: scripts/fault-storm.sh [TRIES_PER_ROUND] [ROUNDS] [SEED]"
tries="${1:-40}"
rounds="${2:-10}"
seed="${3:-1202}"
for n in "$tries" "$rounds" "$seed"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "$usage (positive integers)" >&2; exit 2; }
done
build="${K3LAB_BUILD_DIR:-build}"
cmake --build "$build" --target k3lab k3lab_fault_tests

K3LAB_FAULT_STORM_TRIES="$tries" K3LAB_FAULT_STORM_ROUNDS="$rounds" K3LAB_FAULT_STORM_SEED="$seed" \
  "$build/tests/faults/k3lab_fault_tests" --gtest_filter='SignalStorm.*'
