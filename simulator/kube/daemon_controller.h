// simulator/kube/daemon_controller.h: internal to simulator/. The DaemonSet
// controller, cut as upstream's pkg/controller/daemon/daemon_controller.go:
// syncDaemonSet -> manage (podsShouldBeOnNode per node, then syncNodes) ->
// updateDaemonSetStatus, with placement from core::should_run
// (NodeShouldRunDaemonPod) and pods from CreatePodTemplate.
//
// Incremental DaemonSet sync. Upstream's syncDaemonSet walks every node for
// every event that enqueues the DaemonSet (O(nodes) per pod or node event).
// Here the controller keeps, per (DaemonSet, node) pair, a DaemonPodsOnNode
// with the DaemonSet's pods targeting that node and that pair's share of the
// seven status counters. An event marks only the pairs it touches dirty; a
// sync runs manage/podsShouldBeOnNode for the dirty pairs, recounts their
// shares and adjusts the sums. Since podsShouldBeOnNode and the status loop
// of updateDaemonSetStatus look at one node at a time, and a node's decision
// depends only on that node, the DaemonSet and that node's pods, the result
// is exactly what a full sync would produce. DaemonSet creation and spec
// changes (a new hash) still sync every node, as upstream does.
//
// Upstream keeps the rolling update and the history (update.go:
// rollingUpdate, constructHistory, cleanupHistory) as methods of the same
// controller, called from syncDaemonSet after manage; here they are
// DaemonSetController members in daemon_update.cpp. rollingUpdate walks
// every node, as upstream does, but only in syncs where some pod of the
// DaemonSet is out of date (StatusCounts::old > 0). The history is
// reconciled when the DaemonSet is created or its spec changes (a full
// sync), the only times it changes but for edits of the ControllerRevisions
// themselves.
#pragma once

#include <boost/container/small_vector.hpp>

#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "simulator/kube/cluster_context.h"

namespace gpuops::simulator::internal {

// One (DaemonSet, node) pair's share of the status counters (the per-node
// terms of updateDaemonSetStatus' sums).
// `old` is not a status counter: the pair's pods without a deletionTimestamp
// that are not of the current revision (IsPodUpdated false), what the
// rolling update has left to replace.
struct NodeStatusCounts {
  int desired = 0, current = 0, misscheduled = 0, ready = 0, available = 0, updated = 0, old = 0;
};

// A DaemonSet's status counters: the sum of its pairs' NodeStatusCounts.
struct StatusCounts {
  int64_t desired = 0, current = 0, misscheduled = 0, ready = 0, available = 0, updated = 0, old = 0;
  void add(const NodeStatusCounts& c, int sign) {
    old += sign * c.old;
    desired += sign * c.desired;
    current += sign * c.current;
    misscheduled += sign * c.misscheduled;
    ready += sign * c.ready;
    available += sign * c.available;
    updated += sign * c.updated;
  }
};

// The controller's record of one (DaemonSet, node) pair: upstream's
// nodeToDaemonPods[node] entry, kept between syncs, plus caches.
struct DaemonPodsOnNode {
  // The DaemonSet's pods targeting this node (stored objects: their address
  // is stable until the store reports them DELETED). Almost always one:
  // kept inline, no allocation per (DaemonSet, node) pair.
  boost::container::small_vector<const PodRecord*, 1> pods;
  NodeStatusCounts counted;
  // NodeShouldRunDaemonPod's answer, cached for the node resourceVersion and
  // DaemonSet generation it was computed for: a pod event does not change it.
  bool should_run = false;
  bool should_continue = false;
  std::string placement_node_rv;
  int64_t placement_generation = -1;
  bool dirty = false;
  bool in_sync = false;
};

// The controller's state for one DaemonSet.
struct DaemonSetState {
  std::string key, ns, name, uid;
  int64_t generation = 0;
  std::string template_generation;
  // The current revision's controller-revision-hash (constructHistory's
  // `cur`), the pods' label.
  std::string hash;
  // How many old ControllerRevisions the DaemonSet has (constructHistory's
  // `old`): cleanupHistory has work when there are more than
  // revisionHistoryLimit.
  size_t old_revisions = 0;
  // CreatePodTemplate output without the node pinning, shared by the pods
  // created from this revision (PodRecord::base).
  std::shared_ptr<const core::Pod> pod_template;
  // By node id (ClusterContext::node_id); grows as ids are added, so a
  // DaemonPodsOnNode& is good only until the next node_of.
  std::vector<DaemonPodsOnNode> nodes;
  std::vector<uint32_t> dirty_nodes;
  bool full = true;
  bool queued = false;
  // Imported, not yet synced, with the real status counting no pod
  // misscheduled (adopt_imported_revision): its first sync counts a node that
  // keeps its pod under an untolerated NoSchedule taint as the real
  // controller last did, as desired (`stale_nodes`); the next sync counts
  // those nodes afresh.
  bool import_status = false;
  std::vector<uint32_t> stale_nodes;
  StatusCounts sum;
  struct UpdatedMemo {  // is_pod_updated's last answer
    std::shared_ptr<const core::Pod> base;
    std::string hash, template_generation;
    bool updated = false;
  } updated_memo;
};

class DaemonSetController {
 public:
  explicit DaemonSetController(ClusterContext& c) : c_(c) {}
  DaemonSetController(const DaemonSetController&) = delete;
  DaemonSetController& operator=(const DaemonSetController&) = delete;

