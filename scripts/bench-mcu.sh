#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The instruction-count benchmark for the Cortex-M boards (a QEMU instruction-count proxy, not cycles: QEMU has
# no timing model). Builds the QEMU TCG plugin bench/mcu/insn_count_plugin.c and, for each board preset, the
# firmware bench/mcu/mcu_bench.cc; runs it under qemu-system-arm with the plugin, which counts the instructions of
# each kernel call between two marker functions (exact and repeatable); prints one table (rows
# mcu/<cpu>/<compiler>/<kernel>/<shape>) and writes build/mcu-bench/{results.json,chart.png}.
#   scripts/bench-mcu.sh                         cortex-m4, cortex-m7, cortex-m55 (GCC) and cortex-m55-clang
#   EDGEATTN_MCU_BENCH_PRESETS="cortex-m55" scripts/bench-mcu.sh
#   EDGEATTN_MCU_BENCH_BUILD=build/ab EDGEATTN_MCU_BENCH_OUT=build/mcu-bench-ab scripts/bench-mcu.sh
#       builds in build/ab/<preset> instead of build/<preset> (an A/B of two trees, or beside a running test build)
# MVE (Helium) instructions are told apart by llvm-objdump-14's disassembly (QEMU's disassembler does not know
# MVE), for the beat-weighted cycle range of the Cortex-M55 rows.
set -euo pipefail
cd "$(dirname "$0")/.."
presets=${EDGEATTN_MCU_BENCH_PRESETS:-cortex-m4 cortex-m7 cortex-m55 cortex-m55-clang}
out=${EDGEATTN_MCU_BENCH_OUT:-build/mcu-bench}
root=${EDGEATTN_MCU_BENCH_BUILD:-build}
scripts/install-deps.sh cmake ninja-build gcc python3 python3-matplotlib gcc-arm-none-eabi libnewlib-arm-none-eabi \
  libstdc++-arm-none-eabi-newlib qemu-system-arm clang-14 llvm-14 libhwy-dev
mkdir -p "$out"
# Debian's QEMU ships no plugin header: the plugin declares the API it uses (version 1) itself.
gcc -shared -fPIC -O2 -fvisibility=hidden -Wall -Wextra -Werror bench/mcu/insn_count_plugin.c -o "$out/insn_count.so"

cache_value() { sed -n "s/^$2:[A-Z]*=//p" "$root/$1/CMakeCache.txt"; }
runs=()
for preset in $presets; do
  [ -f "$root/$preset/CMakeCache.txt" ] || cmake --preset "$preset" -B "$root/$preset" >/dev/null
  cmake --build "$root/$preset" --target edgeattn_mcu_bench
  elf=$root/$preset/bench/mcu/edgeattn_mcu_bench.elf
  board=$(basename "$(cache_value "$preset" EDGEATTN_BOARD_LINKER_SCRIPT)" .ld)
  cpu=$(cache_value "$preset" EDGEATTN_MCU)
  compiler=gcc
  grep -q 'CMAKE_CXX_COMPILER_ID "Clang"' "$root/$preset"/CMakeFiles/*/CMakeCXXCompiler.cmake && compiler=clang
  symbol() { arm-none-eabi-nm "$elf" | awk -v s="$1" '$3 == s { print "0x" $1 }'; }
  plugin="$out/insn_count.so,start=$(symbol edgeattn_bench_start),stop=$(symbol edgeattn_bench_stop)"
  plugin+=",out=$out/$preset.counts"
  if [ "$cpu" = cortex-m55 ]; then
    llvm-objdump-14 -d --mattr=+mve.fp "$elf" | python3 bench/mcu/mcu_report.py mve-addresses >"$out/$preset.mve"
    plugin+=",mve=$out/$preset.mve"
  fi
  echo "=== $preset: $cpu on $board, $compiler"
  timeout 600 qemu-system-arm -M "$board" -cpu "$cpu" -nographic -monitor none -serial none \
    -semihosting-config enable=on,target=native -plugin "$plugin" -kernel "$elf" | tee "$out/$preset.log"
  runs+=("$cpu:$compiler:$out/$preset.log:$out/$preset.counts")
done

# Debian's python3, which sees python3-matplotlib, even where another python3 comes first on PATH.
python=python3
[ -x /usr/bin/python3 ] && python=/usr/bin/python3
"$python" bench/mcu/mcu_report.py report --out "$out" "${runs[@]}" | tee "$out/table.txt"
