#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Worst-case stack use of every public entry point of libedgeattn, from GCC's call graphs.

The library is compiled with -fstack-usage -fcallgraph-info=su when EDGEATTN_STACK_USAGE is ON (the Cortex-M
presets), which writes a .ci file (VCG graph: one node per function with its frame size, one edge per call) next
to each object. This script merges them, follows every call from each public function, and prints the deepest
path. Calls that leave the library (memcpy, memset, libgcc's soft-float helpers) are leaf routines of libc and
libgcc and are listed, not counted.

  stack_report.py <build dir> [--check --limit BYTES]

--check fails (exit 1) on a dynamic frame (a VLA or alloca), recursion, an indirect call, or a worst case over
BYTES.
"""
import argparse
import pathlib
import re
import sys

NODE = re.compile(r'node: \{ title: "([^"]+)" label: "([^"]*)"')
EDGE = re.compile(r'edge: \{ sourcename: "([^"]+)" targetname: "([^"]+)"')
SIZE = re.compile(r"\\n(\d+) bytes \((static|dynamic|dynamic,bounded)\)")


def load(build_dir):
    frames, kinds, names, calls = {}, {}, {}, {}
    files = sorted(pathlib.Path(build_dir).rglob("*.ci"))
    files = [f for f in files if "CMakeFiles/edgeattn.dir" in str(f)]
    for path in files:
        text = path.read_text()
        for title, label in NODE.findall(text):
            name = label.split("\\n")[0]
            if name[:1].isdigit():  # GCC labels a .part/.isra clone by a number; the symbol says more
                name = "clone " + title.split(":")[-1] + "("
            names.setdefault(title, name)
            m = SIZE.search(label)
            if m:
                frames[title] = int(m.group(1))
                kinds[title] = m.group(2)
        for source, target in EDGE.findall(text):
            calls.setdefault(source, []).append(target)
    return files, frames, kinds, names, calls


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build_dir")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--limit", type=int, default=0)
    args = parser.parse_args()

    files, frames, kinds, names, calls = load(args.build_dir)
    if not files:
        sys.exit(f"no .ci files under {args.build_dir}/**/CMakeFiles/edgeattn.dir: configure with "
                 "-DEDGEATTN_STACK_USAGE=ON")
    problems = [f"dynamic frame: {names[t]}" for t, k in kinds.items() if k != "static"]
    problems += [f"indirect call in {names.get(s, s)}" for s, ts in calls.items() for t in ts if t == "__indirect_call"]

    memo, external = {}, set()

    def depth(title, stack):
        if title in stack:
            problems.append("recursion: " + " -> ".join(names.get(t, t) for t in stack + [title]))
            return 0, []
        if title in memo:
            return memo[title]
        if title not in frames:
            external.add(names.get(title, title))
            return 0, []
        best, path = 0, []
        for callee in calls.get(title, []):
            d, p = depth(callee, stack + [title])
            if d > best:
                best, path = d, p
        memo[title] = (frames[title] + best, [title] + path)
        return memo[title]

    # Public entry points: the C API and the C++ API (edgeattn::X and edgeattn::scalar::X, not internal).
    entries = sorted(t for t, n in names.items() if t in frames and (
        re.match(r"edgeattn_\w+$", t) or
        (re.match(r"\S*\s*edgeattn::(scalar::)?[A-Z]\w*\(", n.split(" ", 1)[-1]) and "internal" not in n
         and "N_" not in n)))
    rows = []
    for t in entries:
        d, path = depth(t, [])
        rows.append((d, names[t], " -> ".join(names[p].split("(")[0].split(" ")[-1] for p in path)))
    rows.sort(reverse=True)
    width = max(len(r[1].split("(")[0].split(" ")[-1]) for r in rows)
    print(f"{'entry point':<{width}}  worst-case stack  deepest path")
    for d, name, path in rows:
        print(f"{name.split('(')[0].split(' ')[-1]:<{width}}  {d:>10} bytes  {path}")
    worst = rows[0][0] if rows else 0
    print(f"worst case over all {len(rows)} entry points: {worst} bytes, plus leaf routines outside the library: "
          + ", ".join(sorted(external)))
    if args.check:
        if args.limit and worst > args.limit:
            problems.append(f"worst case {worst} bytes exceeds the documented {args.limit}")
        for p in problems:
            print("FAIL:", p)
        sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
