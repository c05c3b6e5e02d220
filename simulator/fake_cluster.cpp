// The simulator's controllers. Each section mirrors one upstream component and
// says which; see fake_cluster.h for the overview.
//
// Work is event driven: the ObjectStore calls Impl's StoreObserver methods on
// every write, and they only mark work (queues, dirty sets); the controllers
// run in run_until_idle(), one pass each per round, until no queue has work.
//
// Incremental DaemonSet sync. Upstream's syncDaemonSet walks every node for
// every event that enqueues the DaemonSet (O(nodes) per pod or node event).
// Here the controller keeps, per (DaemonSet, node) pair, a Slot with the
// DaemonSet's pods targeting that node and that pair's contribution to the
// seven status counters. An event marks only the pairs it touches dirty; a
// sync runs manage/podsShouldBeOnNode for the dirty pairs, recomputes their
// contributions and adjusts the sums. Since podsShouldBeOnNode and the status
// loop of updateDaemonSetStatus look at one node at a time, and a node's
// decision depends only on that node, the DaemonSet and that node's pods, the
// result is exactly what a full sync would produce. DaemonSet creation and
// spec changes (a new hash) still sync every node, as upstream does.
#include "simulator/fake_cluster.h"

#include <boost/container/small_vector.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <queue>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "core/placement.h"

namespace gpuops::simulator {

namespace {

using core::ClusterError;
using core::Duration;
using core::Time;
using namespace std::chrono_literals;

// std::string, not const char*: core::Labels lookups would build a string per call.
const std::string kRevisionHashLabel = "controller-revision-hash";        // DefaultDaemonSetUniqueLabelKey
const std::string kTemplateGenerationLabel = "pod-template-generation";   // DaemonSetTemplateGenerationKey
constexpr const char* kTemplateGenerationAnnotation = "deprecated.daemonset.template.generation";

// kube-controller-manager startDaemonSetController: flowcontrol.NewBackOff(1s, 15min).
constexpr Duration kFailedPodBackoffInitial = 1s;
constexpr Duration kFailedPodBackoffMax = 15min;
// pkg/controller/podgc: gcCheckPeriod and quarantineTime.
constexpr Duration kPodGCPeriod = 20s;
constexpr Duration kPodGCQuarantine = 40s;
// Kubelet image pull back-off starts at 10 s (pkg/kubelet/images).
constexpr Duration kImagePullBackoff = 10s;

// (string_view comparisons test the length first: this runs several times per pod event.)
bool terminal(const core::PodStatus& s) {
  std::string_view phase = s.phase;
  return phase == std::string_view("Failed") || phase == std::string_view("Succeeded");
}
bool terminal(const PodRecord& p) { return terminal(*p.status); }

// API timestamps (metav1.Time) have second precision.
Time truncate_seconds(Time t) { return Time(std::chrono::floor<std::chrono::seconds>(t.time_since_epoch())); }

// pkg/controller/controller_utils.go ComputeHash: FNV-32a of the template,
// rendered with rand.SafeEncodeString. (Upstream hashes the Go struct; this
// hashes its JSON, so values differ from a real cluster's but have its shape
// and change exactly when the template changes.)
std::string compute_hash(const std::string& text) {
  uint32_t h = 2166136261u;
  for (unsigned char c : text) {
    h ^= c;
    h *= 16777619u;
  }
  static const char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
  std::string dec = std::to_string(h), out;
  for (char c : dec) out += kAlphabet[static_cast<unsigned char>(c) % (sizeof kAlphabet - 1)];
  return out;
}

// One (DaemonSet, node) pair's share of the status counters.
struct Contribution {
  int desired = 0, current = 0, misscheduled = 0, ready = 0, available = 0, updated = 0;
};

struct Counters {
  int64_t desired = 0, current = 0, misscheduled = 0, ready = 0, available = 0, updated = 0;
  void add(const Contribution& c, int sign) {
    desired += sign * c.desired;
    current += sign * c.current;
    misscheduled += sign * c.misscheduled;
    ready += sign * c.ready;
    available += sign * c.available;
    updated += sign * c.updated;
  }
};

struct Slot {
  // The DaemonSet's pods targeting this node (stored objects: their address
  // is stable until the store reports them DELETED). Almost always one:
  // kept inline, no allocation per (DaemonSet, node) pair.
  boost::container::small_vector<const PodRecord*, 1> pods;
  Contribution counted;
  // NodeShouldRunDaemonPod's answer, cached for the node resourceVersion and
  // DaemonSet generation it was computed for: a pod event does not change it.
  bool should_run = false;
  bool should_continue = false;
  std::string placement_node_rv;
  int64_t placement_generation = -1;
  bool dirty = false;
  bool in_sync = false;
};

struct DsState {
  std::string key, ns, name, uid;
  int64_t generation = 0;
  std::string template_generation;
  std::string hash;
  // CreatePodTemplate output without the node pinning, shared by the pods
  // created from this revision (PodRecord::base).
  std::shared_ptr<const core::Pod> prototype;
  // By node id (Impl::node_id); grows as ids are added, so a Slot& is good
  // only until the next slot_of.
  std::vector<Slot> slots;
  std::vector<uint32_t> dirty_nodes;
  bool full = true;
  bool queued = false;
  Counters sum;
  struct UpdatedMemo {  // is_updated's last answer
    std::shared_ptr<const core::Pod> base;
    std::string hash, template_generation;
    bool updated = false;
  } updated_memo;
};

struct Timer {
  Time at;
  uint64_t seq;
  std::string what;
  std::function<void()> fn;
};
struct TimerLater {
  bool operator()(const Timer& a, const Timer& b) const { return a.at != b.at ? a.at > b.at : a.seq > b.seq; }
};

using Amounts = std::map<std::string, __int128, std::less<>>;  // resource name -> nano-units

struct Usage {
  Amounts requested;
  int64_t pods = 0;
};

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

// A container's requests as the API server stores them for a pod:
// SetDefaults_Pod (pkg/apis/core/v1/defaults.go) defaults each resource that
// has a limit but no request to the limit (for pods only, not templates, so
// the DaemonSet's template keeps what it was given).
std::map<std::string, core::Quantity> defaulted_requests(const core::Container& c) {
  std::map<std::string, core::Quantity> r = c.requests;
  for (const auto& [k, q] : c.limits) r.try_emplace(k, q);
  return r;
}

// pkg/api/v1/resource PodRequests (computePodResourceRequest): the sum of the
// containers' requests, raised to any single init container's request.
Amounts pod_requests(const core::PodSpec& spec) {
  Amounts sum;
  for (const auto& c : spec.containers)
    for (const auto& [k, q] : defaulted_requests(c)) sum[k] += q.nanos();
  for (const auto& c : spec.init_containers)
    for (const auto& [k, q] : defaulted_requests(c)) sum[k] = std::max(sum[k], q.nanos());
  return sum;
}

void set_condition(core::PodStatus& s, std::string_view type, std::string_view status, std::string_view reason,
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
  s.conditions.push_back(core::PodCondition{std::string(type), std::string(status), std::string(reason),
                                            std::string(message), now});
}

bool same_container_statuses(const std::vector<core::ContainerStatus>& a, const std::vector<core::ContainerStatus>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const auto &x = a[i], &y = b[i];
    if (x.name != y.name || x.ready != y.ready || x.restart_count != y.restart_count || x.state != y.state ||
        x.reason != y.reason || x.message != y.message || x.exit_code != y.exit_code)
      return false;
  }
  return true;
}

bool same_status(const core::PodStatus& a, const core::PodStatus& b) {
  if (a.phase != b.phase || a.reason != b.reason || a.message != b.message || a.start_time != b.start_time) return false;
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

std::string names_of(const std::vector<core::Container>& cs) {
  std::string s;
  for (const auto& c : cs) s += (s.empty() ? "" : " ") + c.name;
  return "[" + s + "]";
}

core::ContainerStatus container_status(const core::Container& c, bool ready, const std::string& state,
                                       const std::string& reason = "", const std::string& message = "") {
  core::ContainerStatus s;
  s.name = c.name;
  s.ready = ready;
  s.state = state;
  s.reason = reason;
  s.message = message;
  return s;
}

// The node lifecycle controller's taints (nodeConditionToTaintKeyStatusMap,
// doNoScheduleTaintingPass, doNoExecuteTaintingPass): (key, effect).
bool lifecycle_owned(const core::Taint& t) {
  static const std::set<std::pair<std::string, std::string>> kOwned = {
      {"node.kubernetes.io/not-ready", "NoSchedule"},      {"node.kubernetes.io/not-ready", "NoExecute"},
      {"node.kubernetes.io/unreachable", "NoSchedule"},    {"node.kubernetes.io/unreachable", "NoExecute"},
      {"node.kubernetes.io/unschedulable", "NoSchedule"},  {"node.kubernetes.io/memory-pressure", "NoSchedule"},
      {"node.kubernetes.io/disk-pressure", "NoSchedule"},  {"node.kubernetes.io/pid-pressure", "NoSchedule"},
      {"node.kubernetes.io/network-unavailable", "NoSchedule"},
  };
  return kOwned.count({t.key, t.effect}) > 0;
}

std::string condition_status(const core::Node& n, const std::string& type) {
  for (const auto& c : n.conditions)
    if (c.type == type) return c.status;
  return "";
}

}  // namespace

struct FakeCluster::Impl : StoreObserver {
  Options opt;
  Time now;
  ObjectStore store;

