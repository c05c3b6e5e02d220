#!/usr/bin/env bash
# Starts a real Kubernetes control plane on loopback for the end-to-end tests
# (test infrastructure, not product): etcd, kube-apiserver, kube-controller-
# manager, kube-scheduler and KWOK (the fake kubelet for every node), built by
# scripts/cluster-build.sh.
#
#   scripts/cluster-up.sh [--gpu-operator] DIR
#
# --gpu-operator (or GPUOPS_GPU_OPERATOR=1): also the NVIDIA GPU Operator
# controller (scripts/operator-build.sh), run out of cluster once the control
# plane is healthy: its CRDs applied and Established, then the controller in a private mount namespace (unshare --mount)
# where /opt is DIR/opt (its assets at /opt/gpu-operator/<state> and
# /opt/gpu-operator/manifests/state-driver) and /host-etc is DIR/host-etc (an
# Ubuntu 22.04 os-release). Log DIR/gpu-operator.log, pid
# DIR/pids/gpu-operator.pid. The machine's /opt is never written; /host-etc
# must exist as a mount point: when it does not, an empty directory is
# created there (docs/CONTROL-PLANE.md, "The GPU Operator").
#
# DIR receives everything: pki/ (openssl-generated CA, serving and client
# certificates, service-account keys), etcd data, one log per process
# (*.log), one PID file per process (pids/*.pid), and
#   DIR/kubeconfig   admin kubeconfig for the tests (context "gpuops": client
#                    certificate in group system:masters; context
#                    "gpuops-token": the same user by bearer token)
#   DIR/token        that bearer token
#   DIR/env          shell exports: KUBECONFIG, GPUOPS_CLUSTER_BIN,
#                    GPUOPS_APISERVER (https://127.0.0.1:PORT)
# Returns when the API is healthy, the controllers and the scheduler answer
# their health checks and KWOK is running. On failure it stops what it started
# and exits non-zero. Stop with scripts/cluster-down.sh DIR.
#
# Environment: GPUOPS_CACHE (see cluster-build.sh), GPUOPS_CLUSTER_BIN (use
# these binaries instead of building), GPUOPS_CLUSTER_PORT_BASE (first of 6
# consecutive loopback ports; default: a free block is chosen),
# GPUOPS_GPU_OPERATOR=1 (as --gpu-operator), GPUOPS_OPERATOR_DIR (use this
# scripts/operator-build.sh output directory instead of building).
set -euo pipefail

