#include "core/diagnose.h"

#include <algorithm>
#include <set>

#include "core/analysis.h"
#include "core/cluster_policy.h"
#include "core/errors.h"
#include "core/operator_install.h"
#include "core/root_cause.h"
#include "core/state_index.h"

namespace gpuops::core {

namespace {

const char* const kDriverComponentKey = "app.kubernetes.io/component";
const char* const kDriverComponent = "nvidia-driver";
const char* const kAbsent = "(absent)";

std::string shown(const std::optional<std::string>& v) { return v ? *v : kAbsent; }

// kubectl's form of a label for a reason line: key="value" or key (absent).
std::string label_phrase(const std::string& key, const std::optional<std::string>& v) {
  return v ? key + "=\"" + *v + "\"" : key + " (absent)";
}

bool starts_with(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }
bool ends_with(const std::string& s, const std::string& suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

// Pods of `op` (core::pod_of_operand over its DaemonSets `dss`) mapped to
// `node` (getNodesToDaemonPods: bound or pinned through the injected
// affinity), in the DaemonSet controller's order.
std::vector<const Pod*> pair_pods(const StateIndex& index, const Catalog& catalog, const Operand& op,
                                  const std::vector<const DaemonSet*>& dss, const std::string& node) {
  std::vector<const Pod*> out;
  for (const Pod* p : index.pods_on(node))
    if (pod_of_operand(catalog, op, dss, *p)) out.push_back(p);
  std::sort(out.begin(), out.end(), pod_by_creation_timestamp_and_phase);
  return out;
}

const Operand* driver_operand(const Catalog& c) { return c.by_label(kDriverDeployLabel); }

// A driver pod (R7): controlled by the catalog's driver DaemonSet, or carrying
// app.kubernetes.io/component=nvidia-driver (precompiled, DTK and NVIDIADriver
// DaemonSets have other names).
bool is_driver_pod(const StateIndex& index, const Catalog& catalog, const Pod& p) {
  auto it = p.metadata.labels.find(kDriverComponentKey);
  if (it != p.metadata.labels.end() && it->second == kDriverComponent) return true;
  const Operand* d = driver_operand(catalog);
  return d && pod_of_operand(catalog, *d, operand_daemonsets(index.state(), catalog, *d), p);
}

std::vector<const Pod*> driver_pods(const StateIndex& index, const Catalog& catalog, const std::string& node) {
  std::vector<const Pod*> out;
  for (const Pod* p : index.pods_on(node))
    if (is_driver_pod(index, catalog, *p)) out.push_back(p);
  std::sort(out.begin(), out.end(), pod_by_creation_timestamp_and_phase);
  return out;
}

bool image_pull_reason(const std::string& r) {
  return r == "ErrImagePull" || r == "ImagePullBackOff" || r == "InvalidImageName" || r == "ErrImageNeverPull";
}

// The first waiting image-pull reason of any init or regular container.
std::string image_pull_failure(const Pod& p) {
  for (const auto* list : {&p.status.init_container_statuses, &p.status.container_statuses})
    for (const auto& c : *list)
      if (c.state == "waiting" && image_pull_reason(c.reason)) return c.name + ": " + c.reason;
  return "";
}

// The first init container that has not finished with exit code 0.
const ContainerStatus* unfinished_init(const Pod& p) {
  for (const auto& c : p.status.init_container_statuses) {
    if (c.state == "terminated" && c.exit_code.value_or(-1) == 0) continue;
    return &c;
  }
  return nullptr;
}

std::string ready_count(const Pod& p) {
  int ready = 0;
  for (const auto& c : p.status.container_statuses)
    if (c.ready) ++ready;
  size_t total = std::max(p.spec.containers.size(), p.status.container_statuses.size());
  return std::to_string(ready) + "/" + std::to_string(total);
}

// The RESTARTS column (printPod): the init containers' restarts while the pod
// initializes, the regular containers' after.
int restarts(const Pod& p) { return print_pod(p).restarts; }

// What each validation gate (init container of the GPU Operator's operands)
// waits for: reference/gpu-operator.md §3.
std::string gate_meaning(const std::string& gate) {
  if (gate == "toolkit-validation")
    return "waits for /run/nvidia/validations/toolkit-ready, which only the operator-validator's "
           "toolkit-validation writes";
  if (gate == "driver-validation")
    return "waits for a usable driver (driver-ready: the driver pod's startup probe passed, or a host "
           "driver answers nvidia-smi)";
  if (gate == "cuda-validation") return "runs the nvidia-cuda-validator pod and waits for cuda-ready";
  if (gate == "plugin-validation")
    return "waits for nvidia.com/gpu in the node's capacity, which the device plugin advertises";
  if (gate == "k8s-driver-manager")
    return "k8s-driver-manager: pauses the GPU operands and unloads the old driver before the driver starts";
  if (gate == "config-manager-init") return "device plugin config manager: reads nvidia.com/device-plugin.config";
  if (gate == "mps-control-daemon-mounts") return "prepares the MPS control daemon's mounts";
  if (gate == "vgpu-manager-validation") return "waits for vgpu-manager-ready or host-vgpu-manager-ready";
  if (gate == "vfio-pci-validation") return "waits for vfio-pci-ready (GPUs bound to vfio-pci)";
  if (gate == "vgpu-devices-validation") return "waits for vgpu-devices-ready";
  if (gate == "cc-manager-validation") return "waits for cc-manager-ready";
  if (gate == "nvidia-fs-validation") return "waits for nvidia-fs-ready (GPUDirect Storage)";
  if (gate == "gdrcopy-validation") return "waits for gdrcopy-ready";
  return "";
}

void pod_evidence(Finding& f, const Pod& p) {
  f.evidence.emplace_back("pod", p.metadata.name);
  f.evidence.emplace_back("phase", p.status.phase);
  f.evidence.emplace_back("status", pod_status_column(p));
  f.evidence.emplace_back("ready", ready_count(p));
  f.evidence.emplace_back("restarts", std::to_string(restarts(p)));
}

Finding make(std::string name, Severity sev, const std::string& node, const std::string& operand,
             std::string reason) {
  Finding f;
  f.name = std::move(name);
  f.severity = sev;
  f.node = node;
  f.operand = operand;
  f.reason = std::move(reason);
  return f;
}

// Everything diagnose() says about one node, grouped so explain() can pick.
struct NodeDiagnosis {
  std::vector<Finding> node_level;
  std::vector<std::vector<Finding>> per_operand;  // catalog order: state, foreign pods
  std::vector<Finding> consistency;
};

// Per operand of the catalog (catalog order): its DaemonSets in the state
// (core::operand_daemonsets), computed once per diagnose.
using OperandDaemonSets = std::vector<std::vector<const DaemonSet*>>;

OperandDaemonSets operand_daemonsets_of(const StateIndex& index, const Catalog& catalog) {
  OperandDaemonSets out;
  for (const auto& op : catalog.operands) out.push_back(operand_daemonsets(index.state(), catalog, op));
  return out;
}

class Diagnoser {
 public:
  Diagnoser(const StateIndex& index, const Catalog& catalog, const OperandDaemonSets& dss, const Node& node)
      : index_(index), catalog_(catalog), dss_(dss), node_(node), name_(node.metadata.name) {
    gpu_ = is_gpu_node(node);
    operands_off_ = node_label(node, kOperandsDeployLabel) == std::optional<std::string>("false");
    if (gpu_) {
      auto exp = expected_deploy_labels(node, catalog);
      expected_.insert(exp.begin(), exp.end());
    }
  }

  NodeDiagnosis run() {
    NodeDiagnosis d;
    node_findings(d.node_level);
    waits_on_.assign(catalog_.operands.size(), "");
    shown_pod_.assign(catalog_.operands.size(), nullptr);
    // A helper that failed to apply its configuration is a broken link even
    // when its own pod runs: what it paused waits on it.
    failed_.assign(catalog_.operands.size(), "");
    for (auto [key, helper] : {std::pair{"nvidia.com/mig.config.state", "mig-manager"},
                               std::pair{"nvidia.com/vgpu.config.state", "vgpu-device-manager"}})
      if (const Operand* h = catalog_.by_name(helper); h && node_label(node_, key) == std::optional<std::string>("failed"))
        failed_[index_of(*h)] = std::string(key) + "=failed";
    for (const auto& op : catalog_.operands) {
      std::vector<Finding> fs;
      fs.push_back(state_finding(op));
      foreign_pods(op, fs);
      d.per_operand.push_back(std::move(fs));
    }
    needs(d.consistency);
    multiple_drivers(d.consistency);
    // Operator mode: one cause, one error (core/root_cause.h).
    if (catalog_.operator_mode && gpu_ && !operands_off_)
      attribute_root_cause(catalog_, index_.state().namespace_, name_, waits_on_, shown_pod_, failed_, d.per_operand,
                           d.consistency, d.node_level);
    return d;
  }

 private:
  // ---- node level ----
  void node_findings(std::vector<Finding>& out) {
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
        out.push_back(make("not-a-gpu-node", Severity::kInfo, name_, "",
                           "no NFD NVIDIA PCI label (pci-10de.present): the operator treats it as a "
                           "non-GPU node and gives it no deploy labels"));
      }
      std::vector<std::string> set_true;
      for (const auto& [k, v] : labels)
        if (starts_with(k, kDeployLabelPrefix) && k != kOperandsDeployLabel && v == "true") set_true.push_back(k);
      if (!set_true.empty()) {
        Finding f = make("deploy-labels-on-non-gpu-node", Severity::kWarning, name_, "",
                         "deploy labels set to \"true\" on a node the operator does not count as a GPU "
                         "node: it removes them on its next pass over this node (R1)");
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
                           "GPU node (workload config " + workload_config(node_) + ") lacks deploy labels " +
                               list +
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
  // warning (reference/gpu-operator.md §2.8).
  void upgrade_findings(std::vector<Finding>& out) {
    if (auto st = node_label(node_, kDriverUpgradeStateLabel)) {
      if (*st == "upgrade-failed") {
        Finding f = make("driver-upgrade-failed", Severity::kError, name_, "",
                         "the driver upgrade failed on this node (nvidia.com/gpu-driver-upgrade-state="
                         "upgrade-failed): the upgrade controller stops here; the paused operands come back "
                         "only once the driver pod runs (fix the driver, then the controller retries)");
        f.evidence.emplace_back("label " + std::string(kDriverUpgradeStateLabel), *st);
        if (node_.unschedulable) f.evidence.emplace_back("cordoned", "true");
        out.push_back(std::move(f));
      } else if (*st != "upgrade-done" && !st->empty()) {
        Finding f = make("driver-upgrade-in-progress", Severity::kWarning, name_, "",
                         "a driver upgrade is under way on this node (" + *st +
                             "): paused operands and a driver pod in Init are expected until upgrade-done");
        f.evidence.emplace_back("label " + std::string(kDriverUpgradeStateLabel), *st);
        if (node_.unschedulable) f.evidence.emplace_back("cordoned", "true");
        out.push_back(std::move(f));
      }
    }
    for (const char* key : {"nvidia.com/mig.config.state", "nvidia.com/vgpu.config.state"}) {
      auto st = node_label(node_, key);
      if (!st || *st != "failed") continue;
      bool mig = std::string(key) == "nvidia.com/mig.config.state";
      Finding f = make(mig ? "mig-config-failed" : "vgpu-config-failed", Severity::kError, name_, "",
                       std::string(mig ? "mig-manager could not apply nvidia.com/mig.config=\""
                                       : "vgpu-device-manager could not apply nvidia.com/vgpu.config=\"") +
                           shown(node_label(node_, mig ? "nvidia.com/mig.config" : "nvidia.com/vgpu.config")) +
                           "\" (" + key + "=failed): the operands it paused stay off until a configuration "
                           "applies; its pod's log says why");
      f.evidence.emplace_back(std::string("label ") + key, *st);
      f.evidence.emplace_back(std::string("label ") + (mig ? "nvidia.com/mig.config" : "nvidia.com/vgpu.config"),
                              shown(node_label(node_, mig ? "nvidia.com/mig.config" : "nvidia.com/vgpu.config")));
      out.push_back(std::move(f));
    }
  }

  // ---- one finding per operand ----
  Finding state_finding(const Operand& op) {
    auto value = node_label(node_, op.label);
    const DaemonSet* ds = daemonset_for_node(op);
    auto pods = pair_pods(index_, catalog_, op, dss(op), name_);
    LabelClass cls = classify_label(value);
    if (cls != LabelClass::kTrue) {
      Finding f = label_finding(op, value, cls);
      // Operator mode: an operand the install does not run on this node
      // anyway (no DaemonSet, or one whose other selector keys do not match)
      // is not off because of its label.
      if (catalog_.operator_mode && f.severity != Severity::kInfo && cls != LabelClass::kAbsent &&
          !rendered_for_node(op)) {
        f.severity = Severity::kInfo;
        f.reason += dss(op).empty() ? "; the install renders no DaemonSet for it, so it would not run here anyway"
                                    : "; its DaemonSet does not select this node anyway (another nodeSelector key)";
        waits_on_[index_of(op)].clear();
      }
      for (const Pod* p : pods) pod_evidence(f, *p);
      return f;
    }
    if (!ds) return no_daemonset_finding(op, pods);
    Placement pl = should_run(*ds, node_);
    std::vector<const Pod*> live;
    for (const Pod* p : pods)
      if (!p->metadata.deletion_timestamp) live.push_back(p);
    if (pods.empty()) return no_pod_finding(op, *ds, pl);
    if (live.empty()) {
      Finding f = make("terminating", Severity::kWarning, name_, op.name,
                       "the only pod is terminating; with the label still \"true\" the DaemonSet creates a "
                       "replacement once it is gone");
      for (const Pod* p : pods) pod_evidence(f, *p);
      return f;
    }
    if (!pl.should_run) {
      Finding f = make("misscheduled", Severity::kWarning, name_, op.name,
                       std::string("a pod is on the node but the DaemonSet no longer wants it here (") +
                           join(pl.reasons) + "): " +
                           (pl.should_continue_running ? "it may stay, no new one would be created"
                                                       : "the DaemonSet controller deletes it"));
      placement_evidence(f, *ds, pl);
      pod_evidence(f, *live.front());
      return f;
    }
    // The Running pod (the lab's present rule; in operator mode Ready is what
    // the branch below tells apart).
    const Pod* running = nullptr;
    if (catalog_.operator_mode) {
      for (const Pod* p : live)
        if (!p->spec.node_name.empty() && p->status.phase == "Running") {
          running = p;
          break;
        }
    } else {
      running = present_pod(index_, catalog_, op, name_);
    }
    if (const Pod* p = running) {
      shown_pod_[index_of(op)] = p;
      std::string pull = image_pull_failure(*p);
      Finding f;
      if (p->is_ready())
        f = make("running", Severity::kInfo, name_, op.name, "pod is Running and Ready");
      else if (!pull.empty())
        f = make("image-pull-failed", Severity::kError, name_, op.name,
                 "pod is Running but cannot pull an image (" + pull + ")");
      else
        f = make("running-not-ready", Severity::kError, name_, op.name,
                 "pod is Running but not Ready (" + pod_status_column(*p) + ")");
      pod_evidence(f, *p);
      return f;
    }
    shown_pod_[index_of(op)] = live.front();
    return pod_state_finding(op, *live.front());
  }

  // Label "true", no DaemonSet of the operand. Without a ClusterPolicy in the
  // state: disabled or not deployed (R4). With one: what isStateEnabled says
  // (core/cluster_policy.h); enabled yet absent is the operator's failure to
  // render it, an error its status explains.
  Finding no_daemonset_finding(const Operand& op, const std::vector<const Pod*>& pods) {
    const auto& policies = index_.state().cluster_policies;
    const std::string where = " in namespace " + index_.state().namespace_;
    Finding f;
    std::optional<bool> enabled;
    std::string field = policy_field(op.name);
    if (!policies.empty()) enabled = state_enabled(policies.front(), op.name, catalog_.version);
    if (!enabled) {
      f = make("no-daemonset", Severity::kInfo, name_, op.name,
               "deploy label is \"true\" but there is no DaemonSet " + op.daemonset + where +
                   ": the operand is disabled in the ClusterPolicy (or not deployed); the label alone "
                   "does nothing (R4)");
    } else if (!*enabled) {
      // spec.<field>.enabled as written: "true", "false" or "(absent)".
      std::string written = "(absent)";
      if (!field.empty())
        if (auto w = enabled_field(policies.front(), field)) written = *w ? "true" : "false";
      std::string why;
      if (field.empty()) why = "sandboxWorkloads.enabled is not true";
      else if (op.name == "kata-manager" && version_at_least(catalog_.version, 26, 7))
        why = "kata-manager is never rendered from v26.7 (deprecated)";
      else if (written == "false") why = "spec." + field + ".enabled=false";
      else if (written == "(absent)") why = "spec." + field + ".enabled unset: default false";
      else why = "spec." + field + ".enabled=true, but sandboxWorkloads (enabled, mode) rules it out";
      f = make("no-daemonset", Severity::kInfo, name_, op.name,
               "deploy label is \"true\" but ClusterPolicy " + policies.front().metadata.name +
                   " does not render " + op.name + " (" + why +
                   "): no DaemonSet, the label alone does nothing (R4, isStateEnabled)");
      if (!field.empty())
        f.evidence.emplace_back("clusterpolicy spec." + field + ".enabled", written);
    } else {
      const ClusterPolicy& cp = policies.front();
      f = make("no-daemonset", Severity::kError, name_, op.name,
               "ClusterPolicy " + cp.metadata.name + " enables " + op.name + " but there is no DaemonSet " +
                   op.daemonset + where + ": the operator did not render it (ClusterPolicy state " +
                   (cp.state.empty() ? std::string("unset") : cp.state) + "; its conditions and the operator's "
                   "log say why)");
      f.evidence.emplace_back("clusterpolicy state", cp.state.empty() ? "(unset)" : cp.state);
    }
    f.evidence.emplace_back("label " + op.label, "true");
    f.evidence.emplace_back("daemonset", op.daemonset + " (absent)");
    for (const Pod* p : pods) pod_evidence(f, *p);
    return f;
  }

  static std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : "; ") + x;
    return s;
  }

  void placement_evidence(Finding& f, const DaemonSet& ds, const Placement& pl) {
    f.evidence.emplace_back("daemonset", ds.metadata.name);
    f.evidence.emplace_back("shouldRun", pl.should_run ? "true" : "false");
    f.evidence.emplace_back("shouldContinueRunning", pl.should_continue_running ? "true" : "false");
    for (const auto& r : pl.reasons) f.evidence.emplace_back("placement", r);
  }

  Finding no_pod_finding(const Operand& op, const DaemonSet& ds, const Placement& pl) {
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
               "the deploy label is \"true\" but the DaemonSet's selector does not match the node: " +
                   join(pl.reasons));
    }
    for (const auto& k : mismatched) f.evidence.emplace_back("label " + k, shown(node_label(node_, k)));
    placement_evidence(f, ds, pl);
    return f;
  }

