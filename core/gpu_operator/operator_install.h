// core/gpu_operator/operator_install.h: is a state a GPU Operator install, of which
// version, and which of its DaemonSets is which operand.
//
// The lab's DaemonSets are hand-written and named as the catalog says. A real
// install's are rendered by the operator: controlled by the ClusterPolicy
// (controllers/object_controls.go, controllerutil.SetControllerReference with
// the ClusterPolicy singleton) or by an NVIDIADriver (internal/state/driver.go),
// labelled by the ClusterPolicy's `spec.daemonsets.labels` (the Helm chart puts
// `helm.sh/chart: gpu-operator-<version>` and
// `app.kubernetes.io/managed-by: gpu-operator` there: the chart's
// gpu-operator.operand-labels), and the driver comes under several names
// (precompiled `nvidia-driver-daemonset-<kernel>-<os>`, OpenShift's driver
// toolkit `nvidia-driver-daemonset-<rhcos>`, NVIDIADriver
// `nvidia-<type>-driver-<os>-<hash>`), all with
// `app.kubernetes.io/component=nvidia-driver` (docs/reference/gpu-operator.md §1).
//
// Pure functions of a ClusterState; none throws.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/gpu_operator/operands.h"
#include "core/model/model.h"
#include "core/model/state_index.h"

