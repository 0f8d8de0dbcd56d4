#!/usr/bin/env bash
# scripts/gate.sh (the logic of action.yml) on a temporary git repository,
# without GitHub: the files a branch changed, thresholds, suppressions in the
# SARIF, an I/O error failing closed.
# usage: gate_test.sh GGUFGUARD_CLI SOURCE_DIR
set -euo pipefail
export GGUFGUARD=$1
src=$2
gate=$src/scripts/gate.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
expect() {  # expect CODE CMD...: CMD exits CODE
  local want=$1 got=0
  shift
  "$@" 2>>"$work/log" || got=$?
  [ "$got" -eq "$want" ] || { cat "$work/log" >&2; fail "$* exited $got, not $want"; }
}
git init -q -b main repo && cd repo
git config user.email t@example.invalid && git config user.name t
cp "$src/corpus/valid/alignment-64.gguf" ok.gguf
cp "$src/corpus/regressions/report-llamacpp-24263-empty-key.gguf" old-bad.gguf
git add . && git commit -qm base
git checkout -qb pr
cp "$src/corpus/regressions/report-llamacpp-24263-empty-key.gguf" "new bad.gguf"
echo notes >README.txt
git add . && git commit -qm change

# Only the changed GGUF file is scanned: the old invalid one is not.
expect 1 "$gate" --changed-from main --sarif out.sarif
python3 - out.sarif <<'PY' || fail "the SARIF names other files than the changed one"
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
assert [a["location"]["uri"] for a in run["artifacts"]] == ["new%20bad.gguf"], run["artifacts"]
assert len(run["results"]) == 7
PY
# Nothing changed: nothing fails.
expect 0 "$gate" --changed-from HEAD --sarif empty.sarif
# Thresholds: the valid file has a warning.
expect 0 "$gate" --fail-on error ok.gguf
expect 1 "$gate" --fail-on warning ok.gguf
expect 0 "$gate" --fail-on never old-bad.gguf
# A suppression in force passes the gate and stays in the SARIF as suppressed.
cat >supp.json <<'J'
{"suppressions": [{"rule": "GG4008", "path": "*bad.gguf", "reason": "reviewed", "expires": "2999-12-31"},
                  {"rule": "GG3007", "path": "*bad.gguf", "reason": "reviewed", "expires": "2999-12-31"}]}
J
expect 0 "$gate" --suppressions supp.json --changed-from main --sarif supp.sarif --markdown summary.md
python3 - supp.sarif <<'PY' || fail "waived findings are missing from the SARIF"
import json, sys
results = json.load(open(sys.argv[1]))["runs"][0]["results"]
assert len(results) == 7 and all(r["suppressions"][0]["justification"] == "reviewed" for r in results)
PY
grep -q '^## ggufguard: all files valid' summary.md || fail "no Markdown summary"
# A file that cannot be read fails whatever the threshold.
expect 3 "$gate" --fail-on never missing.gguf
expect 2 "$gate" --fail-on sometimes ok.gguf
echo "OK: gate.sh"
