#!/usr/bin/env bash
# What ggml's gguf_init and llama.cpp's loader spend on headers of many
# tensors or keys (GG9162, docs/rules/GG9162.md): the measurement behind the
# costs in src/ggufguard/rules/loader_cost_rules.cc.
#
#   bash bench/measure_loader_cost.sh [REPETITIONS]
#
# Needs the loader oracle's llama.cpp (node-llama-cpp's prebuilt CPU build):
#   (cd fuzz/oracle && npm ci --ignore-scripts --no-audit --no-fund)
# Builds bench/ggml_scan_cost.cc with the system's g++ (it loads
# libggml-base.so with dlopen, so nothing links against the package), times
# gguf_init_from_file on each header shape, then the whole llama.cpp load
# (runner.mjs --stages load) of corpus/regressions/report-issue-40-gguf-init-
# quadratic-scan.gguf against the minimal llama. Run it on an idle machine:
# on 2 cores shared with builds the times grow ten to twenty fold.
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-3}
lib=fuzz/oracle/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libggml-base.so
[ -f "$lib" ] || { echo "measure_loader_cost.sh: $lib is missing; run (cd fuzz/oracle && npm ci --ignore-scripts --no-audit --no-fund)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/ggufguard-loader-cost.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "=== machine"
nproc; grep -m1 'model name' /proc/cpuinfo || true; uptime
g++ -O2 -std=c++20 -o "$work/ggml_scan_cost" bench/ggml_scan_cost.cc -ldl
echo "=== gguf_init_from_file (best of $reps)"
"$work/ggml_scan_cost" "$lib" "$work" "$reps"
echo "=== llama.cpp's load (llama_model_load_from_file, fuzz/oracle/runner.mjs --stages load)"
for f in corpus/valid/minimal-llama.gguf corpus/regressions/report-issue-40-gguf-init-quadratic-scan.gguf; do
  node fuzz/oracle/runner.mjs --stages load --timeout-ms 600000 "$f" | sed -n 's/.*"file":"\([^"]*\)".*"outcome":"\([a-z]*\)".*"ms":\([0-9]*\).*/\1: \2 after \3 ms/p'
done
uptime
