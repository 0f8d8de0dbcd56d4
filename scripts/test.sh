#!/usr/bin/env bash
# Installs what is missing, builds with ASan+UBSan and runs every test: the
# unit tests, the real-corpus tests (../shared), the corpus replay through
# every fuzzer, the loader oracle (llama.cpp's real loader on the corpus and
# mutants), then a bounded libFuzzer run of each fuzzer (clang).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=$(nproc)
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# llama.cpp's loader for the oracle.loader test, exactly as locked
# (fuzz/oracle/package-lock.json, ~29 MB); without it that test says SKIPPED.
(cd fuzz/oracle && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) ||
  echo "test.sh: npm ci failed in fuzz/oracle; oracle.loader will be skipped" >&2

cmake --preset dev
cmake --build --preset dev -j "$jobs"
ctest --preset dev -j "$jobs" 2>&1 | tee "$log"
# ctest's summary: "100% tests passed, 0 tests failed out of N"
total=$(sed -n 's/.*tests failed out of \([0-9]*\).*/\1/p' "$log" | tail -n 1)
failed=$(sed -n 's/.* \([0-9]*\) tests failed out of.*/\1/p' "$log" | tail -n 1)

# 30 s a fuzzer (ci_fuzz.sh's own default is 60): the build and the suite
# grew with this stop's remote, split-set and CI work, and .ci/run must stay
# near 30 minutes on 2 cores. FUZZ_SECONDS=60 bash scripts/test.sh restores it.
FUZZ_SECONDS=${FUZZ_SECONDS:-30} bash fuzz/ci_fuzz.sh

echo "tests: $((total - failed)) passed, ${failed} failed"
