#!/usr/bin/env bash
# Regenerates the committed findings listings (tests/data/findings/), which
# the tests findings_unchanged.corpus and findings_unchanged.corpus_real
# compare with what the code judges today (tests/tools/findings_digest.cc).
# Run it after a change meant to alter findings (a new rule, a fix), then
# read `git diff tests/data/findings`: it should name only the files that
# change was about.
#
#   bash scripts/findings_digest.sh [BUILD_DIR]   (default build/quick)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/quick}
tool=$build/tests/tools/findings_digest
cmake --build "$build" --target findings_digest >/dev/null
mkdir -p tests/data/findings
"$tool" --mutants 16 corpus=corpus fuzz-regressions=fuzz/regressions --write tests/data/findings/corpus.tsv
shared=${GGUFGUARD_SHARED_DIR:-../shared}
if [ -d "$shared/corpus-real" ]; then
  "$tool" corpus-real="$shared/corpus-real" --write tests/data/findings/corpus-real.tsv
else
  echo "findings_digest.sh: $shared/corpus-real not found: tests/data/findings/corpus-real.tsv left as it was" >&2
fi
wc -l tests/data/findings/*.tsv
