#!/usr/bin/env bash
# Installs everything ggufguard needs on a fresh Debian 12 machine (as root).
# Safe to run again: it only calls apt-get when something is missing.
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config           # build
  libabsl-dev                                 # Status, Span, hash containers, strings
  nlohmann-json3-dev                          # JSON and SARIF reports, policy files
  nettle-dev                                  # SHA-256 of chat templates
  libgtest-dev libgmock-dev                   # tests
  libbenchmark-dev                            # benchmarks
  clang-14 libclang-rt-14-dev llvm-14         # libFuzzer and sanitizers
  zip                                         # OSS-Fuzz seed corpora
  pybind11-dev python3-dev python3-pytest     # the Python module and its tests (Debian's /usr/bin/python3)
  python3-jinja2                              # tests/jinja2_oracle.py: Jinja2's sandbox as an oracle for chat templates
  python3-jsonschema                          # tests/cyclonedx_schema.py: the BOM against the official CycloneDX schema
  pre-commit                                  # tests/pre_commit_hook.sh: .pre-commit-hooks.yaml in a real repository
  libcurl4-openssl-dev                        # remote files: https:// and hf:// (src/ggufguard/remote)
  nginx-light                                 # tests/remote_test.cc: a real HTTP server with Range, on loopback
)

# The measuring tools of bench/measure.sh, only when asked for.
if [ "${1:-}" = "--bench" ]; then
  packages+=(time hyperfine strace bc linux-perf)  # bc, linux-perf: bench/measure_bulk.sh
fi

# Node.js and npm for the loader oracle (fuzz/oracle: llama.cpp's loader from
# the npm registry). Debian's own (Node 18, npm 9) when there is none: a
# machine whose Node comes from elsewhere keeps it.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  packages+=(nodejs npm)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: run as root (apt-get install needs it)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
