// gpuops plan: what a change would do, on dumps and must-gathers (the live
// cluster's read-only proof is tests/real/plan_readonly_test.cpp). Expected
// values come from the rules that decide them: the DaemonSet controller's
// placement (nodeSelector, taints: NodeShouldRunDaemonPod), kubectl's
// verbs (label's --overwrite, drain's filters), and the operator's
// labeller (removeAllGPUStateLabels for nvidia.com/gpu.deploy.operands=false,
// docs/reference/gpu-operator.md §2.6).
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "../common/cli_run.h"
#include "../common/edited_dump.h"

namespace {

using gpuops::testing::run_gpuops;

std::string lab_state() { return std::string(GPUOPS_CASES_DIR) + "/lab-final-state"; }
std::string op_dump(const std::string& c) { return std::string(GPUOPS_SOURCE_DIR) + "/tests/data/operator/" + c; }

bool has(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

// LAB.md step 4: the toolkit's label lowered on lab-node-1: its pod goes
// (the nodeSelector no longer matches), and with it the device plugin's
// and GFD's prerequisite (the order rules of diagnose).
TEST(Plan, LabelLoweredDeletesThePod) {
  auto r = run_gpuops({"plan", "--snapshot", lab_state(), "label", "node", "lab-node-1",
                       "nvidia.com/gpu.deploy.container-toolkit=false", "--overwrite"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_TRUE(
      has(r.out, "lab-node-1:\n  label nvidia.com/gpu.deploy.container-toolkit: \"true\" -> \"false\" (the change)\n"))
      << r.out;
  EXPECT_TRUE(has(r.out,
                  "(container-toolkit) deleted: nodeSelector nvidia.com/gpu.deploy.container-toolkit=true: node "
                  "has \"false\"\n"))
      << r.out;
  EXPECT_TRUE(has(r.out, "lab-node-1 driver=no toolkit=yes->no device-plugin=yes gfd=yes dcgm=no\n")) << r.out;
  EXPECT_TRUE(has(r.out, "  + lab-node-1 device-plugin error device-plugin-without-toolkit:")) << r.out;
  EXPECT_TRUE(has(r.out,
                  "\n1 pod deleted on 1 node, 0 created, 0 replaced, 0 labels changed by the operator or its "
                  "helpers, 2 new findings, 0 cleared\n"))
      << r.out;
}

// kubectl label refuses to change a value without --overwrite.
TEST(Plan, LabelWithoutOverwriteIsRefused) {
  auto r = run_gpuops({"plan", "--snapshot", lab_state(), "label", "node", "lab-node-1",
                       "nvidia.com/gpu.deploy.container-toolkit=false"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(
      has(r.err, "'nvidia.com/gpu.deploy.container-toolkit' already has a value (true), and --overwrite is false"))
      << r.err;
}

// kubectl label's parseLabels refuses a key both set and removed ("x=y x-"):
// the plan planned the set and exited 1.
TEST(Plan, LabelSetAndRemovedIsRefused) {
  for (const auto& changes : std::vector<std::vector<std::string>>{{"x=y", "x-"}, {"x-", "x=y"}}) {
    std::vector<std::string> args{"plan", "--snapshot", lab_state(), "label", "node", "lab-node-1"};
    args.insert(args.end(), changes.begin(), changes.end());
    auto r = run_gpuops(args);
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_TRUE(has(r.err, "can not both modify and remove a label in the same command")) << r.err;
    EXPECT_EQ(r.out, "");
  }
}

// A DaemonSet deleted with --cascade=orphan leaves its pods running, without
// an owner (the garbage collector's orphan policy): no pod is deleted or
// created (a hostile-input run: the same pod was listed as deleted and as
// created), and the operand's cell goes, so the plan changes something.
TEST(Plan, OrphanedPodsAreNeitherDeletedNorCreated) {
  const std::string f = ::testing::TempDir() + "/plan-orphan.yaml";
  std::ofstream(f) << "- deleteDaemonSet: {name: nvidia-driver-daemonset, cascade: orphan}\n";
  auto r = run_gpuops({"plan", "--snapshot", lab_state(), "--steps", f, "-o", "json"});
  EXPECT_EQ(r.code, 1) << r.err << r.out;
  auto j = boost::json::parse(r.out).as_object();
  EXPECT_EQ(j.at("pods").as_array().size(), 0u) << r.out;
  EXPECT_EQ(j.at("changes").as_bool(), true);
  EXPECT_TRUE(has(r.out, "\"summary\":\"0 pods deleted on 0 nodes, 0 created, 0 replaced")) << r.out;
  auto text = run_gpuops({"plan", "--snapshot", lab_state(), "--steps", f});
  EXPECT_TRUE(has(text.out, "lab-node-0 driver=yes->no")) << text.out;
}

// A change that changes nothing: exit 0, as kubectl diff.
TEST(Plan, NoChangeExitsZero) {
  auto r = run_gpuops({"plan", "--snapshot", lab_state(), "label", "node", "lab-node-1",
                       "nvidia.com/gpu.deploy.container-toolkit=true", "-o", "json"});
  EXPECT_EQ(r.code, 0) << r.err << r.out;
  auto j = boost::json::parse(r.out).as_object();
  EXPECT_EQ(j.at("changes").as_bool(), false);
  EXPECT_EQ(j.at("pods").as_array().size(), 0u);
  EXPECT_EQ(j.at("summary").as_string(),
            "0 pods deleted on 0 nodes, 0 created, 0 replaced, 0 labels changed by the operator or its helpers, 0 new "
            "findings, 0 cleared");
}

// A NoSchedule taint the DaemonSets do not tolerate: nothing is evicted
// (NoSchedule keeps running pods: shouldContinueRunning), so no change; a
// NoExecute one evicts every untolerating operand pod.
TEST(Plan, TaintsAsTheDaemonSetControllerReadsThem) {
  auto r = run_gpuops({"plan", "--snapshot", lab_state(), "taint", "node", "lab-node-0", "dedicated=ml:NoSchedule"});
  EXPECT_EQ(r.code, 0) << r.err << r.out;
  r = run_gpuops(
      {"plan", "--snapshot", lab_state(), "taint", "node", "lab-node-0", "dedicated=ml:NoExecute", "-o", "json"});
  EXPECT_EQ(r.code, 1) << r.err;
  auto j = boost::json::parse(r.out).as_object();
  size_t deleted = 0;
  for (const auto& p : j.at("pods").as_array()) {
    EXPECT_EQ(p.at("node").as_string(), "lab-node-0");
    EXPECT_EQ(p.at("kind").as_string(), "deleted");
    EXPECT_EQ(p.at("why").as_string(), "untolerated taint dedicated=ml:NoExecute");
    ++deleted;
  }
  EXPECT_EQ(deleted, 5u);  // lab-node-0 runs all five operands (lab-final-state/README.md)
  auto bad = run_gpuops({"plan", "--snapshot", lab_state(), "taint", "node", "lab-node-0", "dedicated=ml:Sometimes"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_TRUE(has(bad.err, "invalid taint effect: Sometimes")) << bad.err;
  // kubectl taint's parseTaint and parseTaints (a hostile-input run: these
  // were planned, `a=b=c` as the value "b=c").
  const std::vector<std::pair<std::vector<std::string>, std::string>> refused = {
      {{"a=b!c:NoExecute"},
       "invalid taint spec: a=b!c:NoExecute, a valid label must be an empty string or consist of alphanumeric "
       "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
       "'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"},
      {{"a=b=c:NoExecute"}, "invalid taint spec: a=b=c:NoExecute"},
      {{"a:NoExecute:x"}, "invalid taint spec: a:NoExecute:x"},
      {{"a=b:NoExecute", "a=c:NoExecute"}, "duplicated taints with the same key and effect: {a c NoExecute <nil>}"},
  };
  for (const auto& [specs, message] : refused) {
    std::vector<std::string> args{"plan", "--snapshot", lab_state(), "taint", "node", "lab-node-0"};
    args.insert(args.end(), specs.begin(), specs.end());
    auto r2 = run_gpuops(args);
    EXPECT_EQ(r2.code, 2) << specs[0];
    EXPECT_TRUE(has(r2.err, message)) << r2.err;
    EXPECT_EQ(r2.out, "");
  }
}

// Deleting a node takes its pods (pod GC); cordon changes no DaemonSet pod
// (the controller tolerates node.kubernetes.io/unschedulable).
TEST(Plan, DeleteNodeAndCordon) {
  auto r = run_gpuops({"plan", "--snapshot", lab_state(), "delete", "node", "lab-node-2", "-o", "json"});
  EXPECT_EQ(r.code, 1) << r.err;
  auto j = boost::json::parse(r.out).as_object();
  EXPECT_EQ(j.at("nodesRemoved").as_array(), boost::json::array{"lab-node-2"});
  for (const auto& p : j.at("pods").as_array()) EXPECT_EQ(p.at("why").as_string(), "node deleted");
  r = run_gpuops({"plan", "--snapshot", lab_state(), "cordon", "lab-node-2"});
  EXPECT_EQ(r.code, 0) << r.out;
  auto missing = run_gpuops({"plan", "--snapshot", lab_state(), "cordon", "nope"});
  EXPECT_EQ(missing.code, 2);
  EXPECT_TRUE(has(missing.err, "nodes \"nope\" not found")) << missing.err;
}

// A node applied (a node re-joining): plan lists every label it will carry,
// from (absent): those of the manifest as the change's own, and the beta OS
// and arch labels the node lifecycle controller adds from kubernetes.io/os
// and kubernetes.io/arch (reconcileNodeLabels, labelReconcileInfo) as not.
// Its pods are those whose nodeSelector it matches. On a node already there,
// a changed kubernetes.io/arch takes beta.kubernetes.io/arch with it.
TEST(Plan, AppliedNodeCarriesTheLifecycleControllersLabels) {
  std::string f = ::testing::TempDir() + "/plan-node.yaml";
  {
    std::ofstream o(f);
    o << "apiVersion: v1\nkind: Node\nmetadata:\n  name: lab-node-9\n  labels:\n"
         "    kubernetes.io/os: linux\n    kubernetes.io/arch: amd64\n"
         "    nvidia.com/gpu.deploy.driver: \"true\"\n";
  }
  auto r = run_gpuops({"plan", "--snapshot", lab_state(), "apply", "-f", f, "-o", "json"});
  ASSERT_EQ(r.code, 1) << r.err << r.out;
  auto j = boost::json::parse(r.out).as_object();
  EXPECT_EQ(j.at("nodesAdded").as_array(), boost::json::array{"lab-node-9"});
  std::map<std::string, std::pair<std::string, bool>> labels;  // key -> (after, byChange)
  for (const auto& l : j.at("labels").as_array()) {
    ASSERT_EQ(l.at("node").as_string(), "lab-node-9");
    EXPECT_TRUE(l.at("before").is_null());
    labels[std::string(l.at("key").as_string())] = {std::string(l.at("after").as_string()), l.at("byChange").as_bool()};
  }
  const std::map<std::string, std::pair<std::string, bool>> want = {
      {"kubernetes.io/os", {"linux", true}},
      {"kubernetes.io/arch", {"amd64", true}},
      {"nvidia.com/gpu.deploy.driver", {"true", true}},
      {"beta.kubernetes.io/os", {"linux", false}},
      {"beta.kubernetes.io/arch", {"amd64", false}},
  };
  EXPECT_EQ(labels, want);
  // The beta labels are the node lifecycle controller's (reconcileNodeLabels), not the operator's.
  for (const auto& l : j.at("labels").as_array())
    EXPECT_EQ(l.at("writer").as_string(),
              std::string(l.at("key").as_string()).starts_with("beta.") ? "controller" : "change");
  EXPECT_TRUE(has(j.at("summary").as_string().c_str(),
                  "0 labels changed by the operator or its helpers, 2 labels by Kubernetes controllers, "))
      << j.at("summary");
  ASSERT_EQ(j.at("pods").as_array().size(), 1u) << r.out;
  EXPECT_EQ(j.at("pods").as_array()[0].at("daemonset").as_string(), "nvidia-driver-daemonset");
  EXPECT_EQ(j.at("pods").as_array()[0].at("kind").as_string(), "created");

  r = run_gpuops({"plan", "--snapshot", lab_state(), "label", "node", "lab-node-0", "kubernetes.io/arch=arm64",
                  "--overwrite", "-o", "json"});
  ASSERT_EQ(r.code, 1) << r.err << r.out;
  j = boost::json::parse(r.out).as_object();
  labels.clear();
  for (const auto& l : j.at("labels").as_array())
    labels[std::string(l.at("key").as_string())] = {std::string(l.at("after").as_string()), l.at("byChange").as_bool()};
  const std::map<std::string, std::pair<std::string, bool>> arch = {
      {"kubernetes.io/arch", {"arm64", true}},
      {"beta.kubernetes.io/arch", {"arm64", false}},
  };
  EXPECT_EQ(labels, arch);
}

// kubectl drain refuses DaemonSet-managed pods without --ignore-daemonsets.
TEST(Plan, DrainNeedsIgnoreDaemonsets) {
  auto r = run_gpuops({"plan", "--snapshot", lab_state(), "drain", "lab-node-0"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(has(r.err, "cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore)")) << r.err;
  r = run_gpuops({"plan", "--snapshot", lab_state(), "drain", "lab-node-0", "--ignore-daemonsets"});
  EXPECT_EQ(r.code, 0) << r.out;  // only DaemonSet pods there; they stay (the controller tolerates unschedulable)
}

// On a v26.7 install, nvidia.com/gpu.deploy.operands=false: the operator
// removes every deploy label of the node (removeAllGPUStateLabels), so every
// operand pod there goes; the other node is untouched.
TEST(Plan, OperandsFalseOnAnOperatorInstall) {
  auto r = run_gpuops({"plan", "--snapshot", op_dump("healthy-v26.7"), "label", "node", "gpu-node-1",
                       "nvidia.com/gpu.deploy.operands=false", "-o", "json"});
  EXPECT_EQ(r.code, 1) << r.err;
  auto j = boost::json::parse(r.out).as_object();
  size_t removed = 0;
  for (const auto& l : j.at("labels").as_array()) {
    EXPECT_EQ(l.at("node").as_string(), "gpu-node-1");
    std::string key(l.at("key").as_string());
    if (key == "nvidia.com/gpu.deploy.operands") {
      EXPECT_TRUE(l.at("byChange").as_bool());
      continue;
    }
    EXPECT_EQ(key.rfind("nvidia.com/gpu.deploy.", 0), 0u) << key;
    EXPECT_TRUE(l.at("after").is_null()) << key;
    EXPECT_FALSE(l.at("byChange").as_bool());
    EXPECT_EQ(l.at("writer").as_string(), "operator");
    ++removed;
  }
  EXPECT_GE(removed, 8u);  // the eight container-config labels (and v26.7's client)
  for (const auto& p : j.at("pods").as_array()) {
    EXPECT_EQ(p.at("node").as_string(), "gpu-node-1");
    EXPECT_EQ(p.at("kind").as_string(), "deleted");
  }
  EXPECT_FALSE(j.at("pods").as_array().empty());
  EXPECT_EQ(j.at("matrix").at("after").at("gpu-node-2"), j.at("matrix").at("before").at("gpu-node-2"));
}

// The dump README shows (nodes, DaemonSets, pods) holds no ClusterPolicy:
// healthy-v26.7 without it. The operator is still simulated, with a policy
// inferred from its DaemonSets, said once on stderr with the command that
// adds the real one; its labeller answers operands=false as with the real
// policy (removeAllGPUStateLabels), and `patch clusterpolicy` works on the
// inferred one (isStateEnabled false: the DaemonSet and its pods go).
TEST(Plan, WithoutAClusterPolicyTheOperatorIsStillSimulated) {
  int dropped = 0;
  const std::string dump =
      gpuops::testing::edited_dump("healthy-v26.7", "healthy-v26.7-without-clusterpolicy", [&](boost::json::object& o) {
        const bool policy = o.at("kind").as_string() == "ClusterPolicy";
        dropped += policy;
        return !policy;
      });
  ASSERT_EQ(dropped, 1);

  auto r = run_gpuops({"plan", "--snapshot", dump, "label", "node", "gpu-node-1",
                       "nvidia.com/gpu.deploy.operands=false", "-o", "json"});
  EXPECT_EQ(r.code, 1) << r.err;
  const std::string note =
      "gpuops plan: note: the input has no ClusterPolicy; the operator is simulated with one "
      "inferred from its DaemonSets (enabled: ";
  ASSERT_TRUE(has(r.err, note)) << r.err;
  EXPECT_EQ(r.err.find(note), r.err.rfind(note));  // once
  EXPECT_TRUE(has(r.err, "kubectl get clusterpolicies -o json > clusterpolicy.json")) << r.err;
  auto j = boost::json::parse(r.out).as_object();
  size_t removed = 0;
  for (const auto& l : j.at("labels").as_array()) {
    std::string key(l.at("key").as_string());
    if (key == "nvidia.com/gpu.deploy.operands") continue;
    EXPECT_EQ(l.at("node").as_string(), "gpu-node-1");
    EXPECT_TRUE(l.at("after").is_null()) << key;
    EXPECT_EQ(l.at("writer").as_string(), "operator");
    ++removed;
  }
  EXPECT_GE(removed, 8u);
  EXPECT_FALSE(j.at("pods").as_array().empty());
  for (const auto& p : j.at("pods").as_array()) EXPECT_EQ(p.at("kind").as_string(), "deleted");

  auto patch = run_gpuops({"plan", "--snapshot", dump, "patch", "clusterpolicy", "cluster-policy", "--type", "merge",
                           "-p", R"({"spec":{"dcgmExporter":{"enabled":false}}})", "-o", "json"});
  EXPECT_EQ(patch.code, 1) << patch.err << patch.out;
  auto pj = boost::json::parse(patch.out).as_object();
  size_t deleted = 0;
  for (const auto& p : pj.at("pods").as_array()) {
    EXPECT_EQ(p.at("daemonset").as_string(), "nvidia-dcgm-exporter");
    ++deleted;
  }
  EXPECT_EQ(deleted, 2u);  // one per GPU node
}

// A ClusterPolicy patch: a component disabled removes its DaemonSet
// (isStateEnabled false: the state's DaemonSet deleted) and its pods.
TEST(Plan, ClusterPolicyPatch) {
  auto r = run_gpuops({"plan", "--snapshot", op_dump("healthy-v26.7"), "patch", "clusterpolicy", "cluster-policy",
                       "--type", "merge", "-p", R"({"spec":{"dcgmExporter":{"enabled":false}}})", "-o", "json"});
  EXPECT_EQ(r.code, 1) << r.err << r.out;
  auto j = boost::json::parse(r.out).as_object();
  size_t deleted = 0;
  for (const auto& p : j.at("pods").as_array()) {
    EXPECT_EQ(p.at("daemonset").as_string(), "nvidia-dcgm-exporter");
    EXPECT_EQ(p.at("why").as_string(), "DaemonSet deleted");
    ++deleted;
  }
  EXPECT_EQ(deleted, 2u);  // one per GPU node
  auto bad = run_gpuops(
      {"plan", "--snapshot", op_dump("healthy-v26.7"), "patch", "clusterpolicy", "cluster-policy", "-p", "{nope"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_TRUE(has(bad.err, "unable to parse \"{nope\"")) << bad.err;
  EXPECT_EQ(bad.out, "");
  // kubectl patch takes the patch as YAML too (yaml.ToJSON, kubectl's
  // patch.go): the same change written in YAML is the same plan.
  auto yaml = run_gpuops({"plan", "--snapshot", op_dump("healthy-v26.7"), "patch", "clusterpolicy", "cluster-policy",
                          "--type", "merge", "-p", "spec:\n  dcgmExporter:\n    enabled: false\n", "-o", "json"});
  EXPECT_EQ(yaml.code, 1) << yaml.err;
  EXPECT_EQ(yaml.out, r.out);
  // A patch that is not an object (a YAML scalar, a JSON array) is refused.
  for (const char* p : {"enabled", "[1]"}) {
    auto scalar = run_gpuops(
        {"plan", "--snapshot", op_dump("healthy-v26.7"), "patch", "clusterpolicy", "cluster-policy", "-p", p});
    EXPECT_EQ(scalar.code, 2) << p;
    EXPECT_TRUE(has(scalar.err, "the patch is not a JSON or YAML object")) << scalar.err;
  }
}

// A change the API server would refuse is the change's fault, not the
// cluster's: exit 2 (bad input), naming where the cluster came from (or the
// steps file and line) and kubectl's words for the refusal (404 NotFound:
// `nodes "X" not found` for a node deleted a second time, `clusterpolicies.
// nvidia.com "X" not found`; "No resources found" for a selector that
// matches no node; `taint "KEY" not found` for a taint to remove the node
// does not have). Nothing is planned.
TEST(Plan, ChangesTheClusterWouldRefuseAreBadInput) {
  const std::string dump = op_dump("healthy-v26.7");
  auto twice = run_gpuops({"plan", "--snapshot", dump, "delete", "node", "gpu-node-1", "gpu-node-1"});
  EXPECT_EQ(twice.code, 2) << twice.err;
  EXPECT_TRUE(has(twice.err, dump + ": delete: nodes \"gpu-node-1\" not found")) << twice.err;
  EXPECT_EQ(twice.out, "");
  auto ghost = run_gpuops({"plan", "--snapshot", dump, "patch", "clusterpolicy", "ghost", "-p", "{}"});
  EXPECT_EQ(ghost.code, 2) << ghost.err;
  EXPECT_TRUE(has(ghost.err, dump + ": patch: clusterpolicies.nvidia.com \"ghost\" not found")) << ghost.err;
  // kubectl taint's deleteTaints: a taint the node does not have is an error.
  auto untaint = run_gpuops({"plan", "--snapshot", dump, "taint", "node", "gpu-node-1", "nope-"});
  EXPECT_EQ(untaint.code, 2) << untaint.err;
  EXPECT_TRUE(has(untaint.err, dump + ": taint: taint \"nope\" not found on node gpu-node-1")) << untaint.err;
  untaint = run_gpuops({"plan", "--snapshot", dump, "taint", "node", "gpu-node-1", "nope:NoExecute-"});
  EXPECT_TRUE(has(untaint.err, "taint \"nope:NoExecute\" not found")) << untaint.err;
  auto none = run_gpuops({"plan", "--snapshot", dump, "label", "nodes", "-l", "a>1", "x=y"});
  EXPECT_EQ(none.code, 2) << none.err;
  EXPECT_TRUE(has(none.err, dump + ": No resources found: no node matches -l a>1")) << none.err;
  std::string f = ::testing::TempDir() + "/plan-steps-ghost.yaml";
  {
    std::ofstream o(f);
    o << "- label: {node: gpu-node-1, set: {x: v}}\n- cordon: ghost\n";
  }
  auto steps = run_gpuops({"plan", "--snapshot", dump, "--steps", f});
  EXPECT_EQ(steps.code, 2) << steps.err;
  EXPECT_TRUE(has(steps.err, f + ":2: nodes \"ghost\" not found")) << steps.err;
  EXPECT_EQ(steps.out, "");
}

// A node added that the cluster has already: kube-apiserver v1.37 answers
// POST /api/v1/nodes of an existing name 409 AlreadyExists, `nodes
// "gpu-node-1" already exists` (measured). Bad input, nothing planned.
TEST(Plan, AddingANodeThatExistsIsRefused) {
  const std::string dump = op_dump("healthy-v26.7");
  std::string f = ::testing::TempDir() + "/plan-steps-add-existing.yaml";
  {
    std::ofstream o(f);
    o << "- addNode: {name: gpu-node-1, labels: {nvidia.com/gpu.deploy.driver: \"false\"}}\n";
  }
  auto r = run_gpuops({"plan", "--snapshot", dump, "--steps", f});
  EXPECT_EQ(r.code, 2) << r.err << r.out;
  EXPECT_TRUE(has(r.err, f + ":1: nodes \"gpu-node-1\" already exists")) << r.err;
  EXPECT_EQ(r.out, "");
}

// A ClusterPolicy patch that renames it or changes its kind: kube-apiserver
// v1.37.2 refuses the merge patch (measured): 400 `the name of the object
// (other) does not match the name on the URL (cluster-policy)`, 422
// `Other.nvidia.com "cluster-policy" is invalid: kind: Invalid value:
// "Other": must be ClusterPolicy`. Bad input, nothing planned (it was
// planned as no change).
TEST(Plan, AClusterPolicyPatchChangingItsNameOrKindIsRefused) {
  const std::string dump = op_dump("healthy-v26.7");
  auto name = run_gpuops({"plan", "--snapshot", dump, "patch", "clusterpolicy", "cluster-policy", "--type", "merge",
                          "-p", R"({"metadata":{"name":"other"}})"});
  EXPECT_EQ(name.code, 2) << name.err << name.out;
  EXPECT_TRUE(has(name.err,
                  dump + ": patch: the name of the object (other) does not match the name on the URL (cluster-policy)"))
      << name.err;
  EXPECT_EQ(name.out, "");
  auto kind = run_gpuops({"plan", "--snapshot", dump, "patch", "clusterpolicy", "cluster-policy", "--type", "merge",
                          "-p", R"({"kind":"Other"})"});
  EXPECT_EQ(kind.code, 2) << kind.err << kind.out;
  EXPECT_TRUE(has(kind.err,
                  "Other.nvidia.com \"cluster-policy\" is invalid: kind: Invalid value: \"Other\": must "
                  "be ClusterPolicy"))
      << kind.err;
  EXPECT_EQ(kind.out, "");
}

// A new DaemonSet whose pod cannot fit: created on the node it targets, and
// said to stay Pending with the scheduler's FitError (NodeResourcesFit:
// 100Ti requested; the other nodes fail NodeAffinity, the DaemonSet
// controller's pin), in the words of framework.FitError.Error() and the
// preemption's diagnosis (pkg/scheduler/framework/types.go,
// pkg/scheduler/framework/preemption).
TEST(Plan, CreatedPodThatWouldNotFit) {
  std::string f = ::testing::TempDir() + "/plan-big-ds.yaml";
  {
    std::ofstream o(f);
    o << "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: big, namespace: gpu-operator}\nspec:\n"
         "  selector: {matchLabels: {app: big}}\n  template:\n    metadata: {labels: {app: big}}\n    spec:\n"
         "      nodeSelector: {kubernetes.io/hostname: lab-node-0}\n"
         "      containers: [{name: big, image: example.com/big:1, resources: {requests: {memory: 100Ti}}}]\n";
  }
  auto r = run_gpuops({"plan", "--snapshot", lab_state(), "apply", "-f", f, "-o", "json"});
  EXPECT_EQ(r.code, 1) << r.err;
  auto j = boost::json::parse(r.out).as_object();
  ASSERT_EQ(j.at("pods").as_array().size(), 1u) << r.out;
  const auto& p = j.at("pods").as_array()[0];
  EXPECT_EQ(p.at("node").as_string(), "lab-node-0");
  EXPECT_EQ(p.at("kind").as_string(), "created");
  EXPECT_EQ(p.at("daemonset").as_string(), "big");
  EXPECT_EQ(p.at("why").as_string(),
            "new DaemonSet; it would stay Pending (0/3 nodes are available: 1 Insufficient memory, 2 node(s) didn't "
            "satisfy plugin(s) [NodeAffinity]. preemption: 0/3 nodes are available: 1 No preemption victims found "
            "for incoming pod, 2 Preemption is not helpful for scheduling.)");
}

// Steps from a file, as in a scenario; simulator-only steps are refused.
TEST(Plan, StepsFile) {
  std::string dir = ::testing::TempDir();
  std::string f = dir + "/plan-steps.yaml";
  {
    std::ofstream o(f);
    o << "- label: {node: lab-node-0, set: {nvidia.com/gpu.deploy.dcgm-exporter: \"false\"}}\n"
         "- cordon: lab-node-0\n";
  }
  auto r = run_gpuops({"plan", "--snapshot", lab_state(), "--steps", f});
  EXPECT_EQ(r.code, 1) << r.err << r.out;
  EXPECT_TRUE(
      has(r.out, "(dcgm-exporter) deleted: nodeSelector nvidia.com/gpu.deploy.dcgm-exporter=true: node has \"false\""))
      << r.out;
  {
    std::ofstream o(f);
    o << "- advance: 30s\n";
  }
  r = run_gpuops({"plan", "--snapshot", lab_state(), "--steps", f});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(has(r.err, "is simulator only")) << r.err;
  // Expectations were dropped without a word (a hostile-input run): the
  // user read the plan as having checked them.
  {
    std::ofstream o(f);
    o << "- label: {node: lab-node-0, set: {nvidia.com/gpu.deploy.dcgm-exporter: \"false\"}}\n"
         "- cordon: lab-node-1\n"
         "  expect: {running: {nvidia-dcgm-exporter: []}}\n";
  }
  r = run_gpuops({"plan", "--snapshot", lab_state(), "--steps", f});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(has(r.err, f + ":2: step \"cordon lab-node-1\" has expect, expectError or timeout")) << r.err;
  EXPECT_EQ(r.out, "");
  auto none = run_gpuops({"plan", "--snapshot", lab_state()});
  EXPECT_EQ(none.code, 2);
}

}  // namespace
