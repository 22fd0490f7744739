#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Size rule of the library (issue 28): no file under lib/ above 450 lines, no function above 80.

A function's lines run from the first code line of its declaration (after the previous declaration ends) to its
closing brace, comments and blank lines inside included. Functions are found by a brace scan that skips comments,
string and character literals and preprocessor lines: a brace opened right after `)` (or after `const`,
`noexcept`, `override` or a trailing return type following one) at namespace or class level starts a function.

  tools/check_sizes.py [--max-file N] [--max-function N] DIR...   (exit status 1 when a rule is broken)
"""
import argparse
import os
import re
import sys


def strip(text):
    """Comments, literals and preprocessor lines replaced by spaces; newlines kept (line numbers stay right)."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#":
            # a preprocessor line, with its continuations
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append(" \n")
                    i += 2
                    continue
                out.append(" ")
                i += 1
            continue
        if c == "/" and text.startswith("//", i):
            while i < n and text[i] != "\n":
                out.append(" ")
                i += 1
            continue
        if c == "/" and text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
            continue
        if c in "\"'":
            # raw strings are not used in lib/; a digit separator (1'000) is not a literal either
            if c == "'" and i > 0 and text[i - 1].isalnum():
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:j]) + c)
            i = j + 1
            continue
        out.append(c)
        if c == "\n":
            line_start = True
        elif not c.isspace():
            line_start = False
        i += 1
    return "".join(out)


FUNC_TAIL = re.compile(r"\)\s*(const\s*)?(noexcept\s*(\([^()]*\))?\s*)?(override\s*)?(->\s*[\w:<>,\s*&]+)?$")


def functions(path):
    """(name line, first line, last line) of every function defined at namespace or class level."""
    text = strip(open(path, encoding="utf-8").read())
    lines_before = [0]
    for ch in text:
        lines_before.append(lines_before[-1] + (ch == "\n"))
    stack = []  # kinds of the open braces: "func", "scope" (namespace, class, enum, extern "C"), "other"
    found = []
    decl_start = 0  # index where the current declaration began
    for i, ch in enumerate(text):
        if ch == "{":
            in_func = any(k != "scope" for k, _, _ in stack)
            head = text[decl_start:i]
            kind = "other"
            if not in_func:
                if FUNC_TAIL.search(head.rstrip()) and not re.search(r"=\s*\[", head):
                    kind = "func"
                elif re.search(r"\b(namespace|struct|class|union|enum)\b|extern\s*\"", head):
                    kind = "scope"
            stack.append((kind, decl_start, i))
            if kind == "scope":
                decl_start = i + 1
        elif ch == "}":
            if not stack:
                continue
            kind, start, _ = stack.pop()
            if kind == "func":
                first = start + len(text[start:]) - len(text[start:].lstrip())
                found.append((lines_before[first] + 1, lines_before[i] + 1))
            if not any(k != "scope" for k, _, _ in stack):
                decl_start = i + 1
        elif ch == ";" and not any(k != "scope" for k, _, _ in stack):
            decl_start = i + 1
    return found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-file", type=int, default=450)
    parser.add_argument("--max-function", type=int, default=80)
    parser.add_argument("dirs", nargs="+")
    args = parser.parse_args()
    bad = 0
    checked = 0
    for root_dir in args.dirs:
        for root, _, files in os.walk(root_dir):
            for name in sorted(files):
                if not re.search(r"\.(h|cc|c|hpp)$", name):
                    continue
                path = os.path.join(root, name)
                checked += 1
                count = sum(1 for _ in open(path, encoding="utf-8"))
                if count > args.max_file:
                    print(f"{path}: {count} lines (limit {args.max_file})")
                    bad += 1
                for first, last in functions(path):
                    if last - first + 1 > args.max_function:
                        print(f"{path}:{first}: function of {last - first + 1} lines (limit {args.max_function})")
                        bad += 1
    print(f"{checked} files checked, {bad} over the limits")
    return 1 if bad or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