namespace gpuops::core {

inline constexpr const char* kComponentLabel = "app.kubernetes.io/component";
inline constexpr const char* kManagedByLabel = "app.kubernetes.io/managed-by";
inline constexpr const char* kHelmChartLabel = "helm.sh/chart";

// What detect_operator_install found.
struct OperatorInstall {
  bool detected = false;
  // Why, one phrase for a note on stderr, e.g. `DaemonSet
  // gpu-operator/nvidia-driver-daemonset is controlled by ClusterPolicy
  // cluster-policy`. Empty when not detected.
  std::string evidence;
  // The operator's version, "v26.7.0" (always with a leading "v"), or "" when
  // nothing tells it. Read from the `helm.sh/chart` label
  // (`gpu-operator-v26.7.0`) of an operand DaemonSet or its pod template,
  // else from the tag of the validator's image (nvcr.io/nvidia/gpu-operator:
  // <tag> from v25.10, .../gpu-operator-validator:<tag> before: both share the
  // operator's release tag, docs/reference/gpu-operator.md §1 "Default images").
  std::string version;
  std::string version_source;  // "helm.sh/chart label of DaemonSet X", "image of DaemonSet X"
};

// An owner reference to a ClusterPolicy or an NVIDIADriver of group
// nvidia.com (any version): the GPU Operator's own objects, which
// object_controls.go sets as the controller of every operand it renders.
bool is_operator_owner(const OwnerReference& ref);
// The DaemonSet's controller is such an owner.
bool operator_controlled(const DaemonSet& d);

// A state is a GPU Operator install when a DaemonSet of its namespace is
// controlled by a ClusterPolicy or an NVIDIADriver (kind, group nvidia.com),
// or carries `app.kubernetes.io/managed-by=gpu-operator`, or a ClusterPolicy
// or NVIDIADriver is part of the state. The first such DaemonSet, in state
// order, is the evidence. A state without any (the lab) is not.
OperatorInstall detect_operator_install(const ClusterState& state);

// The built-in catalog for an operator version (OperatorInstall::version): the
// newest release line catalogued at or before it, "gpu-operator-v<line>"
// (v23.9, v24.3, v24.6, v24.9, v25.3, v25.10, v26.3; "v24.9.2" and "v24.12"
// get v24.9's), "gpu-operator" (the v26.7 catalog) for v26.7 and later and for
// an unknown version, the oldest (v23.9) for an older release. A version
// without a catalog of its own is said by catalog_release_note.
std::string operator_catalog_name(const std::string& version);

// The release line of a version: "v24.9" of "v24.9.2", "24.9" or "v24.9";
// "" when it does not parse as [v]MAJOR.MINOR[.PATCH...].
std::string release_major_minor(const std::string& version);

// The built-in operator catalogs' release lines, oldest first ({"v23.9", ...,
// "v26.7"}: the `version` key of each data/operands/gpu-operator*.yaml).
const std::vector<std::string>& catalogued_releases();
// Whether `release` ("v24.9") is one of catalogued_releases(), exactly.
bool is_catalogued_release(const std::string& release);
// catalogued_releases() as "v23.9, v24.3, ..., v26.7", for messages.
std::string catalogued_release_list();

// One line for stderr when an install of release `version` ("v23.6.1") is
// judged with a catalog of another release line (`catalog_version`, the
// Catalog::version key, "v23.9"); "" when both name the same line or either
// is unknown (an unknown version is said by the operator-mode banner). E.g.
//   gpuops: GPU Operator v23.6.1: no catalog for v23.6 (gpuops has v23.9, ..., v26.7); judged with v23.9's,
//   whose operands, deploy labels, validator gates and helpers' label writes may differ from v23.6's
std::string catalog_release_note(const std::string& version, const std::string& catalog_version);

// The built-in catalog a state is read with when none is named:
// operator_catalog_name(install.version) for an install, else "lab".
std::string default_catalog_name(const OperatorInstall& install);

// Whether `version` ("v26.7.0", "v26.7", "26.7") is major.minor or later. An
// empty or unparsable version counts as the newest (true).
bool version_at_least(const std::string& version, int major, int minor);

// Whether DaemonSet `ds` is operand `op`'s. Lab mode (catalog.operator_mode
// false): its name is op.daemonset. Operator mode: that, or op.component is
// set and the DaemonSet or its pod template carries
// app.kubernetes.io/component=<op.component> (every driver variant above).
bool is_operand_daemonset(const Catalog& catalog, const Operand& op, const DaemonSet& ds);

// Whether `ds` would select `node` if the node's `op.label` were "true": every
// other key of its template's nodeSelector matches (MPS also needs
// nvidia.com/mps.capable=true, a precompiled driver the node's
// kernel-version.full). The operator sets the deploy labels; this is whether
// the operand is meant for the node beyond them.
bool selects_node_but_label(const DaemonSet& ds, const Operand& op, const Node& node);

// The DaemonSets of `state` that are `op`'s (is_operand_daemonset), in state
// order. In lab mode at most the first one of op's name.
std::vector<const DaemonSet*> operand_daemonsets(const ClusterState& state, const Catalog& catalog, const Operand& op);

// Whether `pod` belongs to `op`: its controller reference is a DaemonSet of
// `dss` (op's, from operand_daemonsets) by name, and by uid when both are
// known (a pod left by an older DaemonSet of the same name is not its pod).
// A pod whose controlling DaemonSet is not in the state still belongs to op
// when the DaemonSet's name is op.daemonset, or, in operator mode, when the
// pod carries app.kubernetes.io/component=<op.component>.
bool pod_of_operand(const Catalog& catalog, const Operand& op, const std::vector<const DaemonSet*>& dss,
                    const Pod& pod);

// The operand's pod on a node, the one rule for every view that shows one
// (audit's NOT-READY and the matrix, the placement view, diagnose): of the
// pods of `op` (pod_of_operand over `dss`, op's DaemonSets) mapped to `node`
// (StateIndex::pods_on: bound to it, or only pinned to it by the DaemonSet
// controller's node affinity) that `among` accepts (all when it is empty),
// the first in the DaemonSet controller's order
// (core::pod_by_creation_timestamp_and_phase): a bound pod before one only
// pinned, then the oldest creationTimestamp (an absent one the oldest), then
// the name; of pods equal in all three, the first in state order. nullptr
// when there is none. Cost: the pods on `node`.
const Pod* operand_pod_on(const StateIndex& index, const Catalog& catalog, const Operand& op,
                          const std::vector<const DaemonSet*>& dss, const std::string& node,
                          const std::function<bool(const Pod&)>& among = nullptr);

}  // namespace gpuops::core
