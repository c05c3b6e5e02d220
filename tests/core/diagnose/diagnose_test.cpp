// Unit tests for core/diagnose/diagnose.h: one or more per rule, on small states built
// in code. Expected values come from the rules in docs/reference/gpu-operator.md and
// docs/reference/daemonset-semantics.md, not from program output.
#include "core/diagnose/diagnose.h"

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>

#include <algorithm>

#include "core/base/errors.h"

namespace gpuops::core {
namespace {

const std::string kNs = "gpu-operator";

Catalog lab() { return load_catalog("lab"); }

Node gpu_node(const std::string& name, Labels extra = {}) {
  Node n;
  n.metadata.name = name;
  n.metadata.labels = {{"kubernetes.io/hostname", name},
                       {"feature.node.kubernetes.io/pci-10de.present", "true"},
                       {"nvidia.com/gpu.present", "true"}};
  for (const char* op : {"driver", "container-toolkit", "device-plugin", "gpu-feature-discovery", "dcgm-exporter"})
    n.metadata.labels[std::string("nvidia.com/gpu.deploy.") + op] = "true";
  for (auto& [k, v] : extra) n.metadata.labels[k] = v;
  n.conditions.push_back({"Ready", "True", "KubeletReady", ""});
  return n;
}

DaemonSet ds_for(const Operand& op) {
  DaemonSet ds;
  ds.metadata.name = op.daemonset;
  ds.metadata.namespace_ = kNs;
  ds.metadata.uid = "uid-" + op.daemonset;
  ds.selector.match_labels = {{"app", op.app}};
  ds.template_.labels = {{"app", op.app}};
  ds.template_.spec.node_selector = {{op.label, "true"}};
  ds.template_.spec.tolerations = {{"nvidia.com/gpu", "Exists", "", "NoSchedule", std::nullopt}};
  return ds;
}

Pod pod_for(const Operand& op, const std::string& node, const std::string& suffix = "abcde") {
  Pod p;
  p.metadata.name = op.daemonset + "-" + suffix;
  p.metadata.namespace_ = kNs;
  p.metadata.labels = {{"app", op.app}};
  p.metadata.owner_references.push_back({"apps/v1", "DaemonSet", op.daemonset, "uid-" + op.daemonset, true});
  p.spec.node_name = node;
  p.spec.containers.push_back({op.container, op.image, {}, {}});
  p.status.phase = "Running";
  p.status.conditions = {{"PodScheduled", "True", "", "", std::nullopt},
                         {"Initialized", "True", "", "", std::nullopt},
                         {"Ready", "True", "", "", std::nullopt}};
  p.status.container_statuses.push_back({op.container, true, 0, "running", "", "", std::nullopt});
  return p;
}

// A healthy lab cluster: every node runs all five operands.
ClusterState healthy(const std::vector<Node>& nodes) {
  ClusterState s;
  s.namespace_ = kNs;
  s.nodes = nodes;
  Catalog c = lab();
  for (const auto& op : c.operands) {
    s.daemonsets.push_back(ds_for(op));
    for (const auto& n : nodes) s.pods.push_back(pod_for(op, n.metadata.name));
  }
  return s;
}

void remove_pods(ClusterState& s, const std::string& ds_name, const std::string& node) {
  s.pods.erase(std::remove_if(s.pods.begin(), s.pods.end(),
                              [&](const Pod& p) {
                                auto* r = p.metadata.controller_ref();
                                return r && r->name == ds_name && p.target_node() == node;
                              }),
               s.pods.end());
}

Pod& pod_of(ClusterState& s, const std::string& ds_name, const std::string& node) {
  for (auto& p : s.pods) {
    auto* r = p.metadata.controller_ref();
    if (r && r->name == ds_name && p.target_node() == node) return p;
  }
  throw std::runtime_error("no pod");
}

const Finding* find(const std::vector<Finding>& fs, const std::string& node, const std::string& operand,
                    const std::string& name) {
  for (const auto& f : fs)
    if (f.node == node && f.operand == operand && f.name == name) return &f;
  return nullptr;
}

// The state finding of a pair: the first finding naming the operand.
Finding state_of(const std::vector<Finding>& fs, const std::string& node, const std::string& operand) {
  for (const auto& f : fs)
    if (f.node == node && f.operand == operand) return f;
  throw std::runtime_error("no finding for " + node + "/" + operand);
}

std::string ev(const Finding& f, const std::string& key) {
  for (const auto& [k, v] : f.evidence)
    if (k == key) return v;
  return "<no evidence " + key + ">";
}

// ---------------------------------------------------------------- healthy

TEST(Diagnose, HealthyNodeGivesRunningForEveryOperandAndExitZero) {
  ClusterState s = healthy({gpu_node("gpu-a")});
  auto fs = diagnose(s, lab(), {});
  ASSERT_EQ(fs.size(), 5u);  // one state finding per operand, nothing else
  for (const auto& f : fs) {
    EXPECT_EQ(f.name, "running");
    EXPECT_EQ(f.severity, Severity::kInfo);
    EXPECT_EQ(f.node, "gpu-a");
  }
  EXPECT_EQ(fs[0].operand, "driver");  // catalog order
  EXPECT_EQ(fs[4].operand, "dcgm-exporter");
  EXPECT_EQ(ev(fs[2], "status"), "Running");
  EXPECT_EQ(ev(fs[2], "ready"), "1/1");
  EXPECT_EQ(exit_code(fs), 0);
}

TEST(Diagnose, NodesSortedWhenNoneGivenAndInGivenOrderOtherwise) {
  ClusterState s = healthy({gpu_node("gpu-b"), gpu_node("gpu-a")});
  auto all = diagnose(s, lab(), {});
  EXPECT_EQ(all.front().node, "gpu-a");
  EXPECT_EQ(all.back().node, "gpu-b");
  auto some = diagnose(s, lab(), {"gpu-b", "gpu-a", "gpu-b"});
  ASSERT_EQ(some.size(), 10u);
  EXPECT_EQ(some.front().node, "gpu-b");
  EXPECT_EQ(some.back().node, "gpu-a");
}

TEST(Diagnose, UnknownNodeIsClusterError404) {
  ClusterState s = healthy({gpu_node("gpu-a")});
  try {
    diagnose(s, lab(), {"nope"});
    FAIL() << "no throw";
  } catch (const ClusterError& e) {
    EXPECT_EQ(e.http_status(), 404);
    EXPECT_EQ(std::string(e.what()), "nodes \"nope\" not found");
  }
}

// ---------------------------------------------------------------- label values

TEST(LabelClass, EveryValueTheOperatorAndItsHelpersWrite) {
  EXPECT_EQ(classify_label(std::nullopt), LabelClass::kAbsent);
  EXPECT_EQ(classify_label("true"), LabelClass::kTrue);
  EXPECT_EQ(classify_label("false"), LabelClass::kFalse);
  EXPECT_EQ(classify_label("pre-installed"), LabelClass::kPreInstalled);
  EXPECT_EQ(classify_label("paused-for-driver-upgrade"), LabelClass::kPausedForDriverUpgrade);
  EXPECT_EQ(classify_label("false_paused-for-driver-upgrade"), LabelClass::kPausedForDriverUpgrade);
  EXPECT_EQ(classify_label("pre-installed_paused-for-driver-upgrade"), LabelClass::kPausedForDriverUpgrade);
  EXPECT_EQ(classify_label("paused-for-mig-change"), LabelClass::kPausedForMigChange);
  EXPECT_EQ(classify_label("paused-for-vgpu-change"), LabelClass::kPausedForVgpuChange);
  EXPECT_EQ(classify_label(""), LabelClass::kEmpty);
  EXPECT_EQ(classify_label("True"), LabelClass::kOther);  // selectors compare exact strings
  EXPECT_EQ(classify_label("yes"), LabelClass::kOther);
}

TEST(Diagnose, EmptyValueIsAStaleMarkerAndAnErrorOnAGpuNode) {
  ClusterState s = healthy({gpu_node("gpu-a", {{"nvidia.com/gpu.deploy.device-plugin", ""}})});
  remove_pods(s, "nvidia-device-plugin-daemonset", "gpu-a");
  auto fs = diagnose(s, lab(), {});
  const Finding& f = state_of(fs, "gpu-a", "device-plugin");
  EXPECT_EQ(f.name, "label-empty-value");
  EXPECT_EQ(f.severity, Severity::kError);
  EXPECT_EQ(ev(f, "label nvidia.com/gpu.deploy.device-plugin"), "");
  EXPECT_NE(f.reason.find("stale pause marker"), std::string::npos);
  EXPECT_EQ(find(fs, "gpu-a", "", "missing-deploy-labels"), nullptr);  // "" is not absent
  EXPECT_EQ(exit_code(fs), 1);
}

TEST(Diagnose, FalseIsARespectedOptOutAndInfo) {
  ClusterState s = healthy({gpu_node("gpu-a", {{"nvidia.com/gpu.deploy.dcgm-exporter", "false"}})});
  remove_pods(s, "nvidia-dcgm-exporter", "gpu-a");
  auto fs = diagnose(s, lab(), {});
  const Finding& f = state_of(fs, "gpu-a", "dcgm-exporter");
  EXPECT_EQ(f.name, "label-false");
  EXPECT_EQ(f.severity, Severity::kInfo);
  EXPECT_EQ(exit_code(fs), 0);
}

TEST(Diagnose, PreInstalledDriverIsAHostDriverAndSatisfiesTheToolkit) {
  ClusterState s = healthy({gpu_node("gpu-a", {{"nvidia.com/gpu.deploy.driver", "pre-installed"}})});
  remove_pods(s, "nvidia-driver-daemonset", "gpu-a");
  auto fs = diagnose(s, lab(), {});
  const Finding& f = state_of(fs, "gpu-a", "driver");
  EXPECT_EQ(f.name, "label-pre-installed");
  EXPECT_EQ(f.severity, Severity::kInfo);
  EXPECT_EQ(find(fs, "gpu-a", "container-toolkit", "container-toolkit-without-driver"), nullptr);
  EXPECT_EQ(exit_code(fs), 0);
}

TEST(Diagnose, PausedForDriverUpgradeStuckWhenTheDriverPodCrashes) {
  ClusterState s = healthy({gpu_node("gpu-a", {{"nvidia.com/gpu.deploy.device-plugin", "paused-for-driver-upgrade"}})});
  remove_pods(s, "nvidia-device-plugin-daemonset", "gpu-a");
  Pod& d = pod_of(s, "nvidia-driver-daemonset", "gpu-a");
  d.status.phase = "Pending";
  d.status.conditions = {{"Initialized", "False", "", "", std::nullopt}, {"Ready", "False", "", "", std::nullopt}};
  d.status.init_container_statuses = {
      {"k8s-driver-manager", false, 5, "waiting", "CrashLoopBackOff", "", std::nullopt}};
  d.status.container_statuses = {{"driver", false, 0, "waiting", "PodInitializing", "", std::nullopt}};
  auto fs = diagnose(s, lab(), {});
  const Finding& f = state_of(fs, "gpu-a", "device-plugin");
  EXPECT_EQ(f.name, "label-paused-for-driver-upgrade");
  EXPECT_EQ(f.severity, Severity::kError);
  EXPECT_NE(f.reason.find("stuck"), std::string::npos);
  EXPECT_EQ(ev(f, "driver pod"), "nvidia-driver-daemonset-abcde Init:CrashLoopBackOff");
}

TEST(Diagnose, PausedForDriverUpgradeInProgressWhileTheDriverPodInitializes) {
  ClusterState s =
      healthy({gpu_node("gpu-a", {{"nvidia.com/gpu.deploy.device-plugin", "false_paused-for-driver-upgrade"}})});
  remove_pods(s, "nvidia-device-plugin-daemonset", "gpu-a");
  Pod& d = pod_of(s, "nvidia-driver-daemonset", "gpu-a");
  d.status.phase = "Pending";
  d.status.conditions = {{"Initialized", "False", "", "", std::nullopt}};
  d.status.init_container_statuses = {{"k8s-driver-manager", false, 0, "running", "", "", std::nullopt}};
  d.status.container_statuses = {{"driver", false, 0, "waiting", "PodInitializing", "", std::nullopt}};
  auto fs = diagnose(s, lab(), {});
  const Finding& f = state_of(fs, "gpu-a", "device-plugin");
  EXPECT_EQ(f.name, "label-paused-for-driver-upgrade");
  EXPECT_EQ(f.severity, Severity::kWarning);
  EXPECT_NE(f.reason.find("restores \"false\""), std::string::npos);  // X_paused restores X
  EXPECT_EQ(ev(f, "driver pod"), "nvidia-driver-daemonset-abcde Init:0/1");
}

TEST(Diagnose, PausedForMigChangeStuckWhenStateFailedInProgressWhenPending) {
  Node n = gpu_node("gpu-a", {{"nvidia.com/gpu.deploy.gpu-feature-discovery", "paused-for-mig-change"},
                              {"nvidia.com/mig.config.state", "failed"}});
  ClusterState s = healthy({n});
  remove_pods(s, "gpu-feature-discovery", "gpu-a");
  const Finding& f = state_of(diagnose(s, lab(), {}), "gpu-a", "gpu-feature-discovery");
  EXPECT_EQ(f.name, "label-paused-for-mig-change");
  EXPECT_EQ(f.severity, Severity::kError);
  EXPECT_EQ(ev(f, "label nvidia.com/mig.config.state"), "failed");
  s.nodes[0].metadata.labels["nvidia.com/mig.config.state"] = "pending";
  EXPECT_EQ(state_of(diagnose(s, lab(), {}), "gpu-a", "gpu-feature-discovery").severity, Severity::kWarning);
}

TEST(Diagnose, PausedForVgpuChange) {
  Node n = gpu_node("gpu-a", {{"nvidia.com/gpu.deploy.dcgm-exporter", "paused-for-vgpu-change"}});
  ClusterState s = healthy({n});
  remove_pods(s, "nvidia-dcgm-exporter", "gpu-a");
  const Finding& f = state_of(diagnose(s, lab(), {}), "gpu-a", "dcgm-exporter");
  EXPECT_EQ(f.name, "label-paused-for-vgpu-change");
  EXPECT_EQ(f.severity, Severity::kWarning);
  EXPECT_EQ(ev(f, "label nvidia.com/vgpu.config.state"), "(absent)");
}

TEST(Diagnose, UnrecognisedValueIsReported) {
  ClusterState s = healthy({gpu_node("gpu-a", {{"nvidia.com/gpu.deploy.device-plugin", "True"}})});
  remove_pods(s, "nvidia-device-plugin-daemonset", "gpu-a");
  const Finding& f = state_of(diagnose(s, lab(), {}), "gpu-a", "device-plugin");
  EXPECT_EQ(f.name, "label-value-unrecognised");
  EXPECT_EQ(f.severity, Severity::kError);
}

// ---------------------------------------------------------------- GPU node recognition

TEST(GpuNode, OnlyTheThreeNfdKeysCount) {
  Node n;
  EXPECT_FALSE(is_gpu_node(n));
  for (const char* k :
       {"feature.node.kubernetes.io/pci-10de.present", "feature.node.kubernetes.io/pci-0302_10de.present",
        "feature.node.kubernetes.io/pci-0300_10de.present"}) {
    Node m;
    m.metadata.labels[k] = "true";
    EXPECT_TRUE(is_gpu_node(m)) << k;
    m.metadata.labels[k] = "false";
    EXPECT_FALSE(is_gpu_node(m)) << k;
  }
  Node dev;
  dev.metadata.labels["feature.node.kubernetes.io/pci-10de_2330.present"] = "true";
  dev.metadata.labels["feature.node.kubernetes.io/pci-8086.present"] = "true";
  EXPECT_FALSE(is_gpu_node(dev));
  EXPECT_EQ(unrecognised_nvidia_pci_labels(dev),
            std::vector<std::string>{"feature.node.kubernetes.io/pci-10de_2330.present"});
}

TEST(Diagnose, NvidiaPciLabelWithDeviceIdIsNotRecognised) {
  Node n = gpu_node("gpu-a");
  n.metadata.labels.erase("feature.node.kubernetes.io/pci-10de.present");
  n.metadata.labels["feature.node.kubernetes.io/pci-0302_10de_20b5.present"] = "true";
  ClusterState s = healthy({n});
  auto fs = diagnose(s, lab(), {});
  const Finding* f = find(fs, "gpu-a", "", "nfd-label-unrecognised");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kError);
  EXPECT_EQ(ev(*f, "label feature.node.kubernetes.io/pci-0302_10de_20b5.present"), "true");
  EXPECT_NE(find(fs, "gpu-a", "", "deploy-labels-on-non-gpu-node"), nullptr);
}

TEST(Diagnose, GpuPresentWithoutNfdLabel) {
  Node n = gpu_node("gpu-a");
  n.metadata.labels.erase("feature.node.kubernetes.io/pci-10de.present");
  ClusterState s = healthy({n});
  auto fs = diagnose(s, lab(), {});
  ASSERT_NE(find(fs, "gpu-a", "", "gpu-present-without-nfd"), nullptr);
}

TEST(Diagnose, CpuNodeIsInfoOnly) {
  Node n;
  n.metadata.name = "cpu-a";
  n.conditions.push_back({"Ready", "True", "", ""});
  ClusterState s = healthy({});
  s.nodes.push_back(n);
  auto fs = diagnose(s, lab(), {});
  ASSERT_EQ(fs.size(), 6u);
  EXPECT_EQ(fs[0].name, "not-a-gpu-node");
  for (size_t i = 1; i < fs.size(); ++i) {
    EXPECT_EQ(fs[i].name, "label-absent");
    EXPECT_EQ(fs[i].severity, Severity::kInfo);
  }
  EXPECT_EQ(exit_code(fs), 0);
}

TEST(Diagnose, GpuNodeLackingItsConfigsLabelsNamesThem) {
  Node n = gpu_node("gpu-b");
  n.metadata.labels.erase("nvidia.com/gpu.deploy.device-plugin");
  n.metadata.labels.erase("nvidia.com/gpu.deploy.dcgm-exporter");
  ClusterState s = healthy({n});
  remove_pods(s, "nvidia-device-plugin-daemonset", "gpu-b");
  remove_pods(s, "nvidia-dcgm-exporter", "gpu-b");
  auto fs = diagnose(s, lab(), {});
  const Finding* f = find(fs, "gpu-b", "", "missing-deploy-labels");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kError);
  EXPECT_NE(f->reason.find("lacks deploy labels device-plugin, dcgm-exporter"), std::string::npos);
  EXPECT_EQ(ev(*f, "label nvidia.com/gpu.deploy.device-plugin"), "(absent)");
  EXPECT_EQ(state_of(fs, "gpu-b", "device-plugin").name, "label-absent");
  EXPECT_EQ(state_of(fs, "gpu-b", "device-plugin").severity, Severity::kError);
}

