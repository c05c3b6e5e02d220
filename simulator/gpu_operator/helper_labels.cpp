// The label helpers' shared steps; see helper_labels.h.
#include "simulator/gpu_operator/helper_labels.h"

#include <chrono>

#include "simulator/gpu_operator/operator_validation.h"

namespace gpuops::simulator::internal {

namespace {

// Both tools wait 5 minutes per pod selector (defaultGracePeriod of
// k8s-driver-manager, `--timeout=5m` of the scripts, the 5 * time.Minute of
// waitForPodsToBeDeleted).
constexpr core::Duration kWaitTimeout = std::chrono::minutes(5);

}  // namespace

ReadLabels read_helper_labels(const core::Node& node, const core::HelperRules& rules) {
  ReadLabels out;
  for (const auto* keys :
       {&rules.pause, &rules.pause_if_set, &rules.restore, &rules.restore_if_set, &rules.restore_on_exit})
    for (const auto& k : *keys) {
      auto it = node.metadata.labels.find(k);
      out[k] = it == node.metadata.labels.end() ? "" : it->second;
    }
  return out;
}

std::vector<std::pair<std::string, std::string>> helper_writes(const ReadLabels& read,
                                                               const std::vector<std::string>& keys,
                                                               const std::vector<std::string>& if_set,
                                                               std::string (*value)(const std::string&)) {
  auto of = [&](const std::string& k) {
    auto it = read.find(k);
    return it == read.end() ? std::string() : it->second;
  };
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& k : keys) out.emplace_back(k, value(of(k)));
  for (const auto& k : if_set)
    if (!of(k).empty()) out.emplace_back(k, value(of(k)));
  return out;
}

void write_node_labels(ClusterContext& c, const std::string& node,
                       const std::vector<std::pair<std::string, std::string>>& labels) {
  const core::Node* n = c.store.find_node(node);
  if (!n) return;
  bool change = false;
  for (const auto& [k, v] : labels) {
    auto it = n->metadata.labels.find(k);
    change = change || it == n->metadata.labels.end() || it->second != v;
  }
  if (!change) return;
  c.store.mutate_node(node, [&](core::Node& m) {
    for (const auto& [k, v] : labels) m.metadata.labels[k] = v;
  });
}

bool helper_pods_left(const ClusterContext& c, const std::string& node, const std::string& ns,
                      const core::HelperWait& wait) {
  auto it = c.node_ids.find(node);
  if (it == c.node_ids.end()) return false;
  for (uint64_t id : c.node_table[it->second].pods) {
    const PodRecord* p = c.store.find_pod_by_id(id);
    if (!p || p->node_name != node || p->namespace_() != ns) continue;
    if (!wait.app.empty()) {
      auto l = p->shared_meta().labels.find("app");
      if (l != p->shared_meta().labels.end() && l->second == wait.app) return true;
    } else if (p->shared_spec().node_selector.count(wait.selector_key)) {
      return true;
    }
  }
  return false;
}

WaitResult advance_waits(const ClusterContext& c, const std::string& node, const std::string& ns,
                         const core::HelperRules& rules, const ReadLabels& read, WaitCursor& cursor) {
  while (cursor.index < rules.wait_for.size()) {
    const core::HelperWait& w = rules.wait_for[cursor.index];
    if (!cursor.started) {
      cursor.started = true;
      cursor.deadline = c.now + kWaitTimeout;
    }
    bool skip = false;
    if (!w.if_set.empty()) {
      auto it = read.find(w.if_set);
      skip = it == read.end() || it->second.empty();
    }
    if (!skip && helper_pods_left(c, node, ns, w)) {
      if (c.now < cursor.deadline) return WaitResult::kPending;
      if (rules.wait_timeout_fails) return WaitResult::kTimedOut;
    }
    ++cursor.index;
    cursor.started = false;
  }
  return WaitResult::kDone;
}

bool loads_driver(const PodRecord& pod, const core::Catalog& catalog) {
  return is_operand_pod(pod, catalog.by_name("driver")) || is_operand_pod(pod, catalog.by_name("vgpu-manager"));
}

}  // namespace gpuops::simulator::internal
