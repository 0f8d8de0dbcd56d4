#!/usr/bin/env bash
# The shared library exports the C API and nothing else: the symbols that
# `nm -D --defined-only` lists, the version script's list and the functions
# ggufguard.h declares GGUFGUARD_API must be the same three sets. Also checks
# the SONAME.
#   check_exports.sh LIB.so VERSION_SCRIPT HEADER EXPECTED_SONAME
set -euo pipefail
lib=$1 map=$2 header=$3 soname=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

nm -D --defined-only "$lib" | awk '{print $NF}' | sed 's/@.*//' | sort -u >"$tmp/exported"
sed -n 's/^ *\(ggufguard_[a-z0-9_]*\);$/\1/p' "$map" | sort -u >"$tmp/map"
# Declarations may span lines: join the header, then take each name that
# follows GGUFGUARD_API and its return type.
tr '\n' ' ' <"$header" | grep -o 'GGUFGUARD_API [^;(]*(' | grep -o 'ggufguard_[a-z0-9_]* *($' |
  tr -d ' (' | sort -u >"$tmp/header"

status=0
if ! diff -u "$tmp/map" "$tmp/exported" >"$tmp/d1"; then
  echo "check_exports: $lib exports other symbols than $map lists (+ exported, - missing):"
  cat "$tmp/d1"
  status=1
fi
if ! diff -u "$tmp/header" "$tmp/map" >"$tmp/d2"; then
  echo "check_exports: $map and the GGUFGUARD_API functions of $header differ (+ map only, - header only):"
  cat "$tmp/d2"
  status=1
fi
if [[ ! -s $tmp/exported ]]; then
  echo "check_exports: $lib exports nothing"
  status=1
fi
actual_soname=$(readelf -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
if [[ $actual_soname != "$soname" ]]; then
  echo "check_exports: SONAME is '$actual_soname', expected '$soname'"
  status=1
fi
if (( status == 0 )); then
  echo "check_exports: $(wc -l <"$tmp/exported") symbols, all in the C API; SONAME $actual_soname"
fi
exit $status
