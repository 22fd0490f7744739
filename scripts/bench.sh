#!/usr/bin/env bash
# Builds and runs the microbenchmarks (scalar path vs SIMD path of every kernel) on this machine: installs
# what a fresh Debian/Ubuntu machine lacks, then uses the host-release preset. Extra arguments go to the
# benchmark binary (e.g. --benchmark_filter=softmax).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh ca-certificates cmake ninja-build g++ binutils libhwy-dev libgtest-dev googletest \
  libbenchmark-dev
cmake --preset host-release >/dev/null
cmake --build --preset host-release --target edgeattn_bench
# One core, repeated, medians: the machine may be shared; read ratios, not absolute times.
runner=()
command -v taskset >/dev/null && runner=(taskset -c 0)
"${runner[@]}" build/host-release/bench/edgeattn_bench --benchmark_repetitions=5 \
  --benchmark_report_aggregates_only=true --benchmark_min_time=0.05 "$@"
