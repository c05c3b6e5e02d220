#include "core/diagnose.h"

#include <algorithm>
#include <set>

#include "core/analysis.h"
#include "core/errors.h"
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

// The ownership half of the present rule (core/analysis.h): controlled by a
// DaemonSet of the operand's name, and by its uid when the DaemonSet is known.
bool owned_by(const Pod& pod, const Operand& op, const DaemonSet* ds) {
  const OwnerReference* ref = pod.metadata.controller_ref();
  if (!ref || ref->kind != "DaemonSet" || ref->name != op.daemonset) return false;
  if (ds && !ds->metadata.uid.empty() && !ref->uid.empty() && ds->metadata.uid != ref->uid) return false;
  return true;
}

// Mirrors podByCreationTimestampAndPhase (pkg/controller/daemon): bound pods
// first, then older creationTimestamp, then name.
bool pod_order(const Pod* a, const Pod* b) {
  bool ab = !a->spec.node_name.empty(), bb = !b->spec.node_name.empty();
  if (ab != bb) return ab;
  auto at = a->metadata.creation_timestamp, bt = b->metadata.creation_timestamp;
  if (at != bt) {
    if (!at) return false;
    if (!bt) return true;
    return *at < *bt;
  }
  return a->metadata.name < b->metadata.name;
}

// Pods of `op`'s DaemonSet mapped to `node` (getNodesToDaemonPods: bound or
// pinned through the injected affinity), in pod_order.
std::vector<const Pod*> pair_pods(const StateIndex& index, const Operand& op, const DaemonSet* ds,
                                  const std::string& node) {
  std::vector<const Pod*> out;
  for (const Pod* p : index.pods_on(node))
    if (owned_by(*p, op, ds)) out.push_back(p);
  std::sort(out.begin(), out.end(), pod_order);
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
  return d && owned_by(p, *d, index.daemonset(d->daemonset));
}

std::vector<const Pod*> driver_pods(const StateIndex& index, const Catalog& catalog, const std::string& node) {
  std::vector<const Pod*> out;
  for (const Pod* p : index.pods_on(node))
    if (is_driver_pod(index, catalog, *p)) out.push_back(p);
  std::sort(out.begin(), out.end(), pod_order);
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

int restarts(const Pod& p) {
  int r = 0;
  for (const auto& c : p.status.container_statuses) r += c.restart_count;
  return r;
}

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

class Diagnoser {
 public:
  Diagnoser(const StateIndex& index, const Catalog& catalog, const Node& node)
      : index_(index), catalog_(catalog), node_(node), name_(node.metadata.name) {
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
    for (const auto& op : catalog_.operands) {
      std::vector<Finding> fs;
      fs.push_back(state_finding(op));
      foreign_pods(op, fs);
      d.per_operand.push_back(std::move(fs));
    }
    needs(d.consistency);
    multiple_drivers(d.consistency);
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
    if (node_.unschedulable) {
      out.push_back(make("node-cordoned", Severity::kInfo, name_, "",
                         "node is cordoned (spec.unschedulable): DaemonSet pods tolerate "
                         "node.kubernetes.io/unschedulable and still go there"));
    }
  }

  // ---- one finding per operand ----
  Finding state_finding(const Operand& op) {
    auto value = node_label(node_, op.label);
    const DaemonSet* ds = index_.daemonset(op.daemonset);
    auto pods = pair_pods(index_, op, ds, name_);
    LabelClass cls = classify_label(value);
    if (cls != LabelClass::kTrue) {
      Finding f = label_finding(op, value, cls);
      for (const Pod* p : pods) pod_evidence(f, *p);
      return f;
    }
    if (!ds) {
      Finding f = make("no-daemonset", Severity::kInfo, name_, op.name,
                       "deploy label is \"true\" but there is no DaemonSet " + op.daemonset + " in namespace " +
                           index_.state().namespace_ +
                           ": the operand is disabled in the ClusterPolicy (or not deployed); the label alone "
                           "does nothing (R4)");
      f.evidence.emplace_back("label " + op.label, "true");
      f.evidence.emplace_back("daemonset", op.daemonset + " (absent)");
      for (const Pod* p : pods) pod_evidence(f, *p);
      return f;
    }
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
    if (const Pod* p = present_pod(index_, catalog_, op, name_)) {
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
    return pod_state_finding(op, *live.front());
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
      f = make("stuck-in-init", Severity::kError, name_, op.name, reason);
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

  Finding paused_driver(const Operand& op, const std::optional<std::string>& value) {
    const std::string& v = *value;
    const std::string suffix = "_paused-for-driver-upgrade";
    std::string restore = v == "paused-for-driver-upgrade" ? "true" : v.substr(0, v.size() - suffix.size());
    // In progress while a driver pod on the node is still in its Init phase
    // (k8s-driver-manager is its init container) or the upgrade controller is
    // mid-way; stuck otherwise (#316, #416, #367, k8s-driver-manager#118).
    auto upgrade = node_label(node_, "nvidia.com/gpu-driver-upgrade-state");
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
    const DaemonSet* ds = index_.daemonset(op.daemonset);
    for (const Pod* pp : index_.pods_on(name_)) {
      const Pod& p = *pp;
      auto it = p.metadata.labels.find("app");
      if (it == p.metadata.labels.end() || it->second != op.app) continue;
      if (owned_by(p, op, ds)) continue;
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
        const DaemonSet* mds = index_.daemonset(m->daemonset);
        auto mp = pair_pods(index_, *m, mds, name_);
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

  const StateIndex& index_;
  const Catalog& catalog_;
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

static NodeDiagnosis diagnose_node(const StateIndex& index, const Catalog& catalog, const Node& node) {
  return Diagnoser(index, catalog, node).run();
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
  std::vector<Finding> out;
  for (const Node* n : targets) {
    NodeDiagnosis d = diagnose_node(index, catalog, *n);
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
  if (const DaemonSet* ds = index.daemonset(op->daemonset)) {
    e.daemonset_found = true;
    e.placement = should_run(*ds, n);
  }
  NodeDiagnosis d = diagnose_node(index, catalog, n);
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
