#!/usr/bin/env bash
# Re-runs every measurement of docs/performance.md and prints the raw output.
#
#   bash bench/measure.sh [BUILD_DIR]     (default build/bench, from `cmake --preset bench`)
#
# BUILD_DIR must be a Release build with benchmarks, e.g.
#   cmake --preset bench
#   cmake --build --preset bench
# Needs hyperfine, strace and /usr/bin/time (Debian packages hyperfine,
# strace, time). The machine should be otherwise idle:
# the numbers are medians, but a second busy core still skews them.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --bench
build=${1:-build/bench}
cli=$build/ggufguard
bench=$build/bench/validate_bench
inputs=${GGUFGUARD_BENCH_INPUTS:-$build/bench-inputs}
one=$inputs/smollm2-like.gguf
four=$inputs/smollm2-like-4x.gguf

for tool in hyperfine strace /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "measure.sh: $tool is missing" >&2; exit 1; }
done
[ -x "$cli" ] && [ -x "$bench" ] || { echo "measure.sh: build $build first (see the top of this file)" >&2; exit 1; }
# The inputs are written once; make_bench_inputs rewrites them.
[ -f "$one" ] && [ -f "$four" ] || "$build/bench/make_bench_inputs" "$inputs"

section() { printf '\n=== %s\n' "$*"; }

section "machine"
nproc; grep -m1 'model name' /proc/cpuinfo; uname -r; cat /etc/debian_version
cat /sys/kernel/mm/transparent_hugepage/enabled; uptime
ls -ls "$one" "$four"  # apparent size, and blocks on disk (sparse)

section "Google Benchmark: in-process figures (medians of 10 repetitions)"
GGUFGUARD_BENCH_INPUTS=$inputs "$bench" --benchmark_repetitions=10 --benchmark_report_aggregates_only=true \
  --benchmark_display_aggregates_only=true 2>&1 | grep -E '^(validate_bench|[a-z_/0-9.-]+_median|Benchmark|-)'

section "whole process: hyperfine (file in page cache)"
cat "$one" "$four" >/dev/null
hyperfine -N --warmup 20 --runs 300 --export-json "$build/hyperfine.json" \
  "$cli --version" "$cli validate $one" "$cli validate $four" 2>&1 | grep -E 'Benchmark|Time|Range'
echo "medians (seconds):"
grep -E '"(command|median)"' "$build/hyperfine.json"

section "system calls: strace -c -f (whole process)"
strace -c -f "$cli" validate "$one" 2>&1 >/dev/null | tail -n 25
section "system calls after the file is opened (1x, then 4x)"
for f in "$one" "$four"; do
  strace -e trace=openat,read,pread64,mmap,munmap,madvise "$cli" validate "$f" 2>&1 >/dev/null |
    sed -n "\#$(basename "$f")#,\$p" | cut -c1-110
done

section "peak RSS: /usr/bin/time -v"
for f in "$one" "$four"; do
  /usr/bin/time -v "$cli" validate "$f" 2>&1 >/dev/null | grep -E 'Maximum resident|Elapsed'
done
# Heap allocations: the allocs counter of the validate/* benchmarks above
# (the CLI is a static executable, where valgrind cannot replace malloc).
