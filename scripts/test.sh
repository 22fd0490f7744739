#!/usr/bin/env bash
# Builds and runs the whole test suite: installs what a fresh Debian/Ubuntu machine lacks, then for each CMake
# preset configures, builds and runs ctest (each test preset of an emulated platform under its QEMU CPU).
# EDGEATTN_TEST_PRESETS="host-release armv7-neon" runs a subset (test preset names; see CMakePresets.json).
set -euo pipefail
cd "$(dirname "$0")/.."
host_packages=(ca-certificates cmake ninja-build g++ clang-14 libclang-rt-14-dev binutils python3 make pkg-config meson
  libhwy-dev libgtest-dev googletest libbenchmark-dev)
cross_packages=(g++-aarch64-linux-gnu g++-arm-linux-gnueabihf qemu-user gcc-arm-none-eabi libnewlib-arm-none-eabi
  libstdc++-arm-none-eabi-newlib qemu-system-arm libhwy-dev:arm64 libgtest-dev:arm64 libbenchmark-dev:arm64)
all_presets="host-release host-static host-static-v3 host-static-v4 host-clang host-asan host-fuzz
  aarch64-neon aarch64-sve2-512 aarch64-sve-256 aarch64-sve2-128 armv7-neon cortex-m4 cortex-m7 cortex-m55 cortex-m55-clang"
presets=${EDGEATTN_TEST_PRESETS:-$all_presets}
packages=("${host_packages[@]}")
case " $presets " in *aarch64*|*armv7*|*cortex*) packages+=("${cross_packages[@]}") ;; esac
scripts/install-deps.sh "${packages[@]}"

# A static-dispatch build for an ISA level runs only on a CPU that has it (AVX2 target: AVX2, AES, CLMUL).
cpu_lacks() {
  case $1 in
    *-v3) ! grep -qw avx2 /proc/cpuinfo || ! grep -qw aes /proc/cpuinfo || ! grep -qw pclmulqdq /proc/cpuinfo ;;
    *-v4) ! grep -qw avx512f /proc/cpuinfo || ! grep -qw avx512bw /proc/cpuinfo || ! grep -qw avx512vl /proc/cpuinfo ;;
    *) false ;;
  esac
}

configured=" "
timings=""  # seconds per step, printed at the end: where CI's time goes
for preset in $presets; do
  if cpu_lacks "$preset"; then
    echo "=== skip $preset: this CPU lacks its ISA level"
    continue
  fi
  configure=$(python3 -c "import json,sys; d=json.load(open('CMakePresets.json'));
print(next(t['configurePreset'] for t in d['testPresets'] if t['name']=='$preset'))")
  if [[ "$configured" != *" $configure "* ]]; then
    echo "=== configure and build $configure"
    start=$SECONDS
    cmake --preset "$configure"
    cmake --build --preset "$configure"
    configured+="$configure "
    timings+="  build $configure: $((SECONDS - start)) s"$'\n'
  fi
  echo "=== test $preset"
  start=$SECONDS
  ctest --preset "$preset"
  timings+="  test $preset: $((SECONDS - start)) s"$'\n'
done
echo "=== all test presets passed: $(echo $presets)"
printf "=== time per step (%d s in all)\n%s" "$SECONDS" "$timings"