// A user's catalog may place an operand by any label key; naming it used to
// cut "nvidia.com/gpu.deploy." off a key that lacked it (substr out of range).
TEST(Diagnose, CatalogLabelOutsideTheDeployPrefixIsNamedWhole) {
  Catalog c = parse_catalog(
      "operands:\n  - name: tool\n    label: example.com/tool\n    daemonset: tool-ds\n"
      "    workload_configs: [container]\n",
      "c.yaml");
  ClusterState s = healthy({gpu_node("gpu-a")});
  auto fs = diagnose(s, c, {});
  const Finding* f = find(fs, "gpu-a", "", "missing-deploy-labels");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->reason.find("lacks deploy labels example.com/tool:"), std::string::npos) << f->reason;
}

TEST(ExpectedLabels, PerWorkloadConfig) {
  Catalog full = load_catalog("gpu-operator");
  auto strip = [](std::vector<std::string> v) {
    for (auto& k : v) k = k.substr(std::string("nvidia.com/gpu.deploy.").size());
    return v;
  };
  Node c = gpu_node("c");
  EXPECT_EQ(strip(expected_deploy_labels(c, full)),
            (std::vector<std::string>{"driver", "container-toolkit", "device-plugin", "gpu-feature-discovery",
                                      "dcgm-exporter", "operator-validator", "dcgm", "node-status-exporter"}));
  c.metadata.labels["nvidia.com/gpu.product"] = "NVIDIA-A100-SXM4-40GB";  // hasMIGCapableGPU by product
  EXPECT_EQ(
      strip(expected_deploy_labels(c, full)),
      (std::vector<std::string>{"driver", "container-toolkit", "device-plugin", "gpu-feature-discovery",
                                "dcgm-exporter", "operator-validator", "dcgm", "mig-manager", "node-status-exporter"}));
  c.metadata.labels["nvidia.com/mig.capable"] = "false";  // GFD's label wins over the product
  EXPECT_EQ(expected_deploy_labels(c, full).size(), 8u);
  c.metadata.labels["nvidia.com/mig.capable"] = "true";
  c.metadata.labels["nvidia.com/vgpu.host-driver-version"] = "550.54.16";  // never on a vGPU host
  EXPECT_EQ(expected_deploy_labels(c, full).size(), 8u);
  Node p = gpu_node("p", {{"nvidia.com/gpu.workload.config", "vm-passthrough"}});
  EXPECT_EQ(strip(expected_deploy_labels(p, full)),
            (std::vector<std::string>{"sandbox-validator", "vfio-manager", "sandbox-device-plugin", "kata-manager",
                                      "cc-manager"}));
  Node v = gpu_node("v", {{"nvidia.com/gpu.workload.config", "vm-vgpu"}});
  EXPECT_EQ(strip(expected_deploy_labels(v, full)),
            (std::vector<std::string>{"vgpu-manager", "vgpu-device-manager", "sandbox-validator",
                                      "sandbox-device-plugin", "cc-manager"}));
  Node bad = gpu_node("x", {{"nvidia.com/gpu.workload.config", "vm"}});
  EXPECT_EQ(workload_config(bad), "container");
}

