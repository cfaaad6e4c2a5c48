#!/usr/bin/env bash
# Coverage-guided fuzzing of k3lab's parsers with clang's libFuzzer, AddressSanitizer and UBSan
# (docs/reliability.md, "Fuzzing"). CI runs the same targets briefly without libFuzzer (ctest -R Fuzz).
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#     SECONDS_PER_TARGET  default 300
#     TARGET              protocol ledger sse chat_stream chat_body trace_csv (default: all)
#   K3LAB_FUZZ_BUILD_DIR  build folder (default: build-fuzz)
# A finding is written to <build>/fuzz-artifacts/<target>-crash-*; the script then exits 1.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-300}"
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]" >&2; exit 2; }
shift || true
targets=("$@")
((${#targets[@]})) || targets=(protocol ledger sse chat_stream chat_body trace_csv)
build="${K3LAB_FUZZ_BUILD_DIR:-build-fuzz}"
command -v clang++ >/dev/null || { echo "fuzz: clang++ not found: sudo apt-get install clang libclang-rt-14-dev" >&2; exit 1; }

if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DK3LAB_FUZZ=ON -DK3LAB_BUILD_TESTS=OFF \
    -DK3LAB_CUDA=OFF -DK3LAB_UNITY_BUILD=OFF -DK3LAB_SANITIZE=address,undefined
fi
cmake --build "$build" -j "$(nproc)" --target "${targets[@]/#/k3lab_fuzz_}"

status=0
mkdir -p "$build/fuzz-artifacts"
for t in "${targets[@]}"; do
  work="$build/fuzz-corpus/$t"  # grows with the inputs libFuzzer finds interesting; the seeds stay as committed
  mkdir -p "$work"
  echo "fuzz: $t for ${seconds}s"
  if ! "$build/fuzz/k3lab_fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
       -artifact_prefix="$build/fuzz-artifacts/$t-" "$work" "fuzz/corpus/$t" 2> "$build/fuzz-$t.log"; then
    echo "fuzz: $t FOUND A PROBLEM: see $build/fuzz-$t.log and $build/fuzz-artifacts/" >&2
    status=1
  fi
  grep -E "^#[0-9]+.*DONE|Done [0-9]+ runs" "$build/fuzz-$t.log" | tail -1 || true
done
exit "$status"
