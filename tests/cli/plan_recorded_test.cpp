// The sequence recorded from the real GPU Operator v25.3.4
// (docs/reference/gpu-operator-live.md, "What it did"), each step planned from
// a dump without its ClusterPolicy (what `kubectl get nodes,daemonsets,pods
// -A -o json` holds), with the v25.3 catalog: the operator is simulated with
// a policy inferred from its DaemonSets, and the plan must give what the real
// operator did. Expected values are the reference's measurements.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "../common/cli_run.h"
#include "../common/edited_dump.h"

namespace {

namespace json = boost::json;
using gpuops::testing::run_gpuops;

bool is(const json::object& o, const char* kind, const std::string& name) {
  return o.at("kind") == kind && o.at("metadata").at("name") == json::string_view(name);
}

// healthy-v26.7 without its ClusterPolicy, `edit` applied to the rest.
std::string without_policy(const std::string& name, const std::function<bool(json::object&)>& edit = {}) {
  return gpuops::testing::edited_dump("healthy-v26.7", name, [&](json::object& o) {
    if (o.at("kind") == "ClusterPolicy") return false;
    return edit ? edit(o) : true;
  });
}

json::object plan(const std::string& dump, std::vector<std::string> change, int* code = nullptr) {
  std::vector<std::string> args{"plan", "--operands", "gpu-operator-v25.3", "--snapshot", dump, "-o", "json"};
  args.insert(args.end(), change.begin(), change.end());
  auto r = run_gpuops(args);
  if (code) *code = r.code;
  EXPECT_TRUE(r.code == 0 || r.code == 1) << r.err;
  return json::parse(r.out).as_object();
}

// The label changes of `node`, key -> after (null: removed).
std::map<std::string, json::value> labels_of(const json::object& p, const std::string& node) {
  std::map<std::string, json::value> out;
  for (const auto& l : p.at("labels").as_array())
    if (l.at("node") == json::string_view(node)) out[std::string(l.at("key").as_string())] = l.at("after");
  return out;
}

size_t pods(const json::object& p, const std::string& node, const char* kind) {
  size_t n = 0;
  for (const auto& x : p.at("pods").as_array())
    if (x.at("node") == json::string_view(node) && x.at("kind") == kind) ++n;
  return n;
}

const std::vector<std::string> kDeployKeys = {"nvidia.com/gpu.deploy.driver",
                                              "nvidia.com/gpu.deploy.container-toolkit",
                                              "nvidia.com/gpu.deploy.device-plugin",
                                              "nvidia.com/gpu.deploy.gpu-feature-discovery",
                                              "nvidia.com/gpu.deploy.dcgm",
                                              "nvidia.com/gpu.deploy.dcgm-exporter",
                                              "nvidia.com/gpu.deploy.node-status-exporter",
                                              "nvidia.com/gpu.deploy.operator-validator"};

// Step 2: the opt-out is kept, its pod goes.
TEST(PlanRecorded, AnOptOutIsKept) {
  int code = 0;
  auto p = plan(without_policy("rec-optout"),
                {"label", "node", "gpu-node-2", "nvidia.com/gpu.deploy.dcgm-exporter=false", "--overwrite"}, &code);
  EXPECT_EQ(code, 1);
  auto l = labels_of(p, "gpu-node-2");
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(l["nvidia.com/gpu.deploy.dcgm-exporter"], "false");
  EXPECT_EQ(pods(p, "gpu-node-2", "deleted"), 1u);
}

// Step 3: operands=false removes every deploy label, the opt-out too; taking
// operands away writes them all back "true" and the pods come back: the
// opt-out is lost.
TEST(PlanRecorded, OperandsFalseAndBackLosesTheOptOut) {
  const std::string dump = without_policy("rec-operands", [](json::object& o) {
    if (is(o, "Node", "gpu-node-2"))
      o["metadata"].as_object()["labels"].as_object()["nvidia.com/gpu.deploy.dcgm-exporter"] = "false";
    return !is(o, "Pod", "nvidia-dcgm-exporter-g2a");
  });
  auto off = plan(dump, {"label", "node", "gpu-node-2", "nvidia.com/gpu.deploy.operands=false"});
  auto l = labels_of(off, "gpu-node-2");
  for (const auto& k : kDeployKeys) {
    ASSERT_TRUE(l.count(k)) << k;
    EXPECT_TRUE(l[k].is_null()) << k;
  }
  EXPECT_EQ(pods(off, "gpu-node-2", "deleted"), 5u);  // driver, toolkit, validator, device plugin, GFD
  const std::string steps = ::testing::TempDir() + "/rec-operands.yaml";
  std::ofstream(steps) << "- label: {node: gpu-node-2, set: {nvidia.com/gpu.deploy.operands: \"false\"}}\n"
                          "- label: {node: gpu-node-2, remove: [nvidia.com/gpu.deploy.operands]}\n";
  auto back = plan(dump, {"--steps", steps});
  auto b = labels_of(back, "gpu-node-2");
  for (const auto& k : kDeployKeys) EXPECT_EQ(b[k], "true") << k;
  for (const auto& x : back.at("labels").as_array()) {
    if (x.at("key") == "nvidia.com/gpu.deploy.dcgm-exporter") {
      EXPECT_EQ(x.at("optOutLost"), true);
    }
  }
  // "seven pods back": the five replaced and the exporter's created again.
  EXPECT_EQ(pods(back, "gpu-node-2", "created"), 1u);
}

// Step 4: a deploy key deleted is put back "true"; its pod is deleted and a
// new one created.
TEST(PlanRecorded, ADeletedKeyIsPutBack) {
  auto p =
      plan(without_policy("rec-deleted-key"), {"label", "node", "gpu-node-1", "nvidia.com/gpu.deploy.device-plugin-"});
  bool found = false;
  for (const auto& x : p.at("labels").as_array())
    if (x.at("key") == "nvidia.com/gpu.deploy.device-plugin") {
      found = true;
      EXPECT_EQ(x.at("after"), "true");
      EXPECT_EQ(x.at("history"), json::parse(R"(["true", null, "true"])"));
    }
  EXPECT_TRUE(found);
  EXPECT_EQ(pods(p, "gpu-node-1", "replaced"), 1u);
}

// Step 4 again, from a dump caught between the key's deletion and the
// operator's next reconcile (v25.3 puts it back "true" within the second,
// and the device plugin pod comes back): that is the input's drift, shown
// apart, before the change. The maintainer's fix for missing deploy labels
// (label the key back "true") then adds nothing of its own; the exit is 1,
// since the cluster changes anyway.
TEST(PlanRecorded, AKeyTheOperatorHasNotYetPutBackIsTheInputsDrift) {
  const std::string dump = without_policy("rec-drift", [](json::object& o) {
    if (is(o, "Node", "gpu-node-2"))
      o["metadata"].as_object()["labels"].as_object().erase("nvidia.com/gpu.deploy.device-plugin");
    return !(o.at("kind") == "Pod" &&
             o.at("metadata").at("name").as_string().starts_with("nvidia-device-plugin-daemonset-") &&
             o.at("spec").at("nodeName") == "gpu-node-2");
  });
  int code = 0;
  auto p = plan(dump, {"label", "node", "gpu-node-2", "nvidia.com/gpu.deploy.device-plugin=true"}, &code);
  EXPECT_EQ(code, 1);
  const json::object& drift = p.at("drift").as_object();
  EXPECT_EQ(drift.at("changes"), true);
  auto l = labels_of(drift, "gpu-node-2");
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(l["nvidia.com/gpu.deploy.device-plugin"], "true");
  ASSERT_EQ(drift.at("labels").as_array().size(), 1u);
  EXPECT_EQ(drift.at("labels").as_array()[0].at("before"), nullptr);
  EXPECT_EQ(drift.at("labels").as_array()[0].at("writer"), "operator");
  EXPECT_EQ(pods(drift, "gpu-node-2", "created"), 1u);
  EXPECT_EQ(drift.at("pods").as_array().size(), 1u);
  // A ClusterPolicy plan inferred has no status to compare: no change claimed,
  // nor a finding about its status cleared.
  EXPECT_TRUE(drift.at("clusterPolicies").as_array().empty());
  for (const char* side : {"findingsNew", "findingsCleared"})
    for (const auto& f : drift.at(side).as_array())
      EXPECT_FALSE(f.at("node").as_string().starts_with("ClusterPolicy/")) << json::serialize(f);
  // The change itself, on top of the drift: nothing.
  EXPECT_EQ(p.at("changes"), false);
  EXPECT_TRUE(p.at("pods").as_array().empty());
  EXPECT_TRUE(p.at("labels").as_array().empty());

  // A settled input has no drift.
  int settled_code = 0;
  auto q = plan(without_policy("rec-no-drift"),
                {"label", "node", "gpu-node-2", "nvidia.com/gpu.deploy.device-plugin=true"}, &settled_code);
  EXPECT_EQ(settled_code, 0);
  EXPECT_EQ(q.at("drift").at("changes"), false);
}

// Step 5: a deploy label set by hand on the CPU node is kept (v25.3's
// labeller acts only where it sets or clears gpu.present); the device plugin
// runs there. Then gpu.present=true by hand: "Node no longer has GPUs",
// gpu.present=false and the deploy label removed.
TEST(PlanRecorded, AHandLabelOnTheCpuNodeIsKeptUntilGpuPresent) {
  auto p = plan(without_policy("rec-cpu"), {"label", "node", "cpu-node-1", "nvidia.com/gpu.deploy.device-plugin=true"});
  auto l = labels_of(p, "cpu-node-1");
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(l["nvidia.com/gpu.deploy.device-plugin"], "true");
  EXPECT_EQ(pods(p, "cpu-node-1", "created"), 1u);
  const std::string labelled = without_policy("rec-cpu-labelled", [](json::object& o) {
    if (is(o, "Node", "cpu-node-1"))
      o["metadata"].as_object()["labels"].as_object()["nvidia.com/gpu.deploy.device-plugin"] = "true";
    return true;
  });
  auto q = plan(labelled, {"label", "node", "cpu-node-1", "nvidia.com/gpu.present=true"});
  auto m = labels_of(q, "cpu-node-1");
  EXPECT_EQ(m["nvidia.com/gpu.present"], "false");
  EXPECT_TRUE(m["nvidia.com/gpu.deploy.device-plugin"].is_null());
}

// Step 6: a fourth GPU node (NFD's labels) gets gpu.present and the eight
// deploy labels, and the operand pods of a GPU node.
TEST(PlanRecorded, AFourthGpuNodeIsLabelled) {
  const std::string node = ::testing::TempDir() + "/gpu-node-4.yaml";
  std::ofstream(node) << "apiVersion: v1\nkind: Node\nmetadata:\n  name: gpu-node-4\n  labels:\n"
                         "    kubernetes.io/hostname: gpu-node-4\n"
                         "    feature.node.kubernetes.io/pci-10de.present: \"true\"\n"
                         "    feature.node.kubernetes.io/kernel-version.full: 6.8.0-101-generic\n"
                         "    feature.node.kubernetes.io/system-os_release.ID: ubuntu\n"
                         "    feature.node.kubernetes.io/system-os_release.VERSION_ID: \"24.04\"\n"
                         "spec:\n  taints:\n  - {key: nvidia.com/gpu, effect: NoSchedule}\n"
                         "status:\n  allocatable: {cpu: \"32\", memory: 257000000Ki, pods: \"110\"}\n"
                         "  conditions:\n  - {type: Ready, status: \"True\"}\n";
  auto p = plan(without_policy("rec-fourth"), {"apply", "-f", node});
  auto l = labels_of(p, "gpu-node-4");
  EXPECT_EQ(l["nvidia.com/gpu.present"], "true");
  for (const auto& k : kDeployKeys) EXPECT_EQ(l[k], "true") << k;
  EXPECT_GE(pods(p, "gpu-node-4", "created"), 6u);  // driver, toolkit, validator, device plugin, GFD, exporter
}

// A deploy label lowered to "false" on an operands=false node fires none of
// the operator's watches (no pod, no DaemonSet event), so the real v25.3.4
// operator leaves it. tests/data/operator/optout-while-operands-false is the
// real cluster's dump at that point (`kubectl get nodes,daemonsets,pods -A
// -o json` on the end-to-end control plane with the real operator, taken by
// scripts/plan-predict.sh --operator, seed 21, before change 7; managedFields
// left out): gpu-node-2 has operands=false and gpu-feature-discovery=false.
// Removing operands=false, the real operator put the other seven keys back
// as "true", kept gpu-feature-discovery=false (addGPUStateLabels keeps any
// existing value), and six pods came (all but GFD's). Imported, the install
// is adopted as its last reconcile left it: no drift.
TEST(PlanRecorded, AnOptOutSetWhileOperandsFalseOutlivesTheirReturn) {
  const std::string dump =
      std::string(GPUOPS_SOURCE_DIR) + "/tests/data/operator/optout-while-operands-false/dump.json";
  int code = 0;
  auto p = plan(dump, {"-n", "gpu-operator", "label", "node", "gpu-node-2", "nvidia.com/gpu.deploy.operands-"}, &code);
  EXPECT_EQ(code, 1);
  EXPECT_EQ(p.at("drift").at("changes"), false);
  auto l = labels_of(p, "gpu-node-2");
  EXPECT_EQ(l.count("nvidia.com/gpu.deploy.gpu-feature-discovery"), 0u);
  for (const char* key : {"container-toolkit", "dcgm", "dcgm-exporter", "device-plugin", "driver",
                          "node-status-exporter", "operator-validator"})
    EXPECT_EQ(l[std::string("nvidia.com/gpu.deploy.") + key], "true") << key;
  EXPECT_EQ(l["nvidia.com/gpu.deploy.operands"], nullptr);
  EXPECT_EQ(l.size(), 8u);
  EXPECT_EQ(pods(p, "gpu-node-2", "created"), 6u);
  EXPECT_EQ(p.at("pods").as_array().size(), 6u);
}

// The real cluster (end-to-end control plane, real v25.3.4 operator) after
// spec.daemonsets.tolerations was set and then removed again: the OnDelete
// driver DaemonSet is at generation 3 with its original template, its pods
// still of generation 1, and the real DaemonSet controller counts them
// updated (status.updatedNumberScheduled 2: constructHistory found the
// template in their revision, hash bb6f58766), so the policy is ready. The
// dump carries no ControllerRevision; imported, the pods' revision is taken
// as current (DaemonSetController::adopt_imported_revision): no drift, the
// policy stays ready, and gpu-node-2's node-status-exporter=false (written
// on an operands=false node, which fires none of the operator's watches)
// stays. Recorded with tests/data/operator/driver-template-changed-back's
// ClusterPolicy beside it (managedFields left out).
TEST(PlanRecorded, APodOfATemplateChangedBackIsUpdated) {
  const std::string dump =
      std::string(GPUOPS_SOURCE_DIR) + "/tests/data/operator/driver-template-changed-back/dump.json";
  int code = 0;
  auto p = plan(dump, {"-n", "gpu-operator", "label", "node", "cpu-node-1", "example.com/rack=r1"}, &code);
  EXPECT_EQ(code, 1);
  EXPECT_EQ(p.at("drift").at("changes"), false) << json::serialize(p.at("drift"));
  EXPECT_TRUE(p.at("clusterPolicies").as_array().empty());
  EXPECT_TRUE(p.at("pods").as_array().empty());
  auto l = labels_of(p, "cpu-node-1");
  EXPECT_EQ(l.size(), 1u);
  EXPECT_EQ(l["example.com/rack"], "r1");
  EXPECT_TRUE(labels_of(p, "gpu-node-2").empty());
}

// The real cluster after `patch clusterpolicy` set spec.daemonsets.tolerations
// to the nvidia.com/gpu toleration and one more (tests/data/operator/
// daemonsets-tolerations: its dump without the ClusterPolicy, recorded by
// scripts/plan-predict.sh --operator, seed 1, before change 2). Every
// operand DaemonSet holds the same two tolerations, which are not the
// assets' own: plan infers spec.daemonsets.tolerations. Removing them, the
// real operator re-rendered all nine DaemonSets (generation 2 -> 3), the
// rolling ones replaced their 18 pods, the OnDelete driver kept its three.
TEST(PlanRecorded, InferredTolerationsRemovedRollEveryDaemonSet) {
  const std::string dump = std::string(GPUOPS_SOURCE_DIR) + "/tests/data/operator/daemonsets-tolerations/dump.json";
  auto r = run_gpuops({"plan", "--snapshot", dump, "-n", "gpu-operator", "-o", "json", "patch", "clusterpolicy",
                       "cluster-policy", "--type", "merge", "-p", R"({"spec":{"daemonsets":{"tolerations":null}}})"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("; daemonsets.tolerations as every DaemonSet has it;"), std::string::npos) << r.err;
  auto p = json::parse(r.out).as_object();
  EXPECT_EQ(p.at("daemonsets").as_array().size(), 9u);
  size_t replaced = 0, driver = 0;
  for (const auto& x : p.at("pods").as_array()) {
    replaced += x.at("kind") == "replaced";
    driver += x.at("operand") == "driver";
  }
  EXPECT_EQ(replaced, 18u);
  EXPECT_EQ(p.at("pods").as_array().size(), 18u);
  EXPECT_EQ(driver, 0u);
}

// A NoSchedule taint nothing tolerates, added over running pods, enqueues no
// DaemonSet since v1.33 (syncNodeUpdate: (shouldRun && !scheduled) ||
// (!shouldContinueRunning && scheduled) || (scheduled && numberMisscheduled >
// 0)), so the real statuses stay as the last sync left them.
// tests/data/operator/noschedule-taint-stale-status is the real cluster at
// that point (end-to-end control plane, real v25.3.4 operator,
// `kubectl get nodes,daemonsets,pods,clusterpolicies -A -o json` taken by
// scripts/plan-predict.sh --operator, seed 5, after change 5; managedFields
// left out): gpu-node-1 keeps its pods under gpuops.test/dedicated=ml:NoSchedule
// and every DaemonSet counts them desired (desiredNumberScheduled 2,
// numberMisscheduled 0); gpu-node-3 has operands=false and a hand-set
// node-status-exporter=false. On that cluster a taint on the CPU node changed
// nothing: the real operator kept the hand label (it relabels on a DaemonSet
// event, and none came). Imported, the statuses are kept as the real ones
// (DaemonSetController::adopt_imported_revision): no drift, nothing changes.
TEST(PlanRecorded, ANoScheduleTaintOverRunningPodsLeavesTheStatusesAsTheyAre) {
  const std::string dump =
      std::string(GPUOPS_SOURCE_DIR) + "/tests/data/operator/noschedule-taint-stale-status/dump.json";
  int code = 0;
  auto p =
      plan(dump, {"-n", "gpu-operator", "taint", "node", "cpu-node-1", "nvidia.com/gpu=present:NoSchedule"}, &code);
  EXPECT_EQ(code, 0);
  EXPECT_EQ(p.at("drift").at("changes"), false);
  EXPECT_TRUE(p.at("labels").as_array().empty());  // gpu-node-3's hand label stays
  EXPECT_TRUE(p.at("pods").as_array().empty());
  EXPECT_TRUE(p.at("daemonsets").as_array().empty());
}

}  // namespace