  // Event handlers (addNode/updateNode, add/update/deleteDaemonset,
  // add/update/deletePod). They only mark work; `id` and `info` are the
  // node's id and the pod's PodInfo (ClusterContext).
  void on_node(EventType type, const core::Node& node, uint32_t id);
  void on_daemonset(EventType type, const core::DaemonSet& d);
  void on_pod(EventType type, const PodRecord& pod, PodInfo& info);

  // mirrors syncDaemonSet, pkg/controller/daemon/daemon_controller.go,
  // restricted to the dirty (DaemonSet, node) pairs. `key` is "ns/name".
  void sync_daemon_set(const std::string& key);

  // The DaemonSet's state, null when not known.
  const DaemonSetState* find(const std::string& key) const {
    auto it = ds_.find(key);
    return it == ds_.end() ? nullptr : &it->second;
  }
  // An imported DaemonSet `d` (its status the real cluster's) whose pods all
  // carry one controller-revision-hash that is not the simulator's hash of
  // its template, while its status counts every one of them updated
  // (updatedNumberScheduled): the real controller found its template in
  // the pods' revision (constructHistory, a template changed and changed
  // back), which a dump does not carry, so that hash becomes the current
  // revision's. Otherwise nothing changes.
  // Also: when the imported status counts no pod misscheduled, a node whose
  // pod stays under an untolerated NoSchedule taint (shouldRun false,
  // shouldContinueRunning true) counts as desired until the DaemonSet's next
  // sync after the first. Since v1.33 such a taint enqueues no DaemonSet
  // (syncNodeUpdate: (shouldRun && !scheduled) || (!shouldContinueRunning &&
  // scheduled) || (scheduled && numberMisscheduled > 0)), so the real status
  // stays as the last sync before the taint left it, and the import's first
  // sync is no event of the real cluster.
  void adopt_imported_revision(const core::DaemonSet& d);
  // Whether a DaemonSet with this uid is known (it exists in the store).
  bool has_uid(const std::string& uid) const { return ds_by_uid_.count(uid) > 0; }

  // Moves `d` later the failed-pod backoff entries updated at or after
  // `since`: with Timers::shift, the cycle of pods failing at the backoff's
  // cap carried forward whole periods (FakeCluster::advance).
  void shift_backoffs(Time since, Duration d);

  // Keys of the DaemonSets to sync, each at most once (DaemonSetState::queued).
  std::deque<std::string> queue;

 private:
  // Pods listed under one node for a sync. (A node has one pod of a
  // DaemonSet but for moments: kept inline.)
  using DaemonPods = boost::container::small_vector<const PodRecord*, 2>;
  struct BackoffEntry {
    Duration backoff;
    Time last_update;
  };

