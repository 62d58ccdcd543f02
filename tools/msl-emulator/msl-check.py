#!/usr/bin/env python3
"""Refuses C++ in a .metal file that the Metal Shading Language forbids.

    msl-check.py KERNEL.metal

msl-emu-cc.sh runs this before it compiles a kernel as C++, because clang
would accept these constructs there. It works on tokens (comments, string
literals and preprocessor lines removed), not on a C++ parse, and reports
each finding as `FILE:LINE: error: ...`; the exit status is 1 if there is
one. It refuses:

- the keywords goto, virtual, throw, try, catch, new, delete (not `= delete`),
  double, typeid, dynamic_cast, thread_local;
- lambdas: a `[` that does not follow an operand (so neither a subscript,
  an array declarator nor an attribute `[[`);
- a pointer or reference type without an address space: a `*` or `&` that
  follows a type (a built-in MSL type or a struct, class, typedef or using
  name declared in the file, with qualifiers) at the start of a declaration,
  parameter, cast or template argument, with no device, constant,
  threadgroup or thread among them;
- recursion: a cycle in the graph of calls between the functions the file
  defines (by name: overloads count as one function).

A line `// msl-check: allow KEYWORD` lets the file use one of the keywords
(the emulator's own tests use it to test what MSL cannot say).
"""

import re
import sys

FORBIDDEN = {
    "goto": "goto is not allowed in MSL",
    "virtual": "virtual functions are not allowed in MSL",
    "throw": "exceptions are not allowed in MSL (throw)",
    "try": "exceptions are not allowed in MSL (try)",
    "catch": "exceptions are not allowed in MSL (catch)",
    "new": "new is not allowed in MSL (no dynamic memory)",
    "delete": "delete is not allowed in MSL (no dynamic memory)",
    "double": "double is not supported by MSL",
    "typeid": "RTTI is not allowed in MSL (typeid)",
    "dynamic_cast": "RTTI is not allowed in MSL (dynamic_cast)",
    "thread_local": "thread_local is not allowed in MSL",
}

ADDRESS_SPACES = {"device", "constant", "threadgroup", "thread",
                  "threadgroup_imageblock", "ray_data", "object_data"}
QUALIFIERS = {"const", "volatile", "struct", "class", "unsigned", "signed",
              "metal", "::", "restrict", "__restrict"}
SCALARS = ["bool", "char", "uchar", "short", "ushort", "int", "uint", "long",
           "ulong", "float", "half", "bfloat", "void", "size_t", "ptrdiff_t",
           "int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t",
           "int64_t", "uint64_t", "atomic_int", "atomic_uint", "atomic_float"]
TYPES = set(SCALARS)
for scalar in ["bool", "char", "uchar", "short", "ushort", "int", "uint",
               "long", "ulong", "float", "half", "bfloat"]:
    for n in (2, 3, 4):
        TYPES.add(f"{scalar}{n}")
        TYPES.add(f"packed_{scalar}{n}")
for t in ("float", "half", "bfloat"):
    TYPES.add(f"simdgroup_{t}8x8")
    for r in (2, 3, 4):
        for c in (2, 3, 4):
            TYPES.add(f"{t}{r}x{c}")
TYPES |= {"simdgroup_matrix", "vec", "matrix", "mem_flags"}

# An operand ends here: a `[` after it is a subscript or array declarator.
OPERAND_END = re.compile(r"[A-Za-z_0-9.]")

TOKEN = re.compile(r"""
    (?P<id>[A-Za-z_][A-Za-z_0-9]*)
  | (?P<num>\.?[0-9](?:[eEpP][+-]|[A-Za-z_0-9.'])*)
  | (?P<punct>::|->|\+\+|--|&&|\|\||<<=|>>=|<=|>=|==|!=|\+=|-=|\*=|/=|%=|&=|\|=|\^=|<<|>>|[^\sA-Za-z_0-9])
""", re.VERBOSE)