  // DaemonSet controller.
  std::unordered_map<std::string, DsState> ds;  // by "ns/name"
  std::unordered_map<std::string, std::string> ds_by_uid;
  std::deque<std::string> ds_queue;
  struct BackoffEntry {
    Duration backoff;
    Time last_update;
  };
  std::unordered_map<std::string, BackoffEntry> failed_backoff;  // flowcontrol.Backoff perItemBackoff
  // Node ids: every node name the controllers meet (a node's, a pod's target
  // or bound node, "" for pods with no target) gets a dense id for the life of
  // the cluster, so the per-node state below and the DaemonSets' slots are
  // vectors indexed by id instead of maps keyed by name. Names of deleted
  // nodes keep their ids (a node re-created under the same name is the same
  // id). Id 0 is "" (pods with no target node). node_table grows when a new
  // name is met (a node event, a pod's first event): a NodeEntry& is good only
  // until then.
  struct NodeEntry {
    std::string name;
    const core::Node* node = nullptr;  // the stored node (stable address); null while absent
    Usage usage;                       // scheduler cache: bound, non-terminal pods' requests
    // Pods (PodRecord::id) targeting it (pinned to it, or created bound to
    // it) in creation order, then pods the scheduler bound to it without
    // either, in binding order.
    std::vector<uint64_t> pods;
    std::vector<uint64_t> parked;      // pods targeting it parked as unschedulable, in parking order
  };
  std::vector<NodeEntry> node_table;
  static constexpr uint32_t kNoTarget = 0;
  std::unordered_map<std::string, uint32_t> node_ids;
  // Ids of the stored nodes in name order (store.nodes()' order), rebuilt
  // after a node is added or deleted.
  std::vector<uint32_t> sorted_node_ids;
  bool sorted_node_ids_stale = true;
  uint32_t node_id(const std::string& name) {
    auto [it, added] = node_ids.try_emplace(name, static_cast<uint32_t>(node_table.size()));
    if (added) node_table.emplace_back().name = name;
    return it->second;
  }
  const std::vector<uint32_t>& stored_node_ids() {
    if (sorted_node_ids_stale) {
      sorted_node_ids.clear();
      for (const auto& [name, n] : store.nodes()) sorted_node_ids.push_back(node_id(name));
      sorted_node_ids_stale = false;
    }
    return sorted_node_ids;
  }
  static Slot& slot_of(DsState& st, uint32_t node) {
    if (st.slots.size() <= node) st.slots.resize(node + 1);
    return st.slots[node];
  }

  // Scheduler.
  PodQueue sched_queue;
  std::pair<std::shared_ptr<const core::Pod>, std::shared_ptr<const Amounts>> requests_memo;
  // Kubelet.
  PodQueue kubelet_queue;
  bool kubelet_writing = false;
  std::map<int, Fault> faults;
  int next_fault = 1;
  // Nodes.
  KeyQueue init_queue, lifecycle_queue;
  std::unordered_map<std::string, std::string> observed_ready;  // node -> Ready status last seen
  // Garbage collector (owner deleted) and pod GC.
  KeyQueue orphan_queue;
  std::set<std::string> missing_nodes;          // nodes gone while pods are bound to them
  std::map<std::string, Time> quarantine;       // node -> when its quarantine ends
  bool podgc_scheduled = false;
  // Timers.
  std::priority_queue<Timer, std::vector<Timer>, TimerLater> timers;
  uint64_t timer_seq = 0;

  explicit Impl(Options o)
      : opt(o),
        now(o.start),
        store([this] { return now; }, ObjectStore::Options{o.seed, o.tombstone_capacity}) {
    node_id("");  // kNoTarget
    store.add_observer(this);
  }

  void at(Time t, std::string what, std::function<void()> fn) {
    timers.push(Timer{t, timer_seq++, std::move(what), std::move(fn)});
  }

  // ------------------------------------------------------------ observers

  // The controlling DaemonSet's state, by the pod's owner reference. The
  // owner is in the pod's template part, which the pods of one revision
  // share: the last answer is kept for that part (`ds` is node-based, so the
  // pointer stays valid until on_daemonset adds or erases an entry, which
  // clears it).
  struct OwnerMemo {
    std::shared_ptr<const core::Pod> base;
    DsState* st = nullptr;
  } owner_memo;
  DsState* owner_state(const PodRecord& pod) {
    if (owner_memo.base && owner_memo.base == pod.base) return owner_memo.st;
    DsState* found = nullptr;
    const core::OwnerReference* ref = pod.shared_meta().controller_ref();
    if (ref && ref->kind == "DaemonSet") {
      auto it = ds_by_uid.find(ref->uid);
      if (it != ds_by_uid.end()) {
        auto st = ds.find(it->second);
        if (st != ds.end()) found = &st->second;
      }
    }
    owner_memo = OwnerMemo{pod.base, found};
    return found;
  }

  void enqueue_ds(DsState& st) {
    if (!st.queued) {
      st.queued = true;
      ds_queue.push_back(st.key);
    }
  }

  // Marks the pair for recounting at the DaemonSet's next sync; with
  // `enqueue` false the sync is left to whatever enqueues the DaemonSet next
  // (upstream recounts every node on every sync, so a stale pair is exactly
  // what a full sync would redo).
  void mark_dirty(DsState& st, uint32_t node, bool enqueue = true) {
    mark_dirty(st, slot_of(st, node), node, enqueue);
  }
  void mark_dirty(DsState& st, Slot& slot, uint32_t node, bool enqueue = true) {
    if (slot.in_sync) return;  // the running sync recounts this pair anyway
    if (!slot.dirty) {
      slot.dirty = true;
      st.dirty_nodes.push_back(node);
    }
    if (enqueue) enqueue_ds(st);
  }

  // Labels and taints of each node as last seen: updateNode's
  // shouldIgnoreNodeUpdate compares only these.
  std::unordered_map<std::string, std::pair<core::Labels, std::vector<core::Taint>>> node_placement_inputs;

  // mirrors addNode / updateNode / syncNodeUpdate, pkg/controller/daemon
  // (v1.37): a node event enqueues a DaemonSet only when
  // (shouldRun && !scheduled) || (!shouldContinueRunning && scheduled) ||
  // (scheduled && status.numberMisscheduled > 0), where scheduled means a pod
  // of it is bound to the node (the spec.nodeName index); an update that
  // changes neither labels nor taints is ignored, and there is no node delete
  // handler. So a NoSchedule taint on a node whose pod runs leaves the status
  // as it was until something else syncs the DaemonSet.
  bool node_event_enqueues(const DsState& st, const core::Node& node, uint32_t id) {
    const core::DaemonSet* d = store.find_daemonset(st.ns, st.name);
    if (!d) return true;
    core::Placement pl = core::should_run(*d, node);
    bool scheduled = false;
    if (id < st.slots.size())
      for (const PodRecord* p : st.slots[id].pods) scheduled = scheduled || p->node_name == node.metadata.name;
    return (pl.should_run && !scheduled) || (!pl.should_continue_running && scheduled) ||
           (scheduled && d->status.number_misscheduled > 0);
  }

  void retry_unschedulable(uint32_t node) {
    for (uint32_t n : {node, kNoTarget}) {
      auto& parked = node_table[n].parked;
      for (uint64_t id : parked)
        if (store.find_pod_by_id(id)) sched_queue.push(id);  // a gone pod: nothing to do
      parked.clear();
    }
  }

