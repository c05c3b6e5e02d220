// The node lifecycle controller; see node_lifecycle_controller.h.
#include "simulator/kube/node_lifecycle_controller.h"

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

namespace gpuops::simulator::internal {

namespace {

// The node lifecycle controller's taints (nodeConditionToTaintKeyStatusMap,
// doNoScheduleTaintingPass, doNoExecuteTaintingPass): (key, effect).
bool lifecycle_owned(const core::Taint& t) {
  static const std::set<std::pair<std::string, std::string>> kOwned = {
      {"node.kubernetes.io/not-ready", "NoSchedule"},           {"node.kubernetes.io/not-ready", "NoExecute"},
      {"node.kubernetes.io/unreachable", "NoSchedule"},         {"node.kubernetes.io/unreachable", "NoExecute"},
      {"node.kubernetes.io/unschedulable", "NoSchedule"},       {"node.kubernetes.io/memory-pressure", "NoSchedule"},
      {"node.kubernetes.io/disk-pressure", "NoSchedule"},       {"node.kubernetes.io/pid-pressure", "NoSchedule"},
      {"node.kubernetes.io/network-unavailable", "NoSchedule"},
  };
  return kOwned.count({t.key, t.effect}) > 0;
}

std::string condition_status(const core::Node& n, const std::string& type) {
  for (const auto& c : n.conditions)
    if (c.type == type) return c.status;
  return "";
}

// mirrors labelReconcileInfo, pkg/controller/nodelifecycle: (primary, secondary),
// both with ensureSecondaryExists.
constexpr std::pair<const char*, const char*> kReconciledLabels[] = {
    {"kubernetes.io/os", "beta.kubernetes.io/os"},
    {"kubernetes.io/arch", "beta.kubernetes.io/arch"},
};

}  // namespace

// mirrors reconcileNodeLabels, pkg/controller/nodelifecycle, run by
// doNodeProcessingPassWorker on every node add and update, initialized or
// not: the beta OS and arch labels follow the stable ones (added when
// missing, overwritten when they differ); without the stable label nothing
// is done.
void NodeLifecycleController::reconcile_labels(const std::string& name) {
  ObjectStore& store = c_.store;
  const core::Node* n = store.find_node(name);
  if (!n) return;
  std::vector<std::pair<std::string, std::string>> update;
  for (const auto& [primary, secondary] : kReconciledLabels) {
    auto p = n->metadata.labels.find(primary);
    if (p == n->metadata.labels.end()) continue;
    auto s = n->metadata.labels.find(secondary);
    if (s == n->metadata.labels.end() || s->second != p->second) update.emplace_back(secondary, p->second);
  }
  if (update.empty()) return;
  store.mutate_node(name, [&](core::Node& node) {
    for (const auto& [k, v] : update) node.metadata.labels[k] = v;
  });
}

// mirrors monitorNodeHealth, pkg/controller/nodelifecycle/node_lifecycle_controller.go:
// doNoScheduleTaintingPass and doNoExecuteTaintingPass keep the condition
// taints in sync; when Ready goes from True to Unknown (the controller's own
// verdict that the kubelet stopped posting), MarkPodsNotReady.
// monitorNodeHealth calls it only when its tryUpdateNodeHealth turned an
// observed True into something else; a Ready=False posted by the kubelet
// itself marks no pod.
void NodeLifecycleController::monitor_node(const std::string& name) {
  reconcile_labels(name);
  ObjectStore& store = c_.store;
  const core::Node* n = store.find_node(name);
  if (!n) return;
  std::string ready = n->ready_status();
  if (ready.empty()) return;  // not initialized yet
  std::vector<core::Taint> want;
  auto add = [&](const char* key, const char* effect) {
    core::Taint t{key, "", effect, std::nullopt};
    if (std::string(effect) == "NoExecute") t.time_added = truncate_seconds(c_.now);
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
  std::string before = observed_ready_.count(name) ? observed_ready_[name] : "True";
  observed_ready_[name] = ready;
  if (changed) store.mutate_node(name, [&](core::Node& node) { node.taints = taints; });
  if (before == "True" && ready == "Unknown") {
    // mirrors MarkPodsNotReady, pkg/controller/util/node: Ready=False on every pod of the node.
    std::vector<uint64_t> ids = c_.node_table[c_.node_id(name)].pods;
    for (uint64_t id : ids) {
      const PodRecord* p = store.find_pod_by_id(id);
      if (!p || p->node_name != name || !p->is_ready()) continue;
      core::PodStatus s = *p->status;
      for (auto& c : s.conditions)
        if (c.type == "Ready") {
          c.status = "False";
          c.last_transition_time = truncate_seconds(c_.now);
        }
      store.set_pod_status(id, std::make_shared<const core::PodStatus>(std::move(s)));
    }
  }
}

}  // namespace gpuops::simulator::internal
