#!/usr/bin/env bash
# The main job: the reference lab (LAB.md) on the built-in simulator, leaving
# the learner's working directory in ./lab (k8s/, out/, the two scripts).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh >/dev/null
exec build/gpuops lab run --dir "${1:-lab}"
