// simulator/gpu_operator/operator_host_paths.h: internal to simulator/.
// The host paths a ClusterPolicy moves in an operand's DaemonSet: the
// asset's hostPath volumes the catalog lists (Operand::host_paths, generated
// from assets/state-*/ by scripts/catalog-gen.py), with the paths and the env
// the GPU Operator's transforms write for spec.hostPaths.rootFS,
// spec.hostPaths.driverInstallDir, spec.toolkit.installDir and
// spec.devicePlugin.mps.root.
//
// Mirrors, in NVIDIA/gpu-operator controllers/object_controls.go (v25.3.4,
// the same in this from v24.6 to v26.7): transformForHostRoot
// (transformHostRootVolume: host-root -> rootFS and HOST_ROOT on every
// container; transformHostDevCharVolume: host-dev-char -> rootFS/dev/char),
// transformForDriverInstallDir (driver-install-dir, and DRIVER_INSTALL_DIR /
// DRIVER_INSTALL_DIR_CTR_PATH on the driver-validation init container), both
// from v24.6 (absent before: those fields render nothing); TransformToolkit's
// installDir (toolkit-install-dir and ROOT on its container; every release);
// TransformDevicePlugin's and TransformMPSControlDaemon's MPS root (mps-root,
// mps-shm = root/shm; MPS_ROOT on the device plugin's container only; from
// v24.3). A value equal to the default ("/", /run/nvidia/driver,
// /usr/local/nvidia, /run/nvidia/mps) or empty changes nothing. Volume
// mounts are not rendered.
#pragma once

#include <boost/json.hpp>
#include <string>

#include "core/gpu_operator/operands.h"
#include "core/model/model.h"

namespace gpuops::simulator::internal {

// Writes "volumes" ([{name, hostPath: {path}}], op.host_paths in catalog
// order) into `pod_spec` (a rendered pod template's spec: "containers"[0]
// the operand's main container, "initContainers" its gates) for operand `op`
// of operator release `version` ("v25.3": core::version_at_least) under
// `policy`, with the transforms above. Nothing when op.host_paths is empty. A
// field of the wrong type counts as absent; never throws.
void apply_host_paths(const core::Operand& op, const core::ClusterPolicy& policy, const std::string& version,
                      boost::json::object& pod_spec);

}  // namespace gpuops::simulator::internal
