#!/usr/bin/env bash
# Shows that a build behaves like the one before a change: for each experiment, runs the smoke
# profile with a k3lab binary and compares the deterministic part of its ledger (every field but t,
# seq, timing, worker and hardware) with the ledger recorded before (fixtures/reports/<id>/run). It runs the
# smoke suite's per-experiment cases (tests/smoke/experiment_smoke_test.cpp), which also check the
# exit code, one terminal record per planned unit, and that the report renders the page.
#
#   scripts/compare-smoke-ledgers.sh                         # every experiment, build/k3lab
#   scripts/compare-smoke-ledgers.sh attn-res memory-pool    # only these
#   scripts/compare-smoke-ledgers.sh --binary /other/build/k3lab
#
# Environment: BUILD_DIR (default build; it must hold tests/smoke/k3lab_smoke_tests).
# Exit status: 0 when every ledger matches; otherwise the first difference of each is printed.
set -euo pipefail

cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
binary="$BUILD_DIR/k3lab"
ids=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --binary) binary=$2; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    -*) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
    *) ids+=("$1"); shift ;;
  esac
done

tests="$BUILD_DIR/tests/smoke/k3lab_smoke_tests"
if [[ ! -x "$tests" || ! -x "$binary" ]]; then
  echo "build first: cmake --build $BUILD_DIR --target k3lab k3lab_smoke_tests (missing $tests or $binary)" >&2
  exit 2
fi

filter=""
if [[ ${#ids[@]} -eq 0 ]]; then
  filter="Experiments/ExperimentSmoke.*"
else
  for id in "${ids[@]}"; do
    case_filter="Experiments/ExperimentSmoke.*/${id//-/_}"
    if ! "$tests" --gtest_list_tests --gtest_filter="$case_filter" | grep -q "/${id//-/_}\b"; then
      echo "no smoke case for \"$id\"; the experiment ids are in tests/smoke/smoke_support.cpp" >&2
      exit 2
    fi
    filter+="${filter:+:}$case_filter"
  done
fi
K3LAB_BINARY=$(realpath "$binary") exec "$tests" --gtest_filter="$filter"
