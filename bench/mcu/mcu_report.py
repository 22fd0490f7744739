#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The MCU instruction-count benchmark's report (scripts/bench-mcu.sh runs it): a QEMU instruction-count proxy,
not cycles.

  mcu_report.py mve-addresses < disassembly         addresses of MVE instructions in llvm-objdump-14's output
  mcu_report.py report --out DIR CPU:COMPILER:LOG:COUNTS ...

LOG is the firmware's console output (a line "region <kernel>/<shape> <impl>" before each measured call), COUNTS
the plugin's (one line "<instructions> <MVE instructions>" per region, in the same order). The first region is
empty: its count (the markers' own call and return) is subtracted from every other. Prints one table, rows
mcu/<cpu>/<compiler>/<kernel>/<shape>; writes DIR/results.json and DIR/chart.png (matplotlib, if present).

Columns: scalar and SIMD instructions (edgeattn::scalar:: and the dispatched path), their ratio, and where a column
ran MVE instructions the beat-weighted cycle range N_other + N_mve ... N_other + 2 N_mve (each 128-bit MVE
instruction occupies its pipe for two beats on the Cortex-M55; the upper end assumes no overlap of MVE
instructions with anything, the lower end that each MVE instruction costs as much as any other). Every other
implementation the firmware measured ("mve": the standalone Helium kernels; "dsp": SMLAD) gets the same columns.
"""
import argparse
import json
import pathlib
import re
import sys

# An MVE instruction in llvm-objdump's output: a V-mnemonic with a Q register or the predicate register among its
# operands, or one of the predication instructions without such an operand (vpst, vctp.32 r2).
INSN = re.compile(r"^\s*([0-9a-f]+):\s+(?:[0-9a-f]{2} )+\s*(\S+)\s*(.*)$")
Q_OPERAND = re.compile(r"\b(q[0-7]|p0|vpr)\b")
PREDICATION = re.compile(r"^(vpst|vpnot|vctp|vpt)")
LABEL = "QEMU instruction-count proxy, not cycles"
KNOWN_IMPLS = ("simd", "mve", "dsp")


def mve_addresses(lines):
    out = []
    for line in lines:
        m = INSN.match(line)
        if not m:
            continue
        address, mnemonic, operands = m.groups()
        operands = operands.split(";")[0].split("@")[0]
        if mnemonic.startswith("v") and (Q_OPERAND.search(operands) or PREDICATION.match(mnemonic)):
            out.append(address)
    return out


def read_run(spec):
    cpu, compiler, log, counts = spec.split(":")
    regions = [line.split()[1:3] for line in pathlib.Path(log).read_text().splitlines() if line.startswith("region ")]
    values = [tuple(int(x) for x in line.split()) for line in pathlib.Path(counts).read_text().splitlines() if line]
    if len(regions) != len(values):
        sys.exit(f"{log}: {len(regions)} regions but {counts} has {len(values)} counts (did the firmware fail?)")
    if not regions or regions[0][0] != "empty/-":
        sys.exit(f"{log}: the first region must be the empty one")
    overhead, overhead_mve = values[0]
    cases = {}
    for (case, impl), (n, n_mve) in zip(regions[1:], values[1:]):
        cases.setdefault(case, {})[impl] = {"instructions": n - overhead, "mve": n_mve - overhead_mve}
    return {"cpu": cpu, "compiler": compiler, "overhead": overhead, "cases": cases}


def cycle_range(entry):
    other = entry["instructions"] - entry["mve"]
    return other + entry["mve"], other + 2 * entry["mve"]


def rows_of(runs):
    rows = []
    for run in runs:
        for case, impls in run["cases"].items():
            row = {"row": f"mcu/{run['cpu']}/{run['compiler']}/{case}", "cpu": run["cpu"],
                   "compiler": run["compiler"], "case": case}
            scalar = impls.get("scalar", {}).get("instructions")
            for impl, entry in impls.items():
                row[impl] = dict(entry)
                if impl != "scalar" and scalar:
                    row[impl]["ratio"] = scalar / entry["instructions"]
                if entry["mve"]:
                    row[impl]["beat_cycles"] = cycle_range(entry)
            rows.append(row)
    return rows


def fmt_impl(entry):
    if not entry:
        return ["", "", ""]
    beats = entry.get("beat_cycles")
    return [f"{entry['instructions']:,}", f"{entry['ratio']:.2f}x" if "ratio" in entry else "",
            f"{beats[0]:,}-{beats[1]:,}" if beats else ""]


def implementations(rows):
    """The non-scalar implementations in the order the firmware measured them (simd first)."""
    return list(dict.fromkeys(impl for r in rows for impl in r if impl in KNOWN_IMPLS))


def print_table(rows):
    impls = implementations(rows)
    header = ["row", "scalar insns"]
    for impl in impls:
        header += [f"{impl} insns", f"scalar/{impl}", f"{impl} beat-weighted cycles"]
    table = [header]
    for r in rows:
        line = [r["row"], f"{r['scalar']['instructions']:,}" if "scalar" in r else ""]
        for impl in impls:
            line += fmt_impl(r.get(impl))
        table.append(line)
    keep = [i for i in range(len(header)) if any(t[i] for t in table[1:])]  # drop columns no row fills
    table = [[t[i] for i in keep] for t in table]
    widths = [max(len(t[i]) for t in table) for i in range(len(keep))]
    print(f"MCU benchmark: instructions executed per call under QEMU ({LABEL})")
    for i, t in enumerate(table):
        print("  ".join(c.ljust(w) if j == 0 else c.rjust(w) for j, (c, w) in enumerate(zip(t, widths))))
        if i == 0:
            print("  ".join("-" * w for w in widths))
    print("beat-weighted cycles: N_other + N_mve ... N_other + 2 N_mve (two beats per 128-bit MVE instruction on the "
          "Cortex-M55); still a proxy, not a cycle count")


def ratios_of(rows, impl):
    return [r[impl]["ratio"] for r in rows if impl in r and "ratio" in r[impl]]


def chart(rows, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no chart: matplotlib is missing (Debian: python3-matplotlib)", file=sys.stderr)
        return
    impls = implementations(rows)
    boards = list(dict.fromkeys((r["cpu"], r["compiler"]) for r in rows))  # in the order they ran
    cases = list(dict.fromkeys(r["case"] for r in rows))
    fig, axes = plt.subplots(1, len(impls), figsize=(9 * len(impls), 0.22 * len(cases) * len(boards) + 2),
                             sharey=True, squeeze=False)
    height = 0.8 / len(boards)
    for ax, impl in zip(axes[0], impls):
        for b, (cpu, compiler) in enumerate(boards):
            values = []
            for case in cases:
                r = next((r for r in rows if r["case"] == case and (r["cpu"], r["compiler"]) == (cpu, compiler)), None)
                values.append(r[impl]["ratio"] if r and impl in r and "ratio" in r[impl] else float("nan"))
            ax.barh([i + b * height for i in range(len(cases))], values, height=height, label=f"{cpu} {compiler}")
        ax.axvline(1.0, color="black", linewidth=0.8)
        ax.set_xscale("log")
        ticks = [t for t in (0.125, 0.25, 0.5, 1, 2, 4, 8, 16, 32) if t <= 2 * max(ratios_of(rows, impl), default=1)]
        ax.set_xticks(ticks)
        ax.set_xticklabels([f"{t:g}" for t in ticks])
        ax.minorticks_off()
        ax.set_title(f"scalar / {impl} instructions (x, log; {LABEL})", fontsize=10)
        ax.grid(axis="x", alpha=0.3)
        ax.legend(fontsize=8)
    axes[0][0].set_yticks([i + 0.4 - height / 2 for i in range(len(cases))])
    axes[0][0].set_yticklabels(cases, fontsize=7)
    axes[0][0].invert_yaxis()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"chart: {path}", file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("mve-addresses")
    report = sub.add_parser("report")
    report.add_argument("--out", required=True)
    report.add_argument("runs", nargs="+")
    args = parser.parse_args()
    if args.command == "mve-addresses":
        print("\n".join(mve_addresses(sys.stdin)))
        return
    runs = [read_run(spec) for spec in args.runs]
    rows = rows_of(runs)
    print_table(rows)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps({"label": LABEL, "runs": runs, "rows": rows}, indent=1) + "\n")
    chart(rows, out / "chart.png")


if __name__ == "__main__":
    main()
