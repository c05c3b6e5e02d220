// simulator/fake_cluster.h: an in-process Kubernetes cluster for gpuops.
//
// FakeCluster implements core::Cluster over an ObjectStore
// (simulator/store/object_store.h) and the controllers that act on it, each
// mirroring its upstream counterpart, each in a file of its own (internal
// headers, named below):
//  * DaemonSet controller (daemon_controller.h; kubernetes
//    pkg/controller/daemon): syncDaemonSet, manage, podsShouldBeOnNode,
//    syncNodes, updateDaemonSetStatus, with placement from core::should_run
//    (NodeShouldRunDaemonPod). Pods are pinned with the
//    `matchFields metadata.name In [node]` affinity, get the default daemon
//    tolerations, `controller-revision-hash` and `pod-template-generation`
//    labels, a generateName-style name and a controller ownerReference.
//    Failed pods are deleted with the 1 s .. 15 min backoff.
//  * Scheduler (scheduler.h; pkg/scheduler, default profile filters
//    NodeUnschedulable, TaintToleration, NodeAffinity, NodeResourcesFit):
//    binds or leaves the pod Pending with PodScheduled=False/Unschedulable
//    and the FitError message.
//  * Node lifecycle controller (node_lifecycle_controller.h;
//    pkg/controller/nodelifecycle): condition and cordon taints,
//    MarkPodsNotReady.
//  * Pod GC (podgc.h; pkg/controller/podgc): pods of deleted nodes, 20 s
//    loop, 40 s quarantine.
//  * Garbage collector (garbage_collector.h;
//    pkg/controller/garbagecollector): background deletion of a deleted
//    DaemonSet's pods, and of a deleted ClusterPolicy's DaemonSets.
//  * The GPU Operator, once installed (clusterpolicy_controller.h;
//    NVIDIA/gpu-operator controllers/): the node labeller, the
//    ClusterPolicy reconcile rendering the operand DaemonSets, its status.
//  * A fake kubelet (kubelet.h) with two profiles (see KubeletProfile) and
//    injectable faults, plus KWOK's node-initialize stage (default
//    allocatable cpu 1k, memory 1Ti, pods 1M and the standard conditions for
//    a node given none).
//
// Time is virtual: it starts at Options::start and moves only in advance()
// and settle(). Writes through the Cluster interface only record changes;
// controllers run in settle(), advance() and run(). The state they share
// (clock, store, timers, indexes) is a ClusterContext (cluster_context.h);
// fake_cluster.cpp holds the loop and this port.
//
// Not thread-safe: one caller at a time (an API front end must serialize).
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/cluster/cluster.h"
#include "core/cluster/simulation.h"
#include "core/gpu_operator/operands.h"
#include "simulator/kube/options.h"
#include "simulator/store/object_store.h"

namespace gpuops::simulator {

class FakeCluster : public core::Cluster {
 public:
  using Options = ClusterOptions;

  FakeCluster();
  explicit FakeCluster(Options options);
  ~FakeCluster() override;

  // ---- core::Cluster ----
  // Nodes sorted by name; DaemonSets and pods of `ns` sorted by name.
  core::ClusterState state(const std::string& ns) override;
  // Only the parts asked for (the others empty), each as state() has it;
  // with StateParts::of_nodes, core::state_part's of them, materialising no
  // pod outside it (gpuops plan's state after a change, core/plan/plan.h).
  core::ClusterState partial_state(const std::string& ns, const core::StateParts& parts) override;
  // Namespace, Node, DaemonSet or Pod: create, or update when it exists.
  // Validates the whole list first (a DaemonSet's namespace must exist or come
  // earlier in the list: else InputError 404; a DaemonSet selector change:
  // InputError 422) and writes nothing if any object is refused.
  void apply(const std::vector<core::Object>& objects) override;
  void create_namespace(const std::string& name) override;
  void set_node_label(const std::string& node, const std::string& key,
                      const std::optional<std::string>& value) override;
  void add_node(const core::Node& node) override;
  void delete_node(const std::string& node) override;
  void set_node_taints(const std::string& node, const std::vector<core::Taint>& taints) override;
  void set_node_unschedulable(const std::string& node, bool unschedulable) override;
  // "True", "False" or "Unknown" (else InputError). The node lifecycle
  // controller then adds not-ready (False) or unreachable (Unknown) taints,
  // NoSchedule and NoExecute, and marks the node's pods not Ready.
  void set_node_ready(const std::string& node, const std::string& status) override;
  void delete_pod(const std::string& ns, const std::string& name) override;
  void patch_cluster_policy(const std::string& name, const boost::json::object& merge_patch) override;
  void delete_cluster_policy(const std::string& name) override;
  // The store's delete with the cascade's propagationPolicy; the garbage
  // collector does the rest as the controllers run.
  void delete_daemonset(const std::string& ns, const std::string& name, const std::string& cascade) override;
  // Deletes the namespace with its DaemonSets and pods (the pods go at once,
  // as after the namespace controller's grace-0 clean-up). ClusterError 404
  // when it does not exist.
  void delete_namespace(const std::string& name) override;
  // Runs the controllers until none has work, moving virtual time to each
  // next timer (graceful deletions, kubelet start delays, backoffs, pod GC).
  // Throws ClusterError naming what keeps it busy when Options::settle_limit
  // or max_rounds is exceeded (a live-lock, e.g. a kFailed fault whose pods
  // are recreated forever).
  void settle() override;

