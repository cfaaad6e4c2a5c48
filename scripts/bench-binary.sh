# Sourced by the benchmark scripts (bench-memory.sh, bench-runtime.sh): bench_binary <path> prints the
# absolute path of the k3lab binary to measure, or says what is missing (the binary, /usr/bin/time) and
# fails.
bench_binary() {
  if [[ ! -x "$1" ]]; then
    echo "no k3lab binary at $1: build it (cmake --build build --target k3lab) or pass --binary" >&2
    return 2
  fi
  if [[ ! -x /usr/bin/time ]]; then
    echo "/usr/bin/time is missing: apt-get install time" >&2
    return 2
  fi
  realpath "$1"
}
