// k8s-driver-manager, played; see driver_manager.h.
#include "simulator/gpu_operator/driver_manager.h"

#include <chrono>

namespace gpuops::simulator::internal {

namespace {

using namespace std::chrono_literals;

constexpr const char* kPaused = "paused-for-driver-upgrade";
constexpr const char* kDriverLabel = "nvidia.com/gpu.deploy.driver";
constexpr const char* kRevisionHash = "controller-revision-hash";
// uninstallDriver's `time.Sleep(60 * time.Second)` after
// disableContainerizedDriver ("wait for pod termination").
constexpr core::Duration kHostDriverSleep = 60s;

// mirrors maybeSetPaused, cmd/driver-manager/main.go
std::string maybe_set_paused(const std::string& v) {
  if (v.empty()) return "";
  if (v == "false") return "false";
  if (v == "true") return kPaused;
  if (v.find(kPaused) != std::string::npos) return v;
  return v + "_" + kPaused;
}

// mirrors maybeSetTrue, cmd/driver-manager/main.go: the paused suffix (and
// the "_" after it) removed, then the "_" at either end trimmed.
std::string maybe_set_true(const std::string& v) {
  if (v == "false") return "false";
  if (v == kPaused) return "true";
  std::string out = v;
  for (size_t at; (at = out.find(kPaused)) != std::string::npos;) {
    size_t len = std::string(kPaused).size();
    if (at + len < out.size() && out[at + len] == '_') ++len;
    out.erase(at, len);
  }
  while (!out.empty() && out.front() == '_') out.erase(out.begin());
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out;
}

std::string label_of(const PodRecord& pod, const char* key) {
  auto it = pod.shared_meta().labels.find(key);
  return it == pod.shared_meta().labels.end() ? "" : it->second;
}

}  // namespace

void DriverManager::install(const core::Catalog* catalog, const std::string& ns) {
  catalog_ = catalog;
  ns_ = ns;
  runs_.clear();
  queue_.clear();
  waiting_.clear();
}

bool DriverManager::runs(const PodRecord& pod, const core::Container& c) const {
  return catalog_ && !catalog_->rules.driver_manager.empty() && c_.opt.profile == KubeletProfile::kKubelet &&
         c.name == "k8s-driver-manager" && pod.namespace_() == ns_;
}

InitRun DriverManager::progress(const PodRecord& pod, bool hang) {
  auto [it, fresh] = runs_.try_emplace(pod.id);
  Run& r = it->second;
  if (fresh) {
    r.pod_id = pod.id;
    r.node = pod.node_name;
    r.config = label_of(pod, kRevisionHash);
    queue(pod.id);
  }
  if (hang && !r.hang) {
    r.hang = true;
    queue(pod.id);
  }
  InitRun out;
  out.restarts = r.restarts;
  if (r.phase == Phase::kDone) out.state = InitRun::kCompleted;
  if (r.phase == Phase::kFailed) {
    out.state = InitRun::kFailed;
    out.finished = r.finished;
    out.message = r.message;
  }
  return out;
}

void DriverManager::restart(const PodRecord& pod) {
  auto it = runs_.find(pod.id);
  if (it == runs_.end() || it->second.phase != Phase::kFailed) return;
  Run& r = it->second;
  r.phase = Phase::kStart;
  r.read.clear();
  r.wait = WaitCursor{};
  r.message.clear();
  ++r.restarts;
  queue(pod.id);
}

void DriverManager::on_pod(EventType type, const PodRecord& pod) {
  if (!catalog_ || c_.opt.profile != KubeletProfile::kKubelet) return;
  if (type == EventType::kDeleted || pod.deletion_timestamp) {
    // SIGTERM: the run stops where it is.
    runs_.erase(pod.id);
  } else if (loads_driver(pod, *catalog_) && !pod.node_name.empty() && pod.namespace_() == ns_ && pod.is_ready()) {
    NodeHost& host = c_.hosts[pod.node_name];
    if (host.driver == NodeHost::Driver::kNone ||
        (host.driver == NodeHost::Driver::kLoaded && host.loaded_config.empty())) {
      host.driver = NodeHost::Driver::kLoaded;
      host.loaded_config = label_of(pod, kRevisionHash);
    }
  }
  // The node's waiting runs look again (a pod they wait for may be gone).
  if (pod.node_name.empty()) return;
  auto w = waiting_.find(pod.node_name);
  if (w == waiting_.end()) return;
  for (uint64_t id : w->second) queue(id);
  waiting_.erase(w);
}

void DriverManager::run() {
  std::vector<uint64_t> ids;
  ids.swap(queue_);
  for (uint64_t id : ids) {
    auto it = runs_.find(id);
    if (it != runs_.end()) step(it->second);
  }
}

void DriverManager::pause(Run& r) {
  const core::HelperRules& rules = catalog_->rules.driver_manager;
  write_node_labels(c_, r.node, helper_writes(r.read, rules.pause, rules.pause_if_set, maybe_set_paused));
}

// mirrors rescheduleGPUOperatorComponents
void DriverManager::reschedule(Run& r) {
  const core::HelperRules& rules = catalog_->rules.driver_manager;
  write_node_labels(c_, r.node, helper_writes(r.read, rules.restore, rules.restore_if_set, maybe_set_true));
}

void DriverManager::complete(Run& r) {
  r.phase = Phase::kDone;
  kubelet_queue_.push(r.pod_id);
}

void DriverManager::fail(Run& r, std::string message) {
  r.phase = Phase::kFailed;
  r.finished = c_.now;
  r.message = std::move(message);
  kubelet_queue_.push(r.pod_id);
}

// mirrors uninstallDriver, cmd/driver-manager/main.go (see the header)
void DriverManager::step(Run& r) {
  const core::HelperRules& rules = catalog_->rules.driver_manager;
  NodeHost& host = c_.hosts[r.node];
  const uint64_t id = r.pod_id;
  switch (r.phase) {
    case Phase::kStart: {
      const core::Node* node = c_.store.find_node(r.node);
      if (!node) return;
      if (host.driver == NodeHost::Driver::kPreInstalled) {
        // isHostDriver: disableContainerizedDriver, sleep, fail.
        write_node_labels(c_, r.node, {{kDriverLabel, "pre-installed"}});
        r.phase = Phase::kHostDriverSleep;
        r.finished = c_.now + kHostDriverSleep;
        c_.timers.at(r.finished, "k8s-driver-manager sleep on " + r.node, [this, id] { queue(id); });
        return;
      }
      r.read = read_helper_labels(*node, rules);
      if (!rules.evict_without_driver && host.driver != NodeHost::Driver::kLoaded) {
        // "No NVIDIA driver loaded, skipping eviction of GPU clients and workloads"
        reschedule(r);
        return complete(r);
      }
      pause(r);  // evictAllGPUOperatorComponents
      r.phase = Phase::kWaiting;
      [[fallthrough]];
    }
    case Phase::kWaiting: {
      switch (advance_waits(c_, r.node, ns_, rules, r.read, r.wait)) {
        case WaitResult::kPending:
          waiting_[r.node].push_back(id);
          c_.timers.at(r.wait.deadline, "k8s-driver-manager wait on " + r.node, [this, id] { queue(id); });
          return;
        case WaitResult::kTimedOut:
          reschedule(r);  // cleanupOnFailure
          return fail(r, "failed to evict GPU operator components: timed out waiting for the condition");
        case WaitResult::kDone: break;
      }
      r.phase = Phase::kUnload;
      [[fallthrough]];
    }
    case Phase::kUnload: {
      if (r.hang) {
        r.phase = Phase::kHung;
        return;
      }
      if (host.driver == NodeHost::Driver::kLoaded) {
        if (rules.skip_same_config && !r.config.empty() && host.loaded_config == r.config) {
          // shouldSkipUninstall: "already loaded with the desired version and configuration"
          reschedule(r);
          return complete(r);
        }
        if (host.driver_in_use) {
          reschedule(r);  // cleanupOnFailure / _exit_failed
          return fail(r,
                      "failed to uninstall nvidia driver components: unable to unload driver: module nvidia is in use");
        }
        host.driver = NodeHost::Driver::kNone;  // cleanupDriver: unloadDriver
        host.loaded_config.clear();
      }
      reschedule(r);
      return complete(r);
    }
    case Phase::kHostDriverSleep:
      if (c_.now >= r.finished) fail(r, "driver is pre-installed on host");
      return;
    case Phase::kHung:
    case Phase::kDone:
    case Phase::kFailed: return;
  }
}

}  // namespace gpuops::simulator::internal
