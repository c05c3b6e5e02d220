#!/usr/bin/env bash
# The size check refuses a long function and a long file (ctest
# `sizes_refuse`): scripts/check-sizes.py on a small tree passes while its
# longest function has 150 lines and its longest file 800, then fails with
# exactly these two lines once one function has 151 and one file 801. The
# tree's functions hold what a brace counter gets wrong (braces in string,
# raw string and character literals, comments and preprocessor lines, a digit
# separator, a lambda, a constructor's brace-initialized members), and tests/
# holds a longer function and file, which the check does not read.
# Usage: tests/sizes/refuse.sh SOURCE_DIR
set -euo pipefail
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/core/x" "$tmp/cli" "$tmp/tests"

# repeat N LINE: LINE, N times.
repeat() { for ((i = 0; i < $1; i++)); do printf '%s\n' "$2"; done; }

{
  echo '// A fixture of tests/sizes/refuse.sh.'
  echo 'namespace x {'
  echo 'struct Counter {'
  echo '  explicit Counter(int start);'
  echo '  int a_, b_;'
  echo '};'
  echo ''
  echo 'Counter::Counter(int start)'
  echo '    : a_{start}, b_{start + 1} {'
  echo "  char open = '{';  // {"
  echo "  char quote = '\\'';"
  echo '  const char* text = R"js(f() { if (a) { return "}"; } )js";'
  echo '  /* { */'
  echo '#define OPEN {'
  echo '#define BLOCK(x) \'
  echo '  { x'
  echo "  if (a_ > 1'000) {"
  echo '    a_ = 0;'
  echo '  }'
  echo '  auto each = [&](int i) {'
  echo '    return i + open + quote + text[0];'
  echo '  };'
  repeat 135 '  b_ += each(1);'
  echo '}'
  echo ''
  echo '// An initializer, not a function, however long.'
  echo 'const int kTable[] = {'
  repeat 200 '    1,'
  echo '};'
  echo ''
  echo '}  // namespace x'
} > "$tmp/core/x/long.cpp"
repeat 800 '// a line' > "$tmp/cli/big.cpp"
{
  echo 'void test_case() {'
  repeat 900 '  check();'
  echo '}'
} > "$tmp/tests/long_test.cpp"

rc=0
got=$(python3 "$src/scripts/check-sizes.py" "$tmp") || rc=$?
if [ "$rc" != 0 ] || [ -n "$got" ]; then
  printf 'FAIL: the tree at the limits: exit %s (want 0)\n%s\n' "$rc" "$got" >&2
  exit 1
fi

ctor=$(grep -n '^    : a_{start}' "$tmp/core/x/long.cpp" | cut -d: -f1)
sed -i "${ctor}a\\  ++b_;" "$tmp/core/x/long.cpp"
echo '// one line more' >> "$tmp/cli/big.cpp"
want="core/x/long.cpp:$ctor: function Counter::Counter is 151 lines (limit 150)
cli/big.cpp: 801 lines (limit 800)"
rc=0
got=$(python3 "$src/scripts/check-sizes.py" "$tmp") || rc=$?
if [ "$rc" != 1 ] || [ "$got" != "$want" ]; then
  printf 'FAIL: exit %s (want 1)\n--- got\n%s\n--- want\n%s\n' "$rc" "$got" "$want" >&2
  exit 1
fi
echo "sizes_refuse: the 151-line function and the 801-line file refused"
