#!/bin/bash -eu
# ClusterFuzzLite build script: the same build as OSS-Fuzz.
exec bash "$SRC/ggufguard/fuzz/oss_fuzz_build.sh"
