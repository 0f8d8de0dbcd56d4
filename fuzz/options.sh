# Sourced by ci_fuzz.sh and campaign.sh: turns fuzz/<fuzzer>.options (the
# file OSS-Fuzz reads) into libFuzzer flags, so that every local run uses the
# settings OSS-Fuzz uses.
#
#   options_flags FUZZER  ->  sets the array FLAGS, e.g.
#     (-dict=/abs/fuzz/gguf.dict -max_len=32768 -rss_limit_mb=2048 -timeout=1)
options_flags() {
  local dir key value
  dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  FLAGS=()
  while IFS='=' read -r key value; do
    key=$(echo "$key" | tr -d '[:space:]')
    value=$(echo "$value" | tr -d '[:space:]')
    [[ -z $key || $key == \[* || $key == \#* ]] && continue
    [[ $key == dict ]] && value="$dir/$value"
    FLAGS+=("-$key=$value")
  done <"$dir/$1.options"
}

# The last status line libFuzzer printed ("#N DONE cov: C ft: F corp: U/B ...")
# and its final stats, as "execs cov ft units bytes execs_per_sec".
fuzz_summary() {
  local log=$1 line execs cov ft corp units bytes rate
  line=$(grep -E '^#[0-9]+' "$log" | grep -E 'cov: ' | tail -n 1 || true)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
  [[ -z $execs ]] && execs=$(echo "$line" | sed -n 's/^#\([0-9]*\).*/\1/p')
  cov=$(echo "$line" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
  ft=$(echo "$line" | sed -n 's/.*ft: \([0-9]*\).*/\1/p')
  corp=$(echo "$line" | sed -n 's/.*corp: \([0-9]*\/[0-9]*[a-zA-Z]*\).*/\1/p')
  units=${corp%%/*}
  bytes=${corp#*/}
  echo "${execs:-?} ${cov:-?} ${ft:-?} ${units:-?} ${bytes:-?} ${rate:-?}"
}
