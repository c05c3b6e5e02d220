#!/usr/bin/env bash
# Builds the NVIDIA GPU Operator controller for the end-to-end tests (test
# infrastructure, not product), from the version pinned in
# tests/operator/go.mod (+ go.sum), and copies the files it reads at run time
# out of the module zip: assets/, manifests/ and the CRDs
# (deployments/gpu-operator/crds/). Called by scripts/cluster-build.sh (which
# first makes sure a new enough Go is on PATH); can be run alone.
#
# Everything goes to ${GPUOPS_CACHE:-$HOME/.cache/gpuops}/gpu-operator-<version>/
#   bin/gpu-operator   the controller
#   assets/ manifests/ crds/
#   .stamp             sha256 of tests/operator/go.mod + go.sum
# and is reused while the stamp matches. Prints that directory on stdout as
# its last line; progress goes to stderr. The module proxy is the one of
# `go env GOPROXY`.
#
# Environment: GPUOPS_CACHE, GPUOPS_GO_P (go build -p, default 2),
# GPUOPS_REBUILD=1 (ignore the stamp), GOCACHE (default: one of its own in
# the cache root, removed on exit; scripts/go-build-cache.sh).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mod="$repo/tests/operator"
cache="${GPUOPS_CACHE:-$HOME/.cache/gpuops}"
# Go: the one on PATH when new enough for tests/operator/go.mod, else the
# toolchain scripts/cluster-build.sh unpacked into the cache.
go_want=$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$mod/go.mod")
go_ok() {
  command -v go >/dev/null || return 1
  local have; have=$(go env GOVERSION 2>/dev/null | sed 's/^go//')
  [ -n "$have" ] && [ "$(printf '%s\n%s\n' "$go_want" "$have" | sort -V | head -n1)" = "$go_want" ]
}
if ! go_ok; then
  goroot="$cache/go${GPUOPS_GO_TOOLCHAIN:-1.26.8}"
  export PATH="$goroot/bin:$PATH" GOROOT="$goroot" GOTOOLCHAIN=local
  go_ok || { echo "operator-build: no Go >= $go_want (scripts/cluster-build.sh fetches one)" >&2; exit 1; }
fi

# The Go build cache (scripts/go-build-cache.sh): cluster-build.sh's when it
# calls this script.
. "$repo/scripts/go-build-cache.sh"
gpuops_go_build_cache "$cache"

cd "$mod"
module=github.com/NVIDIA/gpu-operator
pseudo=$(go list -m -f '{{.Version}}' "$module")
stamp_value=$(cat go.mod go.sum | sha256sum | cut -d' ' -f1)

mkdir -p "$cache"
exec 8>"$cache/gpu-operator.lock"
if ! flock -n 8; then
  echo "operator-build: waiting for another build (lock $cache/gpu-operator.lock)" >&2
  flock 8
fi

# The module's source tree (downloaded from $(go env GOPROXY) when absent);
# its versions.mk names the release this commit is.
src=$(go mod download -json "$module@$pseudo" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -d "$src" ] || { echo "operator-build: go mod download $module@$pseudo gave no Dir" >&2; exit 1; }
release=$(sed -n 's/^VERSION ?= \(v[0-9.]*\)$/\1/p' "$src/versions.mk")
[ -n "$release" ] || release=$pseudo
out="$cache/gpu-operator-$release"

if [ "${GPUOPS_REBUILD:-0}" != 1 ] && [ -x "$out/bin/gpu-operator" ] && [ -f "$out/.stamp" ] \
   && [ "$(cat "$out/.stamp")" = "$stamp_value" ]; then
  echo "operator-build: reusing $out (stamp $stamp_value)" >&2
  echo "$out"
  exit 0
fi

rm -f "$out/.stamp"
mkdir -p "$out/bin"
start=$(date +%s)
echo "operator-build: [gpu-operator] go build $module/cmd/gpu-operator ($release, $pseudo; $(go version); GOPROXY $(go env GOPROXY))" >&2
# The same version variables as upstream's Makefile (internal/info).
ldflags="-s -w -X $module/internal/info.version=$release -X $module/internal/info.gitCommit=${pseudo##*-}"
CGO_ENABLED=0 nice -n 19 go build -p "${GPUOPS_GO_P:-2}" -trimpath -ldflags "$ldflags" \
  -o "$out/bin/gpu-operator.partial" "$module/cmd/gpu-operator"
mv -f "$out/bin/gpu-operator.partial" "$out/bin/gpu-operator"
rm -rf "$out/assets" "$out/manifests" "$out/crds"
cp -r "$src/assets" "$src/manifests" "$out/"
cp -r "$src/deployments/gpu-operator/crds" "$out/crds"
chmod -R u+w "$out/assets" "$out/manifests" "$out/crds"
echo "$stamp_value" > "$out/.stamp"
echo "operator-build: [gpu-operator] done in $(( $(date +%s) - start ))s" >&2
echo "$out"
