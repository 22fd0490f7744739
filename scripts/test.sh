#!/usr/bin/env bash
# Builds and runs the whole test suite: installs what a fresh Debian/Ubuntu machine lacks, then for each
# CMake preset configures, builds and runs ctest. EDGEATTN_TEST_PRESETS="host-release" runs a subset.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh ca-certificates cmake ninja-build g++ clang-14 libclang-rt-14-dev binutils \
  libhwy-dev libgtest-dev googletest libbenchmark-dev
presets=${EDGEATTN_TEST_PRESETS:-"host-release host-static host-clang host-asan host-fuzz"}
for preset in $presets; do
  echo "=== preset $preset"
  cmake --preset "$preset"
  cmake --build --preset "$preset"
  ctest --preset "$preset"
done
echo "=== all presets passed: $presets"
