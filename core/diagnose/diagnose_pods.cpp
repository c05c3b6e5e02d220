// core/diagnose/diagnose_pods.cpp: a pod's state, foreign pods and the consistency between the operands of
// a node (docs/DIAGNOSE.md), Diagnoser members (core/diagnose/diagnoser.h).
#include "core/diagnose/diagnoser.h"

#include "core/model/duration.h"

namespace gpuops::core::diagnose_internal {

Finding Diagnoser::no_pod_finding(const Operand& op, const DaemonSet& ds, const Placement& pl) {
  if (pl.should_run) {
    Finding f = make("no-pod", Severity::kWarning, name_, op.name,
                     "the DaemonSet wants this node but has no pod on it (the controller has not synced "
                     "yet, or the pod was just removed)");
    placement_evidence(f, ds, pl);
    f.evidence.emplace_back("desiredNumberScheduled", std::to_string(ds.status.desired_number_scheduled));
    f.evidence.emplace_back("currentNumberScheduled", std::to_string(ds.status.current_number_scheduled));
    return f;
  }
  if (pl.untolerated_taint) {
    const Taint& t = *pl.untolerated_taint;
    std::string ts = format_taint(t);
    Finding f;
    if (t.key == "node.kubernetes.io/not-ready" || t.key == "node.kubernetes.io/unreachable") {
      bool unreach = t.key == "node.kubernetes.io/unreachable";
      f = make(unreach ? "node-unreachable" : "node-not-ready", Severity::kError, name_, op.name,
               "node is " + std::string(unreach ? "unreachable" : "not ready") + " (taint " + ts +
                   "): daemon pods tolerate it only for NoExecute, so the DaemonSet does not place a "
                   "new pod here");
    } else {
      f = make("untolerated-taint", Severity::kError, name_, op.name,
               "taint " + ts + " is not tolerated by DaemonSet " + ds.metadata.name +
                   ": the controller does not want this node (set daemonsets.tolerations in the "
                   "ClusterPolicy, keeping nvidia.com/gpu; R6, #390)");
    }
    f.evidence.emplace_back("taint", ts);
    placement_evidence(f, ds, pl);
    return f;
  }
  // Selector mismatch with the deploy label "true": another key of the
  // template's nodeSelector or its required node affinity.
  std::vector<std::string> mismatched =
      node_selector_mismatches(ds.template_.spec.node_selector, node_.metadata.labels);
  bool only_capability = true;
  for (const auto& k : mismatched)
    if (!ends_with(k, ".capable")) only_capability = false;
  if (ds.template_.spec.required_node_affinity && !node_affinity_matches(ds.template_.spec, node_) &&
      mismatched.empty())
    only_capability = false;
  Finding f;
  if (!mismatched.empty() && only_capability) {
    f = make("not-capable", Severity::kInfo, name_, op.name,
             "the DaemonSet also requires " + mismatched.front() +
                 "=\"true\", which GFD sets only on capable GPUs: not expected here");
  } else {
    f = make("selector-mismatch", Severity::kWarning, name_, op.name,
             "the deploy label is \"true\" but the DaemonSet's selector does not match the node: " + join(pl.reasons));
  }
  for (const auto& k : mismatched) f.evidence.emplace_back("label " + k, shown(node_label(node_, k)));
  placement_evidence(f, ds, pl);
  return f;
}

Finding Diagnoser::pod_state_finding(const Operand& op, const Pod& p) {
  std::string status = pod_status_column(p);
  Finding f;
  if (is_pod_phase_terminal(p)) {
    f = make("pod-terminal", Severity::kError, name_, op.name,
             "pod is " + p.status.phase + " (" + status +
                 "); the DaemonSet controller deletes it and creates another, with backoff");
    pod_evidence(f, p);
    return f;
  }
  if (p.spec.node_name.empty()) {
    const PodCondition* c = p.condition("PodScheduled");
    if (c && c->status == "False" && c->reason == "Unschedulable") {
      f = make("pending-unschedulable", Severity::kError, name_, op.name,
               "pod is Pending: the scheduler cannot place it on the node it is pinned to (" +
                   first_sentence(c->message) +
                   "); desiredNumberScheduled still counts the node, resources are not part of it");
      pod_evidence(f, p);
      f.evidence.emplace_back("scheduler", c->message);
      return f;
    }
    f = make("pending", Severity::kWarning, name_, op.name, "pod is Pending, not yet bound to the node");
    pod_evidence(f, p);
    return f;
  }
  std::string pull = image_pull_failure(p);
  if (!pull.empty()) {
    f = make("image-pull-failed", Severity::kError, name_, op.name,
             "pod cannot start: image pull failed (" + pull + ")");
    pod_evidence(f, p);
    for (const auto* list : {&p.status.init_container_statuses, &p.status.container_statuses})
      for (const auto& c : *list)
        if (c.state == "waiting" && image_pull_reason(c.reason) && !c.message.empty())
          f.evidence.emplace_back("message", c.message);
    return f;
  }
  // No container ever started: the gates have not run, whatever they wait for.
  if (sandbox_not_started(p)) return sandbox_finding(op, p);
  const PodCondition* init = p.condition("Initialized");
  const ContainerStatus* gate = unfinished_init(p);
  if (p.status.phase == "Pending" && gate && !(init && init->status == "True")) {
    std::string meaning = gate_meaning(gate->name);
    std::string reason = "pod is stuck in Init (" + status + "), waiting on gate " + gate->name;
    if (!meaning.empty()) reason += ": " + meaning;
    auto validator = node_label(node_, kValidatorDeployLabel);
    bool toolkit_gate = gate->name == "toolkit-validation";
    if (toolkit_gate && validator != std::optional<std::string>("true"))
      reason +=
          "; gpu.deploy.operator-validator is not \"true\" on this node, so toolkit-ready is never "
          "written (R5)";
    if (gate->name == "driver-validation") reason += driver_gate_hint();
    auto upgrade = node_label(node_, kDriverUpgradeStateLabel);
    bool planned = gate->name == "k8s-driver-manager" && gate->state == "running" && upgrade &&
                   *upgrade != "upgrade-done" && *upgrade != "upgrade-failed";
    // Planned, until it has run for --stuck-after: k8s-driver-manager has no
    // deadline of its own (below), so past it the upgrade step is a hang.
    std::optional<Duration> ran;
    if (planned && gate->started_at && index_.state().observed_at)
      ran = *index_.state().observed_at - *gate->started_at;
    const bool manager_stuck = ran && *ran >= options_.stuck_after;
    if (manager_stuck)
      f = make("driver-manager-stuck", Severity::kError, name_, op.name,
               "pod is in Init (" + status + ") running k8s-driver-manager during the driver upgrade (" + *upgrade +
                   ") for at least " + human_duration(*ran) + ", past --stuck-after " +
                   human_duration(options_.stuck_after) +
                   ": its drain of the GPU operands and workloads has no deadline (DRAIN_TIMEOUT_SECONDS 0) and "
                   "waits on something that does not go; its log names it (kubectl logs -n " +
                   p.metadata.namespace_ + " " + p.metadata.name + " -c k8s-driver-manager)");
    else
      f = make(planned ? "init-during-upgrade" : "stuck-in-init", planned ? Severity::kWarning : Severity::kError,
               name_, op.name,
               planned ? "pod is in Init (" + status + ") running k8s-driver-manager during the driver upgrade (" +
                             *upgrade + "): it drains the GPU operands and unloads the old driver, as planned" +
                             (ran ? "; called stuck after " + human_duration(options_.stuck_after) : std::string(""))
                       : reason);
    // What it waits on; a gate the operand writes itself (the validator's
    // toolkit-validation) waits on what the operand needs.
    std::string writer = gate_writer(gate->name, op.name);
    if (writer == op.name) writer = op.needs.empty() ? "" : op.needs.front();
    waits_on_[index_of(op)] = writer;
    pod_evidence(f, p);
    f.evidence.emplace_back("gate", gate->name);
    if (!gate->reason.empty()) f.evidence.emplace_back("gate state", gate->state + " " + gate->reason);
    // k8s-driver-manager has no deadline of its own (its drain waits
    // DRAIN_TIMEOUT_SECONDS, 0s by default: forever, cmd/driver-manager
    // main.go): how long it has run is what tells planned from hung.
    if (gate->name == "k8s-driver-manager" && gate->state == "running" && gate->started_at)
      f.evidence.emplace_back("k8s-driver-manager running for", for_how_long(gate->started_at));
    workload_validator_evidence(f, gate->name);
    if (toolkit_gate) f.evidence.emplace_back("label " + std::string(kValidatorDeployLabel), shown(validator));
    if (gate->name == "driver-validation") {
      f.evidence.emplace_back("label " + std::string(kDriverDeployLabel), shown(node_label(node_, kDriverDeployLabel)));
      for (const Pod* d : driver_pods(index_, catalog_, name_))
        f.evidence.emplace_back("driver pod", d->metadata.name + " " + pod_status_column(*d));
    }
    return f;
  }
  // Bound, initialized (or without init containers), not Running.
  std::string waiting;
  for (const auto& c : p.status.container_statuses)
    if (c.state == "waiting" && c.reason != "ContainerCreating" && c.reason != "PodInitializing" && !c.reason.empty())
      waiting = c.name + ": " + c.reason + (c.message.empty() ? "" : " (" + c.message + ")");
  if (!waiting.empty()) {
    f = make("container-error", Severity::kError, name_, op.name, "pod cannot start its containers (" + waiting + ")");
  } else if (p.status.phase == "Pending") {
    f = make("pending", Severity::kWarning, name_, op.name, "pod is bound and starting (" + status + ")");
  } else {
    f = make("pod-unknown", Severity::kWarning, name_, op.name, "pod is in phase " + p.status.phase);
  }
  pod_evidence(f, p);
  return f;
}

// Why driver-validation may never pass on this node (#398, #378, #487).
std::string Diagnoser::driver_gate_hint() const {
  auto v = node_label(node_, kDriverDeployLabel);
  if (v == std::optional<std::string>("pre-installed"))
    return "; gpu.deploy.driver=pre-installed removed the driver pod, so only a host driver can pass it: if "
           "the host has none, the pre-installed check was a false positive, remove the label (#398)";
  if (v == std::optional<std::string>("false"))
    return "; gpu.deploy.driver=false leaves only a host driver, and none passes (#378, #487)";
  auto pods = driver_pods(index_, catalog_, name_);
  if (pods.empty()) return "; there is no driver pod on this node";
  for (const Pod* d : pods)
    if (d->is_ready() && !d->metadata.deletion_timestamp) return "";
  return "; the driver pod " + pods.front()->metadata.name + " is " + pod_status_column(*pods.front()) +
         ": fix the driver, not the waiting pods (#378)";
}

std::string Diagnoser::first_sentence(const std::string& msg) {
  auto dot = msg.find(". ");
  std::string s = dot == std::string::npos ? msg : msg.substr(0, dot);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

void Diagnoser::foreign_pods(const Operand& op, std::vector<Finding>& out) {
  for (const Pod* pp : index_.pods_on(name_)) {
    const Pod& p = *pp;
    auto it = p.metadata.labels.find("app");
    if (it == p.metadata.labels.end() || it->second != op.app) continue;
    if (pod_of_operand(catalog_, op, dss(op), p)) continue;
    const OwnerReference* ref = p.metadata.controller_ref();
    std::string owner = ref ? ref->kind + "/" + ref->name : "no controller";
    Finding f = make("foreign-pod", Severity::kWarning, name_, op.name,
                     "pod " + p.metadata.name + " carries app=" + op.app + " but is controlled by " + owner +
                         ", not DaemonSet " + op.daemonset + ": it does not count as the operand");
    pod_evidence(f, p);
    f.evidence.emplace_back("controlled-by", owner);
    if (ref && !ref->uid.empty()) f.evidence.emplace_back("owner uid", ref->uid);
    out.push_back(std::move(f));
  }
}

// ---- consistency between operands of the node ----
bool Diagnoser::host_driver_marker() const {
  auto v = node_label(node_, kDriverDeployLabel);
  return v == std::optional<std::string>("pre-installed") || (gpu_ && v == std::optional<std::string>("false"));
}

bool Diagnoser::driver_pod_running() const {
  for (const Pod* p : driver_pods(index_, catalog_, name_))
    if (!p->spec.node_name.empty() && p->status.phase == "Running" && !p->metadata.deletion_timestamp) return true;
  return false;
}

void Diagnoser::needs(std::vector<Finding>& out) {
  for (const auto& op : catalog_.operands) {
    if (op.needs.empty() || !operand_present(index_, catalog_, op, name_)) continue;
    for (const auto& need : op.needs) {
      const Operand* m = catalog_.by_name(need);
      if (!m || operand_present(index_, catalog_, *m, name_)) continue;
      bool is_driver = m->label == kDriverDeployLabel;
      // A driver loaded and validated (the old one, while a new driver pod
      // fails) does provide it: the driver's own finding says why it fails.
      if (is_driver && (driver_pod_running() || host_driver_marker() || !loaded_driver_evidence().empty())) continue;
      // Operator mode: a need the install does not render (toolkit.enabled
      // false: the hosts' own toolkit) is the host's; the operator's gates
      // (toolkit-validation) check it, and the missing DaemonSet is its
      // own finding.
      if (catalog_.operator_mode && dss(*m).empty()) continue;
      std::string reason = is_driver
                               ? op.name +
                                     " runs on a node with neither a Running driver pod nor a host driver marker "
                                     "(gpu.deploy.driver pre-installed, or false on a GPU node): nothing provides "
                                     "the driver it configures (#378)"
                               : op.name + " runs but " + m->name + " does not run on this node: " + op.name +
                                     " needs it (reference §3; the operator gates it on toolkit-validation, a "
                                     "hand-placed pod has no such gate; k8s-device-plugin#509)";
      Finding f = make(op.name + "-without-" + m->column, Severity::kError, name_, op.name, reason);
      f.evidence.emplace_back("label " + op.label, shown(node_label(node_, op.label)));
      f.evidence.emplace_back("label " + m->label, shown(node_label(node_, m->label)));
      auto mp = pair_pods(index_, catalog_, *m, dss(*m), name_);
      if (mp.empty()) f.evidence.emplace_back(m->name + " pod", "none");
      for (const Pod* p : mp) f.evidence.emplace_back(m->name + " pod", p->metadata.name + " " + pod_status_column(*p));
      out.push_back(std::move(f));
    }
  }
}

void Diagnoser::multiple_drivers(std::vector<Finding>& out) {
  std::vector<const Pod*> live;
  for (const Pod* p : driver_pods(index_, catalog_, name_))
    if (!p->metadata.deletion_timestamp && !is_pod_phase_terminal(*p)) live.push_back(p);
  if (live.size() < 2) return;
  const Operand* d = driver_operand(catalog_);
  Finding f = make("multiple-driver-pods", Severity::kError, name_, d ? d->name : "",
                   std::to_string(live.size()) +
                       " driver pods on one node: the driver's required pod anti-affinity on "
                       "app.kubernetes.io/component=nvidia-driver lets only one run (two driver DaemonSets, "
                       "e.g. an old precompiled one and a new one; R7)");
  for (const Pod* p : live) {
    const OwnerReference* ref = p->metadata.controller_ref();
    f.evidence.emplace_back("driver pod", p->metadata.name + " " + pod_status_column(*p) +
                                              (ref ? " (" + ref->kind + "/" + ref->name + ")" : ""));
  }
  out.push_back(std::move(f));
}

// The cuda-validation and plugin-validation gates do not validate in their
// own container: the validator creates a workload pod on the node
// (app=nvidia-cuda-validator, app=nvidia-device-plugin-validator; spec.nodeName
// set, its owner the validator DaemonSet's owner) and waits for it to succeed
// (runCudaValidation / runPluginValidation, cmd/nvidia-validator/main.go).
// That pod's failure is the reason the gate waits: shown with its STATUS, the
// failed container's exit code and message, and the logs command.
void Diagnoser::workload_validator_evidence(Finding& f, const std::string& gate) const {
  const char* app = gate == "cuda-validation"     ? "nvidia-cuda-validator"
                    : gate == "plugin-validation" ? "nvidia-device-plugin-validator"
                                                  : nullptr;
  if (!app) return;
  const std::string what = gate == "cuda-validation" ? "cuda validator" : "plugin validator";
  for (const Pod* w : index_.pods_on(name_)) {
    auto it = w->metadata.labels.find("app");
    if (it == w->metadata.labels.end() || it->second != app || w->spec.node_name != name_) continue;
    f.evidence.emplace_back(what + " pod", w->metadata.name + " " + pod_status_column(*w));
    if (auto failure = last_failure(*w)) {
      std::string last = (failure->init ? "init container " : "container ") + failure->container;
      if (failure->exit_code) last += " exit code " + std::to_string(*failure->exit_code);
      if (!failure->reason.empty()) last += " (" + failure->reason + ")";
      f.evidence.emplace_back(what + " termination", last);
      if (!failure->message.empty()) f.evidence.emplace_back(what + " message", one_line(failure->message));
      f.evidence.emplace_back(what + " logs", logs_command(index_.state().namespace_, *w, *failure));
    }
  }
}

}  // namespace gpuops::core::diagnose_internal
