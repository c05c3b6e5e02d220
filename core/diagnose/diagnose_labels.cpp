// core/diagnose/diagnose_labels.cpp: what a deploy label value other than "true" means (docs/DIAGNOSE.md
// "State findings", label-*), Diagnoser members (core/diagnose/diagnoser.h).
#include "core/diagnose/diagnoser.h"

#include "core/model/duration.h"

namespace gpuops::core::diagnose_internal {

Finding Diagnoser::label_finding(const Operand& op, const std::optional<std::string>& value, LabelClass cls) {
  const std::string key = op.label;
  bool expected = gpu_ && expected_.count(key) && !operands_off_;
  std::string phrase = label_phrase(key, value);
  Finding f;
  auto base = [&](std::string name, Severity sev, std::string reason) {
    f = make(std::move(name), sev, name_, op.name, std::move(reason));
    f.evidence.emplace_back("label " + key, shown(value));
  };
  if (operands_off_) {
    base("operands-disabled", Severity::kInfo,
         phrase +
             ": nvidia.com/gpu.deploy.operands=false removes every deploy label, so the operand "
             "is absent by design (R8)");
    return f;
  }
  bool driver = key == kDriverDeployLabel;
  if (cls == LabelClass::kPreInstalled && !driver) cls = LabelClass::kOther;
  switch (cls) {
    case LabelClass::kAbsent:
      if (expected)
        base("label-absent", Severity::kError,
             phrase + ": a GPU node of workload config " + workload_config(node_) +
                 " should carry it; the DaemonSet's nodeSelector never matches, so no pod comes (#470)");
      else if (!gpu_)
        base("label-absent", Severity::kInfo, phrase + ": not a GPU node, the operator gives it no deploy labels");
      else
        base("label-absent", Severity::kInfo,
             phrase + ": not set by the operator for workload config " + workload_config(node_) +
                 (key == kMigManagerDeployLabel ? " on a node without a MIG-capable GPU" : ""));
      break;
    case LabelClass::kFalse:
      base("label-false", Severity::kInfo,
           driver ? phrase +
                        ": the containerized driver is opted out; the node is expected to run a host "
                        "driver, and the operator respects the false (#375)"
                  : phrase + ": user opt-out, respected by the operator; the operand stays off this node");
      break;
    case LabelClass::kPreInstalled:
      base("label-pre-installed", Severity::kInfo,
           phrase +
               ": k8s-driver-manager found a host driver (chroot /host nvidia-smi) and removed the "
               "driver pod; the other operands use the host driver (#2150; a false positive stalls "
               "them in Init, #398)");
      break;
    case LabelClass::kPausedForDriverUpgrade: f = paused_driver(op, value); break;
    case LabelClass::kPausedForMigChange: {
      waits_on_[index_of(op)] = "mig-manager";
      auto st = node_label(node_, "nvidia.com/mig.config.state");
      bool over = st == std::optional<std::string>("failed") || st == std::optional<std::string>("success");
      bool stuck = over || helper_stuck(kMigConfigStateLabel);
      base("label-paused-for-mig-change", stuck ? Severity::kError : Severity::kWarning,
           phrase + ": mig-manager paused the operand for a MIG reconfiguration; " +
               (over ? "stuck: nvidia.com/mig.config.state is " + *st + ", yet the label was not restored to \"true\""
                : stuck ? "stuck: nvidia.com/mig.config.state has been " + *st + " for at least " +
                              human_duration(*helper_state_held(kMigConfigStateLabel)) + " (see mig-config-stuck)"
                        : std::string("in progress while nvidia.com/mig.config.state is pending or "
                                      "rebooting (stuck if it stays)")));
      f.evidence.emplace_back("label nvidia.com/mig.config.state", shown(st));
      f.evidence.emplace_back("label nvidia.com/mig.config", shown(node_label(node_, "nvidia.com/mig.config")));
      break;
    }
    case LabelClass::kPausedForVgpuChange: {
      waits_on_[index_of(op)] = "vgpu-device-manager";
      auto st = node_label(node_, "nvidia.com/vgpu.config.state");
      bool over = st == std::optional<std::string>("failed") || st == std::optional<std::string>("success");
      bool stuck = over || helper_stuck("nvidia.com/vgpu.config.state");
      base("label-paused-for-vgpu-change", stuck ? Severity::kError : Severity::kWarning,
           phrase + ": vgpu-device-manager paused the operand to apply nvidia.com/vgpu.config; " +
               (over ? "stuck: nvidia.com/vgpu.config.state is " + *st + ", yet the label was not restored to \"true\""
                : stuck ? "stuck: nvidia.com/vgpu.config.state has been " + *st + " for at least " +
                              human_duration(*helper_state_held("nvidia.com/vgpu.config.state")) +
                              " (see vgpu-config-stuck)"
                        : std::string("in progress until nvidia.com/vgpu.config.state is success (stuck if "
                                      "it stays; #2272)")));
      f.evidence.emplace_back("label nvidia.com/vgpu.config.state", shown(st));
      break;
    }
    case LabelClass::kEmpty:
      if (catalog_.operator_mode) {
        f = operator_empty_label(op, value, expected);
        break;
      }
      base("label-empty-value", expected ? Severity::kError : Severity::kWarning,
           phrase +
               ": a stale pause marker (k8s-driver-manager stamps \"\" when pausing an operand that "
               "never ran); \"\" is not \"true\", so the operand is off on this node, and operator "
               "releases up to v26.3 never repair it (v26.7 re-sets \"true\"); set it to \"true\" or "
               "delete it (#491)");
      break;
    case LabelClass::kOther:
      base("label-value-unrecognised", expected ? Severity::kError : Severity::kWarning,
           phrase +
               ": not a value the operator or its helpers write; only \"true\" matches the "
               "DaemonSet's nodeSelector, so the operand is off on this node");
      break;
    case LabelClass::kTrue: break;
  }
  return f;
}

// Operator mode: what the operator of the detected release does with "" on
// this key. A key outside the node's workload config the operator deletes
// (removeGPUStateLabels); an operand it does not render leaves the label
// doing nothing; otherwise v26.7 and later re-set "true" on the next node
// reconcile, earlier releases keep "" forever (addGPUStateLabels honours any
// existing value), docs/reference/gpu-operator.md §2.5.
Finding Diagnoser::operator_empty_label(const Operand& op, const std::optional<std::string>& value, bool expected) {
  const std::string phrase = label_phrase(op.label, value);
  const bool repaired = catalog_.rules.empty_label_is_absent;  // addGPUStateLabels of the release (catalog data)
  Finding f;
  if (!gpu_ || !expected) {
    f = make("label-empty-value", Severity::kInfo, name_, op.name,
             phrase + ": outside the labels the operator sets for this node (workload config " +
                 workload_config(node_) + "); it deletes the key on its next pass over the node");
  } else if (dss(op).empty()) {
    f = make("label-empty-value", Severity::kInfo, name_, op.name,
             phrase + ": the operand has no DaemonSet (not rendered), so the label does nothing either way");
  } else if (repaired) {
    f = make("label-empty-value", Severity::kWarning, name_, op.name,
             phrase + ": a pause marker of k8s-driver-manager; the operator (" + catalog_.version +
                 ") re-sets \"true\" on its next reconcile of the node, until then the operand is off here");
  } else {
    f = make("label-empty-value", Severity::kError, name_, op.name,
             phrase + ": a stale pause marker of k8s-driver-manager; this operator release (" + catalog_.version +
                 ") keeps any existing value, so the operand stays off here until the "
                 "label is set to \"true\" or deleted (#491)");
  }
  f.evidence.emplace_back("label " + op.label, shown(value));
  return f;
}

Finding Diagnoser::paused_driver(const Operand& op, const std::optional<std::string>& value) {
  const std::string& v = *value;
  const std::string suffix = "_paused-for-driver-upgrade";
  std::string restore = v == "paused-for-driver-upgrade" ? "true" : v.substr(0, v.size() - suffix.size());
  // In progress while a driver pod on the node is still in its Init phase
  // (k8s-driver-manager is its init container) or the upgrade controller is
  // mid-way; stuck otherwise (#316, #416, #367, k8s-driver-manager#118).
  auto upgrade = node_label(node_, kDriverUpgradeStateLabel);
  bool in_progress = false;
  std::vector<std::string> driver_states;
  std::string manager_for;  // how long the driver pod's k8s-driver-manager has run, when known
  for (const Pod* d : driver_pods(index_, catalog_, name_)) {
    std::string st = pod_status_column(*d);
    driver_states.push_back(d->metadata.name + " " + st);
    bool init_running = starts_with(st, "Init:") && st.find('/') != std::string::npos;
    if (init_running && !d->metadata.deletion_timestamp) {
      in_progress = true;
      if (const ContainerStatus* m = running_driver_manager(*d); m && m->started_at && manager_for.empty())
        manager_for = for_how_long(m->started_at);
    }
  }
  if (upgrade && *upgrade != "upgrade-done" && *upgrade != "upgrade-failed") in_progress = true;
  std::string stuck_why = driver_states.empty() ? "no driver pod on the node" : "driver pod " + driver_states.front();
  if (upgrade && *upgrade == "upgrade-failed") stuck_why = "nvidia.com/gpu-driver-upgrade-state=upgrade-failed";
  if (const Operand* d = driver_operand(catalog_); d && d != &op) waits_on_[index_of(op)] = d->name;
  Finding f =
      make("label-paused-for-driver-upgrade", in_progress ? Severity::kWarning : Severity::kError, name_, op.name,
           label_phrase(op.label, value) +
               ": k8s-driver-manager paused the operand for a driver (re)install and restores \"" + restore +
               "\" at its reschedule step; " +
               (in_progress ? std::string("in progress (the driver pod is still initializing)")
                            : "stuck: " + stuck_why + ", so the label is never restored"));
  f.evidence.emplace_back("label " + op.label, v);
  f.evidence.emplace_back("label nvidia.com/gpu-driver-upgrade-state", shown(upgrade));
  if (driver_states.empty()) f.evidence.emplace_back("driver pod", "none");
  for (const auto& d : driver_states) f.evidence.emplace_back("driver pod", d);
  if (!manager_for.empty()) f.evidence.emplace_back("k8s-driver-manager running for", manager_for);
  return f;
}

}  // namespace gpuops::core::diagnose_internal
