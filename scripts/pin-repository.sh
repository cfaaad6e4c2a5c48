#!/usr/bin/env bash
# Writes the file list that pins context-probe's repository family (docs/context-probe.md, "The
# repository family"): every Python source file of an installed Debian package's module folder, tests
# and files over 256 KiB excluded, in byte order of the path, as `sha256sum` lines.
#   scripts/pin-repository.sh [PACKAGE] [MODULE]     default: python3-sympy sympy
# Prints the values the protocol's parameters.repository freezes (version, files, files_sha256, file_count).
# Check an installed copy against a list: (cd /usr/lib/python3/dist-packages && sha256sum -c --quiet LIST)
set -euo pipefail
cd "$(dirname "$0")/.."
package="${1:-python3-sympy}"
module="${2:-sympy}"
root=/usr/lib/python3/dist-packages
version="$(dpkg-query -W -f='${Version}' "$package" 2>/dev/null)" || {
  echo "pin-repository: $package is not installed; run: sudo apt-get install $package" >&2
  exit 1
}
[ -d "$root/$module" ] || { echo "pin-repository: $root/$module is missing; reinstall $package" >&2; exit 1; }
out="experiments/repositories/${package}_${version}.sha256"
(cd "$root" && find "$module" -type f -name '*.py' -not -path '*/tests/*' -size -257k -print0 |
  LC_ALL=C sort -z | xargs -0 sha256sum) > "$out"
echo "version:      $version"
echo "files:        repositories/$(basename "$out")"
echo "files_sha256: $(sha256sum "$out" | cut -d' ' -f1)"
echo "file_count:   $(wc -l < "$out")"
