#!/usr/bin/env bash
# Installs what is missing, builds with ASan+UBSan and runs every test: the
# unit tests, the real-corpus tests (../shared), the corpus replay through
# every fuzzer, then a bounded libFuzzer run of each fuzzer (clang).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=$(nproc)
cmake --preset dev
cmake --build --preset dev -j "$jobs"
ctest --preset dev -j "$jobs"
if [ -x fuzz/ci_fuzz.sh ] || [ -f fuzz/ci_fuzz.sh ]; then
  bash fuzz/ci_fuzz.sh
fi
