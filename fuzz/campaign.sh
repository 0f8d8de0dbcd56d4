#!/usr/bin/env bash
# One measured fuzzing campaign, for docs/fuzzing.md's tables.
#
#   bash fuzz/campaign.sh TARGET SECONDS [libFuzzer flags or extra seed directories...]
#
#   TARGET   parse_fuzzer | validate_fuzzer | validate_fuzzer_plain | prefix_fuzzer
#   SECONDS  -max_total_time
#
# Builds TARGET with the `fuzz` preset if needed, then fuzzes with the flags
# of fuzz/TARGET.options (OSS-Fuzz's settings) from corpus/ as seeds.
# The working corpus persists in build/fuzz/campaign/TARGET/corpus, so a
# campaign continues where the last one stopped; FRESH=1 starts from the seeds
# alone in a temporary directory (for comparisons: same seconds, same seeds,
# SEED=1 for the same libFuzzer seed). The log goes to
# build/fuzz/campaign/TARGET-<date>.log (or $LOG); crashes to
# build/fuzz/campaign/TARGET-artifacts/. Prints one markdown table row:
#   | target | seconds | CPU seconds | execs | exec/s | cov | ft | corpus | crashes | log |
# CPU seconds (user + system, from /usr/bin/time) is what the campaign really
# got: on a shared machine it can be well under the wall-clock seconds.
# and exits with libFuzzer's status.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
source fuzz/options.sh

if (( $# < 2 )); then
  sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
target=$1
seconds=$2
shift 2

bin=$root/build/fuzz/fuzz/$target
dir=$root/build/fuzz/campaign
mkdir -p "$dir/$target-artifacts"
if [[ ! -x $bin || ${REBUILD:-1} == 1 ]]; then
  [[ -f build/fuzz/build.ninja ]] || cmake --preset fuzz >/dev/null
  cmake --build --preset fuzz -j "${JOBS:-2}" --target "$target" >/dev/null
fi

scratch=$(mktemp -d "${TMPDIR:-/tmp}/ggufguard-campaign.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
if [[ ${FRESH:-0} == 1 ]]; then
  work=$scratch/work
else
  work=$dir/$target/corpus
fi
mkdir -p "$work"
seeds=$scratch/seeds
mkdir -p "$seeds"
cp -R corpus/. "$seeds/"
find "$seeds" -name '*.md' -delete

options_flags "$target"
log=${LOG:-$dir/$target-$(date -u +%Y%m%d-%H%M%S).log}
before=$(ls "$dir/$target-artifacts" | wc -l)
cmd=("$bin" "${FLAGS[@]}" -max_total_time="$seconds" -print_final_stats=1 -seed="${SEED:-0}"
     -artifact_prefix="$dir/$target-artifacts/" "$work" "$@" "$seeds")
echo "# ${cmd[*]}" >"$log"
set +e
if [[ -x /usr/bin/time ]]; then   # scripts/install-deps.sh --bench installs it
  /usr/bin/time -o "$scratch/cpu" -f '%U %S' "${cmd[@]}" >>"$log" 2>&1
  rc=$?
  read -r user_s sys_s <"$scratch/cpu"
  cpu=$(awk -v u="$user_s" -v s="$sys_s" 'BEGIN { printf "%d", u + s }')
else
  "${cmd[@]}" >>"$log" 2>&1
  rc=$?
  cpu="?"
fi
set -e
after=$(ls "$dir/$target-artifacts" | wc -l)
read -r execs cov ft units bytes rate < <(fuzz_summary "$log")
echo "| $target | $seconds | $cpu | $execs | $rate | $cov | $ft | $units/$bytes | $((after - before)) | ${log#"$root"/} |"
exit $rc
