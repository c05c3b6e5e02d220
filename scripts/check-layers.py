#!/usr/bin/env python3
"""The include half of the layer check (docs/ARCHITECTURE.md, "Layers").

Usage: scripts/check-layers.py LAYERS_TXT [SOURCE_DIR]

LAYERS_TXT is the build tree's layers.txt, one library a line: its name, its
folder (or, for a one-file library such as simulator/fake_cluster, the path
without extension) and the libraries it declares (cmake/gpuops_library.cmake
writes it). Every `#include "..."` of a library's files must name a file of
the library itself or of a library it declares, directly or through one of
them: inline functions and templates escape the linker, so the build alone
does not catch them. A header that says "Internal to <folder>/" in its
opening comment may be included only from that folder (and tests/).

Prints one line per wrong include, `<file>:<line>: <message>`, and exits 1
when there is any; 0 when there is none; 2 on bad usage or an unreadable
layers file.
"""
import functools
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
INTERNAL = re.compile(r'[Ii]nternal to ([a-z_][a-z_0-9/]*)/')


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    root = argv[2] if len(argv) == 3 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    try:
        with open(argv[1], encoding="utf-8") as f:
            rows = [line.split() for line in f if line.strip()]
    except OSError as e:
        print(f"check-layers: {argv[1]}: {e.strerror}", file=sys.stderr)
        return 2
    folder = {r[0]: r[1] for r in rows}
    deps = {r[0]: r[2:] for r in rows}

    def closure(lib, seen):
        for d in deps.get(lib, []):
            if d in folder and d not in seen:
                seen.add(d)
                closure(d, seen)
        return seen

    def owner(path):
        """The library a repository path belongs to (None: none)."""
        stem, _ = os.path.splitext(path)
        best = None
        for lib, d in folder.items():
            if stem == d or os.path.dirname(path) == d:
                if best is None or len(d) > len(folder[best]):
                    best = lib
        return best

    @functools.lru_cache(maxsize=None)
    def internal_to(path):
        try:
            with open(os.path.join(root, path), encoding="utf-8") as f:
                head = "".join(f.readline() for _ in range(12))
        except OSError:
            return None
        m = INTERNAL.search(head)
        return m.group(1) if m else None

    errors = []
    for dirpath, _, files in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        if rel_dir.split(os.sep)[0] in (".git", "build", "build-asan", "build-fuzz") or rel_dir.startswith("build"):
            continue
        for name in sorted(files):
            if not name.endswith((".h", ".cpp", ".inc")):
                continue
            path = os.path.normpath(os.path.join(rel_dir, name))
            lib = owner(path)
            allowed = closure(lib, {lib}) if lib else None
            with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
                for n, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    inc = m.group(1)
                    target = owner(inc)
                    if lib and target and target not in allowed:
                        errors.append(f"{path}:{n}: includes {inc} ({folder[target]}/), "
                                      f"which {lib} ({folder[lib]}/) does not declare")
                    scope = internal_to(inc)
                    if scope and not path.startswith(scope + "/") and not path.startswith("tests/"):
                        errors.append(f"{path}:{n}: includes {inc}, internal to {scope}/")
    for e in sorted(errors):
        print(e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
