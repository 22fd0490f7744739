#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Code and data size of libedgeattn.a and of programs linked with it, as firmware users budget them.

  size_report.py <size tool> <file>...      e.g. size_report.py arm-none-eabi-size libedgeattn.a firmware.elf

Sums the sections reported by `size -A` into .text (code), .rodata (constants, including the read-only-after-
relocation .data.rel.ro of position-independent builds), .data and .bss. A program's heap and stack regions
(sections .heap and .stack of the Cortex-M linker scripts) are left out.
"""
import subprocess
import sys


def classify(section):
    if section.startswith((".text", ".vectors", ".init", ".fini", ".ARM.exidx", ".ARM.extab", ".plt", ".glue")):
        return "text"
    if section.startswith((".rodata", ".data.rel.ro", ".init_array", ".fini_array", ".preinit_array", ".eh_frame",
                           ".gcc_except_table")):
        return "rodata"
    if section.startswith((".data", ".sdata", ".tdata", ".got")):
        return "data"
    if section.startswith((".bss", ".sbss", ".tbss")):
        return "bss"
    return None


def main():
    tool, files = sys.argv[1], sys.argv[2:]
    print(f"{'file':<40} {'.text':>9} {'.rodata':>9} {'.data':>7} {'.bss':>7}")
    for path in files:
        out = subprocess.run([tool, "-A", "-d", path], check=True, capture_output=True, text=True).stdout
        totals = {"text": 0, "rodata": 0, "data": 0, "bss": 0}
        for line in out.splitlines():
            parts = line.split()
            if len(parts) >= 2 and parts[0].startswith(".") and parts[1].isdigit():
                kind = classify(parts[0])
                if kind:
                    totals[kind] += int(parts[1])
        name = path.rsplit("/", 1)[-1]
        print(f"{name:<40} {totals['text']:>9} {totals['rodata']:>9} {totals['data']:>7} {totals['bss']:>7}")


if __name__ == "__main__":
    main()
