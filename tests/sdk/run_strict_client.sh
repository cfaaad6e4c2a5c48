#!/bin/sh
# ctest's entry to strict_client.mjs: exits 77 (SKIP_RETURN_CODE in CMakeLists.txt), saying what to run,
# when node or the pinned SDK is missing; otherwise the script's own status.
#   run_strict_client.sh <path to the k3lab binary>
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v node >/dev/null 2>&1; then
  echo "SKIP: node is not installed; run scripts/setup.sh --tests (it installs Debian's nodejs and npm when node is missing)"
  exit 77
fi
if [ ! -f "$here/node_modules/openai/package.json" ]; then
  echo "SKIP: the pinned openai SDK is not installed; run scripts/setup.sh --tests (or: npm ci --prefix tests/sdk)"
  exit 77
fi
exec node "$here/strict_client.mjs" "$1"