TEST(Diagnose, DriverLabelOnVmVgpuNodeIsNotExpected) {
  Catalog full = load_catalog("gpu-operator");
  Node n = gpu_node("v", {{"nvidia.com/gpu.workload.config", "vm-vgpu"}});
  n.metadata.labels.erase("nvidia.com/gpu.deploy.driver");
  ClusterState s = healthy({n});
  remove_pods(s, "nvidia-driver-daemonset", "v");
  const Finding& f = state_of(diagnose(s, full, {}), "v", "driver");
  EXPECT_EQ(f.name, "label-absent");
  EXPECT_EQ(f.severity, Severity::kInfo);
}

TEST(Diagnose, OperandsFalseExplainsTheAbsenceOfEverything) {
  Node n = gpu_node("gpu-a", {{"nvidia.com/gpu.deploy.operands", "false"}});
  for (const char* op : {"driver", "container-toolkit", "device-plugin", "gpu-feature-discovery", "dcgm-exporter"})
    n.metadata.labels.erase(std::string("nvidia.com/gpu.deploy.") + op);
  ClusterState s = healthy({});
  s.nodes.push_back(n);
  auto fs = diagnose(s, lab(), {});
  ASSERT_EQ(fs.size(), 6u);
  EXPECT_EQ(fs[0].name, "operands-disabled");
  EXPECT_EQ(fs[0].operand, "");
  for (size_t i = 1; i < 6; ++i) EXPECT_EQ(fs[i].name, "operands-disabled");
  EXPECT_EQ(find(fs, "gpu-a", "", "missing-deploy-labels"), nullptr);
  EXPECT_EQ(exit_code(fs), 0);
}

