// The pod garbage collector; see podgc.h.
#include "simulator/kube/podgc.h"

#include <vector>

namespace gpuops::simulator::internal {

namespace {

using namespace std::chrono_literals;

// pkg/controller/podgc: gcCheckPeriod and quarantineTime.
constexpr Duration kPodGCPeriod = 20s;
constexpr Duration kPodGCQuarantine = 40s;

}  // namespace

void PodGC::on_node_deleted(uint32_t id) {
  const NodeEntry& entry = c_.node_table[id];
  for (uint64_t pid : entry.pods) {
    const PodRecord* p = c_.store.find_pod_by_id(pid);
    if (p && p->node_name == entry.name) {
      missing_nodes_.insert(entry.name);
      schedule();
      break;
    }
  }
}

// The loop is modelled as ticks on a 20 s grid from the start time,
// scheduled only while there is work.
void PodGC::schedule() {
  if (scheduled_) return;
  scheduled_ = true;
  auto since = c_.now - c_.opt.start;
  auto ticks = (since + kPodGCPeriod - Duration(1)) / kPodGCPeriod;
  c_.timers.at(c_.opt.start + ticks * kPodGCPeriod, "pod GC", [this] { gc_orphaned(); });
}

// mirrors gcOrphaned, pkg/controller/podgc/gc_controller.go: every 20 s, a
// node named by a bound pod but absent is quarantined for 40 s; if it is
// still absent then, its pods are marked Failed (DisruptionTarget,
// DeletionByPodGC) and deleted with grace 0.
void PodGC::gc_orphaned() {
  ObjectStore& store = c_.store;
  const Time now = c_.now;
  scheduled_ = false;
  std::vector<std::string> deleted;
  for (auto it = missing_nodes_.begin(); it != missing_nodes_.end();) {
    const std::string& name = *it;
    bool has_bound = false;
    for (uint64_t id : c_.node_table[c_.node_id(name)].pods)
      if (const PodRecord* p = store.find_pod_by_id(id); p && p->node_name == name) has_bound = true;
    if (store.find_node(name) || !has_bound) {
      quarantine_.erase(name);
      it = missing_nodes_.erase(it);
      continue;
    }
    auto q = quarantine_.find(name);
    if (q == quarantine_.end()) {
      quarantine_[name] = now + kPodGCQuarantine;  // nodeQueue.AddAfter(node, quarantineTime)
    } else if (q->second <= now) {
      deleted.push_back(name);  // discoverDeletedNodes
      quarantine_.erase(q);
    }
    ++it;
  }
  for (const auto& name : deleted) {
    missing_nodes_.erase(name);
    std::vector<uint64_t> ids = c_.node_table[c_.node_id(name)].pods;
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
  if (!missing_nodes_.empty()) {
    scheduled_ = true;
    c_.timers.at(now + kPodGCPeriod, "pod GC", [this] { gc_orphaned(); });
  }
}

}  // namespace gpuops::simulator::internal
