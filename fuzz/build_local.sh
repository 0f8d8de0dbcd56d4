#!/usr/bin/env bash
# Runs the OSS-Fuzz build (fuzz/oss_fuzz_build.sh) on this machine, without
# Docker: clang 14, libFuzzer, ASan+UBSan, and Debian's abseil, nettle and
# nlohmann-json with libstdc++ (OSS-Fuzz itself uses libc++ and builds those
# from source; see fuzz/oss-fuzz/Dockerfile). Then checks what landed in $OUT
# the way OSS-Fuzz's check_build would: each fuzzer runs its seed corpus once
# with its .options.
#
#   bash fuzz/build_local.sh            # -> build/oss-fuzz-out/
#   JOBS=2 OUT=/tmp/out bash fuzz/build_local.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

export CC=${CC:-clang-14}
export CXX=${CXX:-clang++-14}
# OSS-Fuzz's address + undefined flags, less -stdlib=libc++.
san="-fsanitize=address,undefined -fsanitize-address-use-after-scope -fno-sanitize-recover=undefined"
export CFLAGS=${CFLAGS:-"-O1 -fno-omit-frame-pointer -gline-tables-only $san -fsanitize=fuzzer-no-link"}
export CXXFLAGS=${CXXFLAGS:-"$CFLAGS"}
export LIB_FUZZING_ENGINE=${LIB_FUZZING_ENGINE:--fsanitize=fuzzer}
export OUT=${OUT:-$root/build/oss-fuzz-out}
export WORK=${WORK:-$root/build/oss-fuzz-work}
export SRC=${SRC:-$root/build/oss-fuzz-src}  # unused with system dependencies
export GGUFGUARD_DEPS=${GGUFGUARD_DEPS:-system}
export JOBS=${JOBS:-2}
mkdir -p "$OUT" "$WORK" "$SRC"

bash fuzz/oss_fuzz_build.sh

echo "== checking $OUT"
check=$(mktemp -d)
trap 'rm -rf "$check"' EXIT
status=0
for options in "$OUT"/*.options; do
  f=$(basename "$options" .options)
  [[ -x $OUT/$f && -f $OUT/${f}_seed_corpus.zip && -f $OUT/gguf.dict ]] || { echo "missing files for $f"; status=1; continue; }
  mkdir -p "$check/$f"
  (cd "$check/$f" && unzip -q "$OUT/${f}_seed_corpus.zip")
  # The .options as libFuzzer flags, dict resolved against $OUT, as OSS-Fuzz does.
  flags=()
  while IFS='=' read -r key value; do
    key=$(echo "$key" | tr -d ' '); value=$(echo "$value" | tr -d ' ')
    [[ -z $key || $key == \[* || $key == \#* ]] && continue
    [[ $key == dict ]] && value="$OUT/$value"
    flags+=("-$key=$value")
  done <"$options"
  if (cd "$check" && "$OUT/$f" "${flags[@]}" -runs=0 "$check/$f" >"$check/$f.log" 2>&1); then
    echo "$f: ok ($(grep -o 'INITED.*' "$check/$f.log" | head -n 1))"
  else
    echo "$f: FAILED"; tail -n 30 "$check/$f.log"; status=1
  fi
done
exit $status
