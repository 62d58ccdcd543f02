#!/usr/bin/env python3
"""Finds calls whose arguments build IR in two or more places.

C++ leaves the order in which a call's arguments are evaluated unspecified
(clang goes left to right, g++ often right to left), so in

    arith::AddIOp::create(b, mul(x, idx(4)), idx(1))

the two builder calls create their ops in either order, and the IR (and
sometimes the PTX) depends on the compiler that built attn. Every such
argument must be built in a statement of its own first.

An argument builds IR when it holds a `::create(` / `.create<` call or a
call of a helper that returns a Value (or OpResult, or SmallVector<Value>),
found by name in the scanned sources (not a getter returning a member); a
lambda argument ([&]...) is a callback, not evaluated at the call. Braced lists ({a(), b()}) evaluate in
order and are one argument. Comments and string literals are ignored.

    scripts/check-sequenced-builders.py [FILE...]   (default: the compiler's
                                                     C++ sources)

Prints each call it finds (file:line) and exits 1 if there is any.
scripts/check-determinism.sh is the full check (two builds compared).
"""
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_GLOBS = ["dialect/*.cpp", "dialect/*.h", "lib/*/*.cpp", "lib/*/*.h",
                 "codegen/*/*.cpp", "codegen/*/*.h"]
# Calls that return a Value but build nothing (lookups), beside the getters
# GETTER finds.
PURE = {"get", "lookup", "find", "at"}
CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*(<[^;(){}]*?>)?\s*\(")
HELPER = re.compile(r"\b(?:Value|OpResult|SmallVector<Value>|TypedValue<[^>]*>)"
                    r"\s+([A-Za-z_][A-Za-z0-9_]*)\(")
GETTER = re.compile(r"\b(?:Value|OpResult)\s+([A-Za-z_][A-Za-z0-9_]*)\(\)\s*"
                    r"const\s*\{\s*return\s+[A-Za-z_][A-Za-z0-9_]*;\s*\}")
LAMBDA = re.compile(r"\bauto\s+([A-Za-z_][A-Za-z0-9_]*)\s*=\s*\[")


def strip(src):
    """src with comments and string literals blanked (offsets kept)."""
    out, i, n = [], 0, len(src)
    while i < n:
        if src.startswith("R\"(", i):
            j = src.find(")\"", i) + 2
        elif src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
        elif src.startswith("/*", i):
            j = src.find("*/", i) + 2
        elif src[i] in "\"'":
            j = i + 1
            while j < n and src[j] != src[i]:
                j += 2 if src[j] == "\\" else 1
            j += 1
        else:
            out.append(src[i])
            i += 1
            continue
        out.append(re.sub(r"[^\n]", " ", src[i:j]))
        i = j
    return "".join(out)


def arguments(src, open_at):
    """The [start, end) spans of the top-level arguments of the call whose
    '(' is at open_at."""
    depth, spans, start = 0, [], open_at + 1
    for i in range(open_at, len(src)):
        c = src[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                spans.append((start, i))
                return spans
        elif c == "," and depth == 1:
            spans.append((start, i))
            start = i + 1
    return spans


def main(argv):
    files = argv or sorted(f for g in DEFAULT_GLOBS
                           for f in glob.glob(os.path.join(ROOT, g)))
    sources = {f: strip(open(f).read()) for f in files}
    helpers = set()
    for src in sources.values():
        helpers.update(HELPER.findall(src))
        helpers.update(LAMBDA.findall(src))
    getters = set()
    for src in sources.values():
        getters.update(GETTER.findall(src))
    helpers -= PURE | getters

    def builds(text):
        if "::create(" in text or re.search(r"\.create<", text):
            return True
        return any(m.group(1) in helpers for m in CALL.finditer(text))

    found = 0
    for path, src in sources.items():
        for m in CALL.finditer(src):
            if m.group(1) in {"if", "for", "while", "switch", "return",
                              "sizeof"} | PURE:
                continue
            spans = arguments(src, m.end() - 1)
            building = [s for s in spans
                        if not src[s[0]:s[1]].strip().startswith("[")
                        and builds(src[s[0]:s[1]])]
            if len(building) >= 2:
                line = src.count("\n", 0, m.start()) + 1
                print(f"{os.path.relpath(path, ROOT)}:{line}: {m.group(1)}(): "
                      f"{len(building)} arguments build IR; build them in "
                      "statements of their own (C++ leaves their order "
                      "unspecified)")
                found += 1
    if found:
        print(f"check-sequenced-builders: {found} call(s)")
        return 1
    print(f"check-sequenced-builders: {len(sources)} files, none")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