// ---------------------------------------------------------------- placement

TEST(Diagnose, NoDaemonSetWithLabelTrueIsANoOp) {
  ClusterState s = healthy({gpu_node("gpu-a")});
  s.daemonsets.erase(s.daemonsets.begin() + 4);  // dcgm-exporter
  remove_pods(s, "nvidia-dcgm-exporter", "gpu-a");
  const Finding& f = state_of(diagnose(s, lab(), {}), "gpu-a", "dcgm-exporter");
  EXPECT_EQ(f.name, "no-daemonset");
  EXPECT_EQ(f.severity, Severity::kInfo);
}

TEST(Diagnose, UntoleratedTaintIsNamed) {
  Node n = gpu_node("gpu-b");
  n.taints.push_back({"dedicated", "ml-team", "NoSchedule", std::nullopt});
  ClusterState s = healthy({n});
  remove_pods(s, "nvidia-device-plugin-daemonset", "gpu-b");
  const Finding& f = state_of(diagnose(s, lab(), {}), "gpu-b", "device-plugin");
  EXPECT_EQ(f.name, "untolerated-taint");
  EXPECT_EQ(f.severity, Severity::kError);
  EXPECT_EQ(ev(f, "taint"), "dedicated=ml-team:NoSchedule");
  EXPECT_NE(f.reason.find("dedicated=ml-team:NoSchedule"), std::string::npos);
}

