#!/usr/bin/env bash
# Builds the dataset "jargon-file": the Jargon File 4.4.7 (public domain) from the Debian package
# jargon-text, tokenised at byte level into llm.c .bin shards (magic 20240520, uint16 tokens), with
# a provenance record (provenance.json: the package, its version, the licence and sha256 of the source and
# shards), and k3lab's dataset manifest (manifest.json, `k3lab data manifest`, docs/data.md) when a k3lab
# binary is at $K3LAB_BINARY (default build/k3lab). Idempotent: it does nothing when the provenance
# record already matches the installed source and the manifest is there.
#   K3LAB_DATA_DIR   output root (default: data); the dataset goes to $K3LAB_DATA_DIR/jargon-file/
# Needs only Essential Debian tools (dpkg-query, gzip, coreutils, perl-base). See docs/data.md.
set -euo pipefail
cd "$(dirname "$0")/.."

package=jargon-text
source_file=/usr/share/doc/jargon-text/jargon.txt.gz
root="${K3LAB_DATA_DIR:-data}"
out="$root/jargon-file"

if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
  echo "build-corpus: the Debian package $package is not installed; run scripts/setup.sh" \
       "(it installs scripts/data-packages.txt) or: sudo apt-get install $package" >&2
  exit 1
fi
version="$(dpkg-query -W -f='${Version}' "$package")"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
source_origin="installed file"
if [ ! -f "$source_file" ]; then
  # Slim images drop /usr/share/doc (dpkg path-exclude); take the file from the package archive instead.
  echo "build-corpus: $source_file is not on disk (dpkg path-exclude?); extracting it from the $package $version archive"
  fetch="$tmp/fetch"
  mkdir -p "$fetch"
  (cd "$fetch" && apt-get download "$package=$version" >/dev/null) || {
    echo "build-corpus: apt-get download $package=$version failed; allow /usr/share/doc/jargon-text in dpkg's" \
         "path-exclude rules and reinstall the package, or fix apt access" >&2
    exit 1
  }
  dpkg-deb -x "$fetch"/*.deb "$fetch/root"
  source_file="$fetch/root/usr/share/doc/jargon-text/jargon.txt.gz"
  [ -f "$source_file" ] || { echo "build-corpus: the $package archive has no jargon.txt.gz" >&2; exit 1; }
  source_origin="extracted from the package archive (the installed copy was excluded by dpkg)"
fi
source_sha="$(sha256sum "$source_file" | cut -d' ' -f1)"
if [ -f "$out/provenance.json" ] && [ -f "$out/manifest.json" ] &&
   grep -q "\"source_sha256\": \"$source_sha\"" "$out/provenance.json"; then
  echo "build-corpus: $out is up to date ($package $version)"
  exit 0
fi

zcat "$source_file" > "$tmp/jargon.txt"
text_sha="$(sha256sum "$tmp/jargon.txt" | cut -d' ' -f1)"
text_bytes="$(stat -c %s "$tmp/jargon.txt")"

# Byte-level tokens: token = byte value. The first 90% of the bytes train, the last 10% validate
# (the same rule as the built-in excerpt). Header: 256 little-endian int32 (magic, version, count).
mkdir -p "$tmp/shards"
perl -e '
  use strict; use warnings;
  my ($text, $train, $val) = @ARGV;
  open(my $in, "<:raw", $text) or die "build-corpus: cannot read $text: $!\n";
  local $/; my $data = <$in>; close($in);
  my $split = int(length($data) * 0.9);
  sub shard {
    my ($path, $bytes) = @_;
    my $count = length($bytes);
    open(my $o, ">:raw", $path) or die "build-corpus: cannot write $path: $!\n";
    print $o pack("l<256", 20240520, 1, $count, (0) x 253);
    print $o pack("S<*", unpack("C*", $bytes));
    close($o) or die "build-corpus: cannot write $path: $!\n";
  }
  shard($train, substr($data, 0, $split));
  shard($val, substr($data, $split));
' "$tmp/jargon.txt" "$tmp/shards/jargon_train_000001.bin" "$tmp/shards/jargon_val_000000.bin"

shard_json() {
  local file="$1"
  local bytes sha
  bytes="$(stat -c %s "$tmp/shards/$file")"
  sha="$(sha256sum "$tmp/shards/$file" | cut -d' ' -f1)"
  printf '{"file": "%s", "tokens": %d, "token_bytes": 2, "sha256": "%s"}' "$file" $(((bytes - 1024) / 2)) "$sha"
}

cat > "$tmp/shards/provenance.json" <<JSON
{
  "dataset": "jargon-file",
  "tokenizer": "bytes",
  "vocab_size": 256,
  "format": "llm.c token shards: 256 x int32 header, magic 20240520, version 1, uint16 tokens",
  "source": {
    "debian_package": "$package",
    "debian_version": "$version",
    "file": "/usr/share/doc/jargon-text/jargon.txt.gz",
    "origin": "$source_origin",
    "source_sha256": "$source_sha",
    "text_sha256": "$text_sha",
    "text_bytes": $text_bytes
  },
  "source_sha256": "$source_sha",
  "licence": "public domain (Jargon File 4.4.7; /usr/share/doc/jargon-text/copyright: 'This document (the Jargon File) is in the public domain, to be freely used, shared, and modified')",
  "citation": "The on-line hacker Jargon File, version 4.4.7, 29 Dec 2003",
  "split": "first 90% of the bytes train, last 10% validate",
  "shards": [
    $(shard_json jargon_train_000001.bin),
    $(shard_json jargon_val_000000.bin)
  ],
  "built_by": "scripts/build-corpus.sh"
}
JSON

mkdir -p "$root"
# The data folder holds generated files only; keep it out of git whatever the top-level .gitignore says.
[ -f "$root/.gitignore" ] || printf '*\n' > "$root/.gitignore"
rm -rf "$out.partial"
mv "$tmp/shards" "$out.partial"
rm -rf "$out"
mv "$out.partial" "$out"
# The dataset's name is its folder's: the manifest is written where the shards now live.
k3lab="${K3LAB_BINARY:-build/k3lab}"
if [ -x "$k3lab" ]; then
  "$k3lab" data manifest "$out" --tokenizer bytes \
    --source "Jargon File 4.4.7 (Debian $package $version), scripts/build-corpus.sh" \
    --licence "public domain" >/dev/null
else
  echo "build-corpus: no k3lab binary at $k3lab, so no dataset manifest: build it (scripts/setup.sh), then run" \
       "scripts/build-corpus.sh again" >&2
fi

echo "build-corpus: wrote $out ($package $version, $text_bytes byte tokens)"