  void on_node(EventType type, const core::Node& node) override {
    const std::string& name = node.metadata.name;
    const uint32_t id = node_id(name);
    NodeEntry& entry = node_table[id];
    if (type != EventType::kModified) sorted_node_ids_stale = true;
    entry.node = type == EventType::kDeleted ? nullptr : &node;
    bool placement_event = false;  // addNode, or updateNode not ignored
    if (type == EventType::kDeleted) {
      node_placement_inputs.erase(name);
    } else {
      auto [it, added] = node_placement_inputs.try_emplace(name);
      placement_event = added || it->second.first != node.metadata.labels || it->second.second != node.taints;
      if (placement_event) it->second = {node.metadata.labels, node.taints};
    }
    for (auto& [k, st] : ds) mark_dirty(st, id, placement_event && node_event_enqueues(st, node, id));
    retry_unschedulable(id);
    if (type == EventType::kDeleted) {
      observed_ready.erase(name);
      for (uint64_t pid : entry.pods) {
        const PodRecord* p = store.find_pod_by_id(pid);
        if (p && p->node_name == name) {
          missing_nodes.insert(name);
          schedule_podgc();
          break;
        }
      }
      return;
    }
    init_queue.push(name);
    lifecycle_queue.push(name);
    for (uint64_t pid : entry.pods) kubelet_queue.push(pid);
  }

  void on_daemonset(EventType type, const core::DaemonSet& d) override {
    std::string key = ObjectStore::key(d.metadata.namespace_, d.metadata.name);
    if (type == EventType::kDeleted) {
      auto it = ds.find(key);
      if (it == ds.end()) return;
      // Garbage collector, background propagation: the dependents go next.
      for (auto& slot : it->second.slots)
        for (const PodRecord* p : slot.pods) orphan_queue.push(ObjectStore::key(p->namespace_(), p->name));
      for (auto& e : pod_info)
        if (e.st == &it->second) e.st = nullptr;
      ds_by_uid.erase(it->second.uid);
      ds.erase(it);
      owner_memo = {};
      return;
    }
    auto [it, added] = ds.try_emplace(key);
    if (added) owner_memo = {};
    DsState& st = it->second;
    std::string tg = d.metadata.annotations.count(kTemplateGenerationAnnotation)
                         ? d.metadata.annotations.at(kTemplateGenerationAnnotation)
                         : "";
    if (added) {
      st.key = key;
      st.ns = d.metadata.namespace_;
      st.name = d.metadata.name;
      st.uid = d.metadata.uid;
      ds_by_uid[st.uid] = key;
    } else if (st.generation == d.metadata.generation && st.template_generation == tg) {
      return;  // a status write
    }
    st.generation = d.metadata.generation;
    st.template_generation = tg;
    build_prototype(d, st);
    st.full = true;
    enqueue_ds(st);
  }

  // What the controllers keep per pod, by PodRecord::id, so that a pod's
  // second and later events need no lookup by name: a pod's owner, target
  // node and (once bound) node never change, and slots live as long as their
  // DsState. Only found owners are kept (a pod whose DaemonSet is not known
  // yet is looked up again); `st` is cleared when the pod goes and when its
  // DaemonSet's state is erased. (Ids are dense: sizeof(PodInfo) bytes per pod
  // ever created, as ObjectStore's own index by id.)
  static constexpr uint32_t kNoNode = UINT32_MAX;
  struct PodInfo {
    DsState* st = nullptr;
    uint32_t target = kNoNode;  // node id of target_node()
    uint32_t bound = kNoNode;   // node id of spec.nodeName, once set
    // Scheduler cache: the requests this pod holds on node `bound` (null:
    // none); shared by the pods of one template part.
    std::shared_ptr<const Amounts> counted;
  };
  std::vector<PodInfo> pod_info;

  PodInfo& info_of(const PodRecord& pod) {
    if (pod_info.size() <= pod.id) pod_info.resize(pod.id + 1);
    PodInfo& info = pod_info[pod.id];
    if (info.target == kNoNode) info.target = node_id(pod.target_node());
    if (info.bound == kNoNode && !pod.node_name.empty())
      info.bound = pod.node_name == node_table[info.target].name ? info.target : node_id(pod.node_name);
    return info;
  }

  void on_pod(EventType type, const PodRecord& pod) override {
    const bool was_bound = pod.id < pod_info.size() && pod_info[pod.id].bound != kNoNode;
    PodInfo& info = info_of(pod);
    const uint32_t target = info.target;
    // A pod with no target node (neither pinned nor created bound) is
    // listed under "" until bound: from then on it is one of its node's
    // pods too (the node lifecycle controller marks it, pod GC collects it).
    const bool bound_elsewhere = info.bound != kNoNode && info.bound != target;
    if (bound_elsewhere && !was_bound && type != EventType::kDeleted) node_table[info.bound].pods.push_back(pod.id);
    if (!info.st) info.st = owner_state(pod);
    DsState* st = info.st;
    Slot* slot = st ? &slot_of(*st, target) : nullptr;
    if (type == EventType::kAdded) {
      node_table[target].pods.push_back(pod.id);
      if (st) slot->pods.push_back(&pod);
    } else if (type == EventType::kDeleted) {
      std::erase(node_table[target].pods, pod.id);
      if (bound_elsewhere) std::erase(node_table[info.bound].pods, pod.id);
      if (st) {
        auto& v = slot->pods;
        v.erase(std::remove(v.begin(), v.end(), &pod), v.end());
        info.st = nullptr;
      }
      std::erase(node_table[target].parked, pod.id);
    }
    if (st) mark_dirty(*st, *slot, target);
    account(type, pod, info);
    if (type == EventType::kAdded && pod.node_name.empty() && !pod.deletion_timestamp)
      sched_queue.push(pod.id);
    if (type != EventType::kDeleted && !pod.node_name.empty()) {
      if (!kubelet_writing) kubelet_queue.push(pod.id);
      if (!node_table[info.bound].node) {
        missing_nodes.insert(pod.node_name);
        schedule_podgc();
      }
    }
  }

  // Scheduler cache: bound, non-terminal pods hold their requests on the node.
  void account(EventType type, const PodRecord& pod, PodInfo& info) {
    bool should = type != EventType::kDeleted && !pod.node_name.empty() && !terminal(pod);
    if (info.counted && !should) {
      Usage& u = node_table[info.bound].usage;
      for (const auto& [r, v] : *info.counted) u.requested[r] -= v;
      u.pods -= 1;
      info.counted.reset();
      retry_unschedulable(info.bound);  // freed resources: a parked pod may fit now
    } else if (!info.counted && should) {
      info.counted = requests_of(pod);
      Usage& u = node_table[info.bound].usage;
      for (const auto& [r, v] : *info.counted) u.requested[r] += v;
      u.pods += 1;
    }
  }

  // pod_requests of the pod's template part (pods of one revision share it).
  const std::shared_ptr<const Amounts>& requests_of(const PodRecord& pod) {
    if (requests_memo.first != pod.base)
      requests_memo = {pod.base, std::make_shared<const Amounts>(pod_requests(pod.shared_spec()))};
    return requests_memo.second;
  }

  // ------------------------------------------------------------ DaemonSet controller

  // CreatePodTemplate (pkg/controller/daemon/util): the template, the default
  // daemon tolerations (AddOrUpdateDaemonPodTolerations), the
  // controller-revision-hash and pod-template-generation labels, and the
  // controller ownerReference (syncNodes).
  void build_prototype(const core::DaemonSet& d, DsState& st) {
    boost::json::object o = core::encode(d);
    std::string tmpl;
    if (auto* spec = o.if_contains("spec"); spec && spec->is_object())
      if (auto* t = spec->as_object().if_contains("template")) tmpl = boost::json::serialize(*t);
    st.hash = compute_hash(tmpl);
    core::Pod p;
    p.metadata.namespace_ = d.metadata.namespace_;
    p.metadata.labels = d.template_.labels;
    p.metadata.labels[kRevisionHashLabel] = st.hash;
    if (!st.template_generation.empty()) p.metadata.labels[kTemplateGenerationLabel] = st.template_generation;
    p.metadata.annotations = d.template_.annotations;
    p.metadata.owner_references.push_back(core::OwnerReference{"apps/v1", "DaemonSet", d.metadata.name, d.metadata.uid, true});
    p.spec = d.template_.spec;
    p.spec.tolerations = core::with_daemon_tolerations(p.spec.tolerations, p.spec.host_network);
    // The API server's pod defaulting (ObjectStore::create), once per revision.
    if (!p.spec.termination_grace_period_seconds) p.spec.termination_grace_period_seconds = 30;
    st.prototype = std::make_shared<const core::Pod>(std::move(p));
  }

