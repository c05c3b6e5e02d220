// core/analysis/analysis.h: the lab-contract analyses, pure functions of a ClusterState.
//
// "Present" (the rule every analysis shares): operand O is present on node N
// when a pod exists that is controlled (ownerReference controller=true, kind
// DaemonSet, matching name — and uid when the DaemonSet is known) by O's
// DaemonSet, is bound to N (spec.nodeName == N), is in phase Running, and has
// no deletionTimestamp. A pod that merely carries the `app` label does not
// count; neither does a Pending, terminating or failed one. LAB.md step 6.
#pragma once

#include <string>
#include <vector>

#include "core/gpu_operator/operands.h"
#include "core/model/model.h"
#include "core/model/state_index.h"

namespace gpuops::core {

// Text output plus the exit status it implies (0 or 1).
struct Report {
  std::vector<std::string> lines;
  int exit_code = 0;
  std::string text() const;  // lines joined with '\n', with a trailing '\n'
};

// True when operand `op` is present on node `node` (see above). In operator
// mode (catalog.operator_mode) the pod must also be Ready (podutil.IsPodReady:
// every container and init container done), and op's DaemonSets are those of
// core::operand_daemonsets (by component as well as by name).
bool operand_present(const ClusterState& state, const Catalog& catalog, const Operand& op, const std::string& node);

// Pods that count as present for `op`, on any node.
std::vector<const Pod*> present_pods(const ClusterState& state, const Catalog& catalog, const Operand& op);

// The same rule through an index, for analyses that ask it per node: the
// pod that makes `op` present on `node` (of several, the one
// core::operand_pod_on picks), or nullptr; and whether there is one. Cost:
// the pods on `node`, not the cluster's.
const Pod* present_pod(const StateIndex& index, const Catalog& catalog, const Operand& op, const std::string& node);
bool operand_present(const StateIndex& index, const Catalog& catalog, const Operand& op, const std::string& node);

// `<operand>=<label key>` per operand, in catalog order (LAB.md step 1).
Report roster(const Catalog& catalog);

// One gap of the audit: an operand checked on a node and not present there.
struct AuditGap {
  enum class Verdict {
    kMissing,   // no pod of the operand on the node
    kNotReady,  // operator mode only: a pod is there, not Running and Ready
    kPaused,    // operator mode only: the deploy label is paused by a helper
    kBlocked,   // operator mode only: the operator wants the operand on the node, its deploy label keeps it off
  };
  std::string operand;  // Operand::name
  Verdict verdict = Verdict::kMissing;
  // kNotReady: the pod's STATUS column (core::pod_status_column), e.g.
  // "CrashLoopBackOff", "Init:0/1", "Running" (Running, a container not ready).
  // kPaused: the label's value, e.g. "paused-for-driver-upgrade".
  // kBlocked: `label ""`, `label "True"` (the value, as Go's %q), or
  // `no deploy label`.
  std::string status;
  std::string pod;  // kNotReady: the pod's name
};

// The audit of one node: its gaps in catalog order (none: the node is OK).
struct AuditNode {
  std::string node;
  std::vector<AuditGap> gaps;
  // Every operand the audit checked on the node (Operand::name, catalog
  // order), with a gap or not: the operands expected there.
  std::vector<std::string> checked;
  // Operator mode: NFD never labelled the node, which shows signs of an
  // NVIDIA GPU (core::unlabelled_gpu_signs): why (core::nfd_gap), e.g. "its
  // NFD worker does not tolerate taint dedicated=ml:NoSchedule". The
  // operator deploys nothing there. Empty otherwise.
  std::string unlabelled;
};

struct AuditResult {
  std::vector<AuditNode> nodes;  // every node, sorted by name
  int exit_code = 0;             // 1 when any node has a gap
};

// LAB.md step 6: for every node (sorted by name) and every operand (catalog
// order) whose deploy label is exactly "true" on that node, a gap when it is
// not present. With a catalog whose `audit` is `deployed`
// (Catalog::audit_deployed_only), an operand is checked on a node only when
// one of its DaemonSets exists in the state and the rest of that DaemonSet's
// nodeSelector matches the node. In operator mode a gap whose operand has a
// pod on the node (any phase, terminating included; the first in
// podByCreationTimestampAndPhase order) is kNotReady, with that pod's STATUS;
// and an operand whose deploy label a helper paused (paused-for-driver-upgrade,
// <X>_paused-for-driver-upgrade, paused-for-mig-change,
// paused-for-vgpu-change: core::classify_label) is checked too, a kPaused gap
// (the operator wants it there; k8s-driver-manager, mig-manager or
// vgpu-device-manager took it off until they restore the label).
// Also in operator mode, on a GPU node (core::is_gpu_node: NFD's GPU labels)
// without nvidia.com/gpu.deploy.operands=false:
// an operand whose deploy label the operator sets there
// (core::expected_deploy_labels: gpuStateLabels of the node's workload
// config, mig-manager on a MIG-capable node), whose DaemonSet would select
// the node but for that label, and whose label is absent, "" or any value but
// "true", "false" (an opt-out the operator keeps), "pre-installed" and the
// paused ones, is a kBlocked gap: the DaemonSet cannot place its pod, so half
// the stack may be missing while the node looks fine by its labels (stale
// pause stamps, a key removed by hand; releases whose labeller re-adds an
// absent key do so on their next pass, which a dump cannot show).
// And in operator mode a node NFD never labelled that shows signs of a GPU is
// AuditNode::unlabelled, a gap of the node itself.
AuditResult audit_result(const ClusterState& state, const Catalog& catalog);

// The audit's text: per node, `<node> MISSING <operand>` per kMissing gap and
// `<node> NOT-READY <operand> (<status>)` per kNotReady gap,
// `<node> PAUSED <operand> (<label value>)` per kPaused gap,
// `<node> BLOCKED <operand> (<status>)` per kBlocked gap, in gap order, after
// `<node> UNLABELLED (<why>)` for an unlabelled node, or `<node> OK` for a
// node without either. Exit code as the result's.
Report render_audit(const AuditResult& result);

// render_audit(audit_result(state, catalog)).
Report audit(const ClusterState& state, const Catalog& catalog);

// LAB.md step 7, for one node: `device-plugin-without-toolkit` (exit 1) when
// the device-plugin operand is present on it and the container-toolkit operand
// is not; otherwise `ok` (exit 0). Operand names "device-plugin" and
// "container-toolkit" are looked up in the catalog; throws InputError if the
// catalog lacks either.
Report order_check(const ClusterState& state, const Catalog& catalog, const std::string& node);

// One cell of the matrix.
enum class MatrixCell {
  kYes,       // present
  kNo,        // not present (lab mode: whatever the reason; operator mode: no pod)
  kNotReady,  // operator mode only: a pod is there, not Running and Ready
};

// "yes", "no", "not-ready".
const char* matrix_cell_text(MatrixCell cell);

struct MatrixRow {
  std::string node;
  std::vector<MatrixCell> cells;  // one per MatrixResult::columns
};

struct MatrixResult {
  // The operands shown, in catalog order: every operand of the catalog, except
  // in operator mode with `only_deployed`: those with a DaemonSet in the state
  // (operand_daemonsets), so a container install does not show a column per
  // sandbox operand it never renders.
  std::vector<const Operand*> columns;
  // Each column's header: the operand's catalog `column` (the lab's names,
  // LAB.md step 8), in operator mode its name (dcgm-exporter and dcgm, not
  // a lab abbreviation).
  std::vector<std::string> headers;
  std::vector<MatrixRow> rows;  // every node, sorted by name
  // Pods in the namespace controlled by any DaemonSet, bound, Running and not
  // being deleted (the present rule without the operand and without Ready).
  int total_pods = 0;
};

// LAB.md step 8 as data. The result points into `catalog`.
MatrixResult matrix_result(const ClusterState& state, const Catalog& catalog, bool only_deployed = false);

// One line per row, `<node> <column>=<yes|no|not-ready> ...`, then
// `TOTAL_PODS=<n>`. Exit 0.
Report render_matrix(const MatrixResult& result);

// render_matrix(matrix_result(state, catalog)): LAB.md step 8.
Report matrix(const ClusterState& state, const Catalog& catalog);

}  // namespace gpuops::core
