// core/diagnose/diagnose_runtime.cpp: the container runtime under the operands and what holds the driver
// (docs/DIAGNOSE.md "The runtime and the driver's holders"), Diagnoser members (core/diagnose/diagnoser.h).
#include "core/diagnose/diagnoser.h"

#include "core/model/duration.h"

namespace gpuops::core::diagnose_internal {

namespace {

// What the pod's status says in words: the messages of its conditions, its
// own and its waiting containers' (a sandbox failure's text reaches a pod's
// status only through these; the event itself is not part of a dump).
std::vector<std::string> status_messages(const Pod& p) {
  std::vector<std::string> out;
  auto add = [&](const std::string& m) {
    if (!m.empty() && std::find(out.begin(), out.end(), m) == out.end()) out.push_back(m);
  };
  add(p.status.message);
  for (const auto& c : p.status.conditions) add(c.message);
  for (const auto* list : {&p.status.init_container_statuses, &p.status.container_statuses})
    for (const auto& c : *list) add(c.message);
  return out;
}

bool mentions_sandbox(const std::vector<std::string>& messages) {
  for (const auto& m : messages)
    if (m.find("sandbox") != std::string::npos || m.find("Sandbox") != std::string::npos) return true;
  return false;
}

}  // namespace

Finding Diagnoser::sandbox_finding(const Operand& op, const Pod& p) {
  const std::string status = pod_status_column(p);
  const auto since = sandbox_wait_since(p);
  const auto& at = index_.state().observed_at;
  const auto messages = status_messages(p);
  const bool long_enough = since && at && *at - *since >= std::chrono::seconds(kSandboxStartGraceSeconds);
  const std::string how_long = since && at ? human_duration(*at - *since) : "";
  if (!long_enough && !mentions_sandbox(messages)) {
    Finding f = make("pending", Severity::kWarning, name_, op.name,
                     "pod is bound and its sandbox is being created (" + status +
                         (how_long.empty() ? ", for how long the input does not tell" : ", for " + how_long) + ")");
    pod_evidence(f, p);
    return f;
  }
  const std::string& rc = p.spec.runtime_class_name;
  const Operand* tk = catalog_.by_label(kToolkitDeployLabel);
  std::string reason = "pod's sandbox never started (" + status + ", no container ran, no pod IP" +
                       (how_long.empty() ? "" : ", for " + how_long) + "): ";
  if (!rc.empty()) {
    reason += "the container runtime does not start sandboxes with RuntimeClass \"" + rc + "\"";
    if (tk && tk != &op && !dss(*tk).empty())
      reason +=
          ", whose handler the container toolkit writes into the runtime's configuration: the toolkit's "
          "runtime configuration, not the driver, is the cause";
    else if (tk && tk != &op)
      reason +=
          ": the install renders no container toolkit, so the host's own NVIDIA Container Toolkit must "
          "configure that handler in the runtime";
    else
      reason += ": the runtime's configuration lacks its handler";
  } else {
    reason += "the node's container runtime or network plugin fails to create it";
  }
  reason += " (kubectl describe pod: FailedCreatePodSandBox)";
  Finding f = make("sandbox-not-started", Severity::kError, name_, op.name, reason);
  pod_evidence(f, p);
  f.evidence.emplace_back("runtimeClassName", rc.empty() ? "(none)" : rc);
  if (since) f.evidence.emplace_back("waiting for a sandbox", for_how_long(since));
  for (const auto& m : messages) f.evidence.emplace_back("message", one_line(m));
  f.evidence.emplace_back("events", "kubectl get events -n " + p.metadata.namespace_ +
                                        " --field-selector involvedObject.name=" + p.metadata.name);
  if (!rc.empty() && tk && tk != &op && !dss(*tk).empty()) {
    waits_on_[index_of(op)] = tk->name;
    sandbox_class_[index_of(op)] = rc;
  }
  return f;
}

void Diagnoser::runtime_attribution(const NodeDiagnosis& d) {
  const Operand* tk = catalog_.by_label(kToolkitDeployLabel);
  if (!tk || dss(*tk).empty()) return;
  std::string classes;
  size_t pods = 0;
  for (const auto& c : sandbox_class_) {
    if (c.empty()) continue;
    ++pods;
    if (classes.find("\"" + c + "\"") == std::string::npos) classes += (classes.empty() ? "\"" : ", \"") + c + "\"";
  }
  const size_t t = index_of(*tk);
  // The toolkit's own failure is already the link (the others wait on it).
  if (pods == 0 || !failed_[t].empty() || d.per_operand[t].front().severity == Severity::kError) return;
  failed_[t] = "runs, but " + std::to_string(pods) + (pods == 1 ? " pod" : " pods") + " with RuntimeClass " + classes +
               " get no sandbox: the runtime has no usable handler for it (the toolkit's runtime configuration)";
}

std::string Diagnoser::loaded_driver_evidence() const {
  for (const Pod* p : index_.pods_on(name_)) {
    if (p->metadata.deletion_timestamp || p->spec.node_name.empty()) continue;
    for (const auto& c : p->status.init_container_statuses)
      if (c.name == "driver-validation" && c.state == "terminated" && c.exit_code == std::optional<int32_t>(0))
        return "driver-validation of pod " + p->metadata.name +
               " passed: a driver was loaded and working when it ran (driver-ready)";
  }
  auto it = node_.allocatable.find("nvidia.com/gpu");
  if (it != node_.allocatable.end() && !it->second.is_zero())
    return "the node's allocatable has nvidia.com/gpu: " + it->second.to_string() +
           " (the device plugin found GPUs through a loaded driver)";
  return "";
}

void Diagnoser::gpu_workload_evidence(Finding& f) const {
  const auto& all = index_.state().gpu_workloads;
  if (!all) {
    f.evidence.emplace_back("GPU workloads", "not in the input (only namespace " + index_.state().namespace_ +
                                                 "'s pods): kubectl get pods -A -o json adds them");
    return;
  }
  const auto& mine = index_.gpu_workloads_on(name_);
  if (mine.empty()) f.evidence.emplace_back("GPU workloads", "none on this node");
  for (const Pod* w : mine)
    f.evidence.emplace_back("GPU workload", w->metadata.namespace_ + "/" + w->metadata.name + " " +
                                                pod_status_column(*w) + " (" + gpu_resources(*w) + ")");
}

void Diagnoser::driver_holders(NodeDiagnosis& d) const {
  const Operand* drv = driver_operand(catalog_);
  if (!drv || !gpu_) return;
  Finding& f = d.per_operand[index_of(*drv)].front();
  const Pod* shown = shown_pod_[index_of(*drv)];
  // An image that cannot be pulled is not held by anything on the node.
  if (f.severity == Severity::kInfo || !shown || !image_pull_failure(*shown).empty()) return;
  if (std::string loaded = loaded_driver_evidence(); !loaded.empty()) f.evidence.emplace_back("loaded driver", loaded);
  gpu_workload_evidence(f);
}

}  // namespace gpuops::core::diagnose_internal
