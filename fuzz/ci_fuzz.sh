#!/usr/bin/env bash
# CI fuzzing, called by scripts/test.sh (.ci/run):
#   1. builds the `fuzz` preset (clang 14, libFuzzer, ASan+UBSan);
#   2. replays corpus/ (valid files, rule reproducers, regressions) through
#      every fuzzer;
#   3. fuzzes each fuzzer for FUZZ_SECONDS (default 60) from a scratch copy of
#      corpus/, with the settings of fuzz/<fuzzer>.options (dict, max_len,
#      rss_limit_mb=2048, timeout=1); parse_fuzzer and data_kernel_fuzzer
#      share one fuzzer's time (FUZZ_SECONDS/2 each: every input of
#      validate_fuzzer and prefix_fuzzer is parsed too, and the data kernels'
#      input space is small), and so do template_fuzzer and
#      provenance_fuzzer (both read templates; validate_fuzzer reaches the
#      provenance code too), triage_fuzzer (small JSON files) and zip_fuzzer
#      (its GGUF half repeats validate_fuzzer's).
# Fails (exit 1) on any crash, invariant break, sanitizer report, leak, slow
# input (over 1 s) or out-of-memory; the input is kept under
# build/fuzz/artifacts/ and the command that reproduces it is printed.
# All fuzzing together stays under 10 minutes: FUZZ_SECONDS is capped at 77
# (10 fuzzers, 7 shares of time).
#
#   bash fuzz/ci_fuzz.sh                # 6 x 60 s in all
#   FUZZ_SECONDS=10 bash fuzz/ci_fuzz.sh
#   FUZZ_SECONDS=0 bash fuzz/ci_fuzz.sh # build and replay only
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
source fuzz/options.sh

FUZZ_SECONDS=${FUZZ_SECONDS:-60}
JOBS=${JOBS:-2}
fuzzers=(parse_fuzzer validate_fuzzer prefix_fuzzer policy_fuzzer capi_fuzzer template_fuzzer provenance_fuzzer
         data_kernel_fuzzer triage_fuzzer zip_fuzzer)
half_share_fuzzers=" parse_fuzzer data_kernel_fuzzer template_fuzzer provenance_fuzzer triage_fuzzer zip_fuzzer "
# Seconds of fuzzing per fuzzer: a whole share, or half of one.
seconds_of() {
  if [[ $half_share_fuzzers == *" $1 "* ]]; then echo $(( (FUZZ_SECONDS + 1) / 2 )); else echo "$FUZZ_SECONDS"; fi
}
# Shares counted in halves: two for a whole share, one for half of one.
half_shares=0
for f in "${fuzzers[@]}"; do
  if [[ $half_share_fuzzers == *" $f "* ]]; then half_shares=$((half_shares + 1)); else half_shares=$((half_shares + 2)); fi
done
shares=$(( half_shares / 2 )).$(( half_shares % 2 * 5 ))
max_seconds=$(( 2 * 540 / half_shares ))
if (( FUZZ_SECONDS > max_seconds )); then
  echo "ci_fuzz: FUZZ_SECONDS=$FUZZ_SECONDS would take over 10 minutes for ${#fuzzers[@]} fuzzers; using $max_seconds" >&2
  FUZZ_SECONDS=$max_seconds
fi

echo "== ci_fuzz: building the fuzz preset"
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$JOBS" --target ggufguard_fuzzers
bin=$root/build/fuzz/fuzz

