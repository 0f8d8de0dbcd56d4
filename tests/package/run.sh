#!/usr/bin/env bash
# The library as a user gets it: a non-sanitized build of this source tree
# installed into a temporary prefix, and everything below built from that
# prefix alone (no include path into src/). One CTest test per step
# (tests/package/CMakeLists.txt); `install` is the fixture the others need.
#
#   run.sh install  SOURCE_DIR WORK_DIR
#   run.sh exports  SOURCE_DIR WORK_DIR
#   run.sh examples SOURCE_DIR WORK_DIR SHARED_DIR   (CMake find_package, then pkg-config)
#   run.sh python   SOURCE_DIR WORK_DIR SHARED_DIR
# Exit 77 (CTest: skipped) where ../shared/corpus-real is missing.
set -euo pipefail
step=$1 src=$2 work=$3 shared=${4:-}
prefix=$work/prefix
python=/usr/bin/python3  # Debian's: the module is built for it, whatever PATH says
jobs=${JOBS:-2}

corpus() {
  if [[ ! -d $shared/corpus-real/valid ]]; then
    echo "run.sh: no real corpus at $shared/corpus-real; skipped"
    exit 77
  fi
}

# Runs a loader on the real files: every valid file loads and its tensors'
# CRC-32s are those of the bytes at the table's offsets, recomputed here by
# Python's zlib from the file itself; every malformed file is refused with
# at least one finding. Leaves the whole output in $2.
check_loader() {
  local loader=$1 out=$2 f rc
  : >"$out"
  for f in "$shared"/corpus-real/valid/*.gguf; do
    rc=0
    "$loader" "$f" >"$out.one" || rc=$?
    cat "$out.one" >>"$out"
    if (( rc != 0 )); then echo "FAIL: $loader refused valid $f (exit $rc)"; cat "$out.one"; return 1; fi
    "$python" - "$f" "$out.one" <<'PY'
import re, sys, zlib
path, out = sys.argv[1], open(sys.argv[2]).read().splitlines()
data = open(path, "rb").read()
m = re.fullmatch(r".*: valid, (\d+) tensors", out[0])
assert m, out[0]
lines = out[1:]
assert len(lines) == int(m.group(1)), (len(lines), m.group(1))
for line in lines:
    t = re.fullmatch(r"  (\S+) type=\d+ ne=\[[\d,]+\] offset=(\d+) size=(\d+) crc32=([0-9a-f]{8})", line)
    assert t, line
    off, size = int(t.group(2)), int(t.group(3))
    assert off + size <= len(data), line
    assert "%08x" % zlib.crc32(data[off:off + size]) == t.group(4), line
PY
  done
  for f in "$shared"/corpus-real/malformed/*.gguf; do
    rc=0
    "$loader" "$f" >"$out.one" || rc=$?
    cat "$out.one" >>"$out"
    if (( rc != 1 )) || ! grep -q ': refused$' "$out.one" || ! grep -qE '^  GG[0-9]{4} ' "$out.one"; then
      echo "FAIL: $loader did not refuse malformed $f with findings (exit $rc)"; cat "$out.one"; return 1
    fi
  done
  # A file with no error whose verdict is inconclusive (a shard of a split
  # model, read alone: ggufguard_report_valid() is 1) is refused too: the
  # loaders gate on the verdict.
  rc=0
  "$loader" "$src/corpus/split/minimal-llama-00002-of-00003.gguf" >"$out.one" || rc=$?
  cat "$out.one" >>"$out"
  if (( rc != 1 )) || ! grep -q ': refused$' "$out.one" || ! grep -q '^  not checked: ' "$out.one"; then
    echo "FAIL: $loader did not refuse an inconclusive file (exit $rc)"; cat "$out.one"; return 1
  fi
  echo "$loader: $(ls "$shared"/corpus-real/valid/*.gguf | wc -l) valid files loaded," \
       "$(ls "$shared"/corpus-real/malformed/*.gguf | wc -l) malformed refused, an inconclusive shard refused"
}

case $step in
  install)
    rm -rf "$work"
    cmake -S "$src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" \
      -DGGUFGUARD_BUILD_TESTS=OFF -DGGUFGUARD_BUILD_FUZZERS=OFF -DGGUFGUARD_BUILD_BENCHMARKS=OFF \
      -DGGUFGUARD_STATIC_CLI=OFF -DGGUFGUARD_BUILD_SHARED=ON -DGGUFGUARD_BUILD_PYTHON=ON \
      -DPYTHON_EXECUTABLE="$python" >/dev/null
    cmake --build "$work/build" -j "$jobs"
    cmake --install "$work/build" >/dev/null
    # Only the public headers; the C++ one must not reach for Abseil or src/.
    (cd "$prefix/include" && find . -type f | sort)
    if grep -l 'absl/\|ggufguard/[a-z_]*/' "$prefix"/include/ggufguard/*; then
      echo "FAIL: an installed header includes Abseil or an internal header"; exit 1
    fi
    ;;
  exports)
    "$src/tests/package/check_exports.sh" "$prefix/lib/libggufguard.so.0" \
      "$src/src/ggufguard/capi/ggufguard.map" "$src/include/ggufguard/ggufguard.h" libggufguard.so.0
    test -f "$prefix/lib/libggufguard.a"
    ;;
  examples)
    corpus
    rm -rf "$work/examples" && mkdir -p "$work/examples"
    cmake -S "$src/examples" -B "$work/examples/cmake" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
    cmake --build "$work/examples/cmake"
    # ldd's output is taken whole first: `ldd | grep -q` fails at random under
    # pipefail when grep exits early and ldd dies of SIGPIPE.
    libs=$(ldd "$work/examples/cmake/load_c")
    grep -q "$prefix/lib/libggufguard.so.0" <<<"$libs" ||
      { echo "FAIL: load_c does not use the installed library"; echo "$libs"; exit 1; }
    check_loader "$work/examples/cmake/load_c" "$work/examples/c.out"
    check_loader "$work/examples/cmake/load_cpp" "$work/examples/cpp.out"
    diff -u "$work/examples/c.out" "$work/examples/cpp.out"
    check_loader "$work/examples/cmake/load_c_static" "$work/examples/static.out"
    diff -u "$work/examples/c.out" "$work/examples/static.out"
    static_libs=$(ldd "$work/examples/cmake/load_c_static")
    if grep -q libggufguard <<<"$static_libs"; then
      echo "FAIL: load_c_static loads libggufguard.so"; exit 1
    fi
    # Once more with nothing but pkg-config, as a Makefile would.
    export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
    # shellcheck disable=SC2046
    cc -std=c99 -Wall -Wextra -Werror -pedantic -o "$work/examples/load_c_pc" "$src/examples/load.c" \
      $(pkg-config --cflags --libs ggufguard) -Wl,-rpath,"$(pkg-config --variable=libdir ggufguard)"
    check_loader "$work/examples/load_c_pc" "$work/examples/pc.out"
    diff -u "$work/examples/c.out" "$work/examples/pc.out"
    echo "pkg-config $(pkg-config --modversion ggufguard): same output"
    ;;
  python)
    corpus
    export PYTHONPATH=$prefix/lib/python3/dist-packages
    GGUFGUARD_SHARED_DIR=$shared "$python" -m pytest -q -p no:cacheprovider "$src/python/tests"
    # The README's Python example: valid files accepted, malformed refused.
    "$python" "$src/examples/gatekeeper.py" "$shared"/corpus-real/valid/*.gguf >/dev/null
    for f in "$shared"/corpus-real/malformed/*.gguf; do
      rc=0
      "$python" "$src/examples/gatekeeper.py" "$f" >"$work/gatekeeper.out" || rc=$?
      if (( rc != 1 )) || ! grep -q ' error GG[0-9]\{4\} ' "$work/gatekeeper.out"; then
        echo "FAIL: gatekeeper.py did not refuse $f"; cat "$work/gatekeeper.out"; exit 1
      fi
    done
    rc=0
    "$python" "$src/examples/gatekeeper.py" "$src/corpus/split/minimal-llama-00002-of-00003.gguf" \
      >"$work/gatekeeper.out" || rc=$?
    if (( rc != 1 )) || ! grep -q ': not checked: ' "$work/gatekeeper.out"; then
      echo "FAIL: gatekeeper.py did not refuse an inconclusive shard"; cat "$work/gatekeeper.out"; exit 1
    fi
    echo "gatekeeper.py: valid files accepted, malformed and an inconclusive shard refused"
    ;;
  *)
    echo "run.sh: unknown step $step" >&2; exit 2 ;;
esac
