#!/usr/bin/env bash
# The measurements behind docs/performance.md's "Hostile headers" and "scan"
# sections (issue 13): prints the raw figures.
#
#   bash bench/measure_bulk.sh [BUILD_DIR] [pipe]   (default build/bench, from `cmake --preset bench`;
#                                                   "pipe": the pipe section alone)
#
# Hostile headers (bench/hostile_inputs.h, written by make_hostile_inputs):
# CPU time (user + sys, the least of 5 runs: the machine is shared), peak RSS
# and the size of the text and JSON reports of `ggufguard validate`, against
# the SmolLM2-like benchmark file; every figure per header byte.
# scan: 1,000 files (hard links to the valid files of ../shared/corpus-real,
# round robin: real headers, page cache shared) with --jobs 1 and --jobs 2.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --bench
build=${1:-build/bench}
cli=$build/ggufguard
inputs=${GGUFGUARD_BENCH_INPUTS:-$build/bench-inputs}
hostile=$build/hostile-inputs
[ -x "$cli" ] || { echo "measure_bulk.sh: build $build first (cmake --preset bench && cmake --build --preset bench)" >&2; exit 1; }
for tool in /usr/bin/time perf bc; do
  command -v "$tool" >/dev/null || { echo "measure_bulk.sh: $tool is missing (Debian packages time, linux-perf, bc)" >&2; exit 1; }
done
[ -f "$inputs/smollm2-like.gguf" ] || "$build/bench/make_bench_inputs" "$inputs"
[ -f "$hostile/pipe-1g.gguf" ] && [ -f "$hostile/hostile-1m-tensors.gguf" ] || "$build/bench/make_hostile_inputs" "$hostile"

section() { printf '\n=== %s\n' "$*"; }
section "machine"
nproc; grep -m1 'model name' /proc/cpuinfo; uptime

# Least CPU seconds (perf's task-clock: /usr/bin/time counts in 10 ms steps)
# and the peak RSS (KiB, /usr/bin/time) of 5 runs of "$@".
measure() {
  local best="" rss=0 t m
  for _ in 1 2 3 4 5; do
    t=$( (perf stat -x, -e task-clock "$@" 2>&1 >/dev/null || true) | awk -F, '/task-clock/ { print $1 / 1000 }')
    if [ -z "$best" ] || [ "$(echo "$t < $best" | bc)" = 1 ]; then best=$t; fi
    /usr/bin/time -f '%M' -o /tmp/measure_bulk.$$ "$@" >/dev/null 2>&1 || true
    m=$(tail -n 1 /tmp/measure_bulk.$$)
    [ "$m" -gt "$rss" ] && rss=$m
  done
  rm -f /tmp/measure_bulk.$$
  echo "$best $rss"
}

if [ "${2:-all}" != pipe ]; then
section "hostile headers: validate --format json (header = the bytes before the data section)"
printf '%-28s %12s %9s %9s %10s %10s %11s %11s\n' file header_B cpu_ms ns/B rss_MiB budget_MiB json_B text_B
cat "$inputs"/smollm2-like.gguf "$hostile"/hostile-*.gguf >/dev/null
for f in "$inputs/smollm2-like.gguf" "$hostile"/hostile-*.gguf; do
  name=$(basename "$f")
  # The header: up to the data section (the report's data_offset), at most the file.
  header=$("$cli" validate --format json "$f" | grep -o '"data_offset": [0-9]*' | head -n 1 | grep -o '[0-9]*$' || true)
  size=$(stat -c %s "$f")
  if [ -z "$header" ] || [ "$header" -gt "$size" ]; then header=$size; fi
  read -r cpu rss < <(measure "$cli" validate --format json "$f")
  json=$("$cli" validate --format json "$f" | wc -c || true)
  text=$("$cli" validate "$f" | wc -c || true)
  printf '%-28s %12d %9.1f %9.2f %10.1f %10.1f %11d %11d\n' "$name" "$header" "$(echo "$cpu * 1000" | bc -l)" \
    "$(echo "$cpu * 1000000000 / $header" | bc -l)" "$(echo "$rss / 1024" | bc -l)" \
    "$(echo "2 * $header / 1048576 + 64" | bc -l)" "$json" "$text"
done

section "scan: 1,000 files"
scan_dir=$build/scan-inputs
if [ ! -d "$scan_dir" ]; then
  mkdir -p "$scan_dir"
  mapfile -t real < <(find ../shared/corpus-real/valid -name '*.gguf' -size +1k | sort)
  for i in $(seq 0 999); do ln -f "${real[$((i % ${#real[@]}))]}" "$scan_dir/$(printf 'm%04d.gguf' "$i")"; done
fi
du -sh --apparent-size "$scan_dir"; cat "$scan_dir"/*.gguf >/dev/null
for jobs in 1 2; do
  read -r cpu rss < <(measure "$cli" scan --jobs "$jobs" "$scan_dir")
  start=$(date +%s.%N)
  "$cli" scan --jobs "$jobs" "$scan_dir" | tail -n 1
  end=$(date +%s.%N)
  echo "jobs=$jobs wall_s=$(echo "$end - $start" | bc) files_per_s=$(echo "1000 / ($end - $start)" | bc) cpu_s=$cpu peak_rss_KiB=$rss"
done

fi

section "pipe: 1 GiB through standard input (wall seconds, best of 5; peak RSS of ggufguard)"
pipe_file=$hostile/pipe-1g.gguf
ls -l "$pipe_file"; cat "$pipe_file" >/dev/null
best_wall() {  # least wall seconds of 5 runs of the shell command "$1"
  local best="" t s e
  for _ in 1 2 3 4 5; do
    s=$(date +%s.%N); bash -c "$1" >/dev/null 2>&1 || true; e=$(date +%s.%N)
    t=$(echo "$e - $s" | bc)
    if [ -z "$best" ] || [ "$(echo "$t < $best" | bc)" = 1 ]; then best=$t; fi
  done
  echo "$best"
}
# label :: command (the labels hold pipes)
for row in "cat > /dev/null :: cat '$pipe_file' > /dev/null" \
           "cat | cat > /dev/null (a pipe, no work) :: cat '$pipe_file' | cat > /dev/null" \
           "cat | pipe_floor splice (a reader, no copy) :: cat '$pipe_file' | '$build/bench/pipe_floor' splice" \
           "cat | pipe_floor read (a reader, no work) :: cat '$pipe_file' | '$build/bench/pipe_floor' read" \
           "cat | sha256sum :: cat '$pipe_file' | sha256sum" \
           "cat | ggufguard validate --no-hash - :: cat '$pipe_file' | '$cli' validate --no-hash -" \
           "cat | ggufguard validate - (hash) :: cat '$pipe_file' | '$cli' validate -" \
           "ggufguard validate --hash FILE (by path) :: '$cli' validate --hash '$pipe_file'"; do
  label=${row%% :: *}; cmd=${row#* :: }
  wall=$(best_wall "$cmd")
  printf '%-46s %8.3f s %8.2f GB/s\n' "$label" "$wall" "$(echo "$(stat -c %s "$pipe_file") / $wall / 1000000000" | bc -l)"
done
cat "$pipe_file" | /usr/bin/time -f 'ggufguard validate - peak RSS %M KiB' "$cli" validate - >/dev/null || true
