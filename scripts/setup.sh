#!/usr/bin/env bash
# Installs what gpuops needs to build and test, from Debian packages only.
# Idempotent: installs nothing when everything is already there.
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config
  libboost1.81-dev libboost-json1.81-dev
  libyaml-cpp-dev libcxxopts-dev
  libfyaml-dev  # core/codec/yaml_load.cpp: the parser of large YAML texts
  libgtest-dev libgmock-dev libbenchmark-dev
  libssl-dev openssl
  curl iproute2 util-linux  # scripts/cluster-up.sh: health checks, ss, flock
  jq libdtl-dev
  time      # scripts/bench.sh: peak RSS of whole processes
  python3   # scripts/fidelity.sh compares the two reports; cluster-build.sh unpacks a Go toolchain
  python3-yaml  # scripts/catalog-gen.py (tests/catalogs/regenerate.sh): reads a release's assets
  clang libclang-rt-14-dev  # scripts/fuzz.sh: clang++ 14 with -fsanitize=fuzzer (libFuzzer)
  clang-format  # scripts/format.sh: the tree stays formatted (.clang-format)
  prometheus-cpp-dev  # gpuops exporter: the metric model and the text format
  dpkg-dev  # cpack's .deb: dpkg-shlibdeps (scripts/package-test.sh)
  prometheus  # tests/serve/exporter_test.cpp, scripts/e2e-exporter.sh: a real Prometheus scrapes the exporter and evaluates deploy/'s rules
  chromium  # tests/browser: serve --ui and the HTML reports in headless Chromium (DevTools protocol)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# kubectl for the lab's scripts and the conformance tests: Debian's
# kubernetes-client, unless the machine already has a kubectl.
if ! command -v kubectl >/dev/null 2>&1; then
  missing+=(kubernetes-client)
fi
# Go for the end-to-end tests' upstream builds (scripts/cluster-build.sh):
# Debian's golang-go, unless the machine already has a go command;
# cluster-build.sh has the go command fetch the toolchain tests/cluster/go.mod
# asks for when this one is older.
if ! command -v go >/dev/null 2>&1; then
  missing+=(golang-go)
fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi
