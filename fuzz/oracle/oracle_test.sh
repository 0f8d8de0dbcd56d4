#!/usr/bin/env bash
# CTest `oracle.loader` (fuzz/oracle/CMakeLists.txt): the loader oracle over
# the corpus directories given and COUNT mutants (seeds 0..COUNT-1), see
# docs/fuzzing.md ("The real loader as an oracle"). Skipped (exit 77) with the reason when Node.js or the npm
# package is missing; scripts/test.sh installs both.
#
#   oracle_test.sh GGUFGUARD ORACLE_MUTANTS COUNT KEEP_DIR [CORPUS_DIR...]
#   oracle_test.sh --vocab GGUFGUARD [CORPUS_DIR...]     (CTest `oracle.vocab`: vocab_refusals.mjs)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
vocab=false
if [ "$1" = --vocab ]; then
  vocab=true ggufguard=$2
  shift 2
else
  ggufguard=$1 mutants=$2 count=$3 keep=$4
  shift 4
fi

if ! command -v node >/dev/null 2>&1; then
  echo "SKIPPED: node is not installed (scripts/test.sh installs Debian's nodejs and npm when missing)"
  exit 77
fi
if [ ! -f "$here/node_modules/@node-llama-cpp/linux-x64/package.json" ]; then
  echo "SKIPPED: llama.cpp's loader is not installed; run: (cd fuzz/oracle && npm ci --ignore-scripts)"
  exit 77
fi

dirs=()
for d in "$@"; do
  if [ -d "$d" ]; then dirs+=("$d"); else echo "oracle: $d is absent, not checked"; fi
done
if $vocab; then
  exec node "$here/vocab_refusals.mjs" --ggufguard "$ggufguard" "${dirs[@]}"
fi
rm -rf "$keep"
exec node "$here/differential.mjs" --ggufguard "$ggufguard" --mutants "$mutants" 0 "$count" --keep "$keep" "${dirs[@]}"
