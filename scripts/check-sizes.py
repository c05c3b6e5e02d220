#!/usr/bin/env python3
"""The size rule of the product sources (ctest `sizes`).

Usage: scripts/check-sizes.py [SOURCE_DIR]

Every C++ source (.cpp, .cc, .h, .hpp, .inc) under core/, simulator/, cli/
and real/ of SOURCE_DIR (default: this repository) has at most 800 lines
(as `wc -l` counts them), and every function in it at most 150 lines,
counted from the line of its opening brace to the line of its closing
brace. tests/, bench/ and fuzz/ are not product sources and are not read.

A function is a brace block at namespace or class scope whose declaration
has a parameter list: free functions, member functions (in or out of their
class), constructors (a member initializer list's braces are part of the
declaration) and lambdas assigned at namespace or class scope. Everything
inside a function counts toward it: its lambdas, local classes and their
member functions. String and character literals (raw strings included),
comments and preprocessor lines are skipped, so a brace in them counts for
nothing; a digit separator (1'000) is not a character literal.

Prints one line per breach, `<file>: N lines (limit 800)` or
`<file>:<line>: function NAME is N lines (limit 150)`, and exits 1 when
there is any; 0 when there is none; 2 on bad usage.
"""
import os
import re
import sys

FILE_LIMIT = 800
FUNCTION_LIMIT = 150
PRODUCT_DIRS = ("core", "simulator", "cli", "real")
EXTENSIONS = (".cpp", ".cc", ".h", ".hpp", ".inc")
RAW_PREFIXES = ("R", "u8R", "uR", "UR", "LR")
# What a class's declaration starts with, its attributes ([[...]], written
# [] in a declaration's top-level text) and template header left out.
CLASS_HEAD = re.compile(r"^(?:\[\]\s*)*(?:template\s*)*"
                        r"(?:(?:typedef|static|inline|constexpr|const|extern|thread_local)\s+)*"
                        r"(?:class|struct|union|enum)\b")
# A member initializer list's colon: after a `)`, and not one of `::`.
INITIALIZERS = re.compile(r"\)[^:]*?(?<!:)(:)(?!:)")
# Words whose parentheses are not a parameter list.
NOT_NAMES = {"noexcept", "decltype", "alignas", "requires", "sizeof", "throw", "__attribute__"}
NAMESPACE_HEAD = re.compile(r'^(?:inline\s+)?namespace\b|^extern\s*"\s*"')
# An operator's name: operator(), operator[], operator==, operator bool.
OPERATOR = re.compile(r"(?<!\w)operator(?!\w)\s*(?:\(\s*\)|\[\s*\]|[^\s\w(]+|\w[\w\s:<>*&]*?(?=\s*\())")


def code_of(text):
    """`text` with comments, string and character literals and preprocessor
    lines blanked: each becomes spaces (a literal: its quotes around nothing),
    newlines kept, so offsets and line numbers stay those of `text`."""
    out = []
    i, n = 0, len(text)
    at_line_start = True  # only blanks since the last newline
    while i < n:
        c = text[i]
        if c == "\n":
            out.append(c)
            i += 1
            at_line_start = True
            continue
        if at_line_start and c == "#":
            # A preprocessor line, with its continuation lines.
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append(" \n")
                    i += 2
                    continue
                if text.startswith("/*", i):  # a comment may run past the line
                    end = text.find("*/", i + 2)
                    end = n if end < 0 else end + 2
                    out.append(re.sub(r"[^\n]", " ", text[i:end]))
                    i = end
                    continue
                out.append(" ")
                i += 1
            continue
        if not c.isspace():
            at_line_start = False
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(" " * (end - i))
            i = end
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
            continue
        if c == '"' or c == "'":
            # The identifier or number right before: a raw string's prefix,
            # or the number a digit separator sits in.
            j = i
            while j > 0 and (text[j - 1].isalnum() or text[j - 1] in "_."):
                j -= 1
            word = text[j:i]
            if c == "'" and word[:1].isdigit():
                out.append(" ")  # 1'000'000
                i += 1
                continue
            if c == '"' and word in RAW_PREFIXES:
                m = re.compile(r'"([^()\\\s]{0,16})\(').match(text, i)
                if m:
                    close = ")" + m.group(1) + '"'
                    end = text.find(close, m.end())
                    end = n if end < 0 else end + len(close)
                    out.append('""' + re.sub(r"[^\n]", " ", text[i + 2:end]))
                    i = end
                    continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" and j + 1 < n and text[j + 1] != "\n" else 1
            closed = j < n and text[j] == c  # else unterminated: up to the line's end
            out.append(c + " " * (j - i - 1) + (c if closed else ""))
            i = j + 1 if closed else j
            continue
        out.append(c)
        i += 1
    return "".join(out)


