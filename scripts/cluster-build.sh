#!/usr/bin/env bash
# Builds the upstream control plane used by the end-to-end tests (test
# infrastructure, not product): kube-apiserver, kube-controller-manager,
# kube-scheduler, kubectl, etcd and KWOK, from the versions pinned in
# tests/cluster/go.mod (+ go.sum); and first the NVIDIA GPU Operator
# controller, by scripts/operator-build.sh (tests/operator/go.mod).
#
# Binaries go to ${GPUOPS_CACHE:-$HOME/.cache/gpuops}/k8s-<version>/bin and are
# reused while tests/cluster/go.mod and go.sum do not change (a stamp file holds
# their hash). Prints the bin directory on stdout as its last line; progress
# goes to stderr.
#
# Environment:
#   GPUOPS_CACHE     cache root (default $HOME/.cache/gpuops)
#   GPUOPS_GO_P      go build -p (default 2)
#   GPUOPS_REBUILD=1 ignore the stamp and rebuild
#   GPUOPS_GPU_OPERATOR=0 do not build the GPU Operator
#   GOCACHE          Go's build cache (default: one of its own in the cache
#                    root, removed on exit; scripts/go-build-cache.sh)
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mod="$repo/tests/cluster"
cache="${GPUOPS_CACHE:-$HOME/.cache/gpuops}"

# Go: the machine's, if it is at least the go line of tests/cluster/go.mod;
# otherwise the go command fetches the official toolchain itself, as the
# module golang.org/toolchain from its module proxy (`go env GOPROXY`): a Go
# of 1.21 or later through GOTOOLCHAIN, an older one (Debian 12's golang-go,
# 1.19, which scripts/setup.sh installs when there is no go) through `go mod
# download` of that module, unpacked once into the cache.
go_want=$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$mod/go.mod")
go_toolchain=${GPUOPS_GO_TOOLCHAIN:-1.26.8}
go_ok() {
  command -v go >/dev/null || return 1
  local have; have=$(go env GOVERSION 2>/dev/null | sed 's/^go//')
  [ -n "$have" ] && [ "$(printf '%s\n%s\n' "$go_want" "$have" | sort -V | head -n1)" = "$go_want" ]
}
if ! go_ok; then
  command -v go >/dev/null || { echo "cluster-build: no go command (scripts/setup.sh installs one)" >&2; exit 1; }
  echo "cluster-build: no Go >= $go_want here; the go command fetches go$go_toolchain" >&2
  export GOTOOLCHAIN=go$go_toolchain
  if ! go_ok; then
    # A go command older than GOTOOLCHAIN (1.21).
    unset GOTOOLCHAIN
    goroot="$cache/go$go_toolchain"
    if [ ! -x "$goroot/bin/go" ]; then
      arch=$(go env GOARCH)
      mkdir -p "$cache"
      tmp=$(mktemp -d "$cache/go-download.XXXXXX")
      dir=$(cd "$tmp" && GOFLAGS=-mod=mod GOMODCACHE="$tmp/mod" \
        go mod download -json "golang.org/toolchain@v0.0.1-go$go_toolchain.linux-$arch" |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["Dir"])') ||
        { echo "cluster-build: go mod download of go$go_toolchain failed" >&2; rm -rf "$tmp"; exit 1; }
      rm -rf "$goroot"
      cp -r "$dir" "$goroot"
      chmod -R u+w,u+x "$goroot/bin" "$goroot/pkg/tool"
      chmod -R u+w "$tmp" && rm -rf "$tmp"
    fi
    export PATH="$goroot/bin:$PATH" GOROOT="$goroot" GOTOOLCHAIN=local
  fi
  go_ok || { echo "cluster-build: could not get a Go >= $go_want" >&2; exit 1; }
fi

# The Go build cache of this build and the GPU Operator's (scripts/go-build-cache.sh).
. "$repo/scripts/go-build-cache.sh"
gpuops_go_build_cache "$cache"

# The GPU Operator controller (scripts/operator-build.sh, its own module
# tests/operator and cache directory, reused by its own stamp), with the Go
# chosen above. GPUOPS_GPU_OPERATOR=0: not built.
if [ "${GPUOPS_GPU_OPERATOR:-1}" != 0 ]; then
  "$repo/scripts/operator-build.sh" >/dev/null
fi

cd "$mod"
k8s_version=$(go list -m -f '{{if .Replace}}{{.Replace.Version}}{{else}}{{.Version}}{{end}}' k8s.io/kubernetes)
bin="$cache/k8s-$k8s_version/bin"
stamp_value=$(cat go.mod go.sum | sha256sum | cut -d' ' -f1)

# name -> package (all declared as `tool` in tests/cluster/go.mod)
names=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok)
declare -A pkgs=(
  [etcd]=go.etcd.io/etcd/server/v3
  [kube-apiserver]=k8s.io/kubernetes/cmd/kube-apiserver
  [kube-controller-manager]=k8s.io/kubernetes/cmd/kube-controller-manager
  [kube-scheduler]=k8s.io/kubernetes/cmd/kube-scheduler
  [kubectl]=k8s.io/kubernetes/cmd/kubectl
  [kwok]=sigs.k8s.io/kwok/cmd/kwok
)

# One build at a time per version (several helpers or test runs may call this).
mkdir -p "$cache"
exec 9>"$cache/k8s-$k8s_version.lock"
if ! flock -n 9; then
  echo "cluster-build: waiting for another build of $k8s_version (lock $cache/k8s-$k8s_version.lock)" >&2
  flock 9
fi

complete=1
for n in "${names[@]}"; do [ -x "$bin/$n" ] || complete=0; done
if [ "${GPUOPS_REBUILD:-0}" != 1 ] && [ "$complete" = 1 ] && [ -f "$bin/.stamp" ] \
   && [ "$(cat "$bin/.stamp")" = "$stamp_value" ]; then
  echo "cluster-build: reusing $bin (stamp $stamp_value)" >&2
  echo "$bin"
  exit 0
fi

mkdir -p "$bin"
rm -f "$bin/.stamp"
echo "cluster-build: building Kubernetes $k8s_version components into $bin ($(go version))" >&2

# What `kubectl version` and /version report; upstream sets the same variables
# from hack/lib/version.sh.
minor=${k8s_version#v1.}; minor=${minor%%.*}
vpkg=k8s.io/component-base/version
k8s_ldflags="-s -w -X $vpkg.gitVersion=$k8s_version -X $vpkg.gitMajor=1 -X $vpkg.gitMinor=$minor"
k8s_ldflags+=" -X $vpkg.gitTreeState=clean -X $vpkg.buildDate=1970-01-01T00:00:00Z"

total_start=$(date +%s)
for n in "${names[@]}"; do
  start=$(date +%s)
  echo "cluster-build: [$n] go build ${pkgs[$n]}" >&2
  ldflags="-s -w"
  case "$n" in kube-*|kubectl) ldflags="$k8s_ldflags" ;; esac
  CGO_ENABLED=0 nice -n 19 go build -p "${GPUOPS_GO_P:-2}" -trimpath \
    -ldflags "$ldflags" -o "$bin/$n.partial" "${pkgs[$n]}"
  mv -f "$bin/$n.partial" "$bin/$n"
  echo "cluster-build: [$n] done in $(( $(date +%s) - start ))s" >&2
done
echo "$stamp_value" > "$bin/.stamp"
echo "cluster-build: all built in $(( $(date +%s) - total_start ))s" >&2
echo "$bin"
