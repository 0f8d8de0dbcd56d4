#!/usr/bin/env bash
# The measurements behind docs/performance.md's "Deep validation (issue 14)":
# prints the raw figures.
#
#   bash bench/measure_deep.sh [BUILD_DIR]   (default build/bench, from `cmake --preset bench`)
#
# The input is one 1.24 GB GGUF file of mixed types and clean data
# (bench/make_deep_inputs.cc), written into $GGUFGUARD_DEEP_INPUTS (default
# /tmp/ggufguard-deep) when missing; delete it when done (it is not needed by
# anything else). With the file page-cached, in the same run: wall seconds
# (least of 5), GB/s, CPU seconds (user + sys) and peak RSS of
#   cat FILE > /dev/null, the memchr-over-mmap floor (bench/deep_floor.cc) on
#   1 and on every core, ggufguard validate FILE without and with --deep
#   (--jobs 1, --jobs N), and the stream path (cat FILE | ggufguard validate
#   --deep -, without and with the SHA-256 that `-` computes by default);
# then the check in process by the read it uses (deep_source: 4 MiB and
# 256 KiB preads, an mmap) against the floor, and the kernels alone on one
# core (deep_bench). Needs /usr/bin/time and bc.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/bench}
cli=$build/ggufguard
inputs=${GGUFGUARD_DEEP_INPUTS:-/tmp/ggufguard-deep}
file=$inputs/deep-mixed.gguf
cores=$(nproc)
for tool in /usr/bin/time bc; do
  command -v "$tool" >/dev/null || { echo "measure_deep.sh: $tool is missing (Debian packages time, bc)" >&2; exit 1; }
done
for exe in "$cli" "$build/bench/deep_floor" "$build/bench/make_deep_inputs" "$build/bench/deep_bench" \
           "$build/bench/deep_source"; do
  [ -x "$exe" ] || { echo "measure_deep.sh: build $build first (cmake --preset bench && cmake --build --preset bench)" >&2; exit 1; }
done
if [ ! -f "$file" ]; then
  mkdir -p "$inputs"
  "$build/bench/make_deep_inputs" "$file"
fi

section() { printf '\n=== %s\n' "$*"; }
section "machine"
nproc; grep -m1 'model name' /proc/cpuinfo; uname -r; cat /sys/kernel/mm/transparent_hugepage/enabled; uptime
ls -ls "$file"
size=$(stat -c %s "$file")

section "the file validates, --deep finds nothing (the exit status of each route is checked below)"
"$cli" validate --deep "$file" || true

# Least wall seconds of 5 runs of the shell command "$1", then one more run
# under /usr/bin/time for CPU seconds and the peak RSS of the command's
# biggest process (for a pipe: of ggufguard, which time wraps).
best_wall() {
  local best="" t s e
  for _ in 1 2 3 4 5; do
    s=$(date +%s.%N); bash -c "$1" >/dev/null 2>&1 || true; e=$(date +%s.%N)
    t=$(echo "$e - $s" | bc)
    if [ -z "$best" ] || [ "$(echo "$t < $best" | bc)" = 1 ]; then best=$t; fi
  done
  echo "$best"
}

