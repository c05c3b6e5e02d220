// The garbage collector; see garbage_collector.h.
#include "simulator/garbage_collector.h"

namespace gpuops::simulator::internal {

// mirrors attemptToDeleteItem, pkg/controller/garbagecollector/garbagecollector.go.
void GarbageCollector::attempt_to_delete_item(const std::string& key) {
  const PodRecord* p = c_.store.find_pod(key);
  if (!p || p->deletion_timestamp) return;
  const core::OwnerReference* ref = p->shared_meta().controller_ref();
  if (ref && daemonsets_.has_uid(ref->uid)) return;  // owner still there
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

}  // namespace gpuops::simulator::internal
