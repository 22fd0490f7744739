#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds and runs the whole test suite: installs what a fresh Debian/Ubuntu machine lacks, then for each CMake
# test preset configures and builds its configure preset (once per configure preset) and runs ctest (each test
# preset of an emulated platform under its QEMU CPU).
#   EDGEATTN_TEST_PRESETS="host-release armv7-neon" scripts/test.sh   runs a subset (test preset names)
# Which kinds of test (ctest labels: unit, long, proof, examples, compile_fail, packaging, flags, source, bench) each
# preset runs is its test preset's label filter in CMakePresets.json; tests/CMakeLists.txt says what each kind is
# and docs/platforms.md lists the choice per preset. A new platform: its configure, build and test presets in
# CMakePresets.json (the test preset excludes the kinds another preset already covers), then its name below.
#
# Four lanes run at once: one configures and builds the configure presets in turn, one runs each test preset as
# soon as its build is done, a side lane runs the two long host presets (host-long, host-flags), and a background
# lane builds host-fuzz (below). While one lane
# configures, links, discovers tests or waits for its last test, the others keep the cores busy. Each step's output
# goes to build/ci-logs/ and is printed whole when the step ends.
# At the end: every step's wall-clock and CPU seconds (user + system of all the processes the step ran, so the
# figure holds on a busy machine too), the totals, and JUnit XML of each test preset in build/ctest-junit/.
set -euo pipefail
cd "$(dirname "$0")/.."
host_packages=(ca-certificates cmake ninja-build g++ clang-14 libclang-rt-14-dev binutils python3 make pkg-config meson
  libhwy-dev libgtest-dev googletest libbenchmark-dev ccache clang-format-14 util-linux)
cross_packages=(g++-aarch64-linux-gnu g++-arm-linux-gnueabihf qemu-user gcc-arm-none-eabi libnewlib-arm-none-eabi
  libstdc++-arm-none-eabi-newlib qemu-system-arm llvm-14 libhwy-dev:arm64 libgtest-dev:arm64)
# host-long (the exhaustive sweeps: 20 minutes of one test on a busy machine) and host-flags (the flag matrix: one
# library build per row) run in a third lane as soon as host-release is built, so that neither holds up the test
# lane's other presets nor the build lane.
# host-fuzz's instrumented build (clang, ASan + UBSan + coverage, five x86 targets) is the longest: on an empty
# ccache two of its files take five minutes each. It runs in a lane of its own from the start, at a lower priority
# (nice 10), so that it uses the CPU time the other lanes leave (waits, links, test discovery, QEMU start-up) instead
# of running last with one core idle; its tests, the shortest, run last in the test lane.
all_presets="host-release host-long host-flags host-static host-static-v3 host-static-v4 host-clang host-asan
  aarch64-neon aarch64-sve2-512 aarch64-sve-256 aarch64-sve2-128 armv7-neon cortex-m4 cortex-m7 cortex-m55 cortex-m55-clang
  host-fuzz"
presets=${EDGEATTN_TEST_PRESETS:-$all_presets}
packages=("${host_packages[@]}")
case " $presets " in *aarch64*|*armv7*|*cortex*) packages+=("${cross_packages[@]}") ;; esac
scripts/install-deps.sh "${packages[@]}"
install_seconds=$SECONDS

# A static-dispatch build for an ISA level runs only on a CPU that has it (AVX2 target: AVX2, AES, CLMUL).
cpu_lacks() {
  case $1 in
    *-v3) ! grep -qw avx2 /proc/cpuinfo || ! grep -qw aes /proc/cpuinfo || ! grep -qw pclmulqdq /proc/cpuinfo ;;
    *-v4) ! grep -qw avx512f /proc/cpuinfo || ! grep -qw avx512bw /proc/cpuinfo || ! grep -qw avx512vl /proc/cpuinfo ;;
    *) false ;;
  esac
}
configure_of() {
  python3 -c "import json; d = json.load(open('CMakePresets.json'))
print(next(t['configurePreset'] for t in d['testPresets'] if t['name'] == '$1'))"
}
tests=()
configures=()
for preset in $presets; do
  if cpu_lacks "$preset"; then
    echo "=== skip $preset: this CPU lacks its ISA level"
    continue
  fi
  tests+=("$preset")
  configure=$(configure_of "$preset")
  [[ " ${configures[*]} " == *" $configure "* ]] || configures+=("$configure")
done

logs=build/ci-logs
rm -rf "$logs"
mkdir -p "$logs" build/ctest-junit
# Two cores: each build and each nested build of a test (flag matrix, consumers) uses two jobs.
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2}
# ccache keys an object on its command line, which holds this checkout's absolute paths. CCACHE_BASEDIR makes them
# relative, so a clone at another path (a CI runner's fresh workspace, a developer's tree) is served the objects
# another clone compiled from the same sources; NOHASHDIR keeps the working directory out of the key as well (it
# only names the compilation directory in debug info). Either can be set by the caller.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
if command -v ccache >/dev/null; then ccache --zero-stats >/dev/null; fi

