#!/usr/bin/env bash
# The measurement behind docs/scale.md's "Rescans with --cache" (issue 30):
# `scan --jobs 1` over a tree of N files (default 300) without a cache, with
# a cold cache (every file validated and stored) and with a warm one (every
# file hashed and its entry read), each the least wall time of 3 runs (the
# machine is shared), with --deep and without.
#
#   bash bench/measure_cache.sh [CLI] [N]     (default build/quick/ggufguard; needs ../shared/corpus-real)
#
# The files: the valid files of ../shared/corpus-real, round robin, each made
# distinct by appending its number (distinct SHA-256s: no two share an entry;
# the appended bytes add a trailing-bytes finding, the same for every run).
set -euo pipefail
cd "$(dirname "$0")/.."
cli=${1:-build/quick/ggufguard}
n=${2:-300}
real=../shared/corpus-real/valid
[ -d "$real" ] || { echo "measure_cache.sh: $real is absent" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mapfile -t sources < <(find "$real" -name '*.gguf' -size +1k | sort)
for ((i = 0; i < n; i++)); do
  src=${sources[i % ${#sources[@]}]}
  { cat "$src"; printf '%08d' "$i"; } >"$work/tree-$i.gguf"
done
echo "files: $n, $(du -sh --apparent-size "$work" | cut -f1) (from ${#sources[@]} real files); $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
least() {  # least wall seconds of 3 runs of "$@"; before each, $prepare
  local best=
  for _ in 1 2 3; do
    eval "$prepare"
    local t0 t1
    t0=$(date +%s.%N)
    "$@" >/dev/null 2>&1 || true
    t1=$(date +%s.%N)
    best=$(echo "$t1 - $t0" | bc | awk -v b="$best" '{ if (b == "" || $1 < b) print $1; else print b }')
  done
  echo "$best"
}
for deep in "" "--deep"; do
  scan=("$cli" scan --jobs 1 $deep "$work")
  prepare=":"
  plain=$(least "${scan[@]}")
  hashed=$(least "${scan[@]}" --hash)
  prepare="rm -rf '$work/cache'"
  cold=$(least "${scan[@]}" --cache "$work/cache")
  prepare=":"
  "${scan[@]}" --cache "$work/cache" >/dev/null 2>&1 || true
  warm=$(least "${scan[@]}" --cache "$work/cache")
  printf 'scan %-6s no cache %6.3f s   --hash %6.3f s   --cache cold %6.3f s   --cache warm %6.3f s\n' \
    "${deep:-plain}" "$plain" "$hashed" "$cold" "$warm"
done