TEST(Diagnose, NodeNotReadyTaintAndCondition) {
  Node n = gpu_node("gpu-a");
  n.conditions = {{"Ready", "False", "KubeletNotReady", "container runtime is down"}};
  n.taints.push_back({"node.kubernetes.io/not-ready", "", "NoSchedule", std::nullopt});
  ClusterState s = healthy({n});
  remove_pods(s, "nvidia-dcgm-exporter", "gpu-a");
  auto fs = diagnose(s, lab(), {});
  const Finding* node_f = find(fs, "gpu-a", "", "node-not-ready");
  ASSERT_NE(node_f, nullptr);
  EXPECT_EQ(ev(*node_f, "reason"), "KubeletNotReady");
  EXPECT_EQ(state_of(fs, "gpu-a", "dcgm-exporter").name, "node-not-ready");
  // A pod already there stays (shouldContinueRunning): misscheduled.
  const Finding& drv = state_of(fs, "gpu-a", "driver");
  EXPECT_EQ(drv.name, "misscheduled");
  EXPECT_EQ(ev(drv, "shouldContinueRunning"), "true");
}

TEST(Diagnose, NodeUnreachable) {
  Node n = gpu_node("gpu-a");
  n.conditions = {{"Ready", "Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status."}};
  ClusterState s = healthy({n});
  ASSERT_NE(find(diagnose(s, lab(), {}), "gpu-a", "", "node-unreachable"), nullptr);
}

TEST(Diagnose, CordonedNodeStillGetsDaemonPods) {
  Node n = gpu_node("gpu-a");
  n.unschedulable = true;
  n.taints.push_back({"node.kubernetes.io/unschedulable", "", "NoSchedule", std::nullopt});
  ClusterState s = healthy({n});
  remove_pods(s, "gpu-feature-discovery", "gpu-a");
  auto fs = diagnose(s, lab(), {});
  const Finding* f = find(fs, "gpu-a", "", "node-cordoned");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kInfo);
  // The controller still wants the node (the unschedulable taint is tolerated).
  EXPECT_EQ(state_of(fs, "gpu-a", "gpu-feature-discovery").name, "no-pod");
}

TEST(Diagnose, OtherSelectorKeyMismatch) {
  ClusterState s = healthy({gpu_node("gpu-a")});
  s.daemonsets[0].template_.spec.node_selector["feature.node.kubernetes.io/kernel-version.full"] = "6.8.0-101-generic";
  remove_pods(s, "nvidia-driver-daemonset", "gpu-a");
  const Finding& f = state_of(diagnose(s, lab(), {}), "gpu-a", "driver");
  EXPECT_EQ(f.name, "selector-mismatch");
  EXPECT_EQ(f.severity, Severity::kWarning);
  EXPECT_EQ(ev(f, "label feature.node.kubernetes.io/kernel-version.full"), "(absent)");
}

TEST(Diagnose, CapabilityLabelMismatchIsNotCapable) {
  Catalog full = load_catalog("gpu-operator");
  ClusterState s = healthy({gpu_node("gpu-a")});
  DaemonSet mps = ds_for(*full.by_name("mps-control-daemon"));
  mps.template_.spec.node_selector["nvidia.com/mps.capable"] = "true";
  s.daemonsets.push_back(mps);
  const Finding& f = state_of(diagnose(s, full, {}), "gpu-a", "mps-control-daemon");
  EXPECT_EQ(f.name, "not-capable");
  EXPECT_EQ(f.severity, Severity::kInfo);
}

// ---------------------------------------------------------------- pod state

TEST(Diagnose, RunningNotReadyCrashLoop) {
  ClusterState s = healthy({gpu_node("gpu-a")});
  Pod& p = pod_of(s, "nvidia-device-plugin-daemonset", "gpu-a");
  p.status.conditions[2].status = "False";
  p.status.container_statuses[0] = {"device-plugin", false, 7, "waiting", "CrashLoopBackOff", "back-off 5m0s", 1};
  auto fs = diagnose(s, lab(), {});
  const Finding& f = state_of(fs, "gpu-a", "device-plugin");
  EXPECT_EQ(f.name, "running-not-ready");
  EXPECT_EQ(f.severity, Severity::kError);
  EXPECT_EQ(ev(f, "status"), "CrashLoopBackOff");
  EXPECT_EQ(ev(f, "ready"), "0/1");
  EXPECT_EQ(ev(f, "restarts"), "7");
  EXPECT_EQ(exit_code(fs), 1);
}