# step NAME COMMAND...: runs COMMAND with its output in the step's log; prints the log, then one line with the
# step's wall-clock and CPU seconds (also kept for the table). Fails if COMMAND fails.
step() {
  local name=$1 log="$logs/${1// /_}" start=$SECONDS status=0
  shift
  echo "=== start $name"
  (
    set +e
    "$@"
    code=$?
    times >"$log.times"
    exit $code
  ) >"$log.log" 2>&1 || status=$?
  # times: this subshell's children, user and system, as "XmY.YYYs XmY.YYYs" on its second line.
  local cpu
  cpu=$(awk 'NR == 2 { for (i = 1; i <= 2; ++i) { split($i, t, /[ms]/); s += t[1] * 60 + t[2] } printf "%.0f", s }' \
    "$log.times" 2>/dev/null || echo 0)
  local line
  line=$(printf "  %-34s %6d s wall %7d s CPU%s" "$name" $((SECONDS - start)) "${cpu:-0}" \
    "$([ $status -eq 0 ] || echo "  FAILED ($status)")")
  echo "$line" >>"$logs/table"
  flock "$logs/print.lock" bash -c 'cat "$1"; echo "=== $2"' _ "$log.log" "$line"
  return $status
}
failed() { [ -e "$logs/failed" ]; }

side_lane_tests=" host-long host-flags "
run_tests() {
  step "test $1" ctest --preset "$1" --output-junit "$PWD/build/ctest-junit/$1.xml"
}
background_build=host-fuzz
# ctest writes a program's test list when it first reads the build directory (gtest's PRE_TEST discovery,
# cmake/test_groups_discover.cmake), and two ctest runs that read one directory at once race: one can include a list
# the other is still writing (a CI run failed on a truncated edgeattn_backend_tests list when host-release and
# host-long started in the same second). So the build step of a configure preset whose test presets run in both
# test lanes lists its tests once (ctest -N) before either lane starts them.
shared_configures=()
for preset in "${tests[@]}"; do
  [[ "$side_lane_tests" == *" $preset "* ]] && shared_configures+=("$(configure_of "$preset")")
done
build_lane() {
  for configure in "${configures[@]}"; do
    [ "$configure" = "$background_build" ] && continue
    failed && return 1
    local discover=0
    [[ " ${shared_configures[*]} " == *" $configure "* ]] && discover=1
    if ! step "build $configure" bash -c 'cmake --preset "$1" && cmake --build --preset "$1" &&
        { [ "$2" = 0 ] || ctest --test-dir "build/$1" -N >/dev/null; }' _ "$configure" "$discover"; then
      touch "$logs/failed"
      return 1
    fi
    touch "$logs/built-$configure"
  done
}
# The background build lane: host-fuzz's configure preset, if this run has it, at nice 10.
background_build_lane() {
  [[ " ${configures[*]} " == *" $background_build "* ]] || return 0
  if ! step "build $background_build" nice -n 10 bash -c 'cmake --preset "$1" && cmake --build --preset "$1"' _ \
    "$background_build"; then
    touch "$logs/failed"
    return 1
  fi
  touch "$logs/built-$background_build"
}
# test_lane side: the presets of side_lane_tests; test_lane main: the others. Each runs its presets in order, each
# as soon as its configure preset is built.
test_lane() {
  for preset in "${tests[@]}"; do
    [[ "$side_lane_tests" == *" $preset "* ]] && [ "$1" = main ] && continue
    [[ "$side_lane_tests" == *" $preset "* ]] || [ "$1" = main ] || continue
    local configure
    configure=$(configure_of "$preset")
    until [ -e "$logs/built-$configure" ]; do
      failed && return 1
      sleep 1
    done
    failed && return 1
    if ! run_tests "$preset"; then
      touch "$logs/failed"
      return 1
    fi
  done
}

# lane NAME COMMAND...: runs COMMAND and writes its exit status to the lane's file. Not "wait PID" for the status:
# bash forgets a finished background job's status once a later process reuses its PID, and a CI run starts
# enough processes for that ("wait: pid ... is not a child of this shell" failed a run whose steps all passed).
lane() {
  local name=$1
  shift
  local code=0
  "$@" || code=1
  echo $code >"$logs/lane-$name.status"
}
lane build build_lane &
lane background background_build_lane &
lane side test_lane side &
status=0
test_lane main || status=1
wait
for name in build background side; do
  [ "$(cat "$logs/lane-$name.status" 2>/dev/null)" = 0 ] || status=1
done
if failed; then status=1; fi

printf "=== time per step (install %d s; %d s wall in all, %d CPU-s)\n" "$install_seconds" "$SECONDS" \
  "$(awk '{ for (i = 3; i <= NF; ++i) if ($i == "CPU") s += $(i - 2) } END { printf "%d", s }' "$logs/table")"
cat "$logs/table"
if command -v ccache >/dev/null; then
  ccache --print-stats | awk '/^(direct|preprocessed)_cache_hit/ { h += $2 } /^cache_miss/ { m += $2 }
    END { printf "  ccache: %d compilations from the cache, %d compiled\n", h, m }'
fi
if [ $status -ne 0 ]; then
  echo "=== FAILED: see the step marked FAILED above (its log: $logs/)"
  exit 1
fi
echo "=== all test presets passed: ${tests[*]}"
