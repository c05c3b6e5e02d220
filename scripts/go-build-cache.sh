# Sourced (not run) by scripts/cluster-build.sh and scripts/operator-build.sh:
# the Go build cache their `go build`s use.
#
# The caller's GOCACHE when it is set in the environment (so a user's own
# cache, or the one cluster-build.sh made, is shared: operator-build.sh called
# from cluster-build.sh reuses the packages both compile). Otherwise a
# directory of its own under the gpuops cache (argument 1), removed when the
# script exits, whether the build passed or not: what is kept are the binaries,
# reused by their stamps, not the compiled packages, which for one Kubernetes
# build are about 5 GB that a test run on a fresh machine would otherwise keep
# on disk to its end (a CI run once ran out of disk). A build killed by
# SIGKILL leaves its directory behind (go-build.XXXXXX in the cache root).
gpuops_go_build_cache() {
  [ -n "${GOCACHE:-}" ] && return 0
  mkdir -p "$1"
  GOCACHE=$(mktemp -d "$1/go-build.XXXXXX")
  export GOCACHE
  trap 'rm -rf "$GOCACHE"' EXIT
}
