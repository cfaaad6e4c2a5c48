#!/usr/bin/env bash
# Wall time of what users run, for comparing two builds of k3lab (docs/benchmarks.md, "Build and CI
# time", session 17: k3lab's code at -O1 against -O2). Each line is one command, timed with /usr/bin/time:
#   smoke-all      run --all --profile smoke (every experiment, the embedded mock, CPU training)
#   report-smoke   report over that run
#   probe-long     context-probe on the embedded mock at 1,048,576 tokens, 30 units
#   probe-many     context-probe at 4,096 tokens, eight fixture seeds, 8 repetitions (960 units)
#   report-many    report over that run, three times
#
#   scripts/bench-runtime.sh                     # build/k3lab
#   scripts/bench-runtime.sh --binary /x/k3lab   # another build (e.g. the one before a change)
# Run the two builds one after the other on a quiet machine; differences under about 10% are this
# kind of VM's spread.
set -euo pipefail

cd "$(dirname "$0")/.."
source scripts/bench-binary.sh
binary=build/k3lab
while [[ $# -gt 0 ]]; do
  case "$1" in
    --binary) binary=$2; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
binary=$(bench_binary "$binary")
work=$(mktemp -d -t k3lab-bench-runtime-XXXXXX)
trap 'rm -rf "$work"' EXIT
# The embedded mock, whatever the caller's shell points at; OpenMP as run's restart would set it.
unset K3LAB_BASE_URL MOONSHOT_API_KEY
export OMP_WAIT_POLICY=PASSIVE

# timed <name> <command...>: runs the command (its output to $work/<name>.log) and prints its wall and
# user time. A command that fails prints its log's tail and stops the benchmark, except a context-probe
# run that ends with the window rule's exit 4 (the embedded mock's injected failures in 960 small units).
timed() {
  local name=$1 status=0
  shift
  /usr/bin/time -o "$work/$name.time" -f "%e %U" "$@" > "$work/$name.log" 2>&1 || status=$?
  if [[ $status -ne 0 && ! ($name == probe-many && $status -eq 4) ]]; then
    tail -5 "$work/$name.log" >&2
    echo "$name: exit $status" >&2
    exit 1
  fi
  read -r wall user < <(tail -1 "$work/$name.time")
  printf '%-13s wall %6.2f s  user %6.2f s\n' "$name" "$wall" "$user"
}

probe=(run context-probe --profile smoke --unfrozen --fresh)
echo "k3lab run-time benchmark: $binary on $(nproc) cores, $(date -u +%FT%TZ)"
timed smoke-all "$binary" run --all --profile smoke --out "$work/smoke" --fresh
timed report-smoke "$binary" report --runs "$work/smoke" --out "$work/smoke-report"
timed probe-long "$binary" "${probe[@]}" --set 'lengths=[1048576]' --set 'fixture_seeds=[1101]' \
  --set repetitions=2 --out "$work/long"
timed probe-many "$binary" "${probe[@]}" --set 'lengths=[4096]' \
  --set 'fixture_seeds=[1101,1102,1103,1104,1105,1106,1107,1108]' --set repetitions=8 --out "$work/many"
for i in 1 2 3; do
  timed "report-many" "$binary" report --runs "$work/many" --out "$work/many-report-$i"
done