  // ---- simulator controls ----
  core::Time now() const;
  // Moves virtual time forward by `d`, firing every timer due on the way and
  // running the controllers to quiescence after each. REQUIRES d >= 0.
  void advance(core::Duration d);
  // Runs the controllers to quiescence without moving time: unlike settle(),
  // fires no timer (graceful deletions, kubelet start delays, backoffs due
  // later stay pending). Throws ClusterError ("live-lock") after
  // Options::max_rounds rounds.
  void run();

  // The GPU Operator (clusterpolicy_controller.h), simulated: installs its
  // CRDs (ClusterPolicy, NVIDIADriver; they stay once installed, as Helm
  // leaves CRDs), creates namespace `ns` if missing, and starts the
  // operator of `catalog`'s release (one of the built-in gpu-operator
  // catalogs: its operands, rendering keys and OperatorRules). It acts once a
  // ClusterPolicy exists. In the kubelet profile its operands' init
  // containers wait for what they validate (operator_validation.h). Installing again replaces the release. Throws
  // InputError 422 for an invalid namespace name.
  void install_operator(const core::Catalog& catalog, const std::string& ns = "gpu-operator");
  // Stops the operator (its Deployment gone). What it wrote stays: node
  // labels, the ClusterPolicy, the DaemonSets; deleting the ClusterPolicy
  // then lets the garbage collector delete the DaemonSets it owns.
  void uninstall_operator();
  bool operator_installed() const;
  // Host facts of a node (core::HostSpec), read by the operator's helpers
  // in the kubelet profile (driver_manager.h, mig_manager.h). Throws
  // InputError 422 for an empty node name or an unknown driver value.
  void set_host(const core::HostSpec& host);

  // Loads a real cluster's state (a dump, a must-gather, a live read) into
  // this fresh simulator, for `gpuops plan` and `serve --snapshot`: the
  // state's namespace and those of its DaemonSets and pods, its nodes, its
  // DaemonSets and pods as they are (ObjectStore::restore: uids, owners,
  // generations, statuses, bindings kept). Imported pods keep their status
  // until deleted (Kubelet::keep_status). With `operator_catalog` (an
  // operator install, core::detect_operator_install) the simulated operator
  // of that release is installed, adopting the DaemonSets it finds
  // (ClusterPolicyController::install's `adopt`), and the ClusterPolicies
  // are imported with their status; without it they are stored only. A
  // healthy cluster is a fixed point: settling it creates and deletes
  // nothing. Throws ClusterError 409 when this cluster already holds nodes,
  // DaemonSets or pods, and what ObjectStore::restore throws (nothing is
  // left half-imported then: the cluster is to be dropped). `state` is
  // taken by value: a caller done with its state moves it in, and its
  // objects are moved into the store rather than copied.
  void import_state(core::ClusterState state, const core::Catalog* operator_catalog);
  // The latest timestamp in `state` (creation, deletion, condition and
  // container times), plus one second: where an imported cluster's clock
  // starts (Options::start), so no imported time is in its future. The
  // default start when the state has none.
  static core::Time import_start(const core::ClusterState& state);

  // Faults apply to pods the kubelet runs from now on and are re-evaluated
  // for pods already there. Returns an id for clear_fault.
  int inject_fault(const Fault& fault);
  void clear_fault(int id);
  void clear_faults();

  // The API-server storage (for an API front end and for tests).
  ObjectStore& store();
  const ObjectStore& store() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuops::simulator