  Finding pod_state_finding(const Operand& op, const Pod& p) {
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
    const PodCondition* init = p.condition("Initialized");
    const ContainerStatus* gate = unfinished_init(p);
    if (p.status.phase == "Pending" && gate && !(init && init->status == "True")) {
      std::string meaning = gate_meaning(gate->name);
      std::string reason = "pod is stuck in Init (" + status + "), waiting on gate " + gate->name;
      if (!meaning.empty()) reason += ": " + meaning;
      auto validator = node_label(node_, kValidatorDeployLabel);
      bool toolkit_gate = gate->name == "toolkit-validation";
      if (toolkit_gate && validator != std::optional<std::string>("true"))
        reason += "; gpu.deploy.operator-validator is not \"true\" on this node, so toolkit-ready is never "
                  "written (R5)";
      if (gate->name == "driver-validation") reason += driver_gate_hint();
      auto upgrade = node_label(node_, kDriverUpgradeStateLabel);
      bool planned = gate->name == "k8s-driver-manager" && gate->state == "running" && upgrade &&
                     *upgrade != "upgrade-done" && *upgrade != "upgrade-failed";
      f = make(planned ? "init-during-upgrade" : "stuck-in-init", planned ? Severity::kWarning : Severity::kError,
               name_, op.name,
               planned ? "pod is in Init (" + status + ") running k8s-driver-manager during the driver upgrade (" +
                             *upgrade + "): it drains the GPU operands and unloads the old driver, as planned"
                       : reason);
      // What it waits on; a gate the operand writes itself (the validator's
      // toolkit-validation) waits on what the operand needs.
      std::string writer = gate_writer(gate->name);
      if (writer == op.name) writer = op.needs.empty() ? "" : op.needs.front();
      waits_on_[index_of(op)] = writer;
      pod_evidence(f, p);
      f.evidence.emplace_back("gate", gate->name);
      if (!gate->reason.empty()) f.evidence.emplace_back("gate state", gate->state + " " + gate->reason);
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
      if (c.state == "waiting" && c.reason != "ContainerCreating" && c.reason != "PodInitializing" &&
          !c.reason.empty())
        waiting = c.name + ": " + c.reason + (c.message.empty() ? "" : " (" + c.message + ")");
    if (!waiting.empty()) {
      f = make("container-error", Severity::kError, name_, op.name,
               "pod cannot start its containers (" + waiting + ")");
    } else if (p.status.phase == "Pending") {
      f = make("pending", Severity::kWarning, name_, op.name, "pod is bound and starting (" + status + ")");
    } else {
      f = make("pod-unknown", Severity::kWarning, name_, op.name, "pod is in phase " + p.status.phase);
    }
    pod_evidence(f, p);
    return f;
  }

  // Why driver-validation may never pass on this node (#398, #378, #487).
  std::string driver_gate_hint() const {
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

  static std::string first_sentence(const std::string& msg) {
    auto dot = msg.find(". ");
    std::string s = dot == std::string::npos ? msg : msg.substr(0, dot);
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  }

  Finding label_finding(const Operand& op, const std::optional<std::string>& value, LabelClass cls) {
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
           phrase + ": nvidia.com/gpu.deploy.operands=false removes every deploy label, so the operand "
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
             driver ? phrase + ": the containerized driver is opted out; the node is expected to run a host "
                               "driver, and the operator respects the false (#375)"
                    : phrase + ": user opt-out, respected by the operator; the operand stays off this node");
        break;
      case LabelClass::kPreInstalled:
        base("label-pre-installed", Severity::kInfo,
             phrase + ": k8s-driver-manager found a host driver (chroot /host nvidia-smi) and removed the "
                      "driver pod; the other operands use the host driver (#2150; a false positive stalls "
                      "them in Init, #398)");
        break;
      case LabelClass::kPausedForDriverUpgrade: f = paused_driver(op, value); break;
      case LabelClass::kPausedForMigChange: {
        waits_on_[index_of(op)] = "mig-manager";
        auto st = node_label(node_, "nvidia.com/mig.config.state");
        bool stuck = st == std::optional<std::string>("failed") || st == std::optional<std::string>("success");
        base("label-paused-for-mig-change", stuck ? Severity::kError : Severity::kWarning,
             phrase + ": mig-manager paused the operand for a MIG reconfiguration; " +
                 (stuck ? "stuck: nvidia.com/mig.config.state is " + *st +
                              ", yet the label was not restored to \"true\""
                        : std::string("in progress while nvidia.com/mig.config.state is pending or "
                                      "rebooting (stuck if it stays)")));
        f.evidence.emplace_back("label nvidia.com/mig.config.state", shown(st));
        f.evidence.emplace_back("label nvidia.com/mig.config", shown(node_label(node_, "nvidia.com/mig.config")));
        break;
      }
      case LabelClass::kPausedForVgpuChange: {
        waits_on_[index_of(op)] = "vgpu-device-manager";
        auto st = node_label(node_, "nvidia.com/vgpu.config.state");
        bool stuck = st == std::optional<std::string>("failed") || st == std::optional<std::string>("success");
        base("label-paused-for-vgpu-change", stuck ? Severity::kError : Severity::kWarning,
             phrase + ": vgpu-device-manager paused the operand to apply nvidia.com/vgpu.config; " +
                 (stuck ? "stuck: nvidia.com/vgpu.config.state is " + *st +
                              ", yet the label was not restored to \"true\""
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
             phrase + ": a stale pause marker (k8s-driver-manager stamps \"\" when pausing an operand that "
                      "never ran); \"\" is not \"true\", so the operand is off on this node, and operator "
                      "releases up to v26.3 never repair it (v26.7 re-sets \"true\"); set it to \"true\" or "
                      "delete it (#491)");
        break;
      case LabelClass::kOther:
        base("label-value-unrecognised", expected ? Severity::kError : Severity::kWarning,
             phrase + ": not a value the operator or its helpers write; only \"true\" matches the "
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
  // existing value), reference/gpu-operator.md §2.5.
  Finding operator_empty_label(const Operand& op, const std::optional<std::string>& value, bool expected) {
    const std::string phrase = label_phrase(op.label, value);
    const bool repaired = version_at_least(catalog_.version, 26, 7);
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
               phrase + ": a stale pause marker of k8s-driver-manager; this operator release (" +
                   catalog_.version + ") keeps any existing value, so the operand stays off here until the "
                   "label is set to \"true\" or deleted (#491)");
    }
    f.evidence.emplace_back("label " + op.label, shown(value));
    return f;
  }

  Finding paused_driver(const Operand& op, const std::optional<std::string>& value) {
    const std::string& v = *value;
    const std::string suffix = "_paused-for-driver-upgrade";
    std::string restore = v == "paused-for-driver-upgrade" ? "true" : v.substr(0, v.size() - suffix.size());
    // In progress while a driver pod on the node is still in its Init phase
    // (k8s-driver-manager is its init container) or the upgrade controller is
    // mid-way; stuck otherwise (#316, #416, #367, k8s-driver-manager#118).
    auto upgrade = node_label(node_, kDriverUpgradeStateLabel);
    bool in_progress = false;
    std::vector<std::string> driver_states;
    for (const Pod* d : driver_pods(index_, catalog_, name_)) {
      std::string st = pod_status_column(*d);
      driver_states.push_back(d->metadata.name + " " + st);
      bool init_running = starts_with(st, "Init:") && st.find('/') != std::string::npos;
      if (init_running && !d->metadata.deletion_timestamp) in_progress = true;
    }
    if (upgrade && *upgrade != "upgrade-done" && *upgrade != "upgrade-failed") in_progress = true;
    std::string stuck_why = driver_states.empty() ? "no driver pod on the node" : "driver pod " + driver_states.front();
    if (upgrade && *upgrade == "upgrade-failed") stuck_why = "nvidia.com/gpu-driver-upgrade-state=upgrade-failed";
    if (const Operand* d = driver_operand(catalog_); d && d != &op) waits_on_[index_of(op)] = d->name;
    Finding f = make("label-paused-for-driver-upgrade", in_progress ? Severity::kWarning : Severity::kError, name_,
                     op.name,
                     label_phrase(op.label, value) +
                         ": k8s-driver-manager paused the operand for a driver (re)install and restores \"" +
                         restore + "\" at its reschedule step; " +
                         (in_progress ? std::string("in progress (the driver pod is still initializing)")
                                      : "stuck: " + stuck_why + ", so the label is never restored"));
    f.evidence.emplace_back("label " + op.label, v);
    f.evidence.emplace_back("label nvidia.com/gpu-driver-upgrade-state", shown(upgrade));
    if (driver_states.empty()) f.evidence.emplace_back("driver pod", "none");
    for (const auto& d : driver_states) f.evidence.emplace_back("driver pod", d);
    return f;
  }

  void foreign_pods(const Operand& op, std::vector<Finding>& out) {
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
  bool host_driver_marker() const {
    auto v = node_label(node_, kDriverDeployLabel);
    return v == std::optional<std::string>("pre-installed") || (gpu_ && v == std::optional<std::string>("false"));
  }

  bool driver_pod_running() const {
    for (const Pod* p : driver_pods(index_, catalog_, name_))
      if (!p->spec.node_name.empty() && p->status.phase == "Running" && !p->metadata.deletion_timestamp) return true;
    return false;
  }

  void needs(std::vector<Finding>& out) {
    for (const auto& op : catalog_.operands) {
      if (op.needs.empty() || !operand_present(index_, catalog_, op, name_)) continue;
      for (const auto& need : op.needs) {
        const Operand* m = catalog_.by_name(need);
        if (!m || operand_present(index_, catalog_, *m, name_)) continue;
        bool is_driver = m->label == kDriverDeployLabel;
        if (is_driver && (driver_pod_running() || host_driver_marker())) continue;
        // Operator mode: a need the install does not render (toolkit.enabled
        // false: the hosts' own toolkit) is the host's; the operator's gates
        // (toolkit-validation) check it, and the missing DaemonSet is its
        // own finding.
        if (catalog_.operator_mode && dss(*m).empty()) continue;
        std::string reason =
            is_driver ? op.name + " runs on a node with neither a Running driver pod nor a host driver marker "
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

  void multiple_drivers(std::vector<Finding>& out) {
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

  // op's DaemonSets; op is an element of catalog_.operands.
  const std::vector<const DaemonSet*>& dss(const Operand& op) const {
    return dss_[index_of(op)];
  }

  // One of op's DaemonSets selects the node but for the deploy label
  // (core::selects_node_but_label).
  bool rendered_for_node(const Operand& op) const {
    for (const DaemonSet* ds : dss(op))
      if (selects_node_but_label(*ds, op, node_)) return true;
    return false;
  }

  // The DaemonSet of `op` that speaks for it on this node: the first that
  // wants the node (several in operator mode: one driver DaemonSet per kernel
  // or NVIDIADriver), else the first; nullptr when it has none.
  const DaemonSet* daemonset_for_node(const Operand& op) const {
    const auto& all = dss(op);
    for (const DaemonSet* ds : all)
      if (should_run(*ds, node_).should_run) return ds;
    return all.empty() ? nullptr : all.front();
  }

  size_t index_of(const Operand& op) const { return static_cast<size_t>(&op - catalog_.operands.data()); }

  const StateIndex& index_;
  const Catalog& catalog_;
  const OperandDaemonSets& dss_;
  // Per operand, set by state_finding: what it waits on (gate_writer of the
  // gate its pod is stuck at), and the pod its finding shows.
  std::vector<std::string> waits_on_;
  std::vector<const Pod*> shown_pod_;
  std::vector<std::string> failed_;  // per operand: why it is broken beside its state finding
  const Node& node_;
  std::string name_;
  bool gpu_ = false;
  bool operands_off_ = false;
  std::set<std::string> expected_;
};

const Node& require_node(const StateIndex& index, const std::string& name) {
  const Node* n = index.node(name);
  if (!n) throw ClusterError("nodes \"" + name + "\" not found", 404);
  return *n;
}

}  // namespace

namespace {

// The operator's own resources first: status.state and the conditions that
// say why (ClusterPolicyReconciler sets Ready and Error; an NVIDIADriver the
// same). `ready` is info; anything else a warning (the nodes' findings carry
// the errors). The finding's node is `ClusterPolicy/<name>` or
// `NVIDIADriver/<name>`.
template <typename R>
void resource_finding(const R& r, const char* kind, std::vector<Finding>& out) {
  const std::string state = r.state.empty() ? "(unset)" : r.state;
  Finding f = make(r.state == "ready" ? "operator-resource-ready" : "operator-resource-not-ready",
                   r.state == "ready" ? Severity::kInfo : Severity::kWarning, std::string(kind) + "/" + r.metadata.name,
                   "", std::string(kind) + " status.state " + state);
  for (const auto& c : r.conditions) {
    if (c.status != "True") continue;
    if (!c.message.empty() && r.state != "ready") f.reason += ": " + c.message;
    f.evidence.emplace_back("condition " + c.type, c.status + (c.reason.empty() ? "" : " (" + c.reason + ")"));
    if (!c.message.empty()) f.evidence.emplace_back("message", c.message);
    if (r.state != "ready") break;
  }
  out.push_back(std::move(f));
}

std::vector<Finding> operator_resource_findings(const ClusterState& state) {
  std::vector<Finding> out;
  for (const auto& cp : state.cluster_policies) resource_finding(cp, "ClusterPolicy", out);
  for (const auto& d : state.nvidia_drivers) resource_finding(d, "NVIDIADriver", out);
  return out;
}

}  // namespace

static NodeDiagnosis diagnose_node(const StateIndex& index, const Catalog& catalog, const OperandDaemonSets& dss,
                                   const Node& node) {
  return Diagnoser(index, catalog, dss, node).run();
}

std::vector<Finding> diagnose(const ClusterState& state, const Catalog& catalog,
                              const std::vector<std::string>& nodes) {
  // Indexed once: each node's findings then cost that node's pods, not the
  // cluster's (a scan of state.pods per pair grew with the square of the nodes).
  const StateIndex index(state);
  std::vector<const Node*> targets;
  if (nodes.empty()) {
    for (const auto& n : state.nodes) targets.push_back(&n);
    std::sort(targets.begin(), targets.end(),
              [](const Node* a, const Node* b) { return a->metadata.name < b->metadata.name; });
  } else {
    std::set<std::string> seen;
    for (const auto& name : nodes)
      if (seen.insert(name).second) targets.push_back(&require_node(index, name));
  }
  const OperandDaemonSets dss = operand_daemonsets_of(index, catalog);
  std::vector<Finding> out = operator_resource_findings(state);
  for (const Node* n : targets) {
    NodeDiagnosis d = diagnose_node(index, catalog, dss, *n);
    for (auto& f : d.node_level) out.push_back(std::move(f));
    for (auto& fs : d.per_operand)
      for (auto& f : fs) out.push_back(std::move(f));
    for (auto& f : d.consistency) out.push_back(std::move(f));
  }
  return out;
}

Explanation explain(const ClusterState& state, const Catalog& catalog, const std::string& node,
                    const std::string& operand) {
  const StateIndex index(state);
  const Node& n = require_node(index, node);
  const Operand* op = catalog.by_name(operand);
  if (!op) throw InputError("", 0, "operand", "Not found: \"" + operand + "\" is not an operand of the catalog (operands: " +
                                                        catalog.names() + ")");
  Explanation e;
  e.node = node;
  e.operand = operand;
  e.label = op->label;
  e.label_value = node_label(n, op->label);
  e.daemonset = op->daemonset;
  const OperandDaemonSets dss = operand_daemonsets_of(index, catalog);
  const auto& mine = dss[static_cast<size_t>(op - catalog.operands.data())];
  // The DaemonSet that wants the node, else the first (as the state finding).
  for (const DaemonSet* ds : mine) {
    Placement pl = should_run(*ds, n);
    if (!e.daemonset_found || pl.should_run) {
      e.daemonset_found = true;
      e.daemonset = ds->metadata.name;
      e.placement = pl;
    }
    if (pl.should_run) break;
  }
  NodeDiagnosis d = diagnose_node(index, catalog, dss, n);
  for (auto& f : d.node_level) e.findings.push_back(std::move(f));
  for (size_t i = 0; i < catalog.operands.size(); ++i)
    if (catalog.operands[i].name == operand)
      for (auto& f : d.per_operand[i]) e.findings.push_back(std::move(f));
  for (auto& f : d.consistency)
    if (f.operand == operand) e.findings.push_back(std::move(f));
  return e;
}

int exit_code(const std::vector<Finding>& findings) {
  for (const auto& f : findings)
    if (f.severity == Severity::kError) return kExitFinding;
  return kExitOk;
}

}  // namespace gpuops::core