TEST(Diagnose, PendingUnschedulableCarriesTheSchedulerMessage) {
  ClusterState s = healthy({gpu_node("gpu-small")});
  Pod& p = pod_of(s, "nvidia-driver-daemonset", "gpu-small");
  p.spec.node_name = "";
  p.spec.required_node_affinity =
      std::vector<NodeSelectorTerm>{{{}, {{"metadata.name", SelectorOperator::kIn, {"gpu-small"}, ""}}}};
  p.status = {};
  p.status.phase = "Pending";
  const std::string msg =
      "0/2 nodes are available: 1 Insufficient memory, 1 node(s) didn't match Pod's node "
      "affinity/selector.";
  p.status.conditions = {{"PodScheduled", "False", "Unschedulable", msg, std::nullopt}};
  const Finding& f = state_of(diagnose(s, lab(), {}), "gpu-small", "driver");
  EXPECT_EQ(f.name, "pending-unschedulable");
  EXPECT_EQ(ev(f, "scheduler"), msg);
  EXPECT_EQ(ev(f, "status"), "Pending");
  EXPECT_NE(f.reason.find("Insufficient memory"), std::string::npos);
}

TEST(Diagnose, StuckInInitNamesTheGateAndTheValidator) {
  ClusterState s = healthy({gpu_node("gpu-a")});
  Pod& p = pod_of(s, "gpu-feature-discovery", "gpu-a");
  p.status.phase = "Pending";
  p.status.conditions = {{"Initialized", "False", "", "", std::nullopt}, {"Ready", "False", "", "", std::nullopt}};
  p.status.init_container_statuses = {{"toolkit-validation", false, 0, "running", "", "", std::nullopt}};
  p.status.container_statuses = {{"gfd", false, 0, "waiting", "PodInitializing", "", std::nullopt}};
  const Finding& f = state_of(diagnose(s, lab(), {}), "gpu-a", "gpu-feature-discovery");
  EXPECT_EQ(f.name, "stuck-in-init");
  EXPECT_EQ(ev(f, "gate"), "toolkit-validation");
  EXPECT_EQ(ev(f, "status"), "Init:0/1");
  EXPECT_EQ(ev(f, "label nvidia.com/gpu.deploy.operator-validator"), "(absent)");
  EXPECT_NE(f.reason.find("only the operator-validator"), std::string::npos);
}

TEST(Diagnose, StuckOnDriverValidationWithAFalsePreInstalled) {
  // #398: pre-installed without a host driver; the toolkit waits on driver-validation forever.
  ClusterState s = healthy({gpu_node("gpu-a", {{"nvidia.com/gpu.deploy.driver", "pre-installed"}})});
  remove_pods(s, "nvidia-driver-daemonset", "gpu-a");
  Pod& p = pod_of(s, "nvidia-container-toolkit-daemonset", "gpu-a");
  p.status.phase = "Pending";
  p.status.conditions = {{"Initialized", "False", "", "", std::nullopt}, {"Ready", "False", "", "", std::nullopt}};
  p.status.init_container_statuses = {{"driver-validation", false, 0, "running", "", "", std::nullopt}};
  const Finding f = state_of(diagnose(s, lab(), {}), "gpu-a", "container-toolkit");
  EXPECT_EQ(f.name, "stuck-in-init");
  EXPECT_EQ(ev(f, "gate"), "driver-validation");
  EXPECT_EQ(ev(f, "label nvidia.com/gpu.deploy.driver"), "pre-installed");
  EXPECT_NE(f.reason.find("false positive"), std::string::npos);
}

TEST(Diagnose, ImagePullFailure) {
  ClusterState s = healthy({gpu_node("gpu-a")});
  Pod& p = pod_of(s, "nvidia-dcgm-exporter", "gpu-a");
  p.status.phase = "Pending";
  p.status.conditions = {{"Initialized", "True", "", "", std::nullopt}, {"Ready", "False", "", "", std::nullopt}};
  p.status.container_statuses[0] = {"dcgm-exporter",          false,       0, "waiting", "ImagePullBackOff",
                                    "Back-off pulling image", std::nullopt};
  const Finding& f = state_of(diagnose(s, lab(), {}), "gpu-a", "dcgm-exporter");
  EXPECT_EQ(f.name, "image-pull-failed");
  EXPECT_EQ(ev(f, "status"), "ImagePullBackOff");
  EXPECT_EQ(ev(f, "message"), "Back-off pulling image");
}

TEST(Diagnose, TerminatingAfterOptOutIsTheLabelsFindingWithPodEvidence) {
  ClusterState s = healthy({gpu_node("gpu-b", {{"nvidia.com/gpu.deploy.dcgm-exporter", "false"}})});
  pod_of(s, "nvidia-dcgm-exporter", "gpu-b").metadata.deletion_timestamp = Time(Duration(1000));
  const Finding& f = state_of(diagnose(s, lab(), {}), "gpu-b", "dcgm-exporter");
  EXPECT_EQ(f.name, "label-false");
  EXPECT_EQ(ev(f, "status"), "Terminating");
  EXPECT_EQ(ev(f, "phase"), "Running");
}

TEST(Diagnose, TerminatingWithLabelTrue) {
  ClusterState s = healthy({gpu_node("gpu-b")});
  pod_of(s, "nvidia-dcgm-exporter", "gpu-b").metadata.deletion_timestamp = Time(Duration(1000));
  const Finding& f = state_of(diagnose(s, lab(), {}), "gpu-b", "dcgm-exporter");
  EXPECT_EQ(f.name, "terminating");
  EXPECT_EQ(ev(f, "status"), "Terminating");
}

