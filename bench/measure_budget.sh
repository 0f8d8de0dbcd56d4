#!/usr/bin/env bash
# The cost budget of docs/performance.md ("Cost of each rule", issue 25):
# every rule family against the bounds-checked walk, the instructions each
# rule adds, the whole process beyond an empty file, and headers of a
# million keys and a million template keys.
#
#   bash bench/measure_budget.sh [BUILD_DIR] [REPETITIONS]
#
# BUILD_DIR: a `cmake --preset bench` build (default build/bench). Needs
# hyperfine, valgrind, perf and /usr/bin/time (scripts/install-deps.sh
# --bench installs them). Run it on an otherwise idle machine; every figure
# is a median or a minimum of repeated runs, and the script prints the
# spread it saw.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --bench
build=${1:-build/bench}
reps=${2:-10}
cli=$build/ggufguard
bench=$build/bench/validate_bench
inputs=${GGUFGUARD_BENCH_INPUTS:-$build/bench-inputs}
hostile=$build/hostile-inputs
one=$inputs/smollm2-like.gguf
[ -x "$cli" ] && [ -x "$bench" ] || { echo "measure_budget.sh: build $build first" >&2; exit 1; }
[ -f "$one" ] || "$build/bench/make_bench_inputs" "$inputs"
[ -f "$hostile/hostile-1m-keys.gguf" ] || "$build/bench/make_hostile_inputs" "$hostile"
empty=$build/empty.gguf
printf 'GGUF\003\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000' > "$empty"

section() { printf '\n=== %s\n' "$*"; }
section "machine"
nproc; grep -m1 'model name' /proc/cpuinfo; uname -r; uptime

section "families on smollm2-like and smollm2-like-4x (validate_bench, medians of $reps; x = / that input's floor/walk)"
GGUFGUARD_BENCH_INPUTS=$inputs "$bench" --benchmark_filter='smollm2-like(-4x)?$' --benchmark_repetitions="$reps" \
  --benchmark_report_aggregates_only=true --benchmark_out="$build/budget-bench.json" --benchmark_out_format=json \
  >/dev/null 2>&1
python3 - "$build/budget-bench.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["benchmarks"]
median = {r["run_name"]: r["real_time"] / 1e3 for r in rows if r.get("aggregate_name") == "median"}
cv = {r["run_name"]: r["real_time"] for r in rows if r.get("aggregate_name") == "cv"}
for name, t in median.items():
    walk = median["floor/walk/" + name.rsplit("/", 1)[1]]
    print(f"{name:48s} {t:10.1f} us {t / walk:6.2f}x  (cv {100 * cv.get(name, 0):.0f}%)")
PY

section "instructions each rule adds (bench/rule_costs.sh)"
bash bench/rule_costs.sh "$build" "$one"

section "whole process beyond an empty file (hyperfine -N, minima of 60 runs; perf stat, least CPU of 20)"
four=$inputs/smollm2-like-4x.gguf
cat "$one" "$four" >/dev/null
hyperfine -N --warmup 10 --runs 60 --export-json "$build/budget-hyperfine.json" \
  "$cli validate $empty" "$cli validate $one" "$cli validate $four" 2>&1 | grep -E 'Benchmark|Time|Range'
python3 - "$build/budget-hyperfine.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
lo = [min(x["times"]) * 1e3 for x in r]
print(f"wall minima: empty {lo[0]:.3f} ms, smollm2-like {lo[1]:.3f} ms (beyond empty {lo[1] - lo[0]:.3f} ms), "
      f"4x {lo[2]:.3f} ms (beyond empty {lo[2] - lo[0]:.3f} ms)")
PY
# CPU time (task-clock) and page faults, the least of 20 runs each: what
# the process costs beyond an empty file when the machine is shared.
for f in "$empty" "$one" "$four"; do
  best=
  for _ in $(seq 20); do
    ms=$(perf stat -x, -e task-clock,page-faults "$cli" validate "$f" 2>&1 >/dev/null | awk -F, '/task-clock/ {print $1}')
    best=$(awk -v a="${best:-$ms}" -v b="$ms" 'BEGIN { print (a + 0 < b + 0) ? a : b }')
  done
  faults=$(perf stat -x, -e page-faults "$cli" validate "$f" 2>&1 >/dev/null | awk -F, '/page-faults/ {print $1}')
  echo "$(basename "$f"): least CPU ${best} ms, ${faults} page faults"
done

section "a million keys, a million template keys (least CPU of 5, peak RSS)"
for f in hostile-1m-keys hostile-1m-templates; do
  best=
  for _ in 1 2 3 4 5; do
    # The file is invalid (exit 1): only perf's report matters here.
    ms=$({ perf stat -x, -e task-clock "$cli" validate --format json "$hostile/$f.gguf" 2>&1 >/dev/null || true; } |
         awk -F, '/task-clock/ {print $1}')
    best=$(awk -v a="${best:-$ms}" -v b="$ms" 'BEGIN { print (a + 0 < b + 0) ? a : b }')
  done
  rss=$({ /usr/bin/time -f '%M' "$cli" validate --format json "$hostile/$f.gguf" 2>&1 >/dev/null || true; } | tail -1)
  header=$(stat -c %s "$hostile/$f.gguf")
  echo "$f: ${best} ms CPU, peak RSS ${rss} KiB ($(( rss / 1024 )) MiB), header $header bytes (budget 2 x header + 64 MiB: $(( (2 * header) / 1024 + 65536 )) KiB)"
done
