// simulator/kube/cluster_context.h: internal to simulator/. What FakeCluster's
// controllers share: the options, the virtual clock, the object store, the
// timers, the work queues' types and the informer-like indexes (dense node
// ids, pods by node, per-pod facts by PodRecord::id). Each controller
// (daemon_controller.h, scheduler.h, kubelet.h, node_lifecycle_controller.h,
// podgc.h, garbage_collector.h) holds a reference to one ClusterContext and
// keeps its own state; fake_cluster.cpp owns them all and runs the loop.
//
// Not thread-safe, like FakeCluster.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <queue>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <boost/unordered/unordered_flat_map.hpp>

#include "core/base/hashed_key.h"
#include "core/model/model.h"
#include "simulator/kube/options.h"
#include "simulator/store/object_store.h"

namespace gpuops::simulator::internal {

using core::Duration;
using core::Time;

// (string_view comparisons test the length first: this runs several times per pod event.)
inline bool terminal(const core::PodStatus& s) {
  std::string_view phase = s.phase;
  return phase == std::string_view("Failed") || phase == std::string_view("Succeeded");
}
inline bool terminal(const PodRecord& p) { return terminal(*p.status); }

// API timestamps (metav1.Time) have second precision.
inline Time truncate_seconds(Time t) { return Time(std::chrono::floor<std::chrono::seconds>(t.time_since_epoch())); }

// Sets (or adds) the pod condition `type`; lastTransitionTime moves only when
// the status changes.
inline void set_condition(core::PodStatus& s, std::string_view type, std::string_view status, std::string_view reason,
                          std::string_view message, Time now) {
  for (auto& c : s.conditions) {
    if (c.type != type) continue;
    if (c.status != status) c.last_transition_time = now;
    c.status = status;
    c.reason = reason;
    c.message = message;
    return;
  }
  if (s.conditions.empty()) s.conditions.reserve(4);  // a pod has at most four
  s.conditions.push_back(
      core::PodCondition{std::string(type), std::string(status), std::string(reason), std::string(message), now});
}

inline bool same_container_statuses(const std::vector<core::ContainerStatus>& a,
                                    const std::vector<core::ContainerStatus>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const auto &x = a[i], &y = b[i];
    if (x.name != y.name || x.ready != y.ready || x.restart_count != y.restart_count || x.state != y.state ||
        x.reason != y.reason || x.message != y.message || x.exit_code != y.exit_code)
      return false;
  }
  return true;
}

// True when writing `a` over `b` would change nothing a controller reads.
inline bool same_status(const core::PodStatus& a, const core::PodStatus& b) {
  if (a.phase != b.phase || a.reason != b.reason || a.message != b.message || a.start_time != b.start_time)
    return false;
  if (a.conditions.size() != b.conditions.size()) return false;
  for (size_t i = 0; i < a.conditions.size(); ++i) {
    const auto &x = a.conditions[i], &y = b.conditions[i];
    if (x.type != y.type || x.status != y.status || x.reason != y.reason || x.message != y.message ||
        x.last_transition_time != y.last_transition_time)
      return false;
  }
  return same_container_statuses(a.init_container_statuses, b.init_container_statuses) &&
         same_container_statuses(a.container_statuses, b.container_statuses);
}

// ---------------------------------------------------------------- queues

// A FIFO of keys. Not deduplicated: every consumer is idempotent (it reads
// the object's current state), so a repeated key only costs a lookup, and a
// set of pending keys costs more than that at scale.
struct KeyQueue {
  std::vector<std::string> q;
  void push(const std::string& k) { q.push_back(k); }
  bool empty() const { return q.empty(); }
  std::vector<std::string> take() {
    std::vector<std::string> out;
    out.swap(q);
    return out;
  }
};

// The same for pods, by PodRecord::id (no string per entry).
struct PodQueue {
  std::vector<uint64_t> q;
  void push(uint64_t id) { q.push_back(id); }
  bool empty() const { return q.empty(); }
  std::vector<uint64_t> take() {
    std::vector<uint64_t> out;
    out.swap(q);
    return out;
  }
};

// ---------------------------------------------------------------- timers

