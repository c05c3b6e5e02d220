#!/usr/bin/env bash
# Builds the upstream control plane used by the end-to-end tests (test
# infrastructure, not product): kube-apiserver, kube-controller-manager,
# kube-scheduler, kubectl, etcd and KWOK, from the versions pinned in
# tests/cluster/go.mod (+ go.sum).
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
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mod="$repo/tests/cluster"
cache="${GPUOPS_CACHE:-$HOME/.cache/gpuops}"

command -v go >/dev/null || { echo "cluster-build: go not found (apt-get install golang-go, or a Go >= the one in $mod/go.mod)" >&2; exit 1; }

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