TEST(Diagnose, PodWithTheAppLabelButAnotherOwner) {
  Catalog c = lab();
  ClusterState s = healthy({gpu_node("gpu-a")});
  remove_pods(s, "nvidia-device-plugin-daemonset", "gpu-a");
  Pod stray = pod_for(*c.by_name("device-plugin"), "gpu-a", "zzzzz");
  stray.metadata.owner_references = {{"apps/v1", "ReplicaSet", "my-plugin-7d9f", "rs-uid", true}};
  s.pods.push_back(stray);
  auto fs = diagnose(s, c, {});
  EXPECT_EQ(state_of(fs, "gpu-a", "device-plugin").name, "no-pod");
  const Finding* f = find(fs, "gpu-a", "device-plugin", "foreign-pod");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(ev(*f, "controlled-by"), "ReplicaSet/my-plugin-7d9f");
  EXPECT_EQ(ev(*f, "pod"), "nvidia-device-plugin-daemonset-zzzzz");
}

TEST(Diagnose, PodOfAnOlderDaemonSetWithTheSameNameIsForeign) {
  ClusterState s = healthy({gpu_node("gpu-a")});
  pod_of(s, "nvidia-device-plugin-daemonset", "gpu-a").metadata.owner_references[0].uid = "old-uid";
  auto fs = diagnose(s, lab(), {});
  EXPECT_EQ(state_of(fs, "gpu-a", "device-plugin").name, "no-pod");
  ASSERT_NE(find(fs, "gpu-a", "device-plugin", "foreign-pod"), nullptr);
}

// ---------------------------------------------------------------- order and consistency

TEST(Diagnose, DevicePluginGfdAndExporterWithoutToolkit) {
  ClusterState s = healthy({gpu_node("gpu-a", {{"nvidia.com/gpu.deploy.container-toolkit", "false"}})});
  remove_pods(s, "nvidia-container-toolkit-daemonset", "gpu-a");
  auto fs = diagnose(s, lab(), {});
  for (const char* op : {"device-plugin", "gpu-feature-discovery", "dcgm-exporter"}) {
    const Finding* f = find(fs, "gpu-a", op, std::string(op) + "-without-toolkit");
    ASSERT_NE(f, nullptr) << op;
    EXPECT_EQ(f->severity, Severity::kError);
    EXPECT_EQ(ev(*f, "container-toolkit pod"), "none");
  }
  EXPECT_EQ(exit_code(fs), 1);
}

TEST(Diagnose, DcgmWithoutToolkitInTheFullCatalog) {
  Catalog full = load_catalog("gpu-operator");
  Node n = gpu_node("gpu-a", {{"nvidia.com/gpu.deploy.dcgm", "true"}});
  n.metadata.labels.erase("nvidia.com/gpu.deploy.container-toolkit");
  ClusterState s = healthy({n});
  remove_pods(s, "nvidia-container-toolkit-daemonset", "gpu-a");
  s.daemonsets.push_back(ds_for(*full.by_name("dcgm")));
  s.pods.push_back(pod_for(*full.by_name("dcgm"), "gpu-a"));
  ASSERT_NE(find(diagnose(s, full, {}), "gpu-a", "dcgm", "dcgm-without-toolkit"), nullptr);
}

TEST(Diagnose, ToolkitWithoutDriverPodOrHostMarker) {
  // The driver label "true" but its pod is Pending: no driver pod runs, no host marker.
  ClusterState s = healthy({gpu_node("gpu-a")});
  Pod& d = pod_of(s, "nvidia-driver-daemonset", "gpu-a");
  d.status.phase = "Pending";
  d.status.conditions = {{"Ready", "False", "", "", std::nullopt}};
  auto fs = diagnose(s, lab(), {});
  ASSERT_NE(find(fs, "gpu-a", "container-toolkit", "container-toolkit-without-driver"), nullptr);
  // driver=false on a GPU node is a host driver marker.
  s.nodes[0].metadata.labels["nvidia.com/gpu.deploy.driver"] = "false";
  remove_pods(s, "nvidia-driver-daemonset", "gpu-a");
  EXPECT_EQ(find(diagnose(s, lab(), {}), "gpu-a", "container-toolkit", "container-toolkit-without-driver"), nullptr);
}

TEST(Diagnose, ADriverPodOfAnotherDaemonSetCountsAsADriverPod) {
  ClusterState s = healthy({gpu_node("gpu-a")});
  remove_pods(s, "nvidia-driver-daemonset", "gpu-a");
  Pod pre = pod_for(*lab().by_name("driver"), "gpu-a", "x");
  pre.metadata.name = "nvidia-driver-daemonset-6.8.0-101-generic-ubuntu24.04-x1y2z";
  pre.metadata.owner_references[0].name = "nvidia-driver-daemonset-6.8.0-101-generic-ubuntu24.04";
  pre.metadata.labels["app.kubernetes.io/component"] = "nvidia-driver";
  s.pods.push_back(pre);
  auto fs = diagnose(s, lab(), {});
  EXPECT_EQ(find(fs, "gpu-a", "container-toolkit", "container-toolkit-without-driver"), nullptr);
}

TEST(Diagnose, MoreThanOneDriverPodOnANode) {
  ClusterState s = healthy({gpu_node("gpu-a")});
  Pod pre = pod_for(*lab().by_name("driver"), "gpu-a", "x");
  pre.metadata.name = "nvidia-driver-daemonset-6.8.0-101-generic-ubuntu24.04-x1y2z";
  pre.metadata.owner_references[0].name = "nvidia-driver-daemonset-6.8.0-101-generic-ubuntu24.04";
  pre.metadata.labels["app.kubernetes.io/component"] = "nvidia-driver";
  pre.status.phase = "Pending";
  s.pods.push_back(pre);
  auto fs = diagnose(s, lab(), {});
  const Finding* f = find(fs, "gpu-a", "driver", "multiple-driver-pods");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kError);
  EXPECT_EQ(f->evidence.size(), 2u);
  // A terminating one does not count.
  s.pods.back().metadata.deletion_timestamp = Time(Duration(1));
  EXPECT_EQ(find(diagnose(s, lab(), {}), "gpu-a", "driver", "multiple-driver-pods"), nullptr);
}