  // getNodesToDaemonPods(ds, includeDeletedTerminal=false) for one node.
  // (A node has one pod of a DaemonSet but for moments: kept inline.)
  using SlotPods = boost::container::small_vector<const PodRecord*, 2>;
  SlotPods pods_of(const Slot& slot) {
    SlotPods out;
    for (const PodRecord* p : slot.pods) {
      if (terminal(*p) && p->deletion_timestamp) continue;
      out.push_back(p);
    }
    return out;
  }

  // podByCreationTimestampAndPhase: bound pods first, then older, then by name.
  static bool older(const PodRecord* a, const PodRecord* b) {
    bool ab = !a->node_name.empty(), bb = !b->node_name.empty();
    if (ab != bb) return ab;
    Time ta = a->creation_timestamp.value_or(Time{}), tb = b->creation_timestamp.value_or(Time{});
    if (ta == tb) return a->name < b->name;
    return ta < tb;
  }

  // flowcontrol.Backoff (client-go util/flowcontrol/backoff.go), no jitter.
  bool backoff_expired(const BackoffEntry& e) const { return now - e.last_update > 2 * kFailedPodBackoffMax; }
  bool in_backoff_since_update(const std::string& id) const {
    auto it = failed_backoff.find(id);
    if (it == failed_backoff.end() || backoff_expired(it->second)) return false;
    return now - it->second.last_update < it->second.backoff;
  }
  void backoff_next(const std::string& id) {
    auto it = failed_backoff.find(id);
    if (it == failed_backoff.end() || backoff_expired(it->second)) {
      failed_backoff[id] = BackoffEntry{kFailedPodBackoffInitial, now};
    } else {
      it->second.backoff = std::min(it->second.backoff * 2, kFailedPodBackoffMax);
      it->second.last_update = now;
    }
  }

  // podsShouldBeOnNode (pkg/controller/daemon/daemon_controller.go) for one
  // node, plus getUnscheduledPodsWithoutNode when the node is gone.
  void pods_should_be_on_node(const core::DaemonSet& d, DsState& st, uint32_t node_id, Slot& slot,
                              const core::Node* node, std::vector<uint32_t>& nodes_needing_pods,
                              std::vector<std::string>& pods_to_delete) {
    SlotPods pods = pods_of(slot);
    if (!node) {
      slot.should_run = slot.should_continue = false;
      slot.placement_generation = -1;
      for (const PodRecord* p : pods)
        if (p->node_name.empty()) pods_to_delete.push_back(ObjectStore::key(st.ns, p->name));
      return;
    }
    if (slot.placement_generation != st.generation || slot.placement_node_rv != node->metadata.resource_version) {
      core::Placement pl = core::should_run(d, *node);  // NodeShouldRunDaemonPod
      slot.should_run = pl.should_run;
      slot.should_continue = pl.should_continue_running;
      slot.placement_generation = st.generation;
      slot.placement_node_rv = node->metadata.resource_version;
    }
    bool exists = !pods.empty();
    if (slot.should_run && !exists) {
      nodes_needing_pods.push_back(node_id);
    } else if (slot.should_continue) {
      SlotPods running;
      for (const PodRecord* p : pods) {
        if (p->deletion_timestamp) continue;  // ignored until it is gone: no replacement yet
        std::string_view phase = p->status->phase;
        if (phase == std::string_view("Failed")) {
          // Failed pods are killed with a per (uid, observedGeneration, node) backoff.
          const std::string& node_name = node_table[node_id].name;
          std::string id = st.uid + "/" + std::to_string(d.status.observed_generation) + "/" + node_name;
          if (in_backoff_since_update(id)) {
            Duration delay = failed_backoff.at(id).backoff;
            std::string key = st.key;
            at(failed_backoff.at(id).last_update + delay,
               "failed-pod backoff for DaemonSet " + st.key + " on node " + node_name,
               [this, key, node_id] {
                 auto it = ds.find(key);
                 if (it != ds.end()) mark_dirty(it->second, node_id);
               });
            continue;
          }
          backoff_next(id);
          pods_to_delete.push_back(ObjectStore::key(st.ns, p->name));
        } else if (phase == std::string_view("Succeeded")) {
          pods_to_delete.push_back(ObjectStore::key(st.ns, p->name));
        } else {
          running.push_back(p);
        }
      }
      // maxSurge 0: at most one pod per node; keep the oldest.
      if (running.size() > 1) {
        std::sort(running.begin(), running.end(), older);
        for (size_t i = 1; i < running.size(); ++i)
          pods_to_delete.push_back(ObjectStore::key(st.ns, running[i]->name));
      }
    } else if (exists) {
      for (const PodRecord* p : pods)
        if (!p->deletion_timestamp) pods_to_delete.push_back(ObjectStore::key(st.ns, p->name));
    }
  }

  // syncNodes: creates pods for the nodes that need one, deletes the others.
  // (Upstream caps each at BurstReplicas=250 per sync and creates in
  // slow-start batches; with a store that never fails, that changes only how
  // many syncs it takes, not the result.)
  void sync_nodes(const DsState& st, const std::vector<uint32_t>& nodes_needing_pods,
                  const std::vector<std::string>& pods_to_delete) {
    // ReplaceDaemonSetPodNodeNameNodeAffinity: the pod's required node affinity
    // becomes the single term `matchFields metadata.name In [node]`; no nodeName.
    std::string generate_name = st.name + "-";
    for (uint32_t node : nodes_needing_pods)
      store.create_generated_pod(st.prototype, generate_name, node_table[node].name);
    for (const auto& pk : pods_to_delete) {
      const PodRecord* p = store.find_pod(pk);
      if (p) store.remove(Kind::kPod, p->namespace_(), p->name);
    }
  }

  // The per-node body of updateDaemonSetStatus: this pair's contribution.
  void recount(const core::DaemonSet& d, DsState& st, uint32_t node_id, Slot& slot, const core::Node* node) {
    Contribution c;
    if (node) {  // pods on nodes that no longer exist count nowhere
      SlotPods pods = pods_of(slot);
      if (slot.should_run) {
        c.desired = 1;
        if (!pods.empty()) {
          c.current = 1;
          const PodRecord* p = *std::min_element(pods.begin(), pods.end(), older);  // only the oldest counts
          if (p->is_ready()) {
            c.ready = 1;
            // podutil.IsPodAvailable: Ready for at least minReadySeconds.
            const core::PodCondition* rc = p->condition("Ready");
            Duration min_ready = std::chrono::seconds(d.min_ready_seconds);
            if (d.min_ready_seconds == 0) {
              c.available = 1;
            } else if (rc->last_transition_time && *rc->last_transition_time + min_ready <= now) {
              c.available = 1;
            } else if (rc->last_transition_time) {
              std::string key = st.key;
              at(*rc->last_transition_time + min_ready, "minReadySeconds of DaemonSet " + st.key,
                 [this, key, node_id] {
                   auto it = ds.find(key);
                   if (it != ds.end()) mark_dirty(it->second, node_id);
                 });
            }
          }
          if (is_updated(st, *p)) c.updated = 1;
        }
      } else if (!pods.empty()) {
        c.misscheduled = 1;
      }
    }
    st.sum.add(slot.counted, -1);
    st.sum.add(c, +1);
    slot.counted = c;
  }

  // util.IsPodUpdated: the hash label or the template generation label
  // matches the DaemonSet's. Both labels are in the pod's template part,
  // which the pods of a revision share: the last answer is kept per part.
  bool is_updated(DsState& st, const PodRecord& p) {
    auto& m = st.updated_memo;
    if (m.base == p.base && m.hash == st.hash && m.template_generation == st.template_generation) return m.updated;
    const core::Labels& labels = p.shared_meta().labels;
    auto h = labels.find(kRevisionHashLabel);
    auto g = labels.find(kTemplateGenerationLabel);
    bool updated = (h != labels.end() && h->second == st.hash) ||
                   (!st.template_generation.empty() && g != labels.end() && g->second == st.template_generation);
    m = {p.base, st.hash, st.template_generation, updated};
    return updated;
  }

