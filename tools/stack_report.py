#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Worst-case stack use of every public entry point of libedgeattn, from GCC's call graphs.

The library is compiled with -fstack-usage -fcallgraph-info=su when EDGEATTN_STACK_USAGE is ON (the Cortex-M
presets), which writes a .ci file (VCG graph: one node per function with its frame size, one edge per call) next
to each object. This script merges them, follows every call from each public function, and prints the deepest
path. Calls that leave the library (memcpy, memset, libgcc's soft-float helpers) are leaf routines of libc and
libgcc and are listed, not counted.

clang has no -fcallgraph-info: for a clang build (-fstack-usage alone) the frames come from the .su files and the
calls from the objects' relocations (llvm-objdump -dr: every bl and b.w to a symbol is a call; a blx or bx through
a register, a load into pc, is an indirect call). A local (static or anonymous-namespace) symbol is named per object.

  stack_report.py <build dir> [--check --limit BYTES] [--objdump llvm-objdump-14]

--check fails (exit 1) on a dynamic frame (a VLA or alloca), recursion, an indirect call, or a worst case over
BYTES.
"""
import argparse
import pathlib
import re
import subprocess
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


SU_LINE = re.compile(r"^.*:(\S+)\t(\d+)\t(static|dynamic|dynamic,bounded)$")
FUNC_HEADER = re.compile(r"^[0-9a-f]+ <(\S+)>:$")
RELOC = re.compile(r"^\s+[0-9a-f]+:\s+R_ARM_THM_(?:CALL|JUMP24|JUMP19)\s+(\S+)$")
INDIRECT = re.compile(r"^\s+[0-9a-f]+:\s+(?:blx\s+r\d|bx\s+r\d|ldr(?:\.w)?\s+pc,|mov\s+pc,)")
SYMBOL = re.compile(r"^[0-9a-f]+ (l|g| )\s.*\sF\s\S+\s+[0-9a-f]+\s+(\S+)$")


def load_clang(build_dir, objdump):
    """frames from clang's .su files, calls from each object's relocations (see the module's docstring)."""
    frames, kinds, names, calls = {}, {}, {}, {}
    objects = sorted(p for p in pathlib.Path(build_dir).rglob("*.o*")
                     if "CMakeFiles/edgeattn.dir" in str(p) and p.suffix in (".o", ".obj"))
    files = []
    for obj in objects:
        su = obj.with_suffix(".su")
        if not su.exists():
            continue
        files.append(su)
        table = subprocess.run([objdump, "-t", str(obj)], capture_output=True, text=True, check=True).stdout
        local = {m.group(2) for m in map(SYMBOL.match, table.splitlines()) if m and m.group(1) == "l"}

        def title(symbol, obj=obj, local=local):
            symbol = symbol[len(".text."):] if symbol.startswith(".text.") else symbol
            return f"{obj.name}:{symbol}" if symbol in local else symbol

        for line in su.read_text().splitlines():
            m = SU_LINE.match(line)
            if m:
                t = title(m.group(1))
                frames[t] = max(frames.get(t, 0), int(m.group(2)))
                kinds[t] = m.group(3)
        disassembly = subprocess.run([objdump, "-dr", "--no-show-raw-insn", str(obj)], capture_output=True,
                                     text=True, check=True).stdout
        current = None
        for line in disassembly.splitlines():
            m = FUNC_HEADER.match(line)
            if m:
                current = title(m.group(1))
                calls.setdefault(current, [])
                continue
            if current is None:
                continue
            m = RELOC.match(line)
            if m:
                target = title(m.group(1))
                if target != current and target not in calls[current]:
                    calls[current].append(target)
            elif INDIRECT.match(line):
                calls[current].append("__indirect_call")
    mangled = sorted(set(frames) | set(calls))
    demangled = subprocess.run(["c++filt"], input="\n".join(t.split(":")[-1] for t in mangled), capture_output=True,
                               text=True, check=True).stdout.splitlines()
    for t, n in zip(mangled, demangled):
        names[t] = n
    return files, frames, kinds, names, calls


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build_dir")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--objdump", help="llvm-objdump: a clang build's calls from its objects' relocations")
    args = parser.parse_args()

    if args.objdump:
        files, frames, kinds, names, calls = load_clang(args.build_dir, args.objdump)
    else:
        files, frames, kinds, names, calls = load(args.build_dir)
    if not files:
        sys.exit(f"no .ci (GCC) or .su (clang, --objdump) files under {args.build_dir}/**/CMakeFiles/edgeattn.dir: "
                 "configure with -DEDGEATTN_STACK_USAGE=ON")
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
    def short(name):
        """"edgeattn::Status edgeattn::F<2u>(const ..." -> "edgeattn::F<2u>": the qualified name, template arguments
        kept, without the return type and the parameters (the first "(" and the last space outside "<>")."""
        name = name.replace("(anonymous namespace)", "{anonymous}")
        depth, space, end = 0, -1, len(name)
        for i, ch in enumerate(name):
            if ch == "<":
                depth += 1
            elif ch == ">":
                depth -= 1
            elif depth == 0 and ch == " ":
                space = i
            elif depth == 0 and ch == "(":
                end = i
                break
        return name[space + 1:end]

    entries = sorted(t for t, n in names.items() if t in frames and (
        re.match(r"edgeattn_\w+$", t) or
        (re.fullmatch(r"edgeattn::(scalar::)?[A-Z]\w*", short(n)) and "internal" not in n and "N_" not in n)))
    rows = []
    for t in entries:
        d, path = depth(t, [])
        rows.append((d, names[t], " -> ".join(short(names[p]) for p in path)))
    rows.sort(reverse=True)
    width = max(len(short(r[1])) for r in rows)
    print(f"{'entry point':<{width}}  worst-case stack  deepest path")
    for d, name, path in rows:
        print(f"{short(name):<{width}}  {d:>10} bytes  {path}")
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
