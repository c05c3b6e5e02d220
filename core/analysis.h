// core/analysis.h: the lab-contract analyses, pure functions of a ClusterState.
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

#include "core/model.h"
#include "core/operands.h"
#include "core/state_index.h"

namespace gpuops::core {

// Text output plus the exit status it implies (0 or 1).
struct Report {
  std::vector<std::string> lines;
  int exit_code = 0;
  std::string text() const;  // lines joined with '\n', with a trailing '\n'
};

// True when operand `op` is present on node `node` (see above).
bool operand_present(const ClusterState& state, const Operand& op, const std::string& node);

// Pods that count as present for `op`, on any node.
std::vector<const Pod*> present_pods(const ClusterState& state, const Operand& op);

// The same rule through an index, for analyses that ask it per node: the
// first pod (state order) that makes `op` present on `node`, or nullptr; and
// whether there is one. Cost: the pods on `node`, not the cluster's.
const Pod* present_pod(const StateIndex& index, const Operand& op, const std::string& node);
bool operand_present(const StateIndex& index, const Operand& op, const std::string& node);

// `<operand>=<label key>` per operand, in catalog order (LAB.md step 1).
Report roster(const Catalog& catalog);

// LAB.md step 6: for every node (sorted by name) and every operand (catalog
// order) whose deploy label is exactly "true" on that node, `<node> MISSING
// <operand>` when it is not present; `<node> OK` for a node with no gap. Exit 1
// if any line is MISSING. With a catalog whose `audit` is `deployed`
// (Catalog::audit_deployed_only), an operand is checked on a node only when its
// DaemonSet exists in the state and the rest of the DaemonSet's nodeSelector
// matches the node.
Report audit(const ClusterState& state, const Catalog& catalog);

// LAB.md step 7, for one node: `device-plugin-without-toolkit` (exit 1) when
// the device-plugin operand is present on it and the container-toolkit operand
// is not; otherwise `ok` (exit 0). Operand names "device-plugin" and
// "container-toolkit" are looked up in the catalog; throws InputError if the
// catalog lacks either.
Report order_check(const ClusterState& state, const Catalog& catalog, const std::string& node);

// LAB.md step 8: one line per node, sorted by name,
// `<node> <column>=<yes|no> ...` in catalog order, then
// `TOTAL_PODS=<n>`: pods in the namespace controlled by any DaemonSet, bound,
// Running and not being deleted (the present rule without the operand). Exit 0.
Report matrix(const ClusterState& state, const Catalog& catalog);

}  // namespace gpuops::core