  // syncDaemonSet, restricted to the dirty (DaemonSet, node) pairs.
  void sync_daemonset(const std::string& key) {
    auto it = ds.find(key);
    if (it == ds.end()) return;
    DsState& st = it->second;
    st.queued = false;
    const core::DaemonSet* d = store.find_daemonset(st.ns, st.name);
    if (!d) return;
    std::vector<uint32_t> nodes;
    if (st.full) {
      st.full = false;
      nodes = stored_node_ids();
      for (uint32_t id = 0; id < st.slots.size(); ++id)
        if (!node_table[id].node && !st.slots[id].pods.empty()) nodes.push_back(id);
      for (uint32_t n : st.dirty_nodes) st.slots[n].dirty = false;
      st.dirty_nodes.clear();
    } else {
      nodes.swap(st.dirty_nodes);
    }
    // An empty selector selects nothing to manage (event SelectingAll); a
    // DaemonSet being deleted is left alone.
    if (d->selector.empty() || d->metadata.deletion_timestamp) {
      for (uint32_t n : nodes) slot_of(st, n).dirty = false;
      return;
    }
    // Every id in `nodes` is known, so from here st.slots does not grow: the
    // slots are indexed directly. (Writes in sync_nodes meet no new node
    // names: the pods they create and delete target nodes in `nodes`.)
    for (uint32_t n : nodes) {
      Slot& s = slot_of(st, n);
      s.dirty = false;
      s.in_sync = true;
    }
    std::vector<uint32_t> needing, deleted_on;
    std::vector<std::string> deleting;
    for (uint32_t n : nodes) {  // manage
      size_t before = deleting.size();
      pods_should_be_on_node(*d, st, n, st.slots[n], node_table[n].node, needing, deleting);
      if (deleting.size() != before) deleted_on.push_back(n);
    }
    sync_nodes(st, needing, deleting);
    for (uint32_t n : nodes) recount(*d, st, n, st.slots[n], node_table[n].node);
    for (uint32_t n : nodes) st.slots[n].in_sync = false;
    // A deletion's event would have enqueued the DaemonSet again (a pod that
    // went at once, grace 0, lets the next sync create its replacement).
    for (uint32_t n : deleted_on) mark_dirty(st, n);
    update_daemonset_status(*d, st);
  }

  // updateDaemonSetStatus / storeDaemonSetStatus: written only when a counter
  // or observedGeneration changes.
  void update_daemonset_status(const core::DaemonSet& d, const DsState& st) {
    core::DaemonSetStatus s;
    s.desired_number_scheduled = static_cast<int32_t>(st.sum.desired);
    s.current_number_scheduled = static_cast<int32_t>(st.sum.current);
    s.number_misscheduled = static_cast<int32_t>(st.sum.misscheduled);
    s.number_ready = static_cast<int32_t>(st.sum.ready);
    s.updated_number_scheduled = static_cast<int32_t>(st.sum.updated);
    s.number_available = static_cast<int32_t>(st.sum.available);
    s.number_unavailable = static_cast<int32_t>(st.sum.desired - st.sum.available);
    s.observed_generation = d.metadata.generation;
    if (s == d.status) return;
    store.mutate_daemonset_status(st.key, s);
  }

  // ------------------------------------------------------------ scheduler

  // The default profile's filters in order (NodeUnschedulable, TaintToleration,
  // NodeAffinity, NodeResourcesFit); the first that fails decides. Returns
  // the failure reasons (empty: fits) and whether preemption could help
  // (Unschedulable vs UnschedulableAndUnresolvable).
  std::vector<std::string> filter(const PodRecord& pod, const core::Node& node, const Usage& u, const Amounts& req,
                                  bool& resolvable) {
    resolvable = false;
    const core::PodSpec& spec = pod.shared_spec();
    if (node.unschedulable) {
      core::Taint t{"node.kubernetes.io/unschedulable", "", "NoSchedule", std::nullopt};
      bool ok = std::any_of(spec.tolerations.begin(), spec.tolerations.end(),
                            [&](const core::Toleration& tol) { return core::tolerates(tol, t); });
      if (!ok) return {"node(s) were unschedulable"};
    }
    static const std::vector<std::string> kEffects = {"NoSchedule", "NoExecute"};
    if (core::untolerated_taint(node.taints, spec.tolerations, kEffects))
      return {"node(s) had untolerated taint(s)"};  // wording since v1.35 (PR #134740)
    if (!pod.affinity_matches(node)) return {"node(s) didn't match Pod's node affinity/selector"};
    // noderesources fitsRequest.
    std::vector<std::string> reasons;
    auto alloc = [&](const std::string& r) -> __int128 {
      auto it = node.allocatable.find(r);
      return it == node.allocatable.end() ? 0 : it->second.nanos();
    };
    static const std::string kPods = "pods";
    if (__int128(u.pods + 1) * 1000000000 > alloc(kPods)) reasons.push_back("Too many pods");
    // Upstream checks cpu, memory and ephemeral-storage, then the scalar
    // resources; the order only matters for the list of reasons, which the
    // FitError message counts and sorts, so one pass over the requests does.
    for (const auto& [r, v] : req) {
      if (v <= 0) continue;
      auto used = u.requested.find(r);
      __int128 in_use = used == u.requested.end() ? 0 : used->second;
      if (v > alloc(r) - in_use) reasons.push_back("Insufficient " + r);
    }
    resolvable = true;
    return reasons;
  }

  // schedulingCycle for one pod; on failure the FitError message
  // (pkg/scheduler/framework/types.go FitError.Error) with DefaultPreemption's
  // PostFilter message appended.
  void schedule_one(uint64_t id) {
    const PodRecord* pod = store.find_pod_by_id(id);
    if (!pod || !pod->node_name.empty() || pod->deletion_timestamp || terminal(*pod)) return;
    const uint32_t target = info_of(*pod).target;
    size_t total = store.nodes().size();
    std::shared_ptr<const Amounts> req_ptr = requests_of(*pod);
    const Amounts& req = *req_ptr;
    std::map<std::string, int> reasons, preemption;
    auto evaluate = [&](const core::Node& n, uint32_t id) -> bool {
      bool resolvable = false;
      auto r = filter(*pod, n, node_table[id].usage, req, resolvable);
      if (r.empty()) return true;
      for (const auto& x : r) reasons[x] += 1;
      preemption[resolvable ? "No preemption victims found for incoming pod"
                            : "Preemption is not helpful for scheduling"] += 1;
      return false;
    };
    if (!node_table[target].name.empty()) {
      // NodeAffinity PreFilter: only the pinned node is a candidate.
      const core::Node* n = node_table[target].node;
      if (n && evaluate(*n, target)) return bind(*pod, node_table[target].name);
      int others = static_cast<int>(total) - (n ? 1 : 0);
      if (others > 0) {
        reasons["node(s) didn't satisfy plugin(s) [NodeAffinity]"] += others;
        preemption["Preemption is not helpful for scheduling"] += others;
      }
    } else {
      for (const auto& [name, n] : store.nodes())
        if (evaluate(n, node_id(name))) return bind(*pod, name);
    }
    auto histogram = [&](const std::map<std::string, int>& h) {
      std::vector<std::string> parts;
      for (const auto& [r, c] : h) parts.push_back(std::to_string(c) + " " + r);
      std::sort(parts.begin(), parts.end());
      std::string s;
      for (const auto& p : parts) s += (s.empty() ? "" : ", ") + p;
      return s;
    };
    std::string n = std::to_string(total);
    std::string message = total == 0 ? "no nodes available to schedule pods"
                                     : "0/" + n + " nodes are available: " + histogram(reasons) + ". preemption: 0/" +
                                           n + " nodes are available: " + histogram(preemption) + ".";
    auto& parked = node_table[target].parked;
    if (std::find(parked.begin(), parked.end(), id) == parked.end()) parked.push_back(id);
    core::PodStatus s = *pod->status;
    set_condition(s, "PodScheduled", "False", "Unschedulable", message, truncate_seconds(now));
    if (!same_status(s, *pod->status)) store.set_pod_status(id, std::make_shared<const core::PodStatus>(std::move(s)));
  }

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
  StatusMemo bind_memo, kubelet_memo;

  // DefaultBinder: pods/binding sets spec.nodeName; PodScheduled=True.
  void bind(const PodRecord& p, const std::string& node) {
    const PodRecord* pod = &p;
    Time t = truncate_seconds(now);
    if (!(bind_memo.out && bind_memo.in == pod->status && bind_memo.at == t)) {
      core::PodStatus s = *pod->status;
      set_condition(s, "PodScheduled", "True", "", "", t);
      bind_memo = StatusMemo{pod->status, nullptr, t, std::make_shared<const core::PodStatus>(std::move(s))};
    }
    store.bind_pod(pod->id, node, bind_memo.out);
  }

  // ------------------------------------------------------------ kubelet