  static DaemonPodsOnNode& node_of(DaemonSetState& st, uint32_t node) {
    if (st.nodes.size() <= node) st.nodes.resize(node + 1);
    return st.nodes[node];
  }
  DaemonSetState* owner_state(const PodRecord& pod);
  void enqueue(DaemonSetState& st);
  void mark_dirty(DaemonSetState& st, uint32_t node, bool enqueue = true);
  void mark_dirty(DaemonSetState& st, DaemonPodsOnNode& on_node, uint32_t node, bool enqueue = true);
  bool node_event_enqueues(const DaemonSetState& st, const core::Node& node, uint32_t id);
  void create_pod_template(const core::DaemonSet& d, DaemonSetState& st);
  void set_pod_template_hash(DaemonSetState& st, const std::string& hash);
  // ---- daemon_update.cpp (update.go) ----
  // mirrors constructHistory (with controlledHistories, Match, snapshot,
  // dedupCurHistories): sets st.hash to the current revision's hash.
  void construct_history(const core::DaemonSet& d, DaemonSetState& st);
  // mirrors cleanupHistory: the oldest revisions beyond
  // revisionHistoryLimit that no pod is of are deleted.
  void cleanup_history(const core::DaemonSet& d, DaemonSetState& st);
  // mirrors rollingUpdate (with updatedDesiredNodeCounts and
  // findUpdatedPodsOnNode). REQUIRES: the pairs' counts are current (the
  // sync recounted its dirty pairs). Returns the nodes where it created or
  // deleted pods.
  std::vector<uint32_t> rolling_update(const core::DaemonSet& d, DaemonSetState& st);
  // podutil.IsPodAvailable at the controller's clock; a pod Ready but not
  // yet for minReadySeconds gets a timer that resyncs node `node_id` then.
  bool is_pod_available(const core::DaemonSet& d, DaemonSetState& st, const PodRecord& p, uint32_t node_id);
  static DaemonPods get_nodes_to_daemon_pods(const DaemonPodsOnNode& on_node);
  bool backoff_expired(const BackoffEntry& e) const;
  bool in_backoff_since_update(const std::string& id) const;
  void backoff_next(const std::string& id);
  // Sets `wrote` when it created or deleted a pod (upstream's expectations
  // are then unsatisfied until the writes are seen: no rolling update in
  // that sync).
  std::vector<uint32_t> manage(const core::DaemonSet& d, DaemonSetState& st, const std::vector<uint32_t>& node_ids,
                               bool& wrote);
  void pods_should_be_on_node(const core::DaemonSet& d, DaemonSetState& st, uint32_t node_id, DaemonPodsOnNode& on_node,
                              const core::Node* node, std::vector<uint32_t>& nodes_needing_pods,
                              std::vector<std::string>& pods_to_delete);
  void sync_nodes(const DaemonSetState& st, const std::vector<uint32_t>& nodes_needing_pods,
                  const std::vector<std::string>& pods_to_delete);
  void update_node_status_counts(const core::DaemonSet& d, DaemonSetState& st, uint32_t node_id,
                                 DaemonPodsOnNode& on_node, const core::Node* node);
  bool is_pod_updated(DaemonSetState& st, const PodRecord& p);
  void update_daemon_set_status(const core::DaemonSet& d, const DaemonSetState& st);

  ClusterContext& c_;
  std::unordered_map<std::string, DaemonSetState> ds_;  // by "ns/name"
  std::unordered_map<std::string, std::string> ds_by_uid_;
  std::unordered_map<std::string, BackoffEntry> failed_backoff_;  // flowcontrol.Backoff perItemBackoff
  // Labels and taints of each node as last seen: updateNode's
  // shouldIgnoreNodeUpdate compares only these.
  std::unordered_map<std::string, std::pair<core::Labels, std::vector<core::Taint>>> node_placement_inputs_;
  // The controlling DaemonSet's state, by the pod's owner reference. The
  // owner is in the pod's template part, which the pods of one revision
  // share: the last answer is kept for that part (`ds_` is node-based, so the
  // pointer stays valid until on_daemonset adds or erases an entry, which
  // clears it).
  struct OwnerMemo {
    std::shared_ptr<const core::Pod> base;
    DaemonSetState* st = nullptr;
  } owner_memo_;
};

}  // namespace gpuops::simulator::internal
