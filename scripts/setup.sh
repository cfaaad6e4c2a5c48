#!/usr/bin/env bash
# Installs k3lab's Debian dependencies (idempotent) and builds build/k3lab.
# Safe to run again: it skips apt when every package is present and ninja rebuilds only what changed.
#   scripts/setup.sh           what the main job needs: build/k3lab
#   scripts/setup.sh --tests   also the test binaries (for ctest), the local Slurm the cluster tests start and
#                              the pinned openai Node SDK of tests/sdk (npm ci)
#   K3LAB_BUILD_DIR   build folder (default: build)
#   K3LAB_BUILD_TYPE  CMake build type (default: Release)
#   K3LAB_CMAKE_ARGS  extra CMake arguments (e.g. -DK3LAB_CUDA=OFF)
set -euo pipefail
cd "$(dirname "$0")/.."

with_tests=0
case "${1:-}" in
  "") ;;
  --tests) with_tests=1 ;;
  *) echo "usage: scripts/setup.sh [--tests]" >&2; exit 2 ;;
esac

packages=(
  build-essential cmake ninja-build pkg-config git
  libcli11-dev nlohmann-json3-dev libspdlog-dev libcurl4-openssl-dev libcpp-httplib-dev libpcre2-dev
  libtorch-dev libopenblas0-pthread
  # c10d's ProcessGroupGloo.hpp includes gloo headers (data-parallel training on CPU, docs/slurm.md).
  libgloo-dev
  libgtest-dev libgmock-dev libbenchmark-dev
)
# The Slurm cluster tests start a one-node cluster from these (scripts/slurm-local.sh, docs/slurm.md);
# the browser test of the HTML report runs headless chromium (tests/report_browser). They skip without
# them, and the main job never needs them.
test_packages=(slurm-wlm munge chromium)
# The official openai SDK test (tests/sdk) needs node and npm; Debian's packages only when the machine has
# no node of its own, since they conflict with other Node.js builds (docs/dependencies.md).
if ! command -v node >/dev/null; then
  test_packages+=(nodejs npm)
elif ! command -v npm >/dev/null; then
  test_packages+=(npm)
fi
if ((with_tests)); then packages+=("${test_packages[@]}"); fi
# Data: the training corpus is built from a Debian package's text (docs/data.md); context-probe's
# repository family reads a pinned Debian package's Python files (docs/context-probe.md).
packages+=($(cat scripts/data-packages.txt 2>/dev/null || true))

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
  # Debian enables slurmctld, slurmd and munge as boot services; the tests start and stop their own.
  if [ -d /run/systemd/system ] && command -v systemctl >/dev/null; then
    $SUDO systemctl disable --now slurmctld slurmd munge >/dev/null 2>&1 || true
  fi
else
  echo "setup: all Debian packages present"
fi

# Test tooling only: the openai SDK at the version pinned in tests/sdk/package-lock.json, installed again
# only when the lock changed. Without the npm registry the SDK test skips and says so; nothing else needs it.
if ((with_tests)); then
  if cmp -s tests/sdk/package-lock.json tests/sdk/node_modules/.k3lab-installed-lock; then
    echo "setup: the pinned openai SDK is installed (tests/sdk)"
  elif npm ci --prefix tests/sdk --no-audit --no-fund; then
    cp tests/sdk/package-lock.json tests/sdk/node_modules/.k3lab-installed-lock
  else
    echo "setup: warning: npm ci --prefix tests/sdk failed (is the npm registry reachable?); the openai SDK test" \
         "(sdk.OpenAINodeStrictClient) will be skipped until it succeeds" >&2
  fi
fi

build_dir="${K3LAB_BUILD_DIR:-build}"
# Configure on first use, and again whenever the build type or K3LAB_CMAKE_ARGS differ from the ones the
# folder was configured with (remembered in $build_dir/k3lab-configure-args), so a changed setting is
# never silently ignored by an existing build folder.
configure_args="-DCMAKE_BUILD_TYPE=${K3LAB_BUILD_TYPE:-Release} ${K3LAB_CMAKE_ARGS:-}"
if [ ! -f "$build_dir/CMakeCache.txt" ] || [ "$(cat "$build_dir/k3lab-configure-args" 2>/dev/null)" != "$configure_args" ]; then
  # shellcheck disable=SC2086
  cmake -S . -B "$build_dir" -G Ninja $configure_args
  printf '%s' "$configure_args" > "$build_dir/k3lab-configure-args"
fi
if ((with_tests)); then
  cmake --build "$build_dir" -j "$(nproc)"
  echo "setup: built $build_dir/k3lab and the tests"
else
  cmake --build "$build_dir" -j "$(nproc)" --target k3lab
  echo "setup: built $build_dir/k3lab (scripts/setup.sh --tests also builds the tests)"
fi

# The byte-level training corpus (dataset jargon-file under ${K3LAB_DATA_DIR:-data}); idempotent. The
# smoke profiles train on the copy compiled into the binary, so a failure here only warns.
scripts/build-corpus.sh || echo "setup: warning: scripts/build-corpus.sh failed (see above); the smoke" \
  "profiles still run, protocols that name dataset jargon-file need it" >&2
