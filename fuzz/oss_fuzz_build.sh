#!/usr/bin/env bash
# Builds ggufguard's fuzzers the OSS-Fuzz way. OSS-Fuzz's and ClusterFuzzLite's
# build.sh call this script and nothing else; fuzz/build_local.sh runs it here.
#
# Honours the OSS-Fuzz environment:
#   CC CXX CFLAGS CXXFLAGS   compilers and flags (sanitizers, -fsanitize=fuzzer-no-link,
#                            -stdlib=libc++ on OSS-Fuzz)
#   LIB_FUZZING_ENGINE       what provides main() (-fsanitize=fuzzer, an AFL driver...)
#   OUT                      where fuzzers, seed corpora, .dict and .options go
#   SRC                      where the Dockerfile cloned the dependencies
#   WORK                     scratch space (default: $OUT/../oss-fuzz-work)
# and:
#   GGUFGUARD_DEPS=auto|source|system
#       source: build abseil-cpp and nlohmann/json from $SRC/abseil-cpp
#               and $SRC/json with the flags above. Needed when
#               CXXFLAGS select libc++ (OSS-Fuzz): a distribution's abseil is
#               built against libstdc++ and does not link.
#       system: use the installed packages (Debian's, libstdc++).
#       auto (default): source when CXXFLAGS contain -stdlib=libc++, else system.
#   JOBS   parallel build jobs (default: nproc)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)

: "${CC:?set CC}" "${CXX:?set CXX}" "${OUT:?set OUT}" "${LIB_FUZZING_ENGINE:?set LIB_FUZZING_ENGINE}"
CFLAGS=${CFLAGS:-}
CXXFLAGS=${CXXFLAGS:-}
SRC=${SRC:-$(cd "$root/.." && pwd)}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
WORK=${WORK:-$OUT/../oss-fuzz-work}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
JOBS=${JOBS:-$(nproc)}
deps=${GGUFGUARD_DEPS:-auto}
if [[ $deps == auto ]]; then
  if [[ " $CXXFLAGS " == *" -stdlib=libc++ "* ]]; then deps=source; else deps=system; fi
fi

# The fuzzers OSS-Fuzz runs. validate_fuzzer_plain (no custom mutator) exists
# for the coverage comparison in docs/fuzzing.md and is not shipped.
fuzzers=(parse_fuzzer validate_fuzzer prefix_fuzzer policy_fuzzer capi_fuzzer template_fuzzer provenance_fuzzer
         data_kernel_fuzzer triage_fuzzer zip_fuzzer)

generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
# No CMAKE_BUILD_TYPE: its -O3/-DNDEBUG would override the engine's flags.
cmake_cxx=(
  "${generator[@]}"
  -DCMAKE_CXX_COMPILER="$CXX" -DCMAKE_CXX_FLAGS="$CXXFLAGS"
  -DCMAKE_POSITION_INDEPENDENT_CODE=ON
  -DBUILD_SHARED_LIBS=OFF
)
# The dependencies have C sources too (abseil's CMake checks a C compiler).
cmake_common=("${cmake_cxx[@]}" -DCMAKE_C_COMPILER="$CC" -DCMAKE_C_FLAGS="$CFLAGS")

prefix_path=""
if [[ $deps == source ]]; then
  prefix="$WORK/deps"
  for d in abseil-cpp json; do
    if [[ ! -d $SRC/$d ]]; then
      echo "oss_fuzz_build.sh: $SRC/$d is missing; the Dockerfile clones it (see fuzz/oss-fuzz/Dockerfile)" >&2
      exit 1
    fi
  done
  echo "== building dependencies from source into $prefix"
  cmake -S "$SRC/abseil-cpp" -B "$WORK/abseil-build" "${cmake_common[@]}" -DCMAKE_INSTALL_PREFIX="$prefix" \
    -DCMAKE_CXX_STANDARD=20 -DABSL_PROPAGATE_CXX_STD=ON -DABSL_BUILD_TESTING=OFF -DBUILD_TESTING=OFF
  cmake --build "$WORK/abseil-build" -j "$JOBS" --target install
  cmake -S "$SRC/json" -B "$WORK/json-build" "${cmake_common[@]}" -DCMAKE_INSTALL_PREFIX="$prefix" \
    -DJSON_BuildTests=OFF -DJSON_Install=ON
  cmake --build "$WORK/json-build" -j "$JOBS" --target install
  prefix_path=$prefix
fi

echo "== building ggufguard and its fuzzers (dependencies: $deps)"
cmake -S "$root" -B "$WORK/ggufguard-build" "${cmake_cxx[@]}" \
  -DCMAKE_PREFIX_PATH="$prefix_path" \
  -DGGUFGUARD_BUILD_TESTS=OFF -DGGUFGUARD_BUILD_BENCHMARKS=OFF -DGGUFGUARD_BUILD_FUZZERS=ON \
  -DGGUFGUARD_LIBFUZZER=OFF -DGGUFGUARD_SANITIZE= \
  -DGGUFGUARD_LIB_FUZZING_ENGINE="$LIB_FUZZING_ENGINE"
cmake --build "$WORK/ggufguard-build" -j "$JOBS" --target "${fuzzers[@]}"

echo "== installing into $OUT"
cp "$here/gguf.dict" "$here/policy.dict" "$here/jinja.dict" "$here/triage.dict" "$OUT/"
# GGUF seeds for the GGUF fuzzers; policy files for policy_fuzzer.
gguf_zip="$WORK/gguf_seed_corpus.zip"
policy_zip="$WORK/policy_seed_corpus.zip"
template_zip="$WORK/template_seed_corpus.zip"
data_kernel_zip="$WORK/data_kernel_seed_corpus.zip"
triage_zip="$WORK/triage_seed_corpus.zip"
rm -f "$gguf_zip" "$policy_zip" "$template_zip" "$data_kernel_zip" "$triage_zip"
(cd "$root/corpus" && find valid rules regressions -type f ! -name '*.md' | LC_ALL=C sort | zip -q -X "$gguf_zip" -@)
(cd "$root/corpus" && find policies -type f | LC_ALL=C sort | zip -q -X "$policy_zip" -@)
(cd "$root/tests/data/chat_templates" && find . -name '*.jinja' | LC_ALL=C sort | zip -q -X "$template_zip" -@)
(cd "$root/fuzz/seeds/data_kernel_fuzzer" && find . -type f | LC_ALL=C sort | zip -q -X "$data_kernel_zip" -@)
(cd "$root/fuzz/seeds/triage_fuzzer" && find . -type f | LC_ALL=C sort | zip -q -X "$triage_zip" -@)
for f in "${fuzzers[@]}"; do
  cp "$WORK/ggufguard-build/fuzz/$f" "$OUT/$f"
  cp "$here/$f.options" "$OUT/$f.options"
  if [[ $f == policy_fuzzer ]]; then
    cp "$policy_zip" "$OUT/${f}_seed_corpus.zip"
  elif [[ $f == template_fuzzer || $f == provenance_fuzzer ]]; then
    cp "$template_zip" "$OUT/${f}_seed_corpus.zip"
  elif [[ $f == data_kernel_fuzzer ]]; then
    cp "$data_kernel_zip" "$OUT/${f}_seed_corpus.zip"
  elif [[ $f == triage_fuzzer ]]; then
    cp "$triage_zip" "$OUT/${f}_seed_corpus.zip"
  else
    cp "$gguf_zip" "$OUT/${f}_seed_corpus.zip"
  fi
done
echo "== done: ${fuzzers[*]} in $OUT"
