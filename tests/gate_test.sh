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
# A llamafile (an executable whose ZIP holds the model, stored) is a model too.
python3 - "$src/corpus/regressions/report-llamacpp-24263-empty-key.gguf" bad.llamafile <<'PY'
import io, sys, zipfile
out = io.BytesIO(b"MZqFpD='\n\nexec echo not-a-real-llamafile\n".ljust(512, b"\0"))
out.seek(0, io.SEEK_END)
with zipfile.ZipFile(out, "a", compression=zipfile.ZIP_STORED) as archive:
    archive.write(sys.argv[1], "model.gguf")
open(sys.argv[2], "wb").write(out.getvalue())
PY
echo notes >README.txt
git add . && git commit -qm change

# Only the changed model files are scanned: the old invalid one is not.
expect 1 "$gate" --changed-from main --sarif out.sarif
python3 - out.sarif <<'PY' || fail "the SARIF names other files than the changed ones"
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
uris = sorted(a["location"]["uri"] for a in run["artifacts"])
assert uris == ["bad.llamafile", "new%20bad.gguf"], run["artifacts"]
by_file = {}
for r in run["results"]:
    uri = r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    by_file.setdefault(uri, []).append(r["ruleId"])
assert len(by_file["new%20bad.gguf"]) == 7, by_file
# The member's seven findings, and GG9166 for the executable around it.
assert sorted(by_file["bad.llamafile"]) == sorted(by_file["new%20bad.gguf"] + ["GG9166"]), by_file
PY
# Nothing changed: nothing fails.
expect 0 "$gate" --changed-from HEAD --sarif empty.sarif
# Thresholds: the valid file has a warning.
expect 0 "$gate" --fail-on error ok.gguf
expect 1 "$gate" --fail-on warning ok.gguf
expect 0 "$gate" --fail-on never old-bad.gguf
# A suppression in force passes the gate and stays in the SARIF as suppressed.
cat >supp.json <<'J'
{"suppressions": [{"rule": "GG4008", "path": "*bad.*", "reason": "reviewed", "expires": "2999-12-31"},
                  {"rule": "GG3007", "path": "*bad.*", "reason": "reviewed", "expires": "2999-12-31"}]}
J
expect 0 "$gate" --suppressions supp.json --changed-from main --sarif supp.sarif --markdown summary.md
python3 - supp.sarif <<'PY' || fail "waived findings are missing from the SARIF"
import json, sys
results = json.load(open(sys.argv[1]))["runs"][0]["results"]
waived = [r for r in results if r.get("suppressions")]
assert len(waived) == 14 and all(r["suppressions"][0]["justification"] == "reviewed" for r in waived), results
# The llamafile's GG9166 (a warning, below the gate's threshold) stands.
assert [r["ruleId"] for r in results if not r.get("suppressions")] == ["GG9166"], results
PY
grep -q '^## ggufguard: all files valid' summary.md || fail "no Markdown summary"
# A file that cannot be read fails whatever the threshold.
expect 3 "$gate" --fail-on never missing.gguf
expect 2 "$gate" --fail-on sometimes ok.gguf
echo "OK: gate.sh"
