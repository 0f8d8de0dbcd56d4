#!/usr/bin/env bash
# What each rule costs on a file (default: the SmolLM2-like benchmark
# input): the instructions one validation by path executes with every rule
# on, and how many fewer with that one rule disabled (callgrind, counting
# only bench/rule_cost.cc's MeasuredValidation). Instructions, not time, so
# that the table is the same on every run of the same build; the rules that
# cost the most are also timed by family in validate_bench.
#
#   bash bench/rule_costs.sh [BUILD_DIR] [FILE]
#
# Prints "RULE NAME INSTRUCTIONS PERCENT", most costly first, for rules
# that save more than the run-to-run variation (the key index's hash is
# keyed by a per-process secret, so its probes vary by a few thousand
# instructions: the script measures it with two runs of every rule on);
# the others (their work is the parser's, shared, or too small to see) are
# listed after, on one line. docs/performance.md has the table.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/bench}
file=${2:-$build/bench-inputs/smollm2-like.gguf}
if [ ! -f "$file" ]; then "$build/bench/make_bench_inputs" "$(dirname "$file")" >/dev/null; fi
count() {
  valgrind --tool=callgrind --toggle-collect='*MeasuredValidation*' --callgrind-out-file=/dev/null \
    "$build/bench/rule_cost" "$file" "$@" 2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
all=$(count)
again=$(count)
noise=$(( (all > again ? all - again : again - all) * 2 + 5000 ))
echo "$(basename "$file"): $all and $again instructions with every rule (default policy); listed: above $noise"
free=()
costly=""
while read -r code name _; do
  n=$(count "$code")
  saved=$((all - n))
  if [ "$saved" -le "$noise" ]; then
    free+=("$code")
  else
    costly+="$(printf '%s %s %d %s' "$code" "$name" "$saved" "$(echo "scale=2; 100 * $saved / $all" | bc)")"$'\n'
  fi
done < <("$build/ggufguard" rules)
printf '%s' "$costly" | sort -k3 -n -r
echo "within the variation: ${free[*]:-none}"
