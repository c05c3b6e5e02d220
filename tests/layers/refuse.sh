#!/usr/bin/env bash
# The layer check refuses a wrong-way include (ctest `layers_refuse`):
# scripts/check-layers.py on a copy of the tree passes, then fails with
# exactly these lines once the copy has a low folder including a high one
# and a folder including another's internal header.
# Usage: tests/layers/refuse.sh LAYERS_TXT SOURCE_DIR
set -euo pipefail
layers=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$src/core" "$src/simulator" "$src/real" "$tmp/"
python3 "$src/scripts/check-layers.py" "$layers" "$tmp" || { echo "FAIL: the copy of the tree does not pass" >&2; exit 1; }

n_errors=$(wc -l < "$tmp/core/base/errors.cpp")
n_plan=$(wc -l < "$tmp/core/plan/plan.cpp")
echo '#include "simulator/fake_cluster.h"' >> "$tmp/core/base/errors.cpp"
echo '#include "core/diagnose/diagnoser.h"' >> "$tmp/core/plan/plan.cpp"
want="core/base/errors.cpp:$((n_errors + 1)): includes simulator/fake_cluster.h (simulator/fake_cluster/), which gpuops_core_base (core/base/) does not declare
core/plan/plan.cpp:$((n_plan + 1)): includes core/diagnose/diagnoser.h, internal to core/diagnose/"
rc=0
got=$(python3 "$src/scripts/check-layers.py" "$layers" "$tmp") || rc=$?
if [ "$rc" != 1 ] || [ "$got" != "$want" ]; then
  printf 'FAIL: exit %s (want 1)\n--- got\n%s\n--- want\n%s\n' "$rc" "$got" "$want" >&2
  exit 1
fi
echo "layers_refuse: both wrong includes refused"