section "whole process, $size bytes page-cached (wall: least of 5; CPU and RSS: one more run under /usr/bin/time)"
cat "$file" >/dev/null
printf '%-50s %8s %8s %8s %10s\n' command wall_s GB/s cpu_s rss_KiB
q="'$file'"
# label :: command timed :: the same under /usr/bin/time (the labels hold pipes)
for row in "cat FILE > /dev/null :: cat $q > /dev/null :: /usr/bin/time -f '%U %S %M' -o /tmp/measure_deep.$$ cat $q" \
           "deep_floor FILE 1 (memchr over mmap) :: '$build/bench/deep_floor' $q 1 :: /usr/bin/time -f '%U %S %M' -o /tmp/measure_deep.$$ '$build/bench/deep_floor' $q 1" \
           "deep_floor FILE $cores (all cores) :: '$build/bench/deep_floor' $q $cores :: /usr/bin/time -f '%U %S %M' -o /tmp/measure_deep.$$ '$build/bench/deep_floor' $q $cores" \
           "ggufguard validate FILE (header only) :: '$cli' validate $q :: /usr/bin/time -f '%U %S %M' -o /tmp/measure_deep.$$ '$cli' validate $q" \
           "ggufguard validate --deep --jobs 1 FILE :: '$cli' validate --deep --jobs 1 $q :: /usr/bin/time -f '%U %S %M' -o /tmp/measure_deep.$$ '$cli' validate --deep --jobs 1 $q" \
           "ggufguard validate --deep --jobs $cores FILE :: '$cli' validate --deep --jobs $cores $q :: /usr/bin/time -f '%U %S %M' -o /tmp/measure_deep.$$ '$cli' validate --deep --jobs $cores $q" \
           "cat FILE | ggufguard validate --no-hash - :: cat $q | '$cli' validate --no-hash - :: cat $q | /usr/bin/time -f '%U %S %M' -o /tmp/measure_deep.$$ '$cli' validate --no-hash -" \
           "cat FILE | ggufguard validate --deep --no-hash - :: cat $q | '$cli' validate --deep --no-hash - :: cat $q | /usr/bin/time -f '%U %S %M' -o /tmp/measure_deep.$$ '$cli' validate --deep --no-hash -" \
           "cat FILE | ggufguard validate --deep - (hash) :: cat $q | '$cli' validate --deep - :: cat $q | /usr/bin/time -f '%U %S %M' -o /tmp/measure_deep.$$ '$cli' validate --deep -"; do
  label=${row%% :: *}; rest=${row#* :: }; cmd=${rest%% :: *}; timed=${rest#* :: }
  wall=$(best_wall "$cmd")
  bash -c "$timed" >/dev/null 2>&1 || true
  read -r user sys rss < <(tail -n 1 /tmp/measure_deep.$$)
  printf '%-50s %8.3f %8.2f %8.2f %10d\n' "$label" "$wall" "$(echo "$size / $wall / 1000000000" | bc -l)" \
    "$(echo "$user + $sys" | bc -l)" "$rss"
done
rm -f /tmp/measure_deep.$$
# Exit status of each (0: valid; the data is clean, so --deep must agree).
for args in "validate --deep --jobs 1" "validate --deep --jobs $cores"; do
  "$cli" $args "$file" >/dev/null && echo "ggufguard $args: exit 0" || echo "ggufguard $args: exit $?"
done
cat "$file" | "$cli" validate --deep - >/dev/null && echo "ggufguard validate --deep -: exit 0" || echo "ggufguard validate --deep -: exit $?"

section "in process, by read (deep_source): least seconds of 7 interleaved rounds"
# The reads the CLI makes (preads of DeepOptions::read_bytes, 256 KiB), the
# 4 MiB preads it made before, and the data read in place from an mmap (not
# a path the CLI takes: docs/performance.md says why), against the floor.
for _ in 1 2 3 4 5 6 7; do
  for jobs in 1 "$cores"; do
    "$build/bench/deep_floor" "$file" "$jobs" | sed "s/^/floor $jobs /"
    for read in 4194304 262144 mmap; do "$build/bench/deep_source" "$file" "$jobs" "$read" 1 | sed "s/^/$read $jobs /"; done
  done
done | awk '{ t = $(NF - 3); k = $1 " jobs=" $2; if (!(k in best) || t < best[k]) best[k] = t }
            END { for (k in best) printf "%-22s %.4f s %6.2f GB/s\n", k, best[k], '"$size"' / best[k] / 1e9 }' | sort

section "the kernels alone, one core (deep_bench, 64 MiB buffers, medians of 5)"
"$build/bench/deep_bench" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
  --benchmark_display_aggregates_only=true 2>&1 | grep -E '^(Benchmark|-|[A-Za-z_/0-9.-]+_median)'
