#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs a Cortex-M program on a QEMU board with semihosting: console output, the arguments after the program
# (read back by startup.c as argv), and the program's exit code as QEMU's. A watchdog ends a hung program.
#   run-qemu.sh <board> <cpu> <program.elf> [arguments...]      (the CMAKE_CROSSCOMPILING_EMULATOR of Cortex-M builds)
set -euo pipefail
board=$1 cpu=$2 program=$3
shift 3
config="enable=on,target=native,arg=$(basename "$program")"
for arg in "$@"; do
  config+=",arg=${arg//,/,,}"  # QEMU option syntax: a literal comma is doubled
done
exec timeout --foreground "${EDGEATTN_QEMU_TIMEOUT:-600}" qemu-system-arm -M "$board" -cpu "$cpu" -nographic \
  -monitor none -serial none -semihosting-config "$config" -kernel "$program"