artifacts=$root/build/fuzz/artifacts
mkdir -p "$artifacts"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/ggufguard-fuzz.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
# Never fuzz into the repository: libFuzzer writes new inputs to its first
# corpus directory.
mkdir -p "$scratch/seed"
cp -R corpus/. "$scratch/seed/"
find "$scratch/seed" -name '*.md' -delete
# template_fuzzer starts from the project's chat templates instead.
mkdir -p "$scratch/seed-templates"
find tests/data/chat_templates -name '*.jinja' -exec cp {} "$scratch/seed-templates/" \;
# data_kernel_fuzzer from its own seeds (a type byte, a flags byte, data).
mkdir -p "$scratch/seed-data-kernel"
cp fuzz/seeds/data_kernel_fuzzer/* "$scratch/seed-data-kernel/"
# triage_fuzzer from its own (a reader byte, then a suppressions file or a baseline).
mkdir -p "$scratch/seed-triage"
cp fuzz/seeds/triage_fuzzer/* "$scratch/seed-triage/"
seed_of() {
  case $1 in
    template_fuzzer | provenance_fuzzer) echo "$scratch/seed-templates" ;;
    data_kernel_fuzzer) echo "$scratch/seed-data-kernel" ;;
    triage_fuzzer) echo "$scratch/seed-triage" ;;
    *) echo "$scratch/seed" ;;
  esac
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# A run is bad if libFuzzer says so (non-zero exit) or if any report reached
# the log anyway.
bad_log() {
  grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|libFuzzer)|runtime error:|ggufguard invariant broken|SUMMARY: ' "$1"
}

failed=0
report() {  # fuzzer log rc
  local f=$1 log=$2 rc=$3
  if (( rc != 0 )) || bad_log "$log"; then
    failed=1
    echo "!! $f FAILED (exit $rc); last lines of $log:"
    tail -n 40 "$log"
    local crash
    crash=$(ls -t "$artifacts/$f-"* 2>/dev/null | head -n 1 || true)
    if [[ -n $crash ]]; then
      echo "!! reproduce: $bin/$f $crash"
      echo "!! minimise:  $bin/$f -minimize_crash=1 -runs=10000 $crash"
    fi
    return 1
  fi
  return 0
}

echo "== ci_fuzz: replaying corpus/ through ${fuzzers[*]}"
for f in "${fuzzers[@]}"; do
  log=$artifacts/$f-replay.log
  set +e
  (cd "$scratch" && "$bin/$f" -runs=0 -rss_limit_mb=2048 -timeout=10 -artifact_prefix="$artifacts/$f-" \
      "$scratch/seed/valid" "$scratch/seed/rules" "$scratch/seed/policies" "$scratch/seed/regressions" \
      "$scratch/seed-templates" "$scratch/seed-data-kernel" "$scratch/seed-triage") >"$log" 2>&1
  rc=$?
  set -e
  if report "$f" "$log" "$rc"; then
    echo "   $f: $(grep -o 'INITED.*' "$log" | head -n 1)"
  fi
done
(( failed == 0 )) || { echo "ci_fuzz: corpus replay failed"; exit 1; }

if (( FUZZ_SECONDS == 0 )); then
  echo "ci_fuzz: replay passed (FUZZ_SECONDS=0: no fuzzing)"
  exit 0
fi

echo "== ci_fuzz: fuzzing each fuzzer for ${FUZZ_SECONDS}s (parse, data kernel, template and provenance fuzzers $(seconds_of parse_fuzzer)s)"
printf '%-16s %10s %8s %8s %12s\n' fuzzer execs cov ft corpus
for f in "${fuzzers[@]}"; do
  options_flags "$f"
  mkdir -p "$scratch/work-$f"
  log=$artifacts/$f-fuzz.log
  set +e
  (cd "$scratch" && "$bin/$f" "${FLAGS[@]}" -max_total_time="$(seconds_of "$f")" -print_final_stats=1 \
      -artifact_prefix="$artifacts/$f-" "$scratch/work-$f" "$(seed_of "$f")") >"$log" 2>&1
  rc=$?
  set -e
  if report "$f" "$log" "$rc"; then
    read -r execs cov ft units bytes rate < <(fuzz_summary "$log")
    printf '%-16s %10s %8s %8s %12s\n' "$f" "$execs" "$cov" "$ft" "$units/$bytes"
  fi
done
if (( failed != 0 )); then
  echo "ci_fuzz: FAILED (logs and inputs in $artifacts)"
  exit 1
fi
echo "ci_fuzz: passed (${#fuzzers[@]} fuzzers, ${shares} x ${FUZZ_SECONDS}s in all, no crash, leak, timeout or OOM)"