  const Fault* fault_for(const PodRecord& pod) const {
    if (faults.empty()) return nullptr;
    const core::OwnerReference* ref = pod.shared_meta().controller_ref();
    for (const auto& [id, f] : faults) {
      if (!f.node.empty() && f.node != pod.node_name) continue;
      if (!f.daemonset.empty() && (!ref || ref->kind != "DaemonSet" || ref->name != f.daemonset)) continue;
      if (f.kind == FaultKind::kStuckInInit && pod.shared_spec().init_containers.empty()) continue;
      return &f;
    }
    return nullptr;
  }

  // The status the kubelet (kubelet_pods.go generateAPIPodStatus / getPhase)
  // or KWOK's pod-ready stage would write for a bound, live pod, given its
  // fault `f`. Sets `timed` when it started a timer for the pod.
  core::PodStatus desired_status(const PodRecord& pod, const std::string& key, const Fault* f, bool& timed) {
    const uint64_t id = pod.id;
    Time t = truncate_seconds(now);
    core::PodStatus s = *pod.status;
    s.reason.clear();
    s.message.clear();
    if (!s.start_time) s.start_time = t;
    const core::PodCondition* sched = pod.condition("PodScheduled");
    Time bound_at = sched && sched->last_transition_time ? *sched->last_transition_time : t;
    Time started_at = opt.profile == KubeletProfile::kKubelet ? bound_at + opt.start_delay : bound_at;
    const auto& cs = pod.shared_spec().containers;
    const auto& ics = pod.shared_spec().init_containers;
    auto not_ready = [&](const std::string& reason) {
      std::string msg = "containers with unready status: " + names_of(cs);
      set_condition(s, "ContainersReady", "False", reason, msg, t);
      set_condition(s, "Ready", "False", reason, msg, t);
    };
    auto inits_done = [&] {
      s.init_container_statuses.clear();
      for (const auto& c : ics) {
        auto st = container_status(c, true, "terminated", "Completed");
        st.exit_code = 0;
        s.init_container_statuses.push_back(st);
      }
      set_condition(s, "Initialized", "True", "", "", t);
    };
    s.container_statuses.clear();
    if (f && f->kind == FaultKind::kFailed) {
      // Admission rejection (pkg/kubelet/lifecycle/predicate.go).
      s.phase = "Failed";
      s.reason = f->reason.empty() ? "UnexpectedAdmissionError" : f->reason;
      s.message = "Pod was rejected: " + s.reason;
      return s;
    }
    if (now < started_at) {
      // Containers are being created.
      s.phase = "Pending";
      if (ics.empty()) {
        inits_done();
        for (const auto& c : cs) s.container_statuses.push_back(container_status(c, false, "waiting", "ContainerCreating"));
      } else {
        s.init_container_statuses.clear();
        for (const auto& c : ics) s.init_container_statuses.push_back(container_status(c, false, "waiting", "PodInitializing"));
        set_condition(s, "Initialized", "False", "ContainersNotInitialized",
                      "containers with incomplete status: " + names_of(ics), t);
        for (const auto& c : cs) s.container_statuses.push_back(container_status(c, false, "waiting", "PodInitializing"));
      }
      not_ready("ContainersNotReady");
      at(started_at, "kubelet start of pod " + key, [this, id] { kubelet_queue.push(id); });
      timed = true;
      return s;
    }
    if (f && f->kind == FaultKind::kStuckInInit) {
      s.phase = "Pending";
      s.init_container_statuses.clear();
      for (size_t i = 0; i < ics.size(); ++i)
        s.init_container_statuses.push_back(
            i == 0 ? container_status(ics[i], false, "running") : container_status(ics[i], false, "waiting", "PodInitializing"));
      set_condition(s, "Initialized", "False", "ContainersNotInitialized",
                    "containers with incomplete status: " + names_of(ics), t);
      for (const auto& c : cs) s.container_statuses.push_back(container_status(c, false, "waiting", "PodInitializing"));
      not_ready("ContainersNotReady");
      return s;
    }
    inits_done();
    if (f && f->kind == FaultKind::kImagePull) {
      s.phase = "Pending";
      bool backoff = opt.profile == KubeletProfile::kKwok || now >= started_at + kImagePullBackoff;
      for (const auto& c : cs) {
        if (backoff)
          s.container_statuses.push_back(
              container_status(c, false, "waiting", "ImagePullBackOff", "Back-off pulling image \"" + c.image + "\""));
        else
          s.container_statuses.push_back(container_status(c, false, "waiting", "ErrImagePull",
                                                          "failed to pull and unpack image \"" + c.image + "\": not found"));
      }
      if (!backoff)
        at(started_at + kImagePullBackoff, "kubelet image pull back-off of pod " + key, [this, id] { kubelet_queue.push(id); });
      not_ready("ContainersNotReady");
      return s;
    }
    s.phase = "Running";
    if (f && f->kind == FaultKind::kCrashLoop) {
      for (const auto& c : cs) {
        auto st = container_status(c, false, "waiting", "CrashLoopBackOff",
                                   "back-off 5m0s restarting failed container=" + c.name + " pod=" +
                                       pod.name + "_" + pod.namespace_() + "(" + pod.uid + ")");
        st.restart_count = 5;
        s.container_statuses.push_back(st);
      }
      not_ready("ContainersNotReady");
      return s;
    }
    if (f && f->kind == FaultKind::kNeverReady) {
      for (const auto& c : cs) s.container_statuses.push_back(container_status(c, false, "running"));
      not_ready("ContainersNotReady");
      return s;
    }
    for (const auto& c : cs) s.container_statuses.push_back(container_status(c, true, "running"));
    set_condition(s, "ContainersReady", "True", "", "", t);
    set_condition(s, "Ready", "True", "", "", t);
    return s;
  }

  void kubelet_sync(uint64_t id) {
    const PodRecord* pod = store.find_pod_by_id(id);
    if (!pod || pod->node_name.empty()) return;
    const std::string& key = *store.pod_key(id);
    const core::Node* node = node_table[info_of(*pod).bound].node;
    if (!node) return;  // no kubelet: pod GC handles these
    std::string ready = node->ready_status();
    if (pod->deletion_timestamp) {
      if (ready == "Unknown") return;  // unreachable: stays Terminating
      if (opt.profile == KubeletProfile::kKwok || now >= *pod->deletion_timestamp) {
        // KWOK pod-delete stage / kubelet after the grace period: delete with grace 0.
        store.force_remove_pod(key);
      } else {
        at(*pod->deletion_timestamp, "graceful deletion of pod " + key, [this, id] { kubelet_queue.push(id); });
      }
      return;
    }
    if (terminal(*pod) || ready != "True") return;  // a NotReady node's kubelet starts nothing new
    // Without a fault the status depends only on the pod's status, its shared
    // template part and the time; pods in the same state share the result.
    const Fault* f = fault_for(*pod);
    std::shared_ptr<const core::PodStatus> out;
    if (!f && kubelet_memo.hit(*pod, now)) {
      out = kubelet_memo.out;
    } else {
      bool timed = false;
      core::PodStatus s = desired_status(*pod, key, f, timed);
      if (same_status(s, *pod->status)) return;
      out = std::make_shared<const core::PodStatus>(std::move(s));
      if (!f && !timed) kubelet_memo = StatusMemo{pod->status, pod->base, now, out};
    }
    if (out == pod->status) return;
    kubelet_writing = true;
    store.set_pod_status(id, std::move(out));
    kubelet_writing = false;
  }

  // ------------------------------------------------------------ nodes

  // KWOK node-initialize stage: a node without a Ready condition gets the
  // standard conditions; without allocatable, cpu 1k, memory 1Ti, pods 1M.
  void initialize_node(const std::string& name) {
    const core::Node* n = store.find_node(name);
    if (!n) return;
    bool need_alloc = n->allocatable.empty(), need_cond = n->ready_status().empty();
    if (!need_alloc && !need_cond) return;
    // The same for every node: built once.
    static const std::map<std::string, core::Quantity> kAllocatable = {
        {"cpu", core::Quantity::parse("1k")}, {"memory", core::Quantity::parse("1Ti")}, {"pods", core::Quantity::parse("1M")}};
    static const std::vector<core::NodeCondition> kConditions = {
        {"Ready", "True", "KubeletReady", "kubelet is posting ready status"},
        {"MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"},
        {"DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"},
        {"PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"},
        {"NetworkUnavailable", "False", "RouteCreated", "RouteController created a route"},
    };
    store.mutate_node(name, [&](core::Node& node) {
      if (need_alloc)
        for (const auto& [k, q] : kAllocatable) node.allocatable[k] = q;
      if (need_cond) node.conditions.insert(node.conditions.end(), kConditions.begin(), kConditions.end());
    });
  }

