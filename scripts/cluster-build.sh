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
# otherwise the official toolchain from the Go module proxy
# (golang.org/toolchain, the module `GOTOOLCHAIN` itself downloads), unpacked
# once into the cache. Debian 12's golang-go (1.19) is too old.
go_want=$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$mod/go.mod")
go_toolchain=${GPUOPS_GO_TOOLCHAIN:-1.26.8}
go_ok() {
  command -v go >/dev/null || return 1
  local have; have=$(go env GOVERSION 2>/dev/null | sed 's/^go//')
  [ -n "$have" ] && [ "$(printf '%s\n%s\n' "$go_want" "$have" | sort -V | head -n1)" = "$go_want" ]
}
if ! go_ok; then
  goroot="$cache/go$go_toolchain"
  if [ ! -x "$goroot/bin/go" ]; then
    arch=$(uname -m); case $arch in x86_64) arch=amd64 ;; aarch64) arch=arm64 ;; esac
    url="${GOPROXY_TOOLCHAIN:-https://proxy.golang.org}/golang.org/toolchain/@v/v0.0.1-go$go_toolchain.linux-$arch.zip"
    echo "cluster-build: no Go >= $go_want here; fetching go$go_toolchain from $url" >&2
    mkdir -p "$cache"
    tmp=$(mktemp -d "$cache/go-download.XXXXXX")
    curl -fsSL --retry 3 -o "$tmp/go.zip" "$url" ||
      { echo "cluster-build: download of $url failed" >&2; rm -rf "$tmp"; exit 1; }
    python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$tmp/go.zip" "$tmp/x"
    chmod -R u+x "$tmp/x/golang.org/toolchain@v0.0.1-go$go_toolchain.linux-$arch/bin" \
      "$tmp/x/golang.org/toolchain@v0.0.1-go$go_toolchain.linux-$arch/pkg/tool"
    rm -rf "$goroot"
    mv "$tmp/x/golang.org/toolchain@v0.0.1-go$go_toolchain.linux-$arch" "$goroot"
    rm -rf "$tmp"
  fi
  export PATH="$goroot/bin:$PATH" GOROOT="$goroot" GOTOOLCHAIN=local
  go_ok || { echo "cluster-build: $goroot/bin/go is not a Go >= $go_want" >&2; exit 1; }
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
