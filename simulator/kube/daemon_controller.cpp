// The DaemonSet controller; see daemon_controller.h.
#include "simulator/kube/daemon_controller.h"

#include <boost/json/serialize.hpp>

#include <algorithm>

#include "core/codec/encode.h"
#include "core/kube/placement.h"

namespace gpuops::simulator::internal {

namespace {

using namespace std::chrono_literals;

// std::string, not const char*: core::Labels lookups would build a string per call.
const std::string kRevisionHashLabel = "controller-revision-hash";       // DefaultDaemonSetUniqueLabelKey
const std::string kTemplateGenerationLabel = "pod-template-generation";  // DaemonSetTemplateGenerationKey
constexpr const char* kTemplateGenerationAnnotation = "deprecated.daemonset.template.generation";

// kube-controller-manager startDaemonSetController: flowcontrol.NewBackOff(1s, 15min).
constexpr Duration kFailedPodBackoffInitial = 1s;
constexpr Duration kFailedPodBackoffMax = 15min;

// mirrors ComputeHash, pkg/controller/controller_utils.go: FNV-32a of the
// template, rendered with rand.SafeEncodeString. (Upstream hashes the Go
// struct; this hashes its JSON, so values differ from a real cluster's but
// have its shape and change exactly when the template changes.)
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

// mirrors podByCreationTimestampAndPhase.Less, pkg/controller/daemon:
// bound pods first, then older, then by name.
bool pod_by_creation_timestamp_and_phase(const PodRecord* a, const PodRecord* b) {
  bool ab = !a->node_name.empty(), bb = !b->node_name.empty();
  if (ab != bb) return ab;
  Time ta = a->creation_timestamp.value_or(Time{}), tb = b->creation_timestamp.value_or(Time{});
  if (ta == tb) return a->name < b->name;
  return ta < tb;
}

}  // namespace

// ------------------------------------------------------------ event handlers

DaemonSetState* DaemonSetController::owner_state(const PodRecord& pod) {
  if (owner_memo_.base && owner_memo_.base == pod.base) return owner_memo_.st;
  DaemonSetState* found = nullptr;
  const core::OwnerReference* ref = pod.shared_meta().controller_ref();
  if (ref && ref->kind == "DaemonSet") {
    auto it = ds_by_uid_.find(ref->uid);
    if (it != ds_by_uid_.end()) {
      auto st = ds_.find(it->second);
      if (st != ds_.end()) found = &st->second;
    }
  }
  owner_memo_ = OwnerMemo{pod.base, found};
  return found;
}

void DaemonSetController::enqueue(DaemonSetState& st) {
  if (!st.queued) {
    st.queued = true;
    queue.push_back(st.key);
  }
}

// Marks the pair for recounting at the DaemonSet's next sync; with
// `enqueue` false the sync is left to whatever enqueues the DaemonSet next
// (upstream recounts every node on every sync, so a stale pair is exactly
// what a full sync would redo).
void DaemonSetController::mark_dirty(DaemonSetState& st, uint32_t node, bool enqueue) {
  mark_dirty(st, node_of(st, node), node, enqueue);
}
void DaemonSetController::mark_dirty(DaemonSetState& st, DaemonPodsOnNode& on_node, uint32_t node, bool enqueue) {
  if (on_node.in_sync) return;  // the running sync recounts this pair anyway
  if (!on_node.dirty) {
    on_node.dirty = true;
    st.dirty_nodes.push_back(node);
  }
  if (enqueue) this->enqueue(st);
}

// mirrors addNode / updateNode / syncNodeUpdate, pkg/controller/daemon
// (v1.37): a node event enqueues a DaemonSet only when
// (shouldRun && !scheduled) || (!shouldContinueRunning && scheduled) ||
// (scheduled && status.numberMisscheduled > 0), where scheduled means a pod
// of it is bound to the node (the spec.nodeName index); an update that
// changes neither labels nor taints is ignored, and there is no node delete
// handler. So a NoSchedule taint on a node whose pod runs leaves the status
// as it was until something else syncs the DaemonSet.
bool DaemonSetController::node_event_enqueues(const DaemonSetState& st, const core::Node& node, uint32_t id) {
  const core::DaemonSet* d = c_.store.find_daemonset(st.ns, st.name);
  if (!d) return true;
  core::Placement pl = core::should_run(*d, node);
  bool scheduled = false;
  if (id < st.nodes.size())
    for (const PodRecord* p : st.nodes[id].pods) scheduled = scheduled || p->node_name == node.metadata.name;
  return (pl.should_run && !scheduled) || (!pl.should_continue_running && scheduled) ||
         (scheduled && d->status.number_misscheduled > 0);
}

void DaemonSetController::on_node(EventType type, const core::Node& node, uint32_t id) {
  const std::string& name = node.metadata.name;
  bool placement_event = false;  // addNode, or updateNode not ignored
  if (type == EventType::kDeleted) {
    node_placement_inputs_.erase(name);
  } else {
    auto [it, added] = node_placement_inputs_.try_emplace(name);
    placement_event = added || it->second.first != node.metadata.labels || it->second.second != node.taints;
    if (placement_event) it->second = {node.metadata.labels, node.taints};
  }
  for (auto& [k, st] : ds_) mark_dirty(st, id, placement_event && node_event_enqueues(st, node, id));
}

void DaemonSetController::on_daemonset(EventType type, const core::DaemonSet& d) {
  std::string key = ObjectStore::key(d.metadata.namespace_, d.metadata.name);
  if (type == EventType::kDeleted) {
    auto it = ds_.find(key);
    if (it == ds_.end()) return;
    for (auto& e : c_.pod_info)
      if (e.st == &it->second) e.st = nullptr;
    ds_by_uid_.erase(it->second.uid);
    ds_.erase(it);
    owner_memo_ = {};
    return;
  }
  auto [it, added] = ds_.try_emplace(key);
  if (added) owner_memo_ = {};
  DaemonSetState& st = it->second;
  std::string tg = d.metadata.annotations.count(kTemplateGenerationAnnotation)
                       ? d.metadata.annotations.at(kTemplateGenerationAnnotation)
                       : "";
  if (added) {
    st.key = key;
    st.ns = d.metadata.namespace_;
    st.name = d.metadata.name;
    st.uid = d.metadata.uid;
    ds_by_uid_[st.uid] = key;
  } else if (st.generation == d.metadata.generation && st.template_generation == tg) {
    return;  // a status write
  }
  st.generation = d.metadata.generation;
  st.template_generation = tg;
  create_pod_template(d, st);
  st.full = true;
  enqueue(st);
}

void DaemonSetController::on_pod(EventType type, const PodRecord& pod, PodInfo& info) {
  if (!info.st) info.st = owner_state(pod);
  DaemonSetState* st = info.st;
  if (!st) return;
  const uint32_t target = info.target;
  DaemonPodsOnNode& on_node = node_of(*st, target);
  if (type == EventType::kAdded) {
    on_node.pods.push_back(&pod);
  } else if (type == EventType::kDeleted) {
    auto& v = on_node.pods;
    v.erase(std::remove(v.begin(), v.end(), &pod), v.end());
    info.st = nullptr;
  }
  mark_dirty(*st, on_node, target);
}

// ------------------------------------------------------------ sync

// mirrors CreatePodTemplate, pkg/controller/daemon/util: the template, the
// default daemon tolerations (AddOrUpdateDaemonPodTolerations), the
// controller-revision-hash and pod-template-generation labels, and the
// controller ownerReference (syncNodes).
void DaemonSetController::create_pod_template(const core::DaemonSet& d, DaemonSetState& st) {
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
  p.metadata.owner_references.push_back(
      core::OwnerReference{"apps/v1", "DaemonSet", d.metadata.name, d.metadata.uid, true});
  p.spec = d.template_.spec;
  p.spec.tolerations = core::with_daemon_tolerations(p.spec.tolerations, p.spec.host_network);
  // The API server's pod defaulting (ObjectStore::create), once per revision.
  if (!p.spec.termination_grace_period_seconds) p.spec.termination_grace_period_seconds = 30;
  st.pod_template = std::make_shared<const core::Pod>(std::move(p));
}

// mirrors constructHistory's Match of the current template against the
// revisions, for an import: see the header.
void DaemonSetController::adopt_imported_revision(const core::DaemonSet& d) {
  auto it = ds_.find(ObjectStore::key(d.metadata.namespace_, d.metadata.name));
  if (it == ds_.end() || !it->second.pod_template) return;
  DaemonSetState& st = it->second;
  st.import_status = d.status.number_misscheduled == 0;
  std::string hash;
  int32_t pods = 0;
  for (const auto& on_node : st.nodes)
    for (const PodRecord* p : on_node.pods) {
      const core::Labels& labels = p->shared_meta().labels;
      auto h = labels.find(kRevisionHashLabel);
      if (h == labels.end() || (!hash.empty() && h->second != hash)) return;
      hash = h->second;
      ++pods;
    }
  if (pods == 0 || d.status.updated_number_scheduled != pods) return;
  set_pod_template_hash(st, hash);
}

// The pods' controller-revision-hash becomes `hash` (constructHistory found
// the template in a revision whose hash label differs).
void DaemonSetController::set_pod_template_hash(DaemonSetState& st, const std::string& hash) {
  if (hash.empty() || hash == st.hash) return;
  core::Pod p = *st.pod_template;
  p.metadata.labels[kRevisionHashLabel] = hash;
  st.hash = hash;
  st.pod_template = std::make_shared<const core::Pod>(std::move(p));
}

// mirrors util.AllowsSurge, pkg/controller/daemon/util: SurgeCount(ds, 1) > 0.
static bool allows_surge(const core::DaemonSet& d) {
  return d.update_strategy == "RollingUpdate" && core::scaled_value(d.max_surge, 1, true) > 0;
}

// mirrors podutil.IsPodAvailable (pkg/api/v1/pod): Ready, and Ready for at
// least minReadySeconds. (Upstream asks lastTransitionTime + minReadySeconds
// to be before now; the virtual clock fires the timer at that instant, so
// here it is at or before.)
bool DaemonSetController::is_pod_available(const core::DaemonSet& d, DaemonSetState& st, const PodRecord& p,
                                           uint32_t node_id) {
  if (!p.is_ready()) return false;
  if (d.min_ready_seconds == 0) return true;
  const core::PodCondition* rc = p.condition("Ready");
  if (!rc->last_transition_time) return false;
  Time at = *rc->last_transition_time + std::chrono::seconds(d.min_ready_seconds);
  if (at <= c_.now) return true;
  std::string key = st.key;
  c_.timers.at(at, "minReadySeconds of DaemonSet " + st.key, [this, key, node_id] {
    auto it = ds_.find(key);
    if (it != ds_.end()) mark_dirty(it->second, node_id);
  });
  return false;
}

// mirrors getNodesToDaemonPods(ds, includeDeletedTerminal=false),
// pkg/controller/daemon/daemon_controller.go, for one node.
DaemonSetController::DaemonPods DaemonSetController::get_nodes_to_daemon_pods(const DaemonPodsOnNode& on_node) {
  DaemonPods out;
  for (const PodRecord* p : on_node.pods) {
    if (terminal(*p) && p->deletion_timestamp) continue;
    out.push_back(p);
  }
  return out;
}

// flowcontrol.Backoff (client-go util/flowcontrol/backoff.go), no jitter.
bool DaemonSetController::backoff_expired(const BackoffEntry& e) const {
  return c_.now - e.last_update > 2 * kFailedPodBackoffMax;
}
bool DaemonSetController::in_backoff_since_update(const std::string& id) const {
  auto it = failed_backoff_.find(id);
  if (it == failed_backoff_.end() || backoff_expired(it->second)) return false;
  return c_.now - it->second.last_update < it->second.backoff;
}
void DaemonSetController::backoff_next(const std::string& id) {
  auto it = failed_backoff_.find(id);
  if (it == failed_backoff_.end() || backoff_expired(it->second)) {
    failed_backoff_[id] = BackoffEntry{kFailedPodBackoffInitial, c_.now};
  } else {
    it->second.backoff = std::min(it->second.backoff * 2, kFailedPodBackoffMax);
    it->second.last_update = c_.now;
  }
}

void DaemonSetController::shift_backoffs(Time since, Duration d) {
  for (auto& [id, e] : failed_backoff_)
    if (e.last_update >= since) e.last_update += d;
}

// mirrors manage, pkg/controller/daemon/daemon_controller.go, for the nodes
// `node_ids`: podsShouldBeOnNode per node, then syncNodes. Returns the nodes
// where it deleted pods.
std::vector<uint32_t> DaemonSetController::manage(const core::DaemonSet& d, DaemonSetState& st,
                                                  const std::vector<uint32_t>& node_ids, bool& wrote) {
  std::vector<uint32_t> needing, deleted_on;
  std::vector<std::string> deleting;
  for (uint32_t n : node_ids) {
    size_t before = deleting.size();
    pods_should_be_on_node(d, st, n, st.nodes[n], c_.node_table[n].node, needing, deleting);
    if (deleting.size() != before) deleted_on.push_back(n);
  }
  wrote = !needing.empty() || !deleting.empty();
  sync_nodes(st, needing, deleting);
  return deleted_on;
}

// mirrors podsShouldBeOnNode, pkg/controller/daemon/daemon_controller.go, for
// one node, plus getUnscheduledPodsWithoutNode when the node is gone.
void DaemonSetController::pods_should_be_on_node(const core::DaemonSet& d, DaemonSetState& st, uint32_t node_id,
                                                 DaemonPodsOnNode& on_node, const core::Node* node,
                                                 std::vector<uint32_t>& nodes_needing_pods,
                                                 std::vector<std::string>& pods_to_delete) {
  DaemonPods pods = get_nodes_to_daemon_pods(on_node);
  if (!node) {
    on_node.should_run = on_node.should_continue = false;
    on_node.placement_generation = -1;
    for (const PodRecord* p : pods)
      if (p->node_name.empty()) pods_to_delete.push_back(ObjectStore::key(st.ns, p->name));
    return;
  }
  if (on_node.placement_generation != st.generation || on_node.placement_node_rv != node->metadata.resource_version) {
    core::Placement pl = core::should_run(d, *node);  // NodeShouldRunDaemonPod
    on_node.should_run = pl.should_run;
    on_node.should_continue = pl.should_continue_running;
    on_node.placement_generation = st.generation;
    on_node.placement_node_rv = node->metadata.resource_version;
  }
  bool exists = !pods.empty();
  if (on_node.should_run && !exists) {
    nodes_needing_pods.push_back(node_id);
  } else if (on_node.should_continue) {
    DaemonPods running;
    for (const PodRecord* p : pods) {
      if (p->deletion_timestamp) continue;  // ignored until it is gone: no replacement yet
      std::string_view phase = p->status->phase;
      if (phase == std::string_view("Failed")) {
        // Failed pods are killed with a per (uid, observedGeneration, node) backoff.
        const std::string& node_name = c_.node_table[node_id].name;
        std::string id = st.uid + "/" + std::to_string(d.status.observed_generation) + "/" + node_name;
        if (in_backoff_since_update(id)) {
          Duration delay = failed_backoff_.at(id).backoff;
          std::string key = st.key;
          // At the cap, each expiry repeats the last one (see Timers).
          c_.timers.at(
              failed_backoff_.at(id).last_update + delay,
              "failed-pod backoff for DaemonSet " + st.key + " on node " + node_name,
              [this, key, node_id] {
                auto it = ds_.find(key);
                if (it != ds_.end()) mark_dirty(it->second, node_id);
              },
              delay == kFailedPodBackoffMax ? kFailedPodBackoffMax : Duration(0));
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
    if (running.size() > 1) {
      std::sort(running.begin(), running.end(), pod_by_creation_timestamp_and_phase);
      if (!allows_surge(d)) {
        // Without surge, at most one pod per node: keep the oldest.
        for (size_t i = 1; i < running.size(); ++i) pods_to_delete.push_back(ObjectStore::key(st.ns, running[i]->name));
      } else {
        // With surge, two pods only while the oldest of the current
        // revision is not yet available and the oldest old one is Ready;
        // every other pod goes.
        const PodRecord *oldest_new = nullptr, *oldest_old = nullptr;
        for (const PodRecord* p : running) {
          auto h = p->shared_meta().labels.find(kRevisionHashLabel);
          bool current = h != p->shared_meta().labels.end() && h->second == st.hash;
          const PodRecord*& slot = current ? oldest_new : oldest_old;
          if (!slot) {
            slot = p;
            continue;
          }
          pods_to_delete.push_back(ObjectStore::key(st.ns, p->name));
        }
        if (oldest_new && oldest_old && (!oldest_old->is_ready() || is_pod_available(d, st, *oldest_new, node_id)))
          pods_to_delete.push_back(ObjectStore::key(st.ns, oldest_old->name));
      }
    }
  } else if (exists) {
    for (const PodRecord* p : pods)
      if (!p->deletion_timestamp) pods_to_delete.push_back(ObjectStore::key(st.ns, p->name));
  }
}

// mirrors syncNodes, pkg/controller/daemon/daemon_controller.go: creates pods
// for the nodes that need one, deletes the others. (Upstream caps each at
// BurstReplicas=250 per sync and creates in slow-start batches; with a store
// that never fails, that changes only how many syncs it takes, not the
// result.)
void DaemonSetController::sync_nodes(const DaemonSetState& st, const std::vector<uint32_t>& nodes_needing_pods,
                                     const std::vector<std::string>& pods_to_delete) {
  // ReplaceDaemonSetPodNodeNameNodeAffinity: the pod's required node affinity
  // becomes the single term `matchFields metadata.name In [node]`; no nodeName.
  std::string generate_name = st.name + "-";
  for (uint32_t node : nodes_needing_pods) {
    c_.creating_for = node;
    struct Done {
      uint32_t& hint;
      ~Done() { hint = PodInfo::kNoNode; }
    } done{c_.creating_for};
    c_.store.create_generated_pod(st.pod_template, generate_name, c_.node_table[node].name);
  }
  for (const auto& pk : pods_to_delete) {
    const PodRecord* p = c_.store.find_pod(pk);
    if (p) c_.store.remove(Kind::kPod, p->namespace_(), p->name);
  }
}

// The per-node body of updateDaemonSetStatus
// (pkg/controller/daemon/daemon_controller.go): this pair's share of the
// counters, replacing its previous share in the sums.
void DaemonSetController::update_node_status_counts(const core::DaemonSet& d, DaemonSetState& st, uint32_t node_id,
                                                    DaemonPodsOnNode& on_node, const core::Node* node) {
  NodeStatusCounts c;
  if (node) {  // pods on nodes that no longer exist count nowhere
    DaemonPods pods = get_nodes_to_daemon_pods(on_node);
    const bool stale = st.import_status && !on_node.should_run && on_node.should_continue && !pods.empty();
    if (stale) st.stale_nodes.push_back(node_id);
    if (on_node.should_run || stale) {
      c.desired = 1;
      if (!pods.empty()) {
        c.current = 1;
        // only the oldest counts
        const PodRecord* p = *std::min_element(pods.begin(), pods.end(), pod_by_creation_timestamp_and_phase);
        if (p->is_ready()) {
          c.ready = 1;
          if (is_pod_available(d, st, *p, node_id)) c.available = 1;
        }
        if (is_pod_updated(st, *p)) c.updated = 1;
      }
    } else if (!pods.empty()) {
      c.misscheduled = 1;
    }
    for (const PodRecord* p : pods)
      if (!p->deletion_timestamp && !is_pod_updated(st, *p)) ++c.old;
  }
  st.sum.add(on_node.counted, -1);
  st.sum.add(c, +1);
  on_node.counted = c;
}

// mirrors IsPodUpdated, pkg/controller/daemon/util: the hash label or the
// template generation label matches the DaemonSet's. Both labels are in the
// pod's template part, which the pods of a revision share: the last answer is
// kept per part.
bool DaemonSetController::is_pod_updated(DaemonSetState& st, const PodRecord& p) {
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

// mirrors syncDaemonSet, pkg/controller/daemon/daemon_controller.go, for the
// dirty (DaemonSet, node) pairs, or every node after a spec change.
void DaemonSetController::sync_daemon_set(const std::string& key) {
  auto it = ds_.find(key);
  if (it == ds_.end()) return;
  DaemonSetState& st = it->second;
  st.queued = false;
  const core::DaemonSet* d = c_.store.find_daemonset(st.ns, st.name);
  if (!d) return;
  std::vector<uint32_t> node_ids;
  if (st.full) {
    st.full = false;
    if (!d->metadata.deletion_timestamp) construct_history(*d, st);
    node_ids = c_.stored_node_ids();
    for (uint32_t id = 0; id < st.nodes.size(); ++id)
      if (!c_.node_table[id].node && !st.nodes[id].pods.empty()) node_ids.push_back(id);
    for (uint32_t n : st.dirty_nodes) st.nodes[n].dirty = false;
    st.dirty_nodes.clear();
  } else {
    node_ids.swap(st.dirty_nodes);
  }
  // The import's stale counts end at the sync after the first (every sync
  // upstream counts every node).
  if (!st.import_status && !st.stale_nodes.empty()) {
    for (uint32_t n : st.stale_nodes)
      if (std::find(node_ids.begin(), node_ids.end(), n) == node_ids.end()) node_ids.push_back(n);
    st.stale_nodes.clear();
  }
  // An empty selector selects nothing to manage (event SelectingAll); a
  // DaemonSet being deleted is left alone.
  if (d->selector.empty() || d->metadata.deletion_timestamp) {
    for (uint32_t n : node_ids) node_of(st, n).dirty = false;
    return;
  }
  // Every id in `node_ids` is known, so from here st.nodes does not grow: it
  // is indexed directly. (Writes in sync_nodes meet no new node names: the
  // pods they create and delete target nodes in `node_ids`.)
  for (uint32_t n : node_ids) {
    DaemonPodsOnNode& on_node = node_of(st, n);
    on_node.dirty = false;
    on_node.in_sync = true;
  }
  bool wrote = false;
  std::vector<uint32_t> deleted_on = manage(*d, st, node_ids, wrote);
  for (uint32_t n : node_ids) update_node_status_counts(*d, st, n, st.nodes[n], c_.node_table[n].node);
  for (uint32_t n : node_ids) st.nodes[n].in_sync = false;
  // A deletion's event would have enqueued the DaemonSet again (a pod that
  // went at once, grace 0, lets the next sync create its replacement).
  for (uint32_t n : deleted_on) mark_dirty(st, n);
  // updateDaemonSet: the rolling update once manage's writes are observed
  // (expectations satisfied: here, at the next sync after a write).
  if (st.sum.old > 0 && d->update_strategy == "RollingUpdate") {
    if (wrote) {
      enqueue(st);
    } else {
      for (uint32_t n : rolling_update(*d, st)) mark_dirty(st, n);
    }
  }
  if (st.old_revisions > static_cast<size_t>(std::max(d->revision_history_limit, 0))) cleanup_history(*d, st);
  update_daemon_set_status(*d, st);
  st.import_status = false;
}

// mirrors updateDaemonSetStatus / storeDaemonSetStatus,
// pkg/controller/daemon/daemon_controller.go: written only when a counter or
// observedGeneration changes.
void DaemonSetController::update_daemon_set_status(const core::DaemonSet& d, const DaemonSetState& st) {
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
  c_.store.mutate_daemonset_status(st.key, s);
}

}  // namespace gpuops::simulator::internal
