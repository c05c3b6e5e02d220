#!/usr/bin/env bash
# Builds gpuops into build/ (or build-asan/ with --sanitize). Runs setup first.
# Usage: scripts/build.sh [--sanitize] [TARGET...] (default: everything)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
dir=build
extra=()
if [ "${1:-}" = "--sanitize" ]; then
  dir=build-asan
  # The layer check rides on this tree: shared libraries linked with
  # -Wl,--no-undefined (CMakeLists.txt, GPUOPS_LAYER_CHECK).
  extra=(-DGPUOPS_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug -DGPUOPS_LAYER_CHECK=ON)
  shift
fi
cmake -S . -B "$dir" -G Ninja -DGPUOPS_WERROR=ON "${extra[@]}" >/dev/null
ninja -C "$dir" -j "$(nproc)" "$@"