// Virtual-time callbacks (the controllers' AddAfter, the kubelet's own
// clocks). Due timers fire in (time, insertion) order; `what` names the
// timer in settle()'s live-lock message.
//
// A timer may say it belongs to a cycle of period `period` (> 0): firing it
// repeats, every `period`, the same writes as long as nothing else changes
// (the DaemonSet controller's failed-pod backoff at its cap). When every
// periodic timer pending has one period, FakeCluster::advance may verify one
// period and move the cycle forward whole periods at once (shift), up to
// the first timer that is not periodic (a grace period's end, say), which
// stays where it is.
class Timers {
 public:
  // Runs `fn` when virtual time reaches `t` (at once, at the next fire_due,
  // if `t` is already past).
  void at(Time t, std::string what, std::function<void()> fn, Duration period = Duration(0)) {
    count(period, t, +1);
    timers_.push(Timer{t, seq_++, std::move(what), std::move(fn), period});
  }
  bool empty() const { return timers_.empty(); }
  // REQUIRES: !empty().
  Time next() const { return timers_.top().at; }
  // Fires, in order, every timer due at or before `now` (including those a
  // firing timer adds).
  void fire_due(Time now) {
    while (!timers_.empty() && timers_.top().at <= now) {
      Timer t = timers_.top();
      timers_.pop();
      count(t.period, t.at, -1);
      t.fn();
    }
  }
  // The period every pending periodic timer shares, or 0 when there is
  // none or their periods differ.
  Duration cycle_period() const {
    if (periods_.size() != 1) return Duration(0);
    return periods_.begin()->first;
  }
  // When the first pending timer that is not periodic is due (Time::max()
  // when there is none), and how many there are.
  Time next_aperiodic() const { return aperiodic_.empty() ? Time::max() : *aperiodic_.begin(); }
  size_t aperiodic_count() const { return aperiodic_.size(); }
  // Moves every pending periodic timer `d` later (their order among
  // themselves is kept); the others stay.
  void shift(Duration d);
  // The first five distinct pending timers, "what at time; ...".
  std::string description() const;

 private:
  struct Timer {
    Time at;
    uint64_t seq;
    std::string what;
    std::function<void()> fn;
    Duration period;
  };
  struct Later {
    bool operator()(const Timer& a, const Timer& b) const { return a.at != b.at ? a.at > b.at : a.seq > b.seq; }
  };
  void count(Duration period, Time at, int delta) {
    if (period <= Duration(0)) {
      if (delta > 0)
        aperiodic_.insert(at);
      else
        aperiodic_.erase(aperiodic_.find(at));
      return;
    }
    if ((periods_[period] += delta) == 0) periods_.erase(period);
  }
  std::priority_queue<Timer, std::vector<Timer>, Later> timers_;
  uint64_t seq_ = 0;
  std::multiset<Time> aperiodic_;        // when each pending aperiodic timer is due
  std::map<Duration, int64_t> periods_;  // pending periodic timers by period
};

// ---------------------------------------------------------------- indexes

using Amounts = std::map<std::string, __int128, std::less<>>;  // resource name -> nano-units

// The scheduler cache's view of one node.
struct Usage {
  Amounts requested;
  int64_t pods = 0;
};

// One node name the controllers have met (see ClusterContext::node_id).
struct NodeEntry {
  std::string name;
  const core::Node* node = nullptr;  // the stored node (stable address); null while absent
  Usage usage;                       // scheduler cache: bound, non-terminal pods' requests
  // Pods (PodRecord::id) targeting it (pinned to it, or created bound to
  // it) in creation order, then pods the scheduler bound to it without
  // either, in binding order.
  std::vector<uint64_t> pods;
  std::vector<uint64_t> parked;  // scheduler: pods targeting it parked as unschedulable, in parking order
};

struct DaemonSetState;  // daemon_controller.h

// What the controllers keep per pod, by PodRecord::id, so that a pod's
// second and later events need no lookup by name: a pod's owner, target
// node and (once bound) node never change, and the DaemonSet controller's
// per-node records live as long as their DaemonSetState. Only found owners
// are kept (a pod whose DaemonSet is not known yet is looked up again); `st`
// is cleared when the pod goes and when its DaemonSet's state is erased.
// (Ids are dense: sizeof(PodInfo) bytes per pod ever created, as
// ObjectStore's own index by id.)
struct PodInfo {
  static constexpr uint32_t kNoNode = UINT32_MAX;
  DaemonSetState* st = nullptr;  // DaemonSet controller: the controlling DaemonSet's state
  uint32_t target = kNoNode;     // node id of target_node()
  uint32_t bound = kNoNode;      // node id of spec.nodeName, once set
  // Scheduler cache: the requests this pod holds on node `bound` (null:
  // none); shared by the pods of one template part.
  std::shared_ptr<const Amounts> counted;
};

