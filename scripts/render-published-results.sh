#!/usr/bin/env bash
# Regenerates a published result's page from the ledger committed beside it: for a folder
# docs/results/<name>/ (at any depth, e.g. memory-pool/protocol-v1) that holds run/, copies run/
# (manifest.json, ledger*.jsonl; gzip-compressed ones decompressed) to a temporary
# runs/<experiment>/<run-dir-name>/, runs `k3lab report` on it, and either writes the rendered page into
# the folder (beside run/) or compares it with the committed page byte for byte.
#
#   scripts/render-published-results.sh --check                            # every folder with a run/
#   scripts/render-published-results.sh --write memory-pool/protocol-v1    # after a change of page rendering
#   scripts/render-published-results.sh --check --binary /other/build/k3lab --results /tmp/copy-of-results
#
# Not part of a page, so kept by --write and left out of the comparison: run/, run-dir-name, the
# hand-written RUN.md and README.md, and any subfolder that holds a published result of its own.
# Exit status: 0 when every page regenerates byte for byte (--check) or was written (--write); 1 when a
# page differs (its diff is printed); 2 on bad use or when a page cannot be rendered.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
binary="$repo/build/k3lab"
results="$repo/docs/results"
mode=""
names=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --check | --write) mode=${1#--}; shift ;;
    --binary) binary=$2; shift 2 ;;
    --results) results=$2; shift 2 ;;
    -h | --help) sed -n '2,15p' "$0"; exit 0 ;;
    -*) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
    *) names+=("${1%/}"); shift ;;
  esac
done
if [[ -z "$mode" ]]; then
  echo "say --check (compare with the committed page) or --write (replace it); see --help" >&2
  exit 2
fi
if [[ ! -x "$binary" ]]; then
  echo "no k3lab binary at $binary: build it (cmake --build build --target k3lab) or pass --binary PATH" >&2
  exit 2
fi
binary=$(realpath "$binary")
results=$(realpath "$results")
if [[ ${#names[@]} -eq 0 ]]; then
  while IFS= read -r folder; do
    [[ "$folder" != "$results" ]] && names+=("${folder#"$results"/}")
  done < <(find "$results" -type d -name run -prune -printf '%h\n' | LC_ALL=C sort)
fi
if [[ ${#names[@]} -eq 0 ]]; then
  echo "no published result with a run/ folder under $results" >&2
  exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/k3lab-published-XXXXXX")
trap 'rm -rf "$work"' EXIT

# Whether an entry of a published folder is not part of its page.
is_kept() {
  local name
  name=$(basename "$1")
  [[ "$name" == run || "$name" == run-dir-name || "$name" == RUN.md || "$name" == README.md ]] && return 0
  [[ -d "$1" && -n "$(find "$1" -type d -name run -print -quit)" ]]
}

# A top-level string field of the pretty-printed manifest ("experiment", "profile").
manifest_field() {
  sed -n "s/^  \"$2\": \"\\([^\"]*\\)\",\\{0,1\\}\$/\\1/p" "$1" | head -n 1
}

# Renders <published>/run into <scratch>/page. Called as `render || exit`, where set -e does not apply,
# so every step that can fail returns on its own.
render() {
  local published=$1 scratch=$2
  local manifest="$published/run/manifest.json"
  if [[ ! -f "$manifest" || ! -f "$published/run-dir-name" ]]; then
    echo "$published must hold run/manifest.json, run/ledger*.jsonl[.gz] and run-dir-name" >&2
    return 2
  fi
  local experiment profile run_dir_name
  experiment=$(manifest_field "$manifest" experiment)
  profile=$(manifest_field "$manifest" profile)
  run_dir_name=$(tr -d '[:space:]' <"$published/run-dir-name")
  if [[ -z "$experiment" || -z "$profile" || -z "$run_dir_name" || "$run_dir_name" == */* ]]; then
    echo "$published: the manifest names no experiment or profile, or run-dir-name holds no run dir name" >&2
    return 2
  fi
  local run_dir="$scratch/runs/$experiment/$run_dir_name"
  mkdir -p "$run_dir"
  local file
  for file in "$published"/run/*; do
    case "$file" in
      *.gz) gzip -dc "$file" >"$run_dir/$(basename "${file%.gz}")" || return 2 ;;
      *) cp "$file" "$run_dir/" || return 2 ;;
    esac
  done
  # The report reads only the run dir; the protocols are given as they are at the repository root.
  if ! (cd "$scratch" && K3LAB_PROTOCOL_DIR="$repo/experiments" "$binary" report --runs runs --out report \
    >report.log 2>&1); then
    cat "$scratch/report.log" >&2
    echo "$published: k3lab report failed (above)" >&2
    return 2
  fi
  if [[ ! -d "$scratch/report/$experiment-$profile" ]]; then
    echo "$published: k3lab report wrote no page folder $experiment-$profile (it wrote: $(ls "$scratch/report"))" >&2
    return 2
  fi
  mv "$scratch/report/$experiment-$profile" "$scratch/page"
}

status=0
index=0
for name in "${names[@]}"; do
  published="$results/$name"
  index=$((index + 1))
  scratch="$work/$index"
  mkdir -p "$scratch/committed"
  render "$published" "$scratch" || exit $?
  for entry in "$published"/* "$published"/.[!.]*; do
    [[ -e "$entry" ]] || continue
    is_kept "$entry" && continue
    if [[ "$mode" == write ]]; then
      rm -rf "$entry"
    else
      cp -r "$entry" "$scratch/committed/"
    fi
  done
  if [[ "$mode" == write ]]; then
    cp -r "$scratch/page/." "$published/"
    echo "$name: page written from its committed ledger"
  # The analysis statement names the sources' sha256 of the build that renders, which changes with every
  # edit of an analysis source; it alone may differ (docs/verdicts.md, "Analysis version").
  elif (cd "$scratch" && diff -ru -I '\*\*Analysis:\*\*' -I '<strong>Analysis:</strong>' committed page >page.diff); then
    echo "$name: the committed page regenerates byte for byte (apart from the analysis statement)"
  else
    head -n 200 "$scratch/page.diff"
    echo "$name: the committed page differs from the one rendered from its ledger (diff above, committed ->" \
      "rendered); if the change of rendering is intended: scripts/render-published-results.sh --write $name"
    status=1
  fi
done
exit $status
