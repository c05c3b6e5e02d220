#!/usr/bin/env bash
# Formats the C++ sources of the repository with clang-format (.clang-format
# at the root: Google's style at 120 columns, short functions and case labels
# on one line, as the code was written).
# Usage: scripts/format.sh          formats every tracked .cpp and .h in place
#        scripts/format.sh --check  changes nothing; lists the files that are
#                                   not formatted and exits 1 if there is one
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || scripts/setup.sh
mapfile -t files < <(git ls-files '*.cpp' '*.h')
if [ "${1:-}" = "--check" ]; then
  bad=()
  for f in "${files[@]}"; do
    clang-format --style=file --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
  done
  if [ ${#bad[@]} -gt 0 ]; then
    printf 'format: not formatted (run scripts/format.sh): %s\n' "${bad[@]}" >&2
    exit 1
  fi
  echo "format: ${#files[@]} files formatted"
else
  clang-format --style=file -i "${files[@]}"
fi