// The last status a controller derived from another, by a rule that depends
// only on its inputs: pods going through the same step at the same instant
// share the result (PodRecord::status) instead of each holding a copy.
struct StatusMemo {
  std::shared_ptr<const core::PodStatus> in;
  std::shared_ptr<const core::Pod> base;
  Time at;
  std::shared_ptr<const core::PodStatus> out;
  bool hit(const PodRecord& p, Time t) const { return out && in == p.status && base == p.base && at == t; }
};

// What is on a node's machine that no API object says (core::HostSpec):
// what the GPU Operator's helpers find there. Set by FakeCluster::set_host;
// the driver pods change `driver` as they load and unload it
// (driver_manager.h), the MIG manager `mig_config`.
struct NodeHost {
  enum class Driver { kNone, kPreInstalled, kLoaded };
  Driver driver = Driver::kNone;
  // The config (the driver pod's controller-revision-hash) of the driver pod
  // that loaded it: k8s-driver-manager's stored DRIVER_CONFIG_DIGEST.
  std::string loaded_config;
  bool driver_in_use = false;
  std::string mig_config = "all-disabled";
  bool mig_apply_fails = false;
};

// ---------------------------------------------------------------- context

struct ClusterContext {
  explicit ClusterContext(const ClusterOptions& o)
      : opt(o), now(o.start), store([this] { return now; }, ObjectStore::Options{o.seed, o.tombstone_capacity}) {
    node_id("");  // kNoTarget
  }
  ClusterContext(const ClusterContext&) = delete;
  ClusterContext& operator=(const ClusterContext&) = delete;

  ClusterOptions opt;
  Time now;  // the virtual clock: moved only by FakeCluster::advance and settle
  ObjectStore store;
  Timers timers;

  // Node ids: every node name the controllers meet (a node's, a pod's target
  // or bound node, "" for pods with no target) gets a dense id for the life of
  // the cluster, so the per-node state and the DaemonSets' per-node records
  // are vectors indexed by id instead of maps keyed by name. Names of deleted
  // nodes keep their ids (a node re-created under the same name is the same
  // id). Id 0 is "" (pods with no target node). node_table grows when a new
  // name is met (a node event, a pod's first event): a NodeEntry& is good only
  // until then.
  static constexpr uint32_t kNoTarget = 0;
  std::vector<NodeEntry> node_table;
  // (Open addressing, keys carrying their hash: one probe per pod imported.)
  boost::unordered_flat_map<core::HashedKey<std::string>, uint32_t, core::HashedKeyHash, core::HashedKeyEqual> node_ids;
  // Ids of the stored nodes in name order (store.nodes()' order), rebuilt
  // after a node is added or deleted.
  std::vector<uint32_t> sorted_node_ids;
  bool sorted_node_ids_stale = true;
  // By PodRecord::id.
  std::vector<PodInfo> pod_info;
  // By node name (a name may have host facts before its node exists).
  std::unordered_map<std::string, NodeHost> hosts;
  // Nodes an imported state's pods are bound to but the state does not list
  // (a must-gather lists only GPU nodes): they exist in the real cluster, so
  // pod GC leaves their pods alone.
  std::unordered_set<std::string> unseen_nodes;

  // The id of node name `name`, added when new.
  uint32_t node_id(const std::string& name) {
    core::HashedKey<std::string_view> key(name);
    if (auto it = node_ids.find(key); it != node_ids.end()) return it->second;
    auto id = static_cast<uint32_t>(node_table.size());
    node_ids.emplace(core::HashedKey<std::string>(name), id);
    node_table.emplace_back().name = name;
    return id;
  }
  // The ids of the stored nodes, in name order.
  const std::vector<uint32_t>& stored_node_ids();

  // The node a controller is creating a pod for, while it creates it
  // (kNoNode otherwise): the pod's first event finds its target's id here
  // instead of by name (a hash lookup in a table of every node, which
  // missed the cache on most pods at 15,000 nodes).
  uint32_t creating_for = PodInfo::kNoNode;

  // The pod's PodInfo, with target and (once bound) bound filled in.
  PodInfo& info_of(const PodRecord& pod) {
    if (pod_info.size() <= pod.id) pod_info.resize(pod.id + 1);
    PodInfo& info = pod_info[pod.id];
    if (info.target == PodInfo::kNoNode) {
      if (creating_for != PodInfo::kNoNode && pod.node_name.empty() && pod.pinned_node == node_table[creating_for].name)
        info.target = creating_for;
      else
        info.target = node_id(pod.target_node());
    }
    if (info.bound == PodInfo::kNoNode && !pod.node_name.empty())
      info.bound = pod.node_name == node_table[info.target].name ? info.target : node_id(pod.node_name);
    return info;
  }
};

}  // namespace gpuops::simulator::internal
