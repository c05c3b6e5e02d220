// core/diagnose/diagnose_node.cpp: the node findings of diagnose (docs/DIAGNOSE.md "Node findings" and
// "Upgrades, MIG, vGPU"), Diagnoser members (core/diagnose/diagnoser.h).
#include "core/diagnose/diagnoser.h"

#include "core/model/duration.h"
#include "core/model/rfc3339.h"

namespace gpuops::core::diagnose_internal {

// ---- node level ----
void Diagnoser::node_findings(std::vector<Finding>& out) {
  const auto& labels = node_.metadata.labels;
  if (!gpu_) {
    auto odd = unrecognised_nvidia_pci_labels(node_);
    if (!odd.empty()) {
      Finding f = make("nfd-label-unrecognised", Severity::kError, name_, "",
                       "NVIDIA PCI labels in a form the operator does not recognise (only pci-10de, "
                       "pci-0302_10de, pci-0300_10de .present count): it sets gpu.present=false and "
                       "removes every deploy label (#1469)");
      for (const auto& k : odd) f.evidence.emplace_back("label " + k, labels.at(k));
      out.push_back(std::move(f));
    } else if (node_label(node_, kGpuPresentLabel) == std::optional<std::string>("true")) {
      Finding f = make("gpu-present-without-nfd", Severity::kError, name_, "",
                       "nvidia.com/gpu.present=true but no NFD NVIDIA PCI label: the operator sets "
                       "gpu.present=false and removes every deploy label; is the NFD worker running "
                       "here (its tolerations)? (#423)");
      f.evidence.emplace_back("label " + std::string(kGpuPresentLabel), "true");
      out.push_back(std::move(f));
    } else {
      out.push_back(nfd_finding());
    }
    std::vector<std::string> set_true;
    for (const auto& [k, v] : labels)
      if (starts_with(k, kDeployLabelPrefix) && k != kOperandsDeployLabel && v == "true") set_true.push_back(k);
    if (!set_true.empty()) {
      // What the node labeller does with them: the rule the simulated
      // operator runs (core::reconcile_gpu_node_labels), on a copy.
      Labels after = labels;
      const auto& cps = index_.state().cluster_policies;
      reconcile_gpu_node_labels(after, cps.empty() ? LabellerPolicy{} : labeller_policy(cps.front()), catalog_);
      bool removed = true;
      for (const auto& k : set_true)
        if (after.count(k)) removed = false;
      Finding f = make("deploy-labels-on-non-gpu-node", Severity::kWarning, name_, "",
                       removed ? "deploy labels set to \"true\" on a node the operator does not count as a GPU "
                                 "node: its node labeller removes them on its next pass over this node (R1)"
                               : "deploy labels set to \"true\" on a node the operator does not count as a GPU "
                                 "node (no NFD GPU label, no gpu.present=true): the operator keeps them (its "
                                 "labeller clears deploy labels only where it sets gpu.present=false, "
                                 "labelGPUNodes), so their DaemonSets place pods here, without a GPU; remove "
                                 "them by hand");
      for (const auto& k : set_true) f.evidence.emplace_back("label " + k, "true");
      out.push_back(std::move(f));
    }
  } else {
    auto wc = node_label(node_, kWorkloadConfigLabel);
    if (wc && *wc != "container" && *wc != "vm-passthrough" && *wc != "vm-vgpu") {
      Finding f = make("workload-config-invalid", Severity::kWarning, name_, "",
                       "nvidia.com/gpu.workload.config=\"" + *wc +
                           "\" is not container, vm-passthrough or vm-vgpu: the operator logs it and "
                           "uses sandboxWorkloads.defaultWorkload (container unless set)");
      f.evidence.emplace_back("label " + std::string(kWorkloadConfigLabel), *wc);
      out.push_back(std::move(f));
    }
    if (!operands_off_) {
      std::vector<std::string> missing;
      for (const auto& k : expected_deploy_labels(node_, catalog_))
        if (!labels.count(k)) missing.push_back(k);
      if (!missing.empty()) {
        std::string list;
        // The operand's part of an operator deploy label; a catalog's own
        // label (any label key) as a whole.
        for (const auto& k : missing)
          list += (list.empty() ? "" : ", ") +
                  (starts_with(k, kDeployLabelPrefix) ? k.substr(std::string(kDeployLabelPrefix).size()) : k);
        Finding f = make("missing-deploy-labels", Severity::kError, name_, "",
                         "GPU node (workload config " + workload_config(node_) + ") lacks deploy labels " + list +
                             ": their DaemonSets never select it, so no pod comes; the operator re-adds a "
                             "missing key only when a node reconcile runs (#470)");
        f.evidence.emplace_back("workload config", workload_config(node_));
        for (const auto& k : missing) f.evidence.emplace_back("label " + k, kAbsent);
        out.push_back(std::move(f));
      }
    }
  }
  if (operands_off_) {
    Finding f = make("operands-disabled", Severity::kInfo, name_, "",
                     "nvidia.com/gpu.deploy.operands=false: the operator removes every deploy label, "
                     "driver included, so no operand runs here (R8, #661)");
    f.evidence.emplace_back("label " + std::string(kOperandsDeployLabel), "false");
    out.push_back(std::move(f));
  }
  std::string ready = node_.ready_status();
  if (ready == "False" || ready == "Unknown") {
    bool unknown = ready == "Unknown";
    Finding f = make(unknown ? "node-unreachable" : "node-not-ready", Severity::kError, name_, "",
                     unknown ? "node Ready=Unknown (kubelet stopped reporting): it leaves every "
                               "DaemonSet's desired set; existing daemon pods stay (misscheduled)"
                             : "node Ready=False: it leaves every DaemonSet's desired set; existing "
                               "daemon pods stay (misscheduled)");
    for (const auto& c : node_.conditions)
      if (c.type == "Ready") {
        f.evidence.emplace_back("condition Ready", c.status);
        if (!c.reason.empty()) f.evidence.emplace_back("reason", c.reason);
        if (!c.message.empty()) f.evidence.emplace_back("message", c.message);
      }
    out.push_back(std::move(f));
  }
  upgrade_findings(out);
  if (node_.unschedulable) {
    out.push_back(make("node-cordoned", Severity::kInfo, name_, "",
                       "node is cordoned (spec.unschedulable): DaemonSet pods tolerate "
                       "node.kubernetes.io/unschedulable and still go there"));
  }
}

// The driver upgrade controller's state (k8s-operator-libs
// pkg/upgrade: nvidia.com/gpu-driver-upgrade-state) and mig-manager's and
// vgpu-device-manager's (nvidia.com/mig.config.state,
// nvidia.com/vgpu.config.state): failed is an error, a state mid-way a
// warning (docs/reference/gpu-operator.md §2.8).
std::string Diagnoser::for_how_long(const std::optional<Time>& since) const {
  if (!since) return "";
  const auto& at = index_.state().observed_at;
  if (!at) return "since " + format_time(*since);
  return human_duration(*at - *since) + " (since " + format_time(*since) + ")";
}

const ContainerStatus* Diagnoser::running_driver_manager(const Pod& driver_pod) {
  for (const auto& c : driver_pod.status.init_container_statuses)
    if (c.name == "k8s-driver-manager" && c.state == "running") return &c;
  return nullptr;
}

// How long the upgrade has held the node, where the upgrade controller left
// a time: its start-time annotations (k8s-operator-libs pkg/upgrade:
// handleTimeout of validation_manager.go, HandleTimeoutOnPodCompletions of
// pod_manager.go). The cordon leaves none: the node lifecycle controller's
// node.kubernetes.io/unschedulable taint has no timeAdded (only NoExecute
// taints get one).
void Diagnoser::upgrade_time_evidence(Finding& f, const std::string& state) const {
  if (state == "wait-for-jobs-required") {
    if (auto t = upgrade_start_time(node_, kUpgradeWaitForPodCompletionStartTimeAnnotation))
      f.evidence.emplace_back("waiting for jobs for", for_how_long(t));
  }
  if (state == "validation-required") {
    if (auto t = upgrade_start_time(node_, kUpgradeValidationStartTimeAnnotation)) {
      f.evidence.emplace_back("validating for", for_how_long(t));
      const auto& at = index_.state().observed_at;
      const auto timeout = std::chrono::seconds(kUpgradeValidationTimeoutSeconds);
      if (at && *at - *t > timeout)
        f.evidence.emplace_back("validation timeout",
                                human_duration(timeout) +
                                    ", passed: the upgrade controller sets upgrade-failed on its next pass; "
                                    "still validation-required means it has not run since (is the operator up?)");
      else if (at)
        f.evidence.emplace_back("validation timeout", human_duration(timeout) + ", " +
                                                          human_duration(*t + timeout - *at) +
                                                          " left before the upgrade controller sets upgrade-failed");
    }
  }
}

void Diagnoser::upgrade_findings(std::vector<Finding>& out) {
  if (auto st = node_label(node_, kDriverUpgradeStateLabel)) {
    if (*st == "upgrade-failed") {
      Finding f = make("driver-upgrade-failed", Severity::kError, name_, "",
                       "the driver upgrade failed on this node (nvidia.com/gpu-driver-upgrade-state="
                       "upgrade-failed): the upgrade controller stops here; the paused operands come back "
                       "only once the driver pod runs (fix the driver, then the controller retries)");
      f.evidence.emplace_back("label " + std::string(kDriverUpgradeStateLabel), *st);
      if (node_.unschedulable) f.evidence.emplace_back("cordoned", "true");
      upgrade_time_evidence(f, *st);
      out.push_back(std::move(f));
    } else if (*st != "upgrade-done" && !st->empty()) {
      Finding f = make("driver-upgrade-in-progress", Severity::kWarning, name_, "",
                       "a driver upgrade is under way on this node (" + *st +
                           "): paused operands and a driver pod in Init are expected until upgrade-done");
      f.evidence.emplace_back("label " + std::string(kDriverUpgradeStateLabel), *st);
      if (node_.unschedulable) f.evidence.emplace_back("cordoned", "true");
      upgrade_time_evidence(f, *st);
      out.push_back(std::move(f));
    }
  }
  for (const char* key : {"nvidia.com/mig.config.state", "nvidia.com/vgpu.config.state"}) {
    auto st = node_label(node_, key);
    if (!st || *st != "failed") continue;
    bool mig = std::string(key) == "nvidia.com/mig.config.state";
    Finding f =
        make(mig ? "mig-config-failed" : "vgpu-config-failed", Severity::kError, name_, "",
             std::string(mig ? "mig-manager could not apply nvidia.com/mig.config=\""
                             : "vgpu-device-manager could not apply nvidia.com/vgpu.config=\"") +
                 shown(node_label(node_, mig ? "nvidia.com/mig.config" : "nvidia.com/vgpu.config")) + "\" (" + key +
                 "=failed): the operands it paused stay off until a configuration "
                 "applies; its pod's log says why");
    f.evidence.emplace_back(std::string("label ") + key, *st);
    f.evidence.emplace_back(std::string("label ") + (mig ? "nvidia.com/mig.config" : "nvidia.com/vgpu.config"),
                            shown(node_label(node_, mig ? "nvidia.com/mig.config" : "nvidia.com/vgpu.config")));
    out.push_back(std::move(f));
  }
  helper_progress_findings(out);
}

}  // namespace gpuops::core::diagnose_internal