def strip(text):
    """Blanks comments, string and character literals and preprocessor
    lines, keeping the line structure."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c in " \t":
            out.append(c)
            i += 1
            continue
        if line_start and c == "#":
            # A preprocessor line, with its continuations.
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append(" \n")
                    i += 2
                    continue
                out.append(" ")
                i += 1
            continue
        line_start = False
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                out.append(" ")
                i += 1
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:end]))
            i = end
            continue
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (min(j, n) - i - 1) + (c if j < n else ""))
            i = j + 1
            continue
        if c == "\n":
            line_start = True
        out.append(c)
        i += 1
    return "".join(out)


def tokenize(text):
    tokens = []
    for line_no, line in enumerate(strip(text).split("\n"), start=1):
        for m in TOKEN.finditer(line):
            tokens.append((m.group(0), line_no))
    return tokens


def declared_types(tokens):
    names = set()
    for i, (tok, _) in enumerate(tokens):
        if tok in ("struct", "class", "union", "enum") and i + 1 < len(tokens):
            nxt = tokens[i + 1][0]
            if nxt == "class" and i + 2 < len(tokens):  # enum class X
                nxt = tokens[i + 2][0]
            if re.match(r"[A-Za-z_]", nxt):
                names.add(nxt)
        elif tok == "typedef":
            # typedef ... NAME;
            j = i + 1
            while j < len(tokens) and tokens[j][0] != ";":
                j += 1
            if j - 1 > i and re.match(r"[A-Za-z_]", tokens[j - 1][0]):
                names.add(tokens[j - 1][0])
        elif tok == "using" and i + 2 < len(tokens) and tokens[i + 2][0] == "=":
            names.add(tokens[i + 1][0])
    return names


def check_pointers(tokens, types, report):
    type_like = types | QUALIFIERS | ADDRESS_SPACES
    for i, (tok, line) in enumerate(tokens):
        if tok not in ("*", "&"):
            continue
        # Walk back over a type: names, qualifiers, address spaces, `*`
        # (pointer to pointer).
        j = i - 1
        seen_type = False
        spaces = False
        while j >= 0:
            t = tokens[j][0]
            if t in types:
                seen_type = True
            elif t in ADDRESS_SPACES:
                spaces = True
            elif t not in type_like and t != "*":
                break
            j -= 1
        boundary = tokens[j][0] if j >= 0 else ";"
        if not seen_type or boundary not in ("(", ",", ";", "{", "}", "<",
                                             ")", ">", ":"):
            continue
        if boundary == ")" or boundary == ">":
            # `) T *` and `> T *`: only a return or parameter type after a
            # declaration head, e.g. `inline device float *f(`; both are
            # types here too.
            pass
        if not spaces:
            what = "pointer" if tok == "*" else "reference"
            report(line, f"{what} type without an address space: MSL needs "
                         f"device, constant, threadgroup or thread before "
                         f"the type")


def check_keywords(tokens, allowed, report):
    for i, (tok, line) in enumerate(tokens):
        if tok in FORBIDDEN and tok not in allowed:
            if tok == "delete" and i > 0 and tokens[i - 1][0] == "=":
                continue  # a deleted function
            report(line, FORBIDDEN[tok])


def check_lambdas(tokens, report):
    for i, (tok, line) in enumerate(tokens):
        if tok != "[":
            continue
        prev = tokens[i - 1][0] if i > 0 else ";"
        nxt = tokens[i + 1][0] if i + 1 < len(tokens) else ""
        if nxt == "[" or prev == "[":
            continue  # an attribute [[...]]
        if prev in (")", "]") or OPERAND_END.match(prev[-1]):
            if prev not in ("return", "case", "else", "do"):
                continue  # a subscript or an array declarator
        report(line, "lambdas are not allowed in MSL")


def functions_and_calls(tokens):
    """Returns {name: (line, set of called names)} for the functions the file
    defines (bodies at any nesting of structs and namespaces)."""
    functions = {}
    stack = []  # per open brace: the function it belongs to, or None
    paren_open = {}
    opens = []
    for i, (tok, _) in enumerate(tokens):
        if tok == "(":
            opens.append(i)
        elif tok == ")" and opens:
            paren_open[i] = opens.pop()
    for i, (tok, line) in enumerate(tokens):
        current = next((f for f in reversed(stack) if f), None)
        if tok == "{":
            name = None
            if current is None:
                # `NAME ( ... ) [const|noexcept|override ...] {`
                j = i - 1
                while j >= 0 and tokens[j][0] in ("const", "noexcept",
                                                  "override", "final"):
                    j -= 1
                if j >= 0 and tokens[j][0] == ")" and j in paren_open:
                    k = paren_open[j] - 1
                    if k >= 0 and re.match(r"[A-Za-z_]", tokens[k][0]) and \
                            tokens[k][0] not in ("if", "for", "while",
                                                 "switch", "catch"):
                        name = tokens[k][0]
                        functions.setdefault(name, (tokens[k][1], set()))
            stack.append(name)
        elif tok == "}":
            if stack:
                stack.pop()
        elif current and tok == "(" and i > 0 and \
                re.match(r"[A-Za-z_]", tokens[i - 1][0]):
            functions[current][1].add(tokens[i - 1][0])
    return functions


def check_recursion(tokens, report):
    functions = functions_and_calls(tokens)
    graph = {f: sorted(c for c in calls if c in functions)
             for f, (_, calls) in functions.items()}
    reported = set()
    state = {}

    def visit(f, path):
        state[f] = 1
        for g in graph[f]:
            if state.get(g) == 1:
                cycle = path[path.index(g):] + [g]
                key = frozenset(cycle)
                if key not in reported:
                    reported.add(key)
                    report(functions[g][0],
                           "recursion is not allowed in MSL: " +
                           " -> ".join(cycle))
            elif g not in state:
                visit(g, path + [g])
        state[f] = 2

    for f in sorted(functions):
        if f not in state:
            visit(f, [f])


def main():
    if len(sys.argv) != 2:
        print("usage: msl-check.py KERNEL.metal", file=sys.stderr)
        return 2
    path = sys.argv[1]
    with open(path, encoding="utf-8") as f:
        text = f.read()
    tokens = tokenize(text)
    errors = []

    def report(line, message):
        errors.append((line, message))

    allowed = set(re.findall(r"^\s*// msl-check: allow (\w+)", text, re.M))
    check_keywords(tokens, allowed, report)
    check_lambdas(tokens, report)
    check_pointers(tokens, TYPES | declared_types(tokens), report)
    check_recursion(tokens, report)
    for line, message in sorted(errors):
        print(f"{path}:{line}: error: {message}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
