// The garbage collector; see garbage_collector.h.
#include "simulator/kube/garbage_collector.h"

#include <algorithm>

namespace gpuops::simulator::internal {

namespace {

bool has_finalizer(const core::ObjectMeta& m, const char* f) {
  return std::find(m.finalizers.begin(), m.finalizers.end(), f) != m.finalizers.end();
}

}  // namespace

std::vector<std::string> GarbageCollector::owned_revisions(const std::string& ns, const std::string& uid) const {
  std::vector<std::string> out;
  const std::string prefix = ns + "/";
  const auto& revs = c_.store.controller_revisions();
  for (auto it = revs.lower_bound(prefix); it != revs.end() && it->first.rfind(prefix, 0) == 0; ++it)
    for (const auto& ref : it->second.metadata.owner_references)
      if (ref.uid == uid) out.push_back(it->first);
  return out;
}

void GarbageCollector::on_owner_deleted(const DaemonSetState& owner) {
  for (const auto& on_node : owner.nodes)
    for (const PodRecord* p : on_node.pods) queue.push(ObjectStore::key(p->namespace_(), p->name));
  for (auto& k : owned_revisions(owner.ns, owner.uid)) revisions.push(k);
}

void GarbageCollector::on_dependent_deleted(const DaemonSetState& owner) {
  const core::DaemonSet* d = c_.store.find_daemonset(owner.ns, owner.name);
  if (d && d->metadata.deletion_timestamp && has_finalizer(d->metadata, "foregroundDeletion")) owners.push(owner.key);
}

// mirrors attemptToDeleteItem, pkg/controller/garbagecollector/garbagecollector.go.
void GarbageCollector::attempt_to_delete_item(const std::string& key) {
  const PodRecord* p = c_.store.find_pod(key);
  if (!p || p->deletion_timestamp) return;
  const core::OwnerReference* ref = p->shared_meta().controller_ref();
  if (!ref || daemonsets_.has_uid(ref->uid)) return;  // no owner (orphaned), or the owner is still there
  c_.store.remove(Kind::kPod, p->namespace_(), p->name);
}

// mirrors attemptToDeleteItem, pkg/controller/garbagecollector/garbagecollector.go.
void GarbageCollector::attempt_to_delete_daemonset(const std::string& key) {
  auto it = c_.store.daemonsets().find(key);
  if (it == c_.store.daemonsets().end()) return;
  const core::DaemonSet& d = it->second;
  const core::OwnerReference* ref = d.metadata.controller_ref();
  if (!ref) return;
  for (const auto& [name, cp] : c_.store.cluster_policies())
    if (cp.metadata.uid == ref->uid) return;  // owner still there
  c_.store.remove(Kind::kDaemonSet, d.metadata.namespace_, d.metadata.name);
}

void GarbageCollector::attempt_to_delete_revision(const std::string& key) {
  auto it = c_.store.controller_revisions().find(key);
  if (it == c_.store.controller_revisions().end()) return;
  const core::ControllerRevision& r = it->second;
  const core::OwnerReference* ref = r.metadata.controller_ref();
  if (!ref || daemonsets_.has_uid(ref->uid)) return;
  c_.store.remove(Kind::kControllerRevision, r.metadata.namespace_, r.metadata.name);
}

// mirrors attemptToOrphan and processDeletingDependentsItem,
// pkg/controller/garbagecollector/garbagecollector.go.
void GarbageCollector::process_deleting_owner(const std::string& key) {
  auto slash = key.find('/');
  const std::string ns = key.substr(0, slash), name = key.substr(slash + 1);
  const core::DaemonSet* d = c_.store.find_daemonset(ns, name);
  if (!d || !d->metadata.deletion_timestamp) return;
  const std::string uid = d->metadata.uid;
  const DaemonSetState* st = daemonsets_.find(key);
  std::vector<std::string> pods;
  if (st)
    for (const auto& on_node : st->nodes)
      for (const PodRecord* p : on_node.pods) pods.push_back(ObjectStore::key(p->namespace_(), p->name));
  if (has_finalizer(d->metadata, "orphan")) {
    // attemptToOrphan -> orphanDependents: the owner reference to the
    // DaemonSet is removed from each dependent, then the finalizer.
    auto drop = [&uid](std::vector<core::OwnerReference>& refs) {
      std::erase_if(refs, [&uid](const core::OwnerReference& r) { return r.uid == uid; });
    };
    for (const auto& k : pods) {
      const PodRecord* p = c_.store.find_pod(k);
      if (!p) continue;
      bool owned = std::any_of(p->shared_meta().owner_references.begin(), p->shared_meta().owner_references.end(),
                               [&uid](const core::OwnerReference& r) { return r.uid == uid; });
      if (owned) c_.store.mutate_pod(k, [&](core::Pod& pod) { drop(pod.metadata.owner_references); });
    }
    for (const auto& k : owned_revisions(ns, uid)) {
      core::ControllerRevision r = c_.store.controller_revisions().at(k);
      drop(r.metadata.owner_references);
      c_.store.update(core::Object(std::move(r)));
    }
    c_.store.remove_finalizer(ns, name, "orphan");
    return;
  }
  if (has_finalizer(d->metadata, "foregroundDeletion")) {
    // processDeletingDependentsItem: the blocking dependents are deleted
    // (background, as attemptToDeleteItem does for a dependent without
    // dependents of its own); with none left the finalizer goes.
    std::vector<std::string> revs = owned_revisions(ns, uid);
    size_t left = pods.size();
    for (const auto& k : pods) {
      const PodRecord* p = c_.store.find_pod(k);
      if (!p) {
        --left;
        continue;
      }
      if (!p->deletion_timestamp) c_.store.remove(Kind::kPod, p->namespace_(), p->name);
      if (!c_.store.find_pod(k)) --left;
    }
    for (const auto& k : revs) {
      const auto& r = c_.store.controller_revisions().at(k);
      c_.store.remove(Kind::kControllerRevision, r.metadata.namespace_, r.metadata.name);
    }
    if (left == 0) c_.store.remove_finalizer(ns, name, "foregroundDeletion");
  }
}

}  // namespace gpuops::simulator::internal
