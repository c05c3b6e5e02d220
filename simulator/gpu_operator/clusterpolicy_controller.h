// simulator/gpu_operator/clusterpolicy_controller.h: internal to simulator/. The GPU
// Operator's controller, simulated: installed by FakeCluster::install_operator
// with the catalog of one release (core/gpu_operator/operands.h: its operands, rendering
// keys and OperatorRules), it watches nodes, its ClusterPolicy and the
// DaemonSets it owns, labels the GPU nodes and renders one DaemonSet per
// enabled state. Mirrors NVIDIA/gpu-operator:
//  * ClusterPolicyReconciler.Reconcile (controllers/clusterpolicy_controller.go):
//    the singleton (a second ClusterPolicy is ignored: nothing rendered,
//    its status never written, so status.state stays unset), the
//    states in order (ClusterPolicyController.step, state_manager.go), the
//    overall state ready/notReady with "states not ready: [...]", the
//    Ready/Error conditions (internal/conditions: Reconciled, NoGPUNodes,
//    NFDLabelsMissing, OperandNotReady, ReconcileFailed);
//  * its watches (SetupWithManager, addWatchNewGPUNode): the ClusterPolicy
//    on generation changes, nodes through the release's node predicates
//    (core::node_update_triggers_labelling), every event of a DaemonSet it
//    controls;
//  * labelGPUNodes (state_manager.go v25.3; nodelabeling_controller.go
//    v26.7, a reconciler of its own there that does not watch DaemonSets:
//    OperatorRules::relabel_on_daemonset_events) through
//    core::reconcile_gpu_node_labels;
//  * per state (object_controls.go DaemonSet()): a state disabled in the
//    policy (core::state_enabled) has its DaemonSet deleted; no GPU node in
//    the cluster (!hasGPUNodes): nothing created, the state ready; else the
//    rendered DaemonSet (operator_object_controls.h) created, or updated when
//    its last-applied hash changed; readiness by isDaemonSetReady. What the
//    driver needs of the first GPU node's NFD labels is
//    core::driver_input_gap (core/gpu_operator/nfd.h): before v26.3 the
//    driver state fails, and stops the pass, without kernel-version.full
//    (measured on v25.3.4); from v26.3 the whole pass fails without the OS
//    release labels. A failed pass runs again on the next node event.
//
// The operator's requeue after 5 s while notReady is not simulated: every
// input it re-reads (DaemonSet status, nodes) wakes it by a watch anyway, so
// the fixed points are the same and settle() does not spin on a policy that
// stays notReady (a crash-looping driver).
#pragma once

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/gpu_operator/operands.h"
#include "core/model/model.h"
#include "simulator/kube/cluster_context.h"
#include "simulator/kube/daemon_controller.h"

namespace gpuops::simulator::internal {

class ClusterPolicyController {
 public:
  ClusterPolicyController(ClusterContext& c, const DaemonSetController& daemonsets) : c_(c), daemonsets_(daemonsets) {}
  ClusterPolicyController(const ClusterPolicyController&) = delete;
  ClusterPolicyController& operator=(const ClusterPolicyController&) = delete;

  // The operator starts (a full pass is queued), running the rules and
  // rendering of `catalog`'s release, its operands in namespace `ns`.
  // `adopt` (an imported cluster, FakeCluster::import_state): a DaemonSet
  // that exists when a state is first rendered is taken as that render (its
  // last-applied hash was the real operator's), so it is updated only once
  // the render changes (a ClusterPolicy change), not for the differences
  // between the real operator's render and the simulated one.
  void install(core::Catalog catalog, std::string ns, bool adopt = false);
  // The operator stops (its Deployment gone): nothing it made is undone
  // here; deleting the ClusterPolicy lets the garbage collector take the
  // DaemonSets.
  void uninstall();
  bool installed() const { return installed_; }
  const std::string& operator_namespace() const { return ns_; }
  const core::Catalog& catalog() const { return catalog_; }

  // Watches (they only mark work).
  void on_node(EventType type, const core::Node& node);
  void on_daemonset(EventType type, const core::DaemonSet& d);
  void on_cluster_policy(EventType type, const core::ClusterPolicy& cp);

  bool has_work() const { return installed_ && (label_queued_ || policy_queued_); }
  // Runs what is queued: labelGPUNodes, then the ClusterPolicy reconcile.
  void reconcile();

 private:
  // mirrors labelGPUNodes: one write per node whose labels change.
  void label_gpu_nodes(const core::ClusterPolicy& policy);
  // mirrors ClusterPolicyReconciler.Reconcile after init.
  void reconcile_policy(const core::ClusterPolicy& policy);
  const core::ClusterPolicy* singleton() const;
  // adopt_: whether DaemonSets other than op's own name run its pods (by
  // app.kubernetes.io/component in their template).
  bool has_variant_daemonsets(const core::Operand& op) const;
  bool owns(const core::DaemonSet& d) const;
  void write_status(const core::ClusterPolicy& policy, const std::string& state, bool ready, const std::string& reason,
                    const std::string& message);

  ClusterContext& c_;
  const DaemonSetController& daemonsets_;
  bool installed_ = false;
  core::Catalog catalog_;
  std::string ns_;
  bool label_queued_ = false;
  bool policy_queued_ = false;
  // The last pass failed (a reconcile error): controller-runtime requeues it
  // with backoff, so the next node event (a label put back) runs it again
  // whatever the node predicates say.
  bool failed_pass_ = false;
  // The informer cache's node labels (the predicates compare old and new).
  std::unordered_map<std::string, core::Labels> node_labels_;
  // GenerationChangedPredicate: the generation last seen per ClusterPolicy.
  std::map<std::string, int64_t> generations_;
  std::string singleton_uid_;
  bool adopt_ = false;
  // adopt_: per DaemonSet name, its last-applied hash when first rendered and
  // the simulated render's hash then.
  std::map<std::string, std::pair<std::string, std::string>> adopted_;
};

}  // namespace gpuops::simulator::internal