def outside_angles(flat):
    """A declaration's top-level text without what its template angle
    brackets hold (std::function<void()> f_ -> std::function f_), its
    operators' names written operator_."""
    s = OPERATOR.sub("operator_", flat).replace("->", "  ")
    out, depth = [], 0
    for ch in s:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(depth - 1, 0)
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def function_name(flat):
    """The name a declaration's top-level text gives its function: the
    qualified name before its parameter list (the last parentheses before a
    member initializer list that follow a name, not noexcept(...) and the
    like), operator... as written, "lambda" for a lambda."""
    bare = outside_angles(flat)
    m = INITIALIZERS.search(bare)
    if m:
        bare = bare[:m.start(1)]
    name = "lambda" if bare.rstrip().endswith("]") else "(unnamed)"  # a lambda without parameters
    for k, ch in enumerate(bare):
        if ch != "(":
            continue
        before = bare[:k].rstrip()
        if before.endswith("]"):
            name = "lambda"
            continue
        m = re.search(r"(~?[A-Za-z_]\w*(?:\s*::\s*~?[A-Za-z_]\w*)*)$", before)
        if m and m.group(1) not in NOT_NAMES:
            name = re.sub(r"\s+", "", m.group(1))
    if name.endswith("operator_"):
        op = OPERATOR.search(flat)
        name = name[: -len("operator_")] + re.sub(r"\s+", " ", op.group(0)).replace("operator ", "operator", 1)
        if re.match(r"operator\w", name.rsplit("::", 1)[-1]):  # a conversion: operator bool
            name = name.replace("operator", "operator ", 1)
    return name


def block_kind(flat, parens):
    """What a brace opening at namespace or class scope opens, by the
    declaration's top-level text before it (`parens`: parentheses or
    brackets still open there): "head" (a brace inside the declaration: a
    default argument's, a member initializer's), "ns", "cls", "fn" or "blk"
    (an initializer's)."""
    last = flat[-1:]
    bare = outside_angles(flat)
    # A member initializer list: `) :` (not `::`), then a member's braces
    # right after its name (a_{1}); the body follows a `)` or a `}`.
    in_initializers = INITIALIZERS.search(bare) is not None
    if parens > 0 or (in_initializers and (last.isalnum() or last in "_>")):
        return "head"
    if NAMESPACE_HEAD.search(flat):
        return "ns"
    if CLASS_HEAD.search(bare):
        return "cls"
    # A parameter list (outside template arguments), not an initializer
    # (`= {`); or a lambda without one (`= [] {`).
    if (")" in bare and bare.rstrip()[-1:] not in ("=", ",")) or bare.rstrip().endswith("]"):
        return "fn"
    return "blk"


def long_functions(code, limit):
    """(line, name, lines) of each function in `code` (code_of's output)
    longer than `limit` lines, in order."""
    found = []
    # The open braces, innermost last: (kind, line, name), kind as
    # block_kind says.
    stack = []
    top = []  # the declaration so far at this scope, parentheses' contents left out
    parens = 0  # parentheses and brackets open in the declaration
    line = 1

    def at_declarations():
        return all(kind in ("ns", "cls") for kind, _, _ in stack)

    for ch in code:
        if ch == "\n":
            line += 1
            if parens == 0 and at_declarations():
                top.append(" ")
            continue
        if stack and stack[-1][0] == "head":
            # Inside a brace of a declaration: only its nesting matters.
            if ch == "{":
                stack.append(("head", line, ""))
            elif ch == "}":
                stack.pop()
                if parens == 0 and not (stack and stack[-1][0] == "head"):
                    top.append("{}")
            continue
        if not at_declarations():
            # Inside a function or another block: only the nesting matters.
            if ch == "{":
                stack.append(("blk", line, ""))
            elif ch == "}":
                kind, start, name = stack.pop()
                if kind == "fn" and line - start + 1 > limit:
                    found.append((start, name, line - start + 1))
                if at_declarations():
                    top, parens = [], 0
            continue
        if ch in "([":
            if parens == 0:
                top.append(ch)
            parens += 1
        elif ch in ")]":
            parens = max(parens - 1, 0)
            if parens == 0:
                top.append(ch)
        elif ch == "{":
            flat = re.sub(r"\s+", " ", "".join(top)).strip()
            kind = block_kind(flat, parens)
            if kind == "head":
                stack.append(("head", line, ""))
                continue
            stack.append((kind, line, function_name(flat) if kind == "fn" else ""))
            top, parens = [], 0
        elif ch == "}":
            if stack:
                stack.pop()
            top, parens = [], 0
        elif ch == ";" and parens == 0:
            top = []
        elif parens == 0:
            top.append(ch)
    return found


def main(argv):
    if len(argv) > 2 or (len(argv) == 2 and argv[1].startswith("-")):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    root = argv[1] if len(argv) == 2 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    if not os.path.isdir(root):
        print(f"check-sizes: {root}: not a directory", file=sys.stderr)
        return 2
    problems = []
    for top_dir in PRODUCT_DIRS:
        for dirpath, dirnames, files in os.walk(os.path.join(root, top_dir)):
            dirnames.sort()
            for name in sorted(files):
                if not name.endswith(EXTENSIONS):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                with open(path, encoding="utf-8", errors="replace", newline="") as f:
                    text = f.read()
                lines = text.count("\n")
                if lines > FILE_LIMIT:
                    problems.append(f"{rel}: {lines} lines (limit {FILE_LIMIT})")
                for start, fn, n in long_functions(code_of(text), FUNCTION_LIMIT):
                    problems.append(f"{rel}:{start}: function {fn} is {n} lines (limit {FUNCTION_LIMIT})")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
