// The MIG manager, played; see mig_manager.h.
#include "simulator/gpu_operator/mig_manager.h"

#include <algorithm>

#include "simulator/gpu_operator/operator_validation.h"

namespace gpuops::simulator::internal {

namespace {

constexpr const char* kMigConfig = "nvidia.com/mig.config";
constexpr const char* kMigConfigState = "nvidia.com/mig.config.state";
constexpr const char* kPaused = "paused-for-mig-change";

// mirrors Reconfigure.maybeSetPaused and maybeSetTrue (reconfigure.go)
std::string maybe_set_paused(const std::string& v) { return v == "false" ? "false" : kPaused; }
std::string maybe_set_true(const std::string& v) { return v == "false" ? "false" : "true"; }

}  // namespace

void MigManager::install(const core::Catalog* catalog, const std::string& ns) {
  catalog_ = catalog && !catalog->rules.mig_manager.empty() ? catalog : nullptr;
  ns_ = ns;
  nodes_.clear();
  queue_.clear();
}

bool MigManager::is_manager_pod(const PodRecord& pod) const {
  return pod.namespace_() == ns_ && is_operand_pod(pod, catalog_->by_name("mig-manager"));
}

void MigManager::on_node(EventType type, const core::Node& node) {
  if (!catalog_) return;
  auto it = nodes_.find(node.metadata.name);
  if (it == nodes_.end()) return;
  if (type == EventType::kDeleted)
    nodes_.erase(it);
  else
    queue_.push_back(node.metadata.name);
}

void MigManager::on_pod(EventType type, const PodRecord& pod) {
  if (!catalog_ || c_.opt.profile != KubeletProfile::kKubelet || pod.node_name.empty()) return;
  if (is_manager_pod(pod)) {
    auto it = nodes_.find(pod.node_name);
    const bool live = type != EventType::kDeleted && !pod.deletion_timestamp && pod.is_ready();
    if (live && (it == nodes_.end() || it->second.pod_id != pod.id)) {
      // A new process: it reads the label afresh (lastRead "").
      Manager& m = nodes_[pod.node_name];
      m = Manager{};
      m.pod_id = pod.id;
      queue_.push_back(pod.node_name);
    } else if (!live && it != nodes_.end() && it->second.pod_id == pod.id &&
               (type == EventType::kDeleted || pod.deletion_timestamp)) {
      nodes_.erase(it);  // SIGTERM: the run stops where it is
    }
    return;
  }
  auto it = nodes_.find(pod.node_name);
  if (it != nodes_.end() && it->second.waiting) queue_.push_back(pod.node_name);
}

void MigManager::run() {
  std::vector<std::string> names;
  names.swap(queue_);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  for (const auto& name : names) {
    auto it = nodes_.find(name);
    if (it == nodes_.end()) continue;
    Manager& m = it->second;
    if (m.waiting) {
      go_on(name, m);
      continue;
    }
    const core::Node* node = c_.store.find_node(name);
    if (!node) continue;
    auto v = node->metadata.labels.find(kMigConfig);
    if (v == node->metadata.labels.end() || v->second.empty() || v->second == m.last_read) continue;
    m.last_read = v->second;
    m.target = v->second;
    reconfigure(name, m);
  }
}

// mirrors Reconfigure.Run up to the waits
void MigManager::reconfigure(const std::string& name, Manager& m) {
  const core::HelperRules& rules = catalog_->rules.mig_manager;
  const core::Node* node = c_.store.find_node(name);
  if (!node) return;
  m.read = read_helper_labels(*node, rules);
  // validateMigConfig: `nvidia-mig-parted assert --valid-config`
  if (!rules.configs.empty() && std::find(rules.configs.begin(), rules.configs.end(), m.target) == rules.configs.end())
    return set_state(name, m, "failed");
  // isConfigAlreadyApplied
  if (c_.hosts[name].mig_config == m.target) return set_state(name, m, "success");
  write_node_labels(c_, name, {{kMigConfigState, "pending"}});
  // shutdownKubernetesGPUClients
  write_node_labels(c_, name, helper_writes(m.read, rules.pause, rules.pause_if_set, maybe_set_paused));
  m.waiting = true;
  m.wait = WaitCursor{};
  go_on(name, m);
}

// mirrors Reconfigure.Run from waitForPodsToBeDeleted on
void MigManager::go_on(const std::string& name, Manager& m) {
  const core::HelperRules& rules = catalog_->rules.mig_manager;
  switch (advance_waits(c_, name, ns_, rules, m.read, m.wait)) {
    case WaitResult::kPending:
      c_.timers.at(m.wait.deadline, "mig-manager wait on " + name, [this, name] { queue_.push_back(name); });
      return;
    case WaitResult::kTimedOut:
      m.waiting = false;  // returns before setState: paused, pending
      return;
    case WaitResult::kDone: break;
  }
  m.waiting = false;
  delete_pods(name, "nvidia-cuda-validator");
  delete_pods(name, "nvidia-device-plugin-validator");
  NodeHost& host = c_.hosts[name];
  if (host.mig_apply_fails) return set_state(name, m, "failed");  // applyMigConfig
  host.mig_config = m.target;
  delete_pods(name, "nvidia-operator-validator");  // restartValidatorPod
  // restartKubernetesGPUClients (NoRestartK8sDaemonsetsOnExit from here on)
  write_node_labels(c_, name, helper_writes(m.read, rules.restore, rules.restore_if_set, maybe_set_true));
  write_node_labels(c_, name, {{kMigConfigState, "success"}});
}

// mirrors Reconfigure.setState before the clients were restarted
void MigManager::set_state(const std::string& name, Manager& m, const std::string& state) {
  const core::HelperRules& rules = catalog_->rules.mig_manager;
  write_node_labels(c_, name, helper_writes(m.read, rules.restore_on_exit, rules.restore_if_set, maybe_set_true));
  write_node_labels(c_, name, {{kMigConfigState, state}});
}

void MigManager::delete_pods(const std::string& name, const std::string& app) {
  auto id = c_.node_ids.find(name);
  if (id == c_.node_ids.end()) return;
  std::vector<std::string> doomed;
  for (uint64_t pid : c_.node_table[id->second].pods) {
    const PodRecord* p = c_.store.find_pod_by_id(pid);
    if (!p || p->node_name != name || p->namespace_() != ns_ || p->deletion_timestamp) continue;
    auto l = p->shared_meta().labels.find("app");
    if (l != p->shared_meta().labels.end() && l->second == app) doomed.push_back(p->name);
  }
  for (const auto& pod : doomed) c_.store.remove(Kind::kPod, ns_, pod);
}

}  // namespace gpuops::simulator::internal