// ---------------------------------------------------------------- STATUS column (printPod)

TEST(StatusColumn, MirrorsPrintPod) {
  Pod p;
  p.status.phase = "Pending";
  EXPECT_EQ(pod_status_column(p), "Pending");
  p.status.init_container_statuses = {{"a", true, 0, "terminated", "Completed", "", 0},
                                      {"b", false, 0, "running", "", "", std::nullopt}};
  p.spec.init_containers = {{"a", "", {}, {}}, {"b", "", {}, {}}, {"c", "", {}, {}}};
  EXPECT_EQ(pod_status_column(p), "Init:1/3");
  p.status.init_container_statuses[1] = {"b", false, 3, "waiting", "CrashLoopBackOff", "", std::nullopt};
  EXPECT_EQ(pod_status_column(p), "Init:CrashLoopBackOff");
  p.status.init_container_statuses[1] = {"b", false, 3, "terminated", "", "", 2};
  EXPECT_EQ(pod_status_column(p), "Init:ExitCode:2");
  Pod r;
  r.status.phase = "Running";
  r.status.container_statuses = {{"x", false, 0, "waiting", "ContainerCreating", "", std::nullopt}};
  EXPECT_EQ(pod_status_column(r), "ContainerCreating");
  r.status.container_statuses = {{"x", true, 0, "running", "", "", std::nullopt}};
  EXPECT_EQ(pod_status_column(r), "Running");
  r.metadata.deletion_timestamp = Time(Duration(5));
  EXPECT_EQ(pod_status_column(r), "Terminating");
  r.status.reason = "NodeLost";
  EXPECT_EQ(pod_status_column(r), "Unknown");
  Pod f;
  f.status.phase = "Failed";
  f.status.reason = "OutOfmemory";
  f.metadata.deletion_timestamp = Time(Duration(5));
  EXPECT_EQ(pod_status_column(f), "OutOfmemory");  // terminal: no Terminating
  Pod g;
  g.status.phase = "Pending";
  g.status.conditions = {{"PodScheduled", "False", "SchedulingGated", "", std::nullopt}};
  EXPECT_EQ(pod_status_column(g), "SchedulingGated");
}

// ---------------------------------------------------------------- explain and rendering

TEST(Explain, PairFindingsAndPlacementVerdict) {
  Node n = gpu_node("gpu-b");
  n.taints.push_back({"dedicated", "ml-team", "NoSchedule", std::nullopt});
  ClusterState s = healthy({n});
  remove_pods(s, "nvidia-driver-daemonset", "gpu-b");
  Explanation e = explain(s, lab(), "gpu-b", "driver");
  EXPECT_EQ(e.daemonset, "nvidia-driver-daemonset");
  EXPECT_TRUE(e.daemonset_found);
  ASSERT_TRUE(e.placement);
  EXPECT_FALSE(e.placement->should_run);
  EXPECT_TRUE(e.placement->should_continue_running);
  ASSERT_EQ(e.findings.size(), 1u);
  EXPECT_EQ(e.findings[0].name, "untolerated-taint");
  EXPECT_EQ(e.label_value, std::optional<std::string>("true"));
  std::string text = render_text(e);
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "gpu-b driver: daemonset nvidia-driver-daemonset found; label nvidia.com/gpu.deploy.driver=true");
  EXPECT_NE(text.find("placement: shouldRun=false shouldContinueRunning=true\n"), std::string::npos);
  auto j = boost::json::parse(render_json(e)).as_object();
  EXPECT_EQ(j.at("placement").as_object().at("shouldRun").as_bool(), false);
  EXPECT_EQ(j.at("findings").as_array().size(), 1u);
}

TEST(Explain, UnknownOperandIsInputError) {
  ClusterState s = healthy({gpu_node("gpu-a")});
  EXPECT_THROW(explain(s, lab(), "gpu-a", "nope"), InputError);
  EXPECT_THROW(explain(s, lab(), "nope", "driver"), ClusterError);
}

TEST(Render, TextAndJsonShapes) {
  Finding f;
  f.name = "label-empty-value";
  f.severity = Severity::kWarning;
  f.node = "gpu-a";
  f.operand = "device-plugin";
  f.reason = "why";
  f.evidence = {{"label nvidia.com/gpu.deploy.device-plugin", ""}, {"pod", "p-1"}};
  Finding g;
  g.name = "node-cordoned";
  g.node = "gpu-a";
  g.reason = "cordoned";
  EXPECT_EQ(render_text({f, g}),
            "gpu-a device-plugin warning label-empty-value: why\n"
            "    label nvidia.com/gpu.deploy.device-plugin: \"\"\n"
            "    pod: p-1\n"
            "gpu-a - info node-cordoned: cordoned\n");
  EXPECT_EQ(render_text(std::vector<Finding>{}), "");
  auto j = boost::json::parse(render_json({f, g})).as_array();
  ASSERT_EQ(j.size(), 2u);
  auto o = j[0].as_object();
  EXPECT_EQ(o.at("severity").as_string(), "warning");
  EXPECT_EQ(o.at("name").as_string(), "label-empty-value");
  EXPECT_EQ(o.at("evidence").as_array()[0].as_object().at("value").as_string(), "");
  EXPECT_EQ(j[1].as_object().at("operand").as_string(), "");
  EXPECT_EQ(exit_code({f, g}), 0);
  g.severity = Severity::kError;
  EXPECT_EQ(exit_code({f, g}), 1);
}

}  // namespace
}  // namespace gpuops::core