  // Node lifecycle controller: doNoScheduleTaintingPass and
  // doNoExecuteTaintingPass keep the condition taints in sync; when Ready goes
  // from True to Unknown (the controller's own verdict that the kubelet
  // stopped posting), MarkPodsNotReady. monitorNodeHealth calls it only when
  // its tryUpdateNodeHealth turned an observed True into something else; a
  // Ready=False posted by the kubelet itself marks no pod.
  void node_lifecycle(const std::string& name) {
    const core::Node* n = store.find_node(name);
    if (!n) return;
    std::string ready = n->ready_status();
    if (ready.empty()) return;  // not initialized yet
    std::vector<core::Taint> want;
    auto add = [&](const char* key, const char* effect) {
      core::Taint t{key, "", effect, std::nullopt};
      if (std::string(effect) == "NoExecute") t.time_added = truncate_seconds(now);
      want.push_back(t);
    };
    if (ready == "False") add("node.kubernetes.io/not-ready", "NoSchedule");
    if (ready == "Unknown") add("node.kubernetes.io/unreachable", "NoSchedule");
    if (condition_status(*n, "MemoryPressure") == "True") add("node.kubernetes.io/memory-pressure", "NoSchedule");
    if (condition_status(*n, "DiskPressure") == "True") add("node.kubernetes.io/disk-pressure", "NoSchedule");
    if (condition_status(*n, "PIDPressure") == "True") add("node.kubernetes.io/pid-pressure", "NoSchedule");
    if (condition_status(*n, "NetworkUnavailable") == "True") add("node.kubernetes.io/network-unavailable", "NoSchedule");
    if (n->unschedulable) add("node.kubernetes.io/unschedulable", "NoSchedule");
    if (ready == "False") add("node.kubernetes.io/not-ready", "NoExecute");
    if (ready == "Unknown") add("node.kubernetes.io/unreachable", "NoExecute");
    std::vector<core::Taint> taints;
    for (const auto& t : n->taints)
      if (!lifecycle_owned(t) || std::find(want.begin(), want.end(), t) != want.end()) taints.push_back(t);
    for (const auto& t : want)
      if (std::find(taints.begin(), taints.end(), t) == taints.end()) taints.push_back(t);
    bool changed = taints.size() != n->taints.size() || !std::equal(taints.begin(), taints.end(), n->taints.begin());
    std::string before = observed_ready.count(name) ? observed_ready[name] : "True";
    observed_ready[name] = ready;
    if (changed) store.mutate_node(name, [&](core::Node& node) { node.taints = taints; });
    if (before == "True" && ready == "Unknown") {
      // controllerutil.MarkPodsNotReady: Ready=False on every pod of the node.
      std::vector<uint64_t> ids = node_table[node_id(name)].pods;
      for (uint64_t id : ids) {
        const PodRecord* p = store.find_pod_by_id(id);
        if (!p || p->node_name != name || !p->is_ready()) continue;
        core::PodStatus s = *p->status;
        for (auto& c : s.conditions)
          if (c.type == "Ready") {
            c.status = "False";
            c.last_transition_time = truncate_seconds(now);
          }
        store.set_pod_status(id, std::make_shared<const core::PodStatus>(std::move(s)));
      }
    }
  }

  // ------------------------------------------------------------ garbage collection

  // Pod GC (pkg/controller/podgc/gc_controller.go gcOrphaned): every 20 s,
  // a node named by a bound pod but absent is quarantined for 40 s; if it is
  // still absent then, its pods are marked Failed (DisruptionTarget,
  // DeletionByPodGC) and deleted with grace 0. The loop is modelled as ticks
  // on a 20 s grid from the start time, scheduled only while there is work.
  void schedule_podgc() {
    if (podgc_scheduled) return;
    podgc_scheduled = true;
    auto since = now - opt.start;
    auto ticks = (since + kPodGCPeriod - Duration(1)) / kPodGCPeriod;
    at(opt.start + ticks * kPodGCPeriod, "pod GC", [this] { podgc_tick(); });
  }

  void podgc_tick() {
    podgc_scheduled = false;
    std::vector<std::string> deleted;
    for (auto it = missing_nodes.begin(); it != missing_nodes.end();) {
      const std::string& name = *it;
      bool has_bound = false;
      for (uint64_t id : node_table[node_id(name)].pods)
        if (const PodRecord* p = store.find_pod_by_id(id); p && p->node_name == name) has_bound = true;
      if (store.find_node(name) || !has_bound) {
        quarantine.erase(name);
        it = missing_nodes.erase(it);
        continue;
      }
      auto q = quarantine.find(name);
      if (q == quarantine.end()) {
        quarantine[name] = now + kPodGCQuarantine;  // nodeQueue.AddAfter(node, quarantineTime)
      } else if (q->second <= now) {
        deleted.push_back(name);  // discoverDeletedNodes
        quarantine.erase(q);
      }
      ++it;
    }
    for (const auto& name : deleted) {
      missing_nodes.erase(name);
      std::vector<uint64_t> ids = node_table[node_id(name)].pods;
      for (uint64_t id : ids) {
        const PodRecord* p = store.find_pod_by_id(id);
        if (!p || p->node_name != name) continue;
        // markFailedAndDeletePod
        core::PodStatus s = *p->status;
        if (!terminal(s)) s.phase = "Failed";
        set_condition(s, "DisruptionTarget", "True", "DeletionByPodGC", "PodGC: node no longer exists",
                      truncate_seconds(now));
        store.set_pod_status(id, std::make_shared<const core::PodStatus>(std::move(s)));
        store.force_remove_pod(*store.pod_key(id));
      }
    }
    if (!missing_nodes.empty()) {
      podgc_scheduled = true;
      at(now + kPodGCPeriod, "pod GC", [this] { podgc_tick(); });
    }
  }

  void collect_orphan(const std::string& key) {
    const PodRecord* p = store.find_pod(key);
    if (!p || p->deletion_timestamp) return;
    const core::OwnerReference* ref = p->shared_meta().controller_ref();
    if (ref && ds_by_uid.count(ref->uid)) return;  // owner still there
    store.remove(Kind::kPod, p->namespace_(), p->name);
  }

  // ------------------------------------------------------------ loop

  bool has_work() const {
    return !init_queue.empty() || !lifecycle_queue.empty() || !ds_queue.empty() || !sched_queue.empty() ||
           !kubelet_queue.empty() || !orphan_queue.empty();
  }

  std::string busy_description() const {
    std::vector<std::string> parts;
    if (!ds_queue.empty()) parts.push_back("DaemonSet controller (" + ds_queue.front() + ")");
    auto pod = [&](uint64_t id) {
      const std::string* k = store.pod_key(id);
      return k ? *k : "pod #" + std::to_string(id) + ", deleted";
    };
    if (!sched_queue.empty()) parts.push_back("scheduler (" + pod(sched_queue.q.front()) + ")");
    if (!kubelet_queue.empty()) parts.push_back("kubelet (" + pod(kubelet_queue.q.front()) + ")");
    if (!lifecycle_queue.empty()) parts.push_back("node lifecycle (" + lifecycle_queue.q.front() + ")");
    std::string s;
    for (const auto& p : parts) s += (s.empty() ? "" : ", ") + p;
    return s;
  }

  void run_until_idle() {
    int rounds = 0;
    while (has_work()) {
      if (++rounds > opt.max_rounds)
        throw ClusterError("simulator: live-lock: controllers still busy after " + std::to_string(opt.max_rounds) +
                           " rounds at " + core::format_time(now) + ": " + busy_description());
      for (const auto& k : init_queue.take()) initialize_node(k);
      for (const auto& k : lifecycle_queue.take()) node_lifecycle(k);
      for (const auto& k : orphan_queue.take()) collect_orphan(k);
      std::deque<std::string> dsq;
      dsq.swap(ds_queue);
      for (const auto& k : dsq) sync_daemonset(k);
      for (const auto& k : sched_queue.take()) schedule_one(k);
      for (const auto& k : kubelet_queue.take()) kubelet_sync(k);
    }
  }

  void fire_due() {
    while (!timers.empty() && timers.top().at <= now) {
      Timer t = timers.top();
      timers.pop();
      t.fn();
    }
  }

