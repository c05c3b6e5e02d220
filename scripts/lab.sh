#!/usr/bin/env bash
# The main job: the reference lab (LAB.md) on the built-in simulator, leaving
# the learner's working directory in ./lab (k8s/, out/, the two scripts).
set -euo pipefail
cd "$(dirname "$0")/.."
# Only the CLI: the tests and benchmarks are scripts/test.sh's business. The
# first build takes several minutes; ninja shows its progress on stderr.
scripts/build.sh gpuops >&2
# The demo owns ./lab: a second run replaces it (--overwrite).
exec build/gpuops lab run --dir "${1:-lab}" --overwrite