operator=${GPUOPS_GPU_OPERATOR:-0}
if [ "${1:-}" = --gpu-operator ]; then operator=1; shift; fi
[ $# -eq 1 ] || { echo "usage: $0 [--gpu-operator] DIR" >&2; exit 2; }
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mkdir -p "$1"
dir=$(cd "$1" && pwd)
log() { echo "cluster-up: $*" >&2; }

if [ -d "$dir/pids" ] && ls "$dir"/pids/*.pid >/dev/null 2>&1; then
  for f in "$dir"/pids/*.pid; do
    if kill -0 "$(cat "$f")" 2>/dev/null; then
      echo "cluster-up: $dir already has a running cluster ($(basename "$f" .pid) pid $(cat "$f")); run scripts/cluster-down.sh $dir first" >&2
      exit 1
    fi
  done
fi

bin=${GPUOPS_CLUSTER_BIN:-$("$repo/scripts/cluster-build.sh" | tail -n1)}
for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok; do
  [ -x "$bin/$b" ] || { echo "cluster-up: $bin/$b missing (run scripts/cluster-build.sh)" >&2; exit 1; }
done
command -v openssl >/dev/null || { echo "cluster-up: openssl not found" >&2; exit 1; }
if [ "$operator" = 1 ]; then
  opdir=${GPUOPS_OPERATOR_DIR:-$("$repo/scripts/operator-build.sh" | tail -n1)}
  [ -x "$opdir/bin/gpu-operator" ] || { echo "cluster-up: $opdir/bin/gpu-operator missing (run scripts/operator-build.sh)" >&2; exit 1; }
  command -v unshare >/dev/null || { echo "cluster-up: unshare (util-linux) not found: needed for --gpu-operator" >&2; exit 1; }
fi

# --- ports: 6 consecutive free loopback ports -------------------------------
port_in_use() { ss -Htln "sport = :$1" | grep -q .; }
if [ -n "${GPUOPS_CLUSTER_PORT_BASE:-}" ]; then
  base=$GPUOPS_CLUSTER_PORT_BASE
else
  base=""
  for _ in $(seq 1 50); do
    cand=$(( 20000 + (RANDOM % 2000) * 10 ))
    free=1
    for i in 0 1 2 3 4 5; do port_in_use $((cand + i)) && free=0; done
    [ "$free" = 1 ] && { base=$cand; break; }
  done
  [ -n "$base" ] || { echo "cluster-up: no free block of loopback ports found" >&2; exit 1; }
fi
# A health check must never reach another cluster's process: refuse ports in use.
for i in 0 1 2 3 4 5; do
  if port_in_use $((base + i)); then
    echo "cluster-up: loopback port $((base + i)) is in use (ports $base-$((base + 5)) needed)" >&2
    exit 1
  fi
done
etcd_port=$base; etcd_peer_port=$((base + 1)); api_port=$((base + 2))
kcm_port=$((base + 3)); sched_port=$((base + 4)); kwok_port=$((base + 5))
api="https://127.0.0.1:$api_port"

rm -rf "$dir/pids" "$dir/etcd" "$dir/pki" "$dir"/*.kubeconfig "$dir/kubeconfig"
mkdir -p "$dir/pids" "$dir/pki" "$dir/etcd"
chmod 700 "$dir/pki" "$dir/etcd"

# --- certificates (openssl CLI) ---------------------------------------------
pki=$dir/pki
log "generating certificates in $pki"
ossl() { openssl "$@" >/dev/null 2>&1 || { echo "cluster-up: openssl $1 failed" >&2; openssl "$@"; exit 1; }; }
ossl req -x509 -newkey rsa:2048 -nodes -sha256 -days 30 \
  -keyout "$pki/ca.key" -out "$pki/ca.crt" -subj "/CN=gpuops-test-ca"
# sign NAME SUBJECT [SAN] [serverAuth|clientAuth]
sign() {
  local name=$1 subj=$2 san=${3:-} usage=$4 ext="$pki/$1.ext"
  ossl req -newkey rsa:2048 -nodes -sha256 -keyout "$pki/$name.key" -out "$pki/$name.csr" -subj "$subj"
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$usage"
    [ -n "$san" ] && echo "subjectAltName=$san"
  } > "$ext"
  ossl x509 -req -in "$pki/$name.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
    -days 30 -sha256 -extfile "$ext" -out "$pki/$name.crt"
  rm -f "$pki/$name.csr" "$ext"
}
sign apiserver "/CN=kube-apiserver" \
  "IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,IP:10.96.0.1" \
  serverAuth
sign admin "/O=system:masters/CN=gpuops-admin" "" clientAuth
sign kube-controller-manager "/CN=system:kube-controller-manager" "" clientAuth
sign kube-scheduler "/CN=system:kube-scheduler" "" clientAuth
sign kwok "/O=system:masters/CN=kwok-controller" "" clientAuth
ossl genrsa -out "$pki/sa.key" 2048
ossl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub"
token=$(openssl rand -hex 32)
echo "$token" > "$dir/token"
chmod 600 "$dir/token"
echo "$token,gpuops-admin-token,gpuops-admin-token,system:masters" > "$pki/tokens.csv"

# --- kubeconfigs (written by the kubectl built here) -------------------------
kc() { "$bin/kubectl" --kubeconfig "$1" config "${@:2}" >/dev/null; }
mkkubeconfig() { # FILE USER
  local f=$1 user=$2
  kc "$f" set-cluster gpuops --server="$api" --certificate-authority="$pki/ca.crt" --embed-certs=true
  kc "$f" set-credentials "$user" --client-certificate="$pki/$user.crt" --client-key="$pki/$user.key" --embed-certs=true
  kc "$f" set-context gpuops --cluster=gpuops --user="$user"
  kc "$f" use-context gpuops
}
mkkubeconfig "$dir/kubeconfig" admin
kc "$dir/kubeconfig" set-credentials admin-token --token="$token"
kc "$dir/kubeconfig" set-context gpuops-token --cluster=gpuops --user=admin-token
for c in kube-controller-manager kube-scheduler kwok; do mkkubeconfig "$dir/$c.kubeconfig" "$c"; done
chmod 600 "$dir"/*kubeconfig

# --- processes ----------------------------------------------------------------
started=()
cleanup_on_error() {
  local rc=$?
  [ $rc -eq 0 ] && return
  log "failed (exit $rc); stopping what was started; logs in $dir/*.log"
  "$repo/scripts/cluster-down.sh" "$dir" >&2 || true
  exit $rc
}
trap cleanup_on_error EXIT

start() { # NAME ARGS...
  local name=$1; shift
  log "starting $name"
  # An asynchronous command of a non-interactive shell ignores SIGINT, and $!
  # is the component's own PID (no wrapper process in between).
  "$bin/$name" "$@" > "$dir/$name.log" 2>&1 < /dev/null &
  echo $! > "$dir/pids/$name.pid"
  started+=("$name")
}
# wait_for NAME SECONDS CMD...: polls CMD until it succeeds, or fails when the
# process died or the time is up.
wait_for() {
  local name=$1 secs=$2 what=${WHAT:-healthy}; shift 2
  local end=$(( $(date +%s) + secs ))
  until "$@" >/dev/null 2>&1; do
    if ! kill -0 "$(cat "$dir/pids/$name.pid")" 2>/dev/null; then
      echo "cluster-up: $name exited; last lines of $dir/$name.log:" >&2
      tail -n 20 "$dir/$name.log" >&2
      return 1
    fi
    if [ "$(date +%s)" -ge "$end" ]; then
      echo "cluster-up: $name not healthy after ${secs}s; last lines of $dir/$name.log:" >&2
      tail -n 20 "$dir/$name.log" >&2
      return 1
    fi
    sleep 0.5
  done
  log "$name $what"
}
curl_ok() { curl -fsS --max-time 2 "$@"; }

start etcd --name gpuops --data-dir "$dir/etcd" \
  --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
  --listen-peer-urls "http://127.0.0.1:$etcd_peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer_port" \
  --initial-cluster "gpuops=http://127.0.0.1:$etcd_peer_port" \
  --log-level warn
wait_for etcd 30 curl_ok "http://127.0.0.1:$etcd_port/health"

start kube-apiserver \
  --etcd-servers "http://127.0.0.1:$etcd_port" \
  --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$api_port" \
  --endpoint-reconciler-type none \
  --cert-dir "$dir/apiserver-certs" \
  --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
  --client-ca-file "$pki/ca.crt" --token-auth-file "$pki/tokens.csv" \
  --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
  --service-account-issuer "https://kubernetes.default.svc.cluster.local" \
  --service-cluster-ip-range 10.96.0.0/16 \
  --authorization-mode Node,RBAC \
  --allow-privileged=true \
  --profiling=false
wait_for kube-apiserver 90 curl_ok --cacert "$pki/ca.crt" -H "Authorization: Bearer $token" "$api/readyz"

common=(--bind-address 127.0.0.1 --leader-elect=false --profiling=false)
start kube-controller-manager "${common[@]}" --secure-port "$kcm_port" \
  --kubeconfig "$dir/kube-controller-manager.kubeconfig" \
  --authentication-kubeconfig "$dir/kube-controller-manager.kubeconfig" \
  --authorization-kubeconfig "$dir/kube-controller-manager.kubeconfig" \
  --controllers '*' \
  --use-service-account-credentials=true \
  --service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/ca.crt" \
  --cluster-name gpuops
start kube-scheduler "${common[@]}" --secure-port "$sched_port" \
  --kubeconfig "$dir/kube-scheduler.kubeconfig" \
  --authentication-kubeconfig "$dir/kube-scheduler.kubeconfig" \
  --authorization-kubeconfig "$dir/kube-scheduler.kubeconfig"
stages=()
for s in "$repo"/tests/cluster/stages/*.yaml; do stages+=(--config "$s"); done
start kwok --kubeconfig "$dir/kwok.kubeconfig" "${stages[@]}" \
  --manage-all-nodes=true --node-lease-duration-seconds 40 \
  --node-ip 127.0.0.1 --cidr 10.244.0.0/16 \
  --server-address "127.0.0.1:$kwok_port"
# /healthz of the controller-manager and scheduler is open to anyone
# (--authorization-always-allow-paths default).
wait_for kube-controller-manager 60 curl_ok -k "https://127.0.0.1:$kcm_port/healthz"
wait_for kube-scheduler 60 curl_ok -k "https://127.0.0.1:$sched_port/healthz"
wait_for kwok 60 curl_ok "http://127.0.0.1:$kwok_port/healthz"

# The namespace controller and service-account controller are running when
# "default" has its ServiceAccount (pods are rejected before that).
k() { "$bin/kubectl" --kubeconfig "$dir/kubeconfig" "$@"; }
WHAT="created ServiceAccount default/default" wait_for kube-controller-manager 60 \
  k -n default get serviceaccount default

# --- the GPU Operator (on request) ---------------------------------------------
if [ "$operator" = 1 ]; then
  log "applying the GPU Operator's CRDs ($opdir/crds)"
  k apply --server-side -f "$opdir/crds" >/dev/null
  # A cache sync of an unknown kind that waits 2 minutes is fatal to it.
  k wait --for condition=Established --timeout 60s \
    crd/clusterpolicies.nvidia.com crd/nvidiadrivers.nvidia.com >/dev/null
  # Namespace gpu-operator is not created here: the scenarios that need it
  # create it (installOperator, createNamespace), and one expects it absent
  # (case-bad-manifests). The operator's caches start without it.
  # The fixed paths it reads, in a private mount namespace.
  rm -rf "$dir/opt" "$dir/host-etc"
  mkdir -p "$dir/opt/gpu-operator" "$dir/host-etc"
  cp -r "$opdir/assets/." "$dir/opt/gpu-operator/"
  cp -r "$opdir/manifests" "$dir/opt/gpu-operator/manifests"
  printf '%s\n' 'NAME="Ubuntu"' 'ID=ubuntu' 'VERSION_ID="22.04"' 'PRETTY_NAME="Ubuntu 22.04 LTS"' > "$dir/host-etc/os-release"
  if [ ! -d /host-etc ]; then
    log "creating the empty mount point /host-etc (the operator reads /host-etc/os-release)"
    mkdir /host-etc
  fi
  # The images of an operand whose ClusterPolicy spec names none, as the
  # operator's OLM bundle passes them (api/nvidia/v1 ImagePath falls back to
  # these variables): the Helm defaults of v25.3.4. The driver's tag gets the
  # node's OS appended by the operator.
  r=nvcr.io/nvidia
  opimg=(DRIVER_IMAGE=$r/driver:580.82.07
    DRIVER_MANAGER_IMAGE=$r/cloud-native/k8s-driver-manager:v0.8.1
    CONTAINER_TOOLKIT_IMAGE=$r/k8s/container-toolkit:v1.17.8-ubuntu20.04
    DEVICE_PLUGIN_IMAGE=$r/k8s-device-plugin:v0.17.4 GFD_IMAGE=$r/k8s-device-plugin:v0.17.4
    DCGM_IMAGE=$r/cloud-native/dcgm:4.3.1-1-ubuntu22.04
    DCGM_EXPORTER_IMAGE=$r/k8s/dcgm-exporter:4.3.1-4.4.0-ubuntu22.04
    MIG_MANAGER_IMAGE=$r/cloud-native/k8s-mig-manager:v0.12.3-ubuntu20.04
    VALIDATOR_IMAGE=$r/cloud-native/gpu-operator-validator:v25.3.4
    CUDA_BASE_IMAGE=$r/cuda:13.0.1-base-ubi9
    VGPU_DEVICE_MANAGER_IMAGE=$r/cloud-native/vgpu-device-manager:v0.4.0
    SANDBOX_DEVICE_PLUGIN_IMAGE=$r/kubevirt-gpu-device-plugin:v1.4.0
    VFIO_MANAGER_IMAGE=$r/cuda:13.0.1-base-ubi9
    CC_MANAGER_IMAGE=$r/cloud-native/k8s-cc-manager:v0.1.1)
  log "starting gpu-operator ($opdir/bin/gpu-operator)"
  # unshare execs the shell, which execs the operator: the recorded PID is the
  # operator's own.
  env OPERATOR_NAMESPACE=gpu-operator "${opimg[@]}" \
    unshare --mount --propagation private -- sh -c \
    'mount --bind "$1/opt" /opt && mount --bind "$1/host-etc" /host-etc && shift && exec "$@"' sh "$dir" \
    "$opdir/bin/gpu-operator" --kubeconfig "$dir/kubeconfig" --leader-elect=false \
    --metrics-bind-address=0 --health-probe-bind-address=0 \
    > "$dir/gpu-operator.log" 2>&1 < /dev/null &
  echo $! > "$dir/pids/gpu-operator.pid"
  started+=(gpu-operator)
  # Up when its ClusterPolicy controller has started its workers.
  op_started() { grep -q 'Starting workers.*clusterpolicy' "$dir/gpu-operator.log"; }
  WHAT="controller running" wait_for gpu-operator 150 op_started
fi

cat > "$dir/env" <<EOF
export KUBECONFIG=$dir/kubeconfig
export GPUOPS_CLUSTER_BIN=$bin
export GPUOPS_APISERVER=$api
export GPUOPS_GPU_OPERATOR=$operator
EOF
trap - EXIT
log "up: $api (kubeconfig $dir/kubeconfig; pids in $dir/pids; stop with scripts/cluster-down.sh $dir)"
