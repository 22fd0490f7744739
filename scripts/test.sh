#!/usr/bin/env bash
# Builds and runs the whole test suite: installs what a fresh Debian/Ubuntu machine lacks, then for each CMake
# test preset configures and builds its configure preset (once per configure preset) and runs ctest (each test
# preset of an emulated platform under its QEMU CPU).
#   EDGEATTN_TEST_PRESETS="host-release armv7-neon" scripts/test.sh   runs a subset (test preset names)
# Which kinds of test (ctest labels: unit, long, proof, examples, compile_fail, packaging, flags, source, bench) each
# preset runs is its test preset's label filter in CMakePresets.json; tests/CMakeLists.txt says what each kind is
# and docs/platforms.md lists the choice per preset. A new platform: its configure, build and test presets in
# CMakePresets.json (the test preset excludes the kinds another preset already covers), then its name below.
# At the end: the time of every step, wall clock and CPU (user + system of every process the step ran, so the
# figure holds on a busy machine too), and JUnit XML of each test preset in build/ctest-junit/.
set -euo pipefail
cd "$(dirname "$0")/.."
host_packages=(ca-certificates cmake ninja-build g++ clang-14 libclang-rt-14-dev binutils python3 make pkg-config meson
  libhwy-dev libgtest-dev googletest libbenchmark-dev ccache clang-format-14)
cross_packages=(g++-aarch64-linux-gnu g++-arm-linux-gnueabihf qemu-user gcc-arm-none-eabi libnewlib-arm-none-eabi
  libstdc++-arm-none-eabi-newlib qemu-system-arm libhwy-dev:arm64 libgtest-dev:arm64)
all_presets="host-release host-static host-static-v3 host-static-v4 host-clang host-asan host-fuzz
  aarch64-neon aarch64-sve2-512 aarch64-sve-256 aarch64-sve2-128 armv7-neon cortex-m4 cortex-m7 cortex-m55"
presets=${EDGEATTN_TEST_PRESETS:-$all_presets}
packages=("${host_packages[@]}")
case " $presets " in *aarch64*|*armv7*|*cortex*) packages+=("${cross_packages[@]}") ;; esac
start=$SECONDS
scripts/install-deps.sh "${packages[@]}"
install_seconds=$((SECONDS - start))

# A static-dispatch build for an ISA level runs only on a CPU that has it (AVX2 target: AVX2, AES, CLMUL).
cpu_lacks() {
  case $1 in
    *-v3) ! grep -qw avx2 /proc/cpuinfo || ! grep -qw aes /proc/cpuinfo || ! grep -qw pclmulqdq /proc/cpuinfo ;;
    *-v4) ! grep -qw avx512f /proc/cpuinfo || ! grep -qw avx512bw /proc/cpuinfo || ! grep -qw avx512vl /proc/cpuinfo ;;
    *) false ;;
  esac
}

# CPU seconds (user + system) of this script's finished child processes and all they waited for.
clock_ticks=$(getconf CLK_TCK)
cpu_seconds() { awk -v hz="$clock_ticks" '{ printf "%d", ($16 + $17) / hz }' "/proc/$$/stat"; }
timings=""
step_start() { step_wall=$SECONDS; step_cpu=$(cpu_seconds); }
step_end() {
  local line
  line=$(printf "  %-34s %6d s wall %7d s CPU" "$1" $((SECONDS - step_wall)) $(($(cpu_seconds) - step_cpu)))
  echo "=== $line"
  timings+="$line"$'\n'
}

if command -v ccache >/dev/null; then ccache --zero-stats >/dev/null; fi
mkdir -p build/ctest-junit
configured=" "
for preset in $presets; do
  if cpu_lacks "$preset"; then
    echo "=== skip $preset: this CPU lacks its ISA level"
    continue
  fi
  configure=$(python3 -c "import json,sys; d=json.load(open('CMakePresets.json'));
print(next(t['configurePreset'] for t in d['testPresets'] if t['name']=='$preset'))")
  if [[ "$configured" != *" $configure "* ]]; then
    echo "=== configure and build $configure"
    step_start
    cmake --preset "$configure"
    cmake --build --preset "$configure"
    configured+="$configure "
    step_end "build $configure"
  fi
  echo "=== test $preset"
  step_start
  ctest --preset "$preset" --output-junit "$PWD/build/ctest-junit/$preset.xml"
  step_end "test $preset"
done
echo "=== all test presets passed: $(echo $presets)"
printf "=== time per step (install %d s; %d s in all, %d CPU-s)\n%s" "$install_seconds" "$SECONDS" "$(cpu_seconds)" \
  "$timings"
if command -v ccache >/dev/null; then ccache --show-stats | grep -iE "hits|misses" | sed 's/^/  ccache: /'; fi
