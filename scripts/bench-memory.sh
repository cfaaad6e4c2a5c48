#!/usr/bin/env bash
# The memory goals of issue 19, measured with /usr/bin/time -v (peak resident set size of the process):
#   (a) a long run's memory does not grow with its length: context-probe on the embedded mock at
#       1,048,576 tokens (one fixture seed, five families, prime + cold + warm per repetition), peak RSS
#       after 30 units (repetitions=2) and after 300 (repetitions=20); goal: within 10%. The embedded mock
#       keeps a prompt cache that grows with the prompts it has seen (bounded, about 80 MB: src/api/
#       prefix_cache.hpp), so the same two runs are measured against a separate `k3lab mock-server`
#       process too: the runner's own memory.
#   (b) `k3lab report` keeps at most a few bytes of RAM per ledger byte: a context-probe run with many
#       small units (4,096 tokens, eight fixture seeds, REPORT_REPETITIONS repetitions: 120 units each)
#       is reported, and so is the 30-unit run of (a); bytes per ledger byte = the difference of their
#       peak RSS over the difference of their ledger sizes (the binary's own pages cancel); goal <= 4.
#
#   scripts/bench-memory.sh                      # build/k3lab, both parts
#   scripts/bench-memory.sh --binary /x/k3lab    # another build (e.g. the one before a change)
#   scripts/bench-memory.sh --only run|report
#
# Environment: REPORT_REPETITIONS (default 100: 12,000 units, a ledger of about 38 MB; the run takes minutes),
# REPORT_RUNS (a runs root that already holds such a context-probe run: (b) reports it instead of making
# one), WORK_DIR (default a fresh mktemp -d, removed at the end unless KEEP=1). Prints one line per
# measurement and the ratios.
set -euo pipefail

cd "$(dirname "$0")/.."
source scripts/bench-binary.sh
binary=build/k3lab
only=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --binary) binary=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
binary=$(bench_binary "$binary")
work=${WORK_DIR:-$(mktemp -d -t k3lab-bench-memory-XXXXXX)}
mkdir -p "$work"
[[ "${KEEP:-0}" == 1 ]] || trap 'rm -rf "$work"' EXIT
# The embedded mock, whatever the caller's shell points at.
unset K3LAB_BASE_URL MOONSHOT_API_KEY

# peak_kb <log>: the peak RSS (KiB) that /usr/bin/time -v wrote to <log>.
peak_kb() { awk -F': ' '/Maximum resident set size/ {print $2}' "$1"; }
wall() { awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$1"; }

# probe_run <name> <lengths> <fixture seeds> <repetitions> [run options...]: a context-probe run into $work/<name>.
probe_run() {
  local name=$1 lengths=$2 seeds=$3 reps=$4
  shift 4
  /usr/bin/time -v "$binary" run context-probe --profile smoke --unfrozen --set "lengths=$lengths" \
    --set "fixture_seeds=$seeds" --set "repetitions=$reps" --out "$work/$name" --fresh "$@" \
    > "$work/$name.out" 2> "$work/$name.time" || { cat "$work/$name.out" "$work/$name.time" >&2; exit 1; }
  local units
  units=$(grep -c '"kind":"result"\|"kind":"invalid"\|"kind":"failure"' "$work/$name"/context-probe/*/ledger*.jsonl | \
    awk -F: '{s += $NF} END {print s}')
  echo "run    $name: $units units, peak RSS $(( $(peak_kb "$work/$name.time") / 1024 )) MiB, wall $(wall "$work/$name.time")"
}

# report_run <name>: `k3lab report` over $work/<name>; prints its peak RSS and the ledger's bytes.
report_run() {
  local name=$1 bytes
  bytes=$(cat "$work/$name"/context-probe/*/ledger*.jsonl | wc -c)
  /usr/bin/time -v "$binary" report --runs "$work/$name" --out "$work/$name-report" \
    > "$work/$name-report.out" 2> "$work/$name-report.time" || { cat "$work/$name-report.time" >&2; exit 1; }
  echo "report $name: ledger $bytes bytes, peak RSS $(( $(peak_kb "$work/$name-report.time") / 1024 )) MiB," \
    "wall $(wall "$work/$name-report.time")"
  echo "$bytes" > "$work/$name.bytes"
}

echo "k3lab memory benchmark: $binary on $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(date -u +%FT%TZ)"
probe_run long-30 '[1048576]' '[1101]' 2
if [[ "$only" != report ]]; then
  probe_run long-300 '[1048576]' '[1101]' 20
  awk -v a="$(peak_kb "$work/long-30.time")" -v b="$(peak_kb "$work/long-300.time")" \
    'BEGIN {printf "(a) peak RSS after 300 units / after 30: %.3f (goal: within 10%%)\n", b / a}'
  "$binary" mock-server --port 0 > "$work/mock.log" 2>&1 &
  mock_pid=$!
  for _ in $(seq 100); do grep -q 'serving http' "$work/mock.log" && break; sleep 0.1; done
  base_url=$(grep -o 'http://[0-9.:]*/v1' "$work/mock.log" | head -1)
  probe_run separate-mock-30 '[1048576]' '[1101]' 2 --base-url "$base_url" --no-preflight
  probe_run separate-mock-300 '[1048576]' '[1101]' 20 --base-url "$base_url" --no-preflight
  kill "$mock_pid"
  awk -v a="$(peak_kb "$work/separate-mock-30.time")" -v b="$(peak_kb "$work/separate-mock-300.time")" \
    'BEGIN {printf "(a) with a separate mock-server process, the runner alone: 300 units / 30: %.3f\n", b / a}'
fi
if [[ "$only" != run ]]; then
  if [[ -n "${REPORT_RUNS:-}" ]]; then
    ln -sfn "$(realpath "$REPORT_RUNS")" "$work/many-small"
  else
    probe_run many-small '[4096]' '[1101,1102,1103,1104,1105,1106,1107,1108]' "${REPORT_REPETITIONS:-100}"
  fi
  report_run long-30
  report_run many-small
  awk -v small_kb="$(peak_kb "$work/long-30-report.time")" -v big_kb="$(peak_kb "$work/many-small-report.time")" \
    -v small="$(cat "$work/long-30.bytes")" -v big="$(cat "$work/many-small.bytes")" \
    'BEGIN {printf "(b) report: %.2f bytes of RAM per ledger byte (peak RSS difference / ledger difference; " \
                   "goal <= 4); whole peak RSS / ledger bytes: %.2f\n", (big_kb - small_kb) * 1024 / (big - small),
                   big_kb * 1024 / big}'
fi