  std::string timers_description() const {
    auto copy = timers;
    std::set<std::string> seen;
    std::string s;
    while (!copy.empty() && seen.size() < 5) {
      const Timer& t = copy.top();
      if (seen.insert(t.what).second) s += (s.empty() ? "" : "; ") + t.what + " at " + core::format_time(t.at);
      copy.pop();
    }
    return s;
  }
};

// ---------------------------------------------------------------- FakeCluster

FakeCluster::FakeCluster() : FakeCluster(Options{}) {}
FakeCluster::FakeCluster(Options options) : impl_(std::make_unique<Impl>(options)) {}
FakeCluster::~FakeCluster() = default;

ObjectStore& FakeCluster::store() { return impl_->store; }
const ObjectStore& FakeCluster::store() const { return impl_->store; }
core::Time FakeCluster::now() const { return impl_->now; }

void FakeCluster::run() { impl_->run_until_idle(); }

void FakeCluster::advance(core::Duration d) {
  Impl& m = *impl_;
  Time end = m.now + std::max(d, Duration(0));
  m.run_until_idle();
  while (!m.timers.empty() && m.timers.top().at <= end) {
    m.now = std::max(m.now, m.timers.top().at);
    m.fire_due();
    m.run_until_idle();
  }
  m.now = end;
  m.run_until_idle();
}

void FakeCluster::settle() {
  Impl& m = *impl_;
  Time start = m.now;
  m.run_until_idle();
  while (!m.timers.empty()) {
    Time next = m.timers.top().at;
    if (next > start + m.opt.settle_limit)
      throw ClusterError("simulator: live-lock: no convergence within " +
                         std::to_string(std::chrono::duration_cast<std::chrono::seconds>(m.opt.settle_limit).count()) +
                         " s of virtual time; still pending: " + m.timers_description());
    m.now = std::max(m.now, next);
    m.fire_due();
    m.run_until_idle();
  }
}

core::ClusterState FakeCluster::state(const std::string& ns) {
  const ObjectStore& s = impl_->store;
  core::ClusterState out;
  out.namespace_ = ns;
  for (const auto& [name, n] : s.nodes()) out.nodes.push_back(n);
  for (const auto& [k, d] : s.daemonsets())
    if (d.metadata.namespace_ == ns) out.daemonsets.push_back(d);
  for (auto& obj : s.list(Kind::kPod, ns)) out.pods.push_back(std::move(std::get<core::Pod>(obj)));
  return out;
}

void FakeCluster::apply(const std::vector<core::Object>& objects) {
  ObjectStore& s = impl_->store;
  // Validate everything first: nothing half-applied.
  std::set<std::string> namespaces;
  for (const auto& obj : objects) {
    if (auto* n = std::get_if<core::Namespace>(&obj)) {
      namespaces.insert(n->metadata.name);
      continue;
    }
    if (std::holds_alternative<core::Node>(obj)) continue;
    const core::ObjectMeta& m = std::visit([](const auto& x) -> const core::ObjectMeta& { return x.metadata; }, obj);
    if (!namespaces.count(m.namespace_) && !s.find_namespace(m.namespace_)) {
      core::InputError e("", 0, "metadata.namespace", "namespaces \"" + m.namespace_ + "\" not found");
      e.http_status = 404;
      throw e;
    }
    if (auto* d = std::get_if<core::DaemonSet>(&obj)) {
      const core::DaemonSet* cur = s.find_daemonset(m.namespace_, m.name);
      if (cur && core::encode(*cur)["spec"].as_object()["selector"] !=
                     core::encode(*d)["spec"].as_object()["selector"]) {
        core::InputError e("", 0, "spec.selector", "field is immutable");
        e.http_status = 422;
        throw e;
      }
    }
  }
  for (const auto& obj : objects) {
    Kind k = kind_of(obj);
    const core::ObjectMeta& m = std::visit([](const auto& x) -> const core::ObjectMeta& { return x.metadata; }, obj);
    core::Object copy = obj;
    std::visit([](auto& x) { x.metadata.resource_version.clear(); }, copy);  // apply: last writer wins
    if (s.get(k, m.namespace_, m.name)) {
      if (k == Kind::kNamespace) continue;
      if (k == Kind::kNode) {
        add_node(std::get<core::Node>(copy));
        continue;
      }
      s.update(std::move(copy));
    } else {
      s.create(std::move(copy));
    }
  }
}

void FakeCluster::create_namespace(const std::string& name) {
  if (impl_->store.find_namespace(name)) return;
  // ValidateNamespaceName: a DNS-1123 label.
  std::string err = core::validate_dns1123_label(name);
  if (!err.empty()) {
    core::InputError e("", 0, "metadata.name", "Invalid value: \"" + name + "\": " + err);
    e.http_status = 422;
    throw e;
  }
  core::Namespace ns;
  ns.metadata.name = name;
  impl_->store.create(ns);
}

void FakeCluster::set_node_label(const std::string& node, const std::string& key,
                                 const std::optional<std::string>& value) {
  std::string err = core::validate_label_key(key);
  if (err.empty() && value) err = core::validate_label_value(*value);
  if (!err.empty()) {
    core::InputError e("", 0, "metadata.labels[" + key + "]", err);
    e.http_status = 422;
    throw e;
  }
  impl_->store.mutate_node(node, [&](core::Node& n) {
    if (value) n.metadata.labels[key] = *value;
    else n.metadata.labels.erase(key);
  });
}

void FakeCluster::add_node(const core::Node& node) {
  ObjectStore& s = impl_->store;
  const core::Node* cur = s.find_node(node.metadata.name);
  if (!cur) {
    s.create(node);
    return;
  }
  s.mutate_node(node.metadata.name, [&](core::Node& n) {
    n.metadata.labels = node.metadata.labels;
    n.metadata.annotations = node.metadata.annotations;
    n.unschedulable = node.unschedulable;
    n.taints = node.taints;
    if (!node.allocatable.empty()) n.allocatable = node.allocatable;
    if (!node.conditions.empty()) n.conditions = node.conditions;
  });
}

void FakeCluster::delete_node(const std::string& node) { impl_->store.remove(Kind::kNode, "", node); }

void FakeCluster::set_node_taints(const std::string& node, const std::vector<core::Taint>& taints) {
  impl_->store.mutate_node(node, [&](core::Node& n) { n.taints = taints; });
}

void FakeCluster::set_node_unschedulable(const std::string& node, bool unschedulable) {
  impl_->store.mutate_node(node, [&](core::Node& n) { n.unschedulable = unschedulable; });
}

void FakeCluster::set_node_ready(const std::string& node, const std::string& status) {
  if (status != "True" && status != "False" && status != "Unknown") {
    core::InputError e("", 0, "status.conditions[Ready].status", "must be True, False or Unknown, not \"" + status + "\"");
    e.http_status = 422;
    throw e;
  }
  impl_->store.mutate_node(node, [&](core::Node& n) {
    core::NodeCondition c{"Ready", status, "", ""};
    if (status == "True") c = {"Ready", "True", "KubeletReady", "kubelet is posting ready status"};
    if (status == "False") c = {"Ready", "False", "KubeletNotReady", "container runtime network not ready"};
    if (status == "Unknown") c = {"Ready", "Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status."};
    for (auto& x : n.conditions)
      if (x.type == "Ready") {
        x = c;
        return;
      }
    n.conditions.insert(n.conditions.begin(), c);
  });
}

void FakeCluster::delete_pod(const std::string& ns, const std::string& name) {
  impl_->store.remove(Kind::kPod, ns, name);
}

void FakeCluster::delete_namespace(const std::string& name) {
  impl_->store.remove(Kind::kNamespace, "", name);
}

int FakeCluster::inject_fault(const Fault& fault) {
  int id = impl_->next_fault++;
  impl_->faults[id] = fault;
  for (const auto& n : impl_->node_table)
    if (fault.node.empty() || fault.node == n.name)
      for (uint64_t pod : n.pods) impl_->kubelet_queue.push(pod);
  return id;
}

void FakeCluster::clear_fault(int id) {
  auto it = impl_->faults.find(id);
  if (it == impl_->faults.end()) return;
  std::string node = it->second.node;
  impl_->faults.erase(it);
  for (const auto& n : impl_->node_table)
    if (node.empty() || node == n.name)
      for (uint64_t pod : n.pods) impl_->kubelet_queue.push(pod);
}

void FakeCluster::clear_faults() {
  std::vector<int> ids;
  for (const auto& [id, f] : impl_->faults) ids.push_back(id);
  for (int id : ids) clear_fault(id);
}

}  // namespace gpuops::simulator
