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

}  // namespace gpuops::simulator::internal
