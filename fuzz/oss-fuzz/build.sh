#!/bin/bash -eu
# OSS-Fuzz build script: everything lives in the repository.
exec bash "$SRC/ggufguard/fuzz/oss_fuzz_build.sh"
