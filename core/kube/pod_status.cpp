#include "core/kube/pod_status.h"

namespace gpuops::core {

bool is_pod_phase_terminal(const Pod& pod) { return pod.status.phase == "Failed" || pod.status.phase == "Succeeded"; }

// mirrors printPod, kubernetes pkg/printers/internalversion/printers.go
PodColumns print_pod(const Pod& pod) {
  PodColumns row;
  row.total = static_cast<int>(pod.spec.containers.size());
  std::string reason = pod.status.phase;
  if (!pod.status.reason.empty()) reason = pod.status.reason;
  for (const auto& c : pod.status.conditions)
    if (c.type == "PodScheduled" && c.reason == "SchedulingGated") reason = "SchedulingGated";

  size_t n_init =
      pod.spec.init_containers.empty() ? pod.status.init_container_statuses.size() : pod.spec.init_containers.size();
  bool initializing = false;
  for (size_t i = 0; i < pod.status.init_container_statuses.size(); ++i) {
    const auto& c = pod.status.init_container_statuses[i];
    row.restarts += c.restart_count;
    if (c.state == "terminated" && c.exit_code.value_or(0) == 0) continue;
    if (c.state == "terminated") {
      reason = c.reason.empty() ? "Init:ExitCode:" + std::to_string(c.exit_code.value_or(0)) : "Init:" + c.reason;
    } else if (c.state == "waiting" && !c.reason.empty() && c.reason != "PodInitializing") {
      reason = "Init:" + c.reason;
    } else {
      reason = "Init:" + std::to_string(i) + "/" + std::to_string(n_init);
    }
    initializing = true;
    break;
  }

  // isPodInitializedConditionTrue
  const PodCondition* init_cond = pod.condition("Initialized");
  if (!initializing || (init_cond && init_cond->status == "True")) {
    row.restarts = 0;  // restartableInitContainerRestarts: no sidecars modelled
    bool has_running = false;
    for (size_t i = pod.status.container_statuses.size(); i-- > 0;) {
      const auto& c = pod.status.container_statuses[i];
      row.restarts += c.restart_count;
      if (c.state == "waiting" && !c.reason.empty()) {
        reason = c.reason;
      } else if (c.state == "terminated" && !c.reason.empty()) {
        reason = c.reason;
      } else if (c.state == "terminated") {
        reason = "ExitCode:" + std::to_string(c.exit_code.value_or(0));
      } else if (c.ready && c.state == "running") {
        has_running = true;
        ++row.ready;
      }
    }
    // hasPodReadyCondition
    if (reason == "Completed" && has_running) reason = pod.is_ready() ? "Running" : "NotReady";
  }

  if (pod.metadata.deletion_timestamp && pod.status.reason == "NodeLost")  // NodeUnreachablePodReason
    reason = "Unknown";
  else if (pod.metadata.deletion_timestamp && !is_pod_phase_terminal(pod))
    reason = "Terminating";
  row.status = std::move(reason);
  return row;
}

std::string pod_status_column(const Pod& pod) { return print_pod(pod).status; }

bool pod_by_creation_timestamp_and_phase(const Pod* a, const Pod* b) {
  bool ab = !a->spec.node_name.empty(), bb = !b->spec.node_name.empty();
  if (ab != bb) return ab;
  Time ta = a->metadata.creation_timestamp.value_or(Time{}), tb = b->metadata.creation_timestamp.value_or(Time{});
  if (ta != tb) return ta < tb;
  return a->metadata.name < b->metadata.name;
}

std::string node_status_column(const std::string& ready, bool unschedulable) {
  std::string st = ready == "True" ? "Ready" : ready == "False" ? "NotReady" : "Unknown";
  return unschedulable ? st + ",SchedulingDisabled" : st;
}

bool sandbox_not_started(const Pod& pod) {
  if (pod.spec.node_name.empty() || pod.status.phase != "Pending" || pod.metadata.deletion_timestamp) return false;
  if (!pod.status.pod_ip.empty() && !pod.spec.host_network) return false;
  const PodCondition* started = pod.condition("PodReadyToStartContainers");
  if (started && started->status == "True") return false;
  bool any = false;
  for (const auto* list : {&pod.status.init_container_statuses, &pod.status.container_statuses})
    for (const auto& c : *list) {
      any = true;
      if (c.state != "waiting" || c.restart_count != 0 || c.last_terminated) return false;
      if (!c.reason.empty() && c.reason != "ContainerCreating" && c.reason != "PodInitializing") return false;
    }
  return any || (started && started->status == "False");
}

std::optional<Time> sandbox_wait_since(const Pod& pod) {
  if (const PodCondition* c = pod.condition("PodScheduled"); c && c->last_transition_time)
    return c->last_transition_time;
  if (pod.status.start_time) return pod.status.start_time;
  return pod.metadata.creation_timestamp;
}

}  // namespace gpuops::core
