#!/usr/bin/env bash
# The CI gate behind action.yml, runnable anywhere (tests/gate_test.sh runs
# it on a temporary tree): scans the given paths, or the *.gguf and
# *.llamafile files a git
# range changed, writes SARIF for github/codeql-action/upload-sarif, and
# exits non-zero when a finding at or above --fail-on stands.
#
# usage: scripts/gate.sh [--fail-on error|warning|never] [--sarif FILE] [--markdown FILE]
#                        [--changed-from GIT-REF] [--policy P] [--suppressions FILE] [--baseline FILE] [PATH...]
# The ggufguard binary: $GGUFGUARD, else `ggufguard` on PATH.
# Exit: 0 pass, 1 a finding at or above --fail-on, 2 usage error, 3 a file could not be read (always fails).
set -euo pipefail

fail_on=error
sarif=ggufguard.sarif
markdown=
changed_from=
scan_args=()
paths=()
while [ $# -gt 0 ]; do
  case "$1" in
    --fail-on) fail_on=$2; shift 2 ;;
    --sarif) sarif=$2; shift 2 ;;
    --markdown) markdown=$2; shift 2 ;;
    --changed-from) changed_from=$2; shift 2 ;;
    --policy|--suppressions|--baseline) scan_args+=("$1" "$2"); shift 2 ;;
    --) shift; paths+=("$@"); break ;;
    -*) echo "gate.sh: unknown option $1" >&2; exit 2 ;;
    *) paths+=("$1"); shift ;;
  esac
done
case "$fail_on" in error|warning|never) ;; *) echo "gate.sh: --fail-on takes error, warning or never" >&2; exit 2 ;; esac
guard=${GGUFGUARD:-ggufguard}
command -v "$guard" >/dev/null || { echo "gate.sh: $guard not found (set GGUFGUARD)" >&2; exit 2; }

# The files to scan, NUL-separated (any byte may be in a name).
list=$(mktemp)
trap 'rm -f "$list"' EXIT
if [ -n "$changed_from" ]; then
  # Added, copied, modified or renamed since the merge base: deleted files
  # have nothing to scan. -z keeps odd names whole.
  git diff -z --name-only --diff-filter=ACMR "$changed_from...HEAD" -- '*.gguf' '*.GGUF' '*.llamafile' '*.LLAMAFILE' >"$list"
fi
for p in "${paths[@]}"; do printf '%s\0' "$p" >>"$list"; done
if [ ! -s "$list" ] && [ -z "$changed_from" ]; then
  echo "gate.sh: nothing to scan (give paths or --changed-from)" >&2
  exit 2
fi

status=0
"$guard" scan --recursive --format sarif --null --files-from "$list" "${scan_args[@]}" >"$sarif" || status=$?
if [ -n "$markdown" ]; then
  "$guard" scan --recursive --format markdown --null --files-from "$list" "${scan_args[@]}" >"$markdown" 2>/dev/null || true
fi
case "$status" in
  0|1) ;;
  5) echo "gate.sh: ggufguard could not verify every file (inconclusive): failing" >&2; exit 5 ;;
  *) echo "gate.sh: ggufguard scan exited $status (usage, I/O or internal error): failing" >&2; exit "$status" ;;
esac
# Results that stand (no accepted suppression) at or above the threshold.
count() {
  python3 - "$sarif" "$@" <<'PY'
import json, sys
levels = set(sys.argv[2:])
runs = json.load(open(sys.argv[1]))["runs"]
print(sum(1 for run in runs for r in run["results"] if r["level"] in levels and not r.get("suppressions")))
PY
}
case "$fail_on" in
  never) standing=0 ;;
  error) standing=$(count error) ;;
  warning) standing=$(count error warning) ;;
esac
echo "gate.sh: $standing finding(s) at or above '$fail_on' stand; SARIF in $sarif" >&2
[ "$standing" -eq 0 ]
