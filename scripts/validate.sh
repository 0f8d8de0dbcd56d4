#!/usr/bin/env bash
# Installs what is missing, builds a release and validates the given GGUF
# files (or, with none, a small valid file the project ships).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target ggufguard_cli >/dev/null
if [ $# -eq 0 ]; then
  set -- corpus/valid/minimal-llama.gguf
fi
exec ./build/release/ggufguard validate "$@"
