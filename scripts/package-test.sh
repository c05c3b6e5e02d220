#!/usr/bin/env bash
# The install step and the .deb, as a user gets them (docs/EXPORTER.md):
#   1. `cmake --install build --prefix P`: P/bin/gpuops and the kubectl plugin
#      name P/bin/kubectl-gpuops (a link to it);
#   2. `cpack -G DEB` in build/, unpacked with `dpkg-deb -x` into a scratch
#      root: its usr/bin/gpuops --version, and `kubectl gpuops audit` (the real
#      kubectl finding the plugin on PATH) against `gpuops serve --lab`, with
#      --kubeconfig, with KUBECONFIG, with --context and -n, with --server and
#      --token.
# Starts and stops its own `gpuops serve`. About 10 s.
# Usage: scripts/package-test.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
scratch=$(mktemp -d /tmp/gpuops-package.XXXXXX)
serve_pid=
cleanup() {
  [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null
  rm -rf "$scratch"
}
trap cleanup EXIT
fail() { echo "package-test: FAIL: $*" >&2; exit 1; }

# The kubectl the e2e set-up built, else the machine's (scripts/setup.sh).
kubectl=${GPUOPS_CACHE:-$HOME/.cache/gpuops}/k8s-v1.37.2/bin/kubectl
[ -x "$kubectl" ] || kubectl=$(command -v kubectl)

cmake --install "$build" --prefix "$scratch/prefix" --strip >/dev/null
[ -x "$scratch/prefix/bin/gpuops" ] || fail "cmake --install put no bin/gpuops"
[ "$(readlink "$scratch/prefix/bin/kubectl-gpuops")" = gpuops ] || fail "bin/kubectl-gpuops is not a link to gpuops"
[ "$("$scratch/prefix/bin/kubectl-gpuops" --version)" = "gpuops $(sed -n 's/^project(gpuops VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)" ] ||
  fail "installed kubectl-gpuops --version"

(cd "$build" && cpack -G DEB >/dev/null)
deb=$(ls "$build"/gpuops_*_*.deb | head -1)
[ -f "$deb" ] || fail "cpack made no .deb"
dpkg-deb -x "$deb" "$scratch/root"
root_bin=$scratch/root/usr/bin
[ "$(readlink "$root_bin/kubectl-gpuops")" = gpuops ] || fail "the .deb's usr/bin/kubectl-gpuops is not a link to gpuops"
"$root_bin/gpuops" --version | grep -qx 'gpuops [0-9.]*' || fail "the .deb's gpuops --version"

# A served lab cluster where lab-node-1 asks for a device plugin that no
# DaemonSet provides: LAB.md step 6 says `lab-node-1 MISSING device-plugin`.
kc=$scratch/kubeconfig
"$root_bin/gpuops" serve --lab --kubeconfig-out "$kc" >"$scratch/serve.out" 2>"$scratch/serve.err" &
serve_pid=$!
for _ in $(seq 1 100); do grep -q "serving on" "$scratch/serve.out" 2>/dev/null && break; sleep 0.1; done
grep -q "serving on" "$scratch/serve.out" || fail "gpuops serve did not start: $(cat "$scratch/serve.err")"
"$kubectl" --kubeconfig "$kc" label node lab-node-1 nvidia.com/gpu.deploy.device-plugin=true >/dev/null
want=$'lab-node-0 OK\nlab-node-1 MISSING device-plugin\nlab-node-2 OK'
context=$("$kubectl" --kubeconfig "$kc" config current-context)
check() {  # name, command...
  local name=$1; shift
  local got rc=0
  got=$(env PATH="$root_bin:$PATH" "$@" 2>"$scratch/err") || rc=$?
  [ "$got" = "$want" ] || fail "$name: printed '$got' ($(cat "$scratch/err"))"
  [ "$rc" = 1 ] || fail "$name: exit code $rc, not 1 (a gap)"
}
check "kubectl gpuops audit --kubeconfig" "$kubectl" gpuops audit --kubeconfig "$kc"
check "KUBECONFIG=... kubectl gpuops audit" env KUBECONFIG="$kc" "$kubectl" gpuops audit
check "kubectl gpuops audit --context -n" env KUBECONFIG="$kc" "$kubectl" gpuops audit --context "$context" -n gpu-operator
# --server and --token override the kubeconfig's, as kubectl's flags do: a
# copy whose server is a closed port works with --server; a wrong --token is
# refused by the API (401: exit 3), the right one works.
server=$("$kubectl" --kubeconfig "$kc" config view --raw -o 'jsonpath={.clusters[0].cluster.server}')
token=$("$kubectl" --kubeconfig "$kc" config view --raw -o 'jsonpath={.users[0].user.token}')
cp "$kc" "$scratch/wrong-server"
"$kubectl" --kubeconfig "$scratch/wrong-server" config set-cluster "$("$kubectl" --kubeconfig "$kc" config view -o 'jsonpath={.clusters[0].name}')" \
  --server https://127.0.0.1:1 >/dev/null
check "kubectl gpuops audit --server" "$kubectl" gpuops audit --kubeconfig "$scratch/wrong-server" --server "$server"
check "kubectl gpuops audit --token" "$kubectl" gpuops audit --kubeconfig "$kc" --token "$token"
rc=0
env PATH="$root_bin:$PATH" "$kubectl" gpuops audit --kubeconfig "$kc" --token wrong >/dev/null 2>&1 || rc=$?
[ "$rc" = 3 ] || fail "kubectl gpuops audit --token wrong: exit $rc, not 3"
"$kubectl" plugin list 2>/dev/null | grep -q "$root_bin/kubectl-gpuops" ||
  PATH="$root_bin:$PATH" "$kubectl" plugin list 2>/dev/null | grep -q "$root_bin/kubectl-gpuops" ||
  fail "kubectl plugin list does not show kubectl-gpuops"
echo "package-test: ok (install, .deb, kubectl gpuops audit with --kubeconfig, KUBECONFIG, --context -n, --server, --token)"
