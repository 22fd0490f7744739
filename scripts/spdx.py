#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Puts the SPDX license line at the top of every source file of the repository, or checks that it is there.

    scripts/spdx.py           adds "SPDX-License-Identifier: Apache-2.0" where it is missing (prints each file)
    scripts/spdx.py --check   lists the source files without it and exits 1 (ctest source_license)

Source files: C and C++ (.c .cc .h .hpp), CMake (CMakeLists.txt, .cmake, .cmake.in), Python, shell (.sh and
.ci/run), linker scripts, Makefile and meson.build, anywhere outside build/ and hidden directories (.ci excepted).
The line goes first, or second after a #! line, in the comment style the file opens with (/* */ or //; # for
the others). Generators of committed files (tools/gen_*.py) write it themselves, so regenerated files keep it.
Other files (Markdown, JSON, fuzzing corpora, pkg-config templates) carry no line; LICENSE has the text.
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TAG = "SPDX-License-Identifier: Apache-2.0"
C_LIKE = (".c", ".cc", ".h", ".hpp", ".ld")
HASH_LIKE = (".cmake", ".cmake.in", ".py", ".sh")
HASH_NAMES = ("CMakeLists.txt", "Makefile", "meson.build")
SKIP_DIRS = ("build", "__pycache__")


def comment_style(path):
    name = os.path.basename(path)
    if name.endswith(C_LIKE):
        return "c"
    if name.endswith(HASH_LIKE) or name in HASH_NAMES or os.path.relpath(path, ROOT) == os.path.join(".ci", "run"):
        return "#"
    return None


def source_files():
    for top, dirs, files in os.walk(ROOT):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and (not d.startswith(".") or d == ".ci"))
        for name in sorted(files):
            path = os.path.join(top, name)
            if comment_style(path):
                yield path


def has_tag(lines):
    return any(TAG in line for line in lines[:3])


def license_line(path, first_line):
    if comment_style(path) == "#":
        return "# " + TAG + "\n"
    if first_line.startswith("/*") or path.endswith(".ld"):
        return "/* " + TAG + " */\n"
    return "// " + TAG + "\n"


def main():
    check = sys.argv[1:] == ["--check"]
    if sys.argv[1:] not in ([], ["--check"]):
        sys.exit(__doc__)
    missing = []
    for path in source_files():
        with open(path, encoding="utf-8") as f:
            lines = f.readlines()
        if has_tag(lines):
            continue
        missing.append(os.path.relpath(path, ROOT))
        if check:
            continue
        at = 1 if lines and lines[0].startswith("#!") else 0
        lines.insert(at, license_line(path, lines[at] if at < len(lines) else ""))
        with open(path, "w", encoding="utf-8") as f:
            f.writelines(lines)
        print("added:", missing[-1])
    if check and missing:
        print("no '%s' line at the top of %d source file(s); scripts/spdx.py adds it:" % (TAG, len(missing)))
        print("\n".join("  " + m for m in missing))
        sys.exit(1)
    if check:
        print("every source file carries '%s'" % TAG)


if __name__ == "__main__":
    main()
