// A GPU Operator must-gather's node files (core/cluster/must_gather.h): the labels
// hack/must-gather.sh's sed/tr pipeline leaves, `kubectl describe nodes` and
// `kubectl get nodes -o wide`, read into exact nodes; odd and broken text
// refused with its file and line, never a crash.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../../common/temp_dir.h"
#include "core/base/errors.h"
#include "core/base/input_file.h"
#include "core/cluster/must_gather.h"
#include "core/cluster/snapshot.h"

using namespace gpuops;

namespace {

const std::string kFixture = std::string(GPUOPS_SOURCE_DIR) + "/tests/data/operator/must-gather";

using Dir = gpuops::testing::TempDir;

core::InputError labels_error(const std::string& text) {
  try {
    core::parse_must_gather_labels(text, "gpu_nodes.labels");
  } catch (const core::InputError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return core::InputError("", 0, "", "");
}

core::InputError describe_error(const std::string& text) {
  try {
    core::parse_must_gather_describe(text, "gpu_nodes.descr");
  } catch (const core::InputError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return core::InputError("", 0, "", "");
}

// One node of `kubectl describe nodes`, as kubectl's tabwriter lays it out.
const char* kDescribed =
    "Name:               gpu-a\n"
    "Roles:              <none>\n"
    "Labels:             kubernetes.io/hostname=gpu-a\n"
    "                    nvidia.com/gpu.deploy.driver=\n"
    "                    nvidia.com/gpu.present=true\n"
    "Annotations:        nfd.node.kubernetes.io/feature-labels:\n"
    "                      cpu-cpuid.ADX,pci-10de.present,Name: not a header...\n"
    "                    node.alpha.kubernetes.io/ttl: 0\n"
    "CreationTimestamp:  Mon, 30 Nov 2026 08:00:00 +0000\n"
    "Taints:             nvidia.com/gpu:NoSchedule\n"
    "                    node.kubernetes.io/unschedulable:NoSchedule\n"
    "                    dedicated=ml:PreferNoSchedule\n"
    "Unschedulable:      true\n"
    "Lease:\n"
    "  HolderIdentity:  gpu-a\n"
    "  AcquireTime:     <unset>\n"
    "Conditions:\n"
    "  Type             Status    LastHeartbeatTime                 LastTransitionTime                Reason           "
    "            Message\n"
    "  ----             ------    -----------------                 ------------------                ------           "
    "            -------\n"
    "  MemoryPressure   False     Mon, 30 Nov 2026 08:05:00 +0000   Mon, 30 Nov 2026 08:00:00 +0000   "
    "KubeletHasSufficientMemory   kubelet has sufficient memory available\n"
    "  Ready            False     Mon, 30 Nov 2026 08:05:00 +0000   Mon, 30 Nov 2026 08:00:00 +0000   KubeletNotReady  "
    "            container runtime network not ready: NetworkReady=false\n"
    "  GPUHealthy       Unknown   Mon, 30 Nov 2026 08:05:00 +0000   Mon, 30 Nov 2026 08:00:00 +0000                    "
    "            \n"
    "Addresses:\n"
    "  InternalIP:  10.0.0.11\n"
    "Capacity:\n"
    "  cpu:             64\n"
    "  nvidia.com/gpu:  8\n"
    "Allocatable:\n"
    "  cpu:             63500m\n"
    "  memory:          257000000Ki\n"
    "  nvidia.com/gpu:  8\n"
    "System Info:\n"
    "  Kernel Version:             6.8.0-101-generic\n"
    "Non-terminated Pods:          (1 in total)\n"
    "  Namespace                   Name    CPU Requests  CPU Limits  Memory Requests  Memory Limits  Age\n"
    "  ---------                   ----    ------------  ----------  ---------------  -------------  ---\n"
    "  gpu-operator                x       0 (0%)        0 (0%)      0 (0%)           0 (0%)         6m\n"
    "Events:              <none>\n";

}  // namespace

// The script's shape: a name, `- key=value` per label (sorted, as
// json.Marshal writes the map), a blank line.
TEST(MustGather, LabelsAsTheScriptWritesThem) {
  auto nodes = core::parse_must_gather_labels(
      "gpu-node-1\n"
      "- feature.node.kubernetes.io/pci-10de.present=true\n"
      "- kubernetes.io/hostname=gpu-node-1\n"
      "- nvidia.com/gpu.deploy.driver=\n"
      "- nvidia.com/gpu.present=true\n"
      "\n"
      "ip-10-0-0-2.ec2.internal\n"
      "- kubernetes.io/hostname=ip-10-0-0-2\n"
      "\n",
      "gpu_nodes.labels");
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].metadata.name, "gpu-node-1");
  EXPECT_EQ(nodes[0].metadata.labels, (core::Labels{{"feature.node.kubernetes.io/pci-10de.present", "true"},
                                                    {"kubernetes.io/hostname", "gpu-node-1"},
                                                    {"nvidia.com/gpu.deploy.driver", ""},
                                                    {"nvidia.com/gpu.present", "true"}}));
  EXPECT_EQ(nodes[1].metadata.name, "ip-10-0-0-2.ec2.internal");
  EXPECT_EQ(nodes[1].metadata.labels, (core::Labels{{"kubernetes.io/hostname", "ip-10-0-0-2"}}));
  EXPECT_TRUE(nodes[0].taints.empty());
  EXPECT_TRUE(nodes[0].conditions.empty());
}

// Every quirk of the pipeline and of how the script calls it: a node listed
// once per PCI label it has (the later block replaces the earlier), a node
// kubectl printed nothing for, `{}` (printed `{`), an old kubectl's
// `map[k:v]`, a file saved with CRLF, no blank line between two nodes,
// kubectl printing a final newline (two blank lines).
TEST(MustGather, LabelsQuirks) {
  auto nodes = core::parse_must_gather_labels(
      "a\r\n- x=1\r\n\r\n"
      "gone\n\n"
      "empty\n{\n\n"
      "old\nmap[kubernetes.io/hostname=old nvidia.com/gpu.present=true]\n\n"
      "b\n- y=2\n"
      "c\n- z=3\n\n\n"
      "a\n- x=2\n- w=\n\n",
      "gpu_nodes.labels");
  ASSERT_EQ(nodes.size(), 6u);
  std::vector<std::string> names;
  for (const auto& n : nodes) names.push_back(n.metadata.name);
  EXPECT_EQ(names, (std::vector<std::string>{"a", "gone", "empty", "old", "b", "c"}));
  EXPECT_EQ(nodes[0].metadata.labels, (core::Labels{{"w", ""}, {"x", "2"}}));
  EXPECT_TRUE(nodes[1].metadata.labels.empty());
  EXPECT_TRUE(nodes[2].metadata.labels.empty());
  EXPECT_EQ(nodes[3].metadata.labels,
            (core::Labels{{"kubernetes.io/hostname", "old"}, {"nvidia.com/gpu.present", "true"}}));
  EXPECT_EQ(nodes[4].metadata.labels, (core::Labels{{"y", "2"}}));
  EXPECT_EQ(nodes[5].metadata.labels, (core::Labels{{"z", "3"}}));
  EXPECT_TRUE(core::parse_must_gather_labels("", "f").empty());
  EXPECT_TRUE(core::parse_must_gather_labels("\n\n", "f").empty());
}

TEST(MustGather, LabelsJunkIsRefusedWithItsLine) {
  auto e = labels_error("- x=1\n");
  EXPECT_EQ(e.file(), "gpu_nodes.labels");
  EXPECT_EQ(e.line(), 1);
  EXPECT_EQ(e.message(), "\"- x=1\" comes before any node name (a node's name, then its labels)");
  e = labels_error("gpu-a\n- x=1\n\n- y=2\n");
  EXPECT_EQ(e.line(), 4);
  e = labels_error("gpu-a\n- nvidia.com/gpu.present\n");
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.message(), "node \"gpu-a\": \"nvidia.com/gpu.present\" is not a key=value label");
  e = labels_error("gpu-a\n-\n");
  EXPECT_EQ(e.message(), "node \"gpu-a\": \"\" is not a key=value label");
  e = labels_error("gpu-a\nError from server (NotFound): nodes \"gpu-b\" not found\n");
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.message().rfind("\"Error from server (NotFound): nodes \"gpu-b\" not found\" is neither a node "
                              "name nor a \"- key=value\" label (a lowercase RFC 1123 subdomain",
                              0),
            0u)
      << e.message();
  e = labels_error("gpu-a\n- Bad_Prefix/x=1\n");
  EXPECT_EQ(e.message(),
            "node \"gpu-a\": label key \"Bad_Prefix/x\": prefix part a lowercase RFC 1123 subdomain "
            "must consist of lower case alphanumeric characters, '-' or '.', and must start and end "
            "with an alphanumeric character");
  e = labels_error("gpu-a\n- x=has space}\n");
  EXPECT_EQ(e.message().rfind("node \"gpu-a\": label x value \"has space}\": a valid label must be", 0), 0u)
      << e.message();
  e = labels_error("gpu-a\n- x=" + std::string(2 << 20, 'v') + "\n");
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.message(), "line longer than 1048576 bytes");
}

TEST(MustGather, DescribeReadsTheNodeFields) {
  auto nodes = core::parse_must_gather_describe(kDescribed, "gpu_nodes.descr");
  ASSERT_EQ(nodes.size(), 1u);
  const core::Node& n = nodes[0];
  EXPECT_EQ(n.metadata.name, "gpu-a");
  EXPECT_EQ(n.metadata.labels, (core::Labels{{"kubernetes.io/hostname", "gpu-a"},
                                             {"nvidia.com/gpu.deploy.driver", ""},
                                             {"nvidia.com/gpu.present", "true"}}));
  EXPECT_TRUE(n.metadata.annotations.empty());
  ASSERT_EQ(n.taints.size(), 3u);
  EXPECT_EQ(n.taints[0], (core::Taint{"nvidia.com/gpu", "", "NoSchedule", std::nullopt}));
  EXPECT_EQ(n.taints[1], (core::Taint{"node.kubernetes.io/unschedulable", "", "NoSchedule", std::nullopt}));
  EXPECT_EQ(n.taints[2], (core::Taint{"dedicated", "ml", "PreferNoSchedule", std::nullopt}));
  EXPECT_TRUE(n.unschedulable);
  ASSERT_EQ(n.conditions.size(), 3u);
  EXPECT_EQ(n.conditions[0].type, "MemoryPressure");
  EXPECT_EQ(n.conditions[0].status, "False");
  EXPECT_EQ(n.conditions[0].reason, "KubeletHasSufficientMemory");
  EXPECT_EQ(n.conditions[0].message, "kubelet has sufficient memory available");
  EXPECT_EQ(n.conditions[1].type, "Ready");
  EXPECT_EQ(n.conditions[1].status, "False");
  EXPECT_EQ(n.conditions[1].reason, "KubeletNotReady");
  EXPECT_EQ(n.conditions[1].message, "container runtime network not ready: NetworkReady=false");
  EXPECT_EQ(n.conditions[2].type, "GPUHealthy");
  EXPECT_EQ(n.conditions[2].status, "Unknown");
  EXPECT_EQ(n.conditions[2].reason, "");
  EXPECT_EQ(n.conditions[2].message, "");
  EXPECT_EQ(n.ready_status(), "False");
  EXPECT_EQ(n.allocatable, (std::map<std::string, core::Quantity>{{"cpu", core::Quantity::parse("63500m")},
                                                                  {"memory", core::Quantity::parse("257000000Ki")},
                                                                  {"nvidia.com/gpu", core::Quantity::parse("8")}}));
}

// text/tabwriter pads by code points: a multi-byte character in one cell
// moves the next cell's bytes, not its column. Several nodes ("\n\n"
// between them, as kubectl describe prints them), a node described twice
// (the later wins), empty sections.
TEST(MustGather, DescribeColumnsNodesAndEmptySections) {
  auto nodes = core::parse_must_gather_describe(
      "Name:               gpu-a\n"
      "Labels:             <none>\n"
      "Taints:             <none>\n"
      "Unschedulable:      false\n"
      "Conditions:\n"
      "  Type    Status  LastHeartbeatTime                 LastTransitionTime                Reason       Message\n"
      "  ----    ------  -----------------                 ------------------                ------       -------\n"
      "  Ready   True    Mon, 30 Nov 2026 08:05:00 +0000   Mon, 30 Nov 2026 08:00:00 +0000   Kübelet      ready ✓\n"
      "\n\n"
      "Name:               gpu-b\n"
      "Taints:             nvidia.com/gpu:NoExecute\n"
      "\n\n"
      "Name:               gpu-a\n"
      "Unschedulable:      true\n",
      "d");
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].metadata.name, "gpu-a");
  EXPECT_TRUE(nodes[0].unschedulable);
  EXPECT_TRUE(nodes[0].conditions.empty()) << "the second description replaced the first";
  EXPECT_EQ(nodes[1].metadata.name, "gpu-b");
  EXPECT_EQ(nodes[1].taints, (std::vector<core::Taint>{{"nvidia.com/gpu", "", "NoExecute", std::nullopt}}));
  auto one = core::parse_must_gather_describe(
      "Name:  gpu-a\n"
      "Conditions:\n"
      "  Type    Status  LastHeartbeatTime                 LastTransitionTime                Reason       Message\n"
      "  ----    ------  -----------------                 ------------------                ------       -------\n"
      "  Ready   True    Mon, 30 Nov 2026 08:05:00 +0000   Mon, 30 Nov 2026 08:00:00 +0000   Kübelet      ready ✓\n",
      "d");
  ASSERT_EQ(one.at(0).conditions.size(), 1u);
  EXPECT_EQ(one[0].conditions[0].reason, "Kübelet");
  EXPECT_EQ(one[0].conditions[0].message, "ready ✓");
  EXPECT_TRUE(core::parse_must_gather_describe("", "d").empty());
}

// A describe cut short (a full disk, an interrupted gather) keeps what it
// read; every cut of the fixture's describe either reads or is refused with
// a line, and none crashes.
TEST(MustGather, TruncatedDescribe) {
  std::string full = kDescribed;
  auto cut = [&](const std::string& at) { return full.substr(0, full.find(at)); };
  auto nodes = core::parse_must_gather_describe(cut("  MemoryPressure") + "  Ready            True    Mon, 30 No", "d");
  ASSERT_EQ(nodes.at(0).conditions.size(), 1u);
  EXPECT_EQ(nodes[0].conditions[0].type, "Ready");
  EXPECT_EQ(nodes[0].conditions[0].status, "True");
  EXPECT_EQ(nodes[0].conditions[0].reason, "");
  EXPECT_TRUE(nodes[0].allocatable.empty());
  nodes = core::parse_must_gather_describe(cut("Conditions:"), "d");
  EXPECT_TRUE(nodes.at(0).conditions.empty());
  EXPECT_EQ(nodes[0].taints.size(), 3u);
  auto e = describe_error(cut("  memory:") + "  nvidia.com/g");
  EXPECT_EQ(e.line(), 30);
  EXPECT_EQ(e.message(), "node \"gpu-a\": Allocatable line \"nvidia.com/g\" is not \"name: quantity\"");
  std::string fixture = core::read_input_file(kFixture + "/gpu_nodes.descr");
  for (size_t n = 0; n <= fixture.size(); n += 7) {
    try {
      core::parse_must_gather_describe(fixture.substr(0, n), "d");
    } catch (const core::InputError& err) {
      EXPECT_GT(err.line(), 0) << n;
    }
  }
  std::string labels = core::read_input_file(kFixture + "/gpu_nodes.labels");
  for (size_t n = 0; n <= labels.size(); ++n) {
    try {
      core::parse_must_gather_labels(labels.substr(0, n), "l");
    } catch (const core::InputError& err) {
      EXPECT_GT(err.line(), 0) << n;
    }
  }
}

TEST(MustGather, DescribeJunkIsRefusedWithItsLine) {
  auto e = describe_error("Error from server (NotFound): nodes \"x\" not found\n");
  EXPECT_EQ(e.line(), 1);
  EXPECT_EQ(e.message(),
            "\"Error from server (NotFound): nodes \"x\" not found\" comes before the first \"Name:\" (kubectl "
            "describe nodes output)");
  e = describe_error("  Type  Status\n");
  EXPECT_EQ(e.message(), "an indented line before the first \"Name:\" (kubectl describe nodes output)");
  e = describe_error("Name:  gpu-a\nsome junk\n");
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.message(), "\"some junk\" is not a \"Key: value\" line of kubectl describe nodes");
  e = describe_error("Name:  Bad_Name\n");
  EXPECT_EQ(e.message().rfind("node name \"Bad_Name\": a lowercase RFC 1123 subdomain", 0), 0u) << e.message();
  e = describe_error("Name:  gpu-a\nTaints:  nvidia.com/gpu:NoSchedul\n");
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.message(),
            "node \"gpu-a\": taint \"nvidia.com/gpu:NoSchedul\" has effect \"NoSchedul\", not "
            "NoSchedule, PreferNoSchedule or NoExecute");
  e = describe_error("Name:  gpu-a\nTaints:  <none>\n          nvidia.com/gpu\n");
  EXPECT_EQ(e.line(), 3);
  EXPECT_EQ(e.message(), "node \"gpu-a\": taint \"nvidia.com/gpu\" is not key[=value]:Effect");
  e = describe_error("Name:  gpu-a\nUnschedulable:  yes\n");
  EXPECT_EQ(e.message(), "node \"gpu-a\": Unschedulable is \"yes\", not true or false");
  e = describe_error("Name:  gpu-a\nLabels:  a=1\n         b\n");
  EXPECT_EQ(e.line(), 3);
  EXPECT_EQ(e.message(), "node \"gpu-a\": \"b\" is not a key=value label");
  e = describe_error("Name:  gpu-a\nConditions:\n  Ready   Maybe\n");
  EXPECT_EQ(e.message(), "node \"gpu-a\": condition Ready status \"Maybe\" is not True, False or Unknown");
  e = describe_error("Name:  gpu-a\nConditions:\n  Ready\n");
  EXPECT_EQ(e.message(), "node \"gpu-a\": condition row \"  Ready\" has no Status");
  e = describe_error("Name:  gpu-a\nAllocatable:\n  cpu:  lots\n");
  EXPECT_EQ(e.line(), 3);
  EXPECT_EQ(e.message(), "node \"gpu-a\": allocatable cpu \"lots\" is not a quantity");
}

TEST(MustGather, GetNodesWideStatus) {
  auto rows = core::parse_must_gather_status(
      "NAME    STATUS                     ROLES    AGE   VERSION   INTERNAL-IP   EXTERNAL-IP   OS-IMAGE             "
      "KERNEL-VERSION   CONTAINER-RUNTIME\n"
      "gpu-a   Ready                      <none>   6m    v1.37.2   10.0.0.11     <none>        Ubuntu 24.04.1 LTS   "
      "6.8.0            containerd://1.7.24\n"
      "gpu-b   NotReady,SchedulingDisabled <none>  6m    v1.37.2   10.0.0.12     <none>        Ubuntu 24.04.1 LTS   "
      "6.8.0            containerd://1.7.24\n"
      "gpu-c   Unknown                    <none>   6m    v1.37.2   10.0.0.13     <none>        Ubuntu 24.04.1 LTS   "
      "6.8.0            containerd://1.7.24\n"
      "gpu-d   Ready,SchedulingDisabled   <none>   6m    v1.37.2   10.0.0.14     <none>        Ubuntu 24.04.1 LTS   "
      "6.8.0            containerd://1.7.24\n",
      "s");
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].name, "gpu-a");
  EXPECT_EQ(rows[0].ready, "True");
  EXPECT_FALSE(rows[0].unschedulable);
  EXPECT_EQ(rows[0].line, 2);
  EXPECT_EQ(rows[1].ready, "False");
  EXPECT_TRUE(rows[1].unschedulable);
  EXPECT_EQ(rows[2].ready, "");
  EXPECT_EQ(rows[3].ready, "True");
  EXPECT_TRUE(rows[3].unschedulable);
  EXPECT_TRUE(core::parse_must_gather_status("", "s").empty());
  try {
    core::parse_must_gather_status("gpu-a Ready\n", "s");
    FAIL();
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.line(), 1);
    EXPECT_EQ(e.message(), "\"gpu-a Ready\" is not the NAME STATUS header of kubectl get nodes");
  }
  try {
    core::parse_must_gather_status("NAME STATUS\ngpu-a Ready,Cordoned\n", "s");
    FAIL();
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.message(),
              "node \"gpu-a\": STATUS \"Ready,Cordoned\" is not Ready, NotReady or Unknown[,SchedulingDisabled]");
  }
}

// The three files together: labels from gpu_nodes.labels (or the describe
// when it lists the node without labels, or not at all), the rest from the
// describe, the Ready condition and cordon of a node the describe lacks from
// gpu_nodes.status.
TEST(MustGather, NodesMergeTheThreeFiles) {
  Dir d;
  core::MustGatherFiles f;
  f.labels = d.write("gpu_nodes.labels", "gpu-a\n- from=labels\n\ngpu-b\n\ngpu-c\n- only=labels\n\n");
  f.describe =
      d.write("gpu_nodes.descr",
              "Name:  gpu-a\nLabels:  from=describe\nTaints:  nvidia.com/gpu:NoSchedule\nUnschedulable:  true\n"
              "\n\nName:  gpu-b\nLabels:  from=describe\n"
              "\n\nName:  gpu-d\nLabels:  only=describe\nAllocatable:\n  nvidia.com/gpu:  4\n");
  f.status = d.write("gpu_nodes.status",
                     "NAME  STATUS\ngpu-a  Ready\ngpu-b  NotReady\ngpu-c  NotReady,SchedulingDisabled\ngpu-x  Ready\n");
  auto nodes = core::must_gather_nodes(f);
  ASSERT_EQ(nodes.size(), 4u);
  EXPECT_EQ(nodes[0].metadata.name, "gpu-a");
  EXPECT_EQ(nodes[0].metadata.labels, (core::Labels{{"from", "labels"}}));
  EXPECT_EQ(nodes[0].taints.size(), 1u);
  EXPECT_TRUE(nodes[0].unschedulable);
  EXPECT_EQ(nodes[0].ready_status(), "True");
  EXPECT_EQ(nodes[1].metadata.name, "gpu-b");
  EXPECT_EQ(nodes[1].metadata.labels, (core::Labels{{"from", "describe"}}));
  EXPECT_EQ(nodes[1].ready_status(), "False");
  EXPECT_EQ(nodes[2].metadata.name, "gpu-c");
  EXPECT_EQ(nodes[2].metadata.labels, (core::Labels{{"only", "labels"}}));
  EXPECT_TRUE(nodes[2].unschedulable);
  EXPECT_EQ(nodes[2].ready_status(), "False");
  EXPECT_EQ(nodes[3].metadata.name, "gpu-d");
  EXPECT_EQ(nodes[3].allocatable.at("nvidia.com/gpu"), core::Quantity::parse("4"));
  EXPECT_EQ(nodes[3].ready_status(), "");
  EXPECT_FALSE(core::is_must_gather_folder(d.path + "/gpu_nodes.labels"));
  EXPECT_TRUE(core::is_must_gather_folder(d.path));
  EXPECT_TRUE(core::is_must_gather_node_file(f.describe));
  EXPECT_FALSE(core::is_must_gather_node_file(d.path + "/gpu_operand_ds.yaml"));
  // A missing file is read_input_file's error.
  f.labels = d.path + "/none.labels";
  EXPECT_THROW(core::must_gather_nodes(f), core::InputError);
}

// The fixture folder: its nodes are the driver-crashloop dump's GPU nodes
// (labels, taints, cordon, Ready, allocatable), and every YAML file's
// objects are there; the logs and tables beside them are not read.
TEST(MustGather, FixtureNodesAreTheDumpsNodes) {
  core::SnapshotCluster mg({kFixture});
  core::SnapshotCluster dump({std::string(GPUOPS_SOURCE_DIR) + "/tests/data/operator/driver-crashloop/dump.yaml"});
  auto a = mg.state("gpu-operator");
  auto b = dump.state("gpu-operator");
  ASSERT_EQ(a.nodes.size(), 2u);
  for (const auto& n : a.nodes) {
    const core::Node* want = nullptr;
    for (const auto& m : b.nodes)
      if (m.metadata.name == n.metadata.name) want = &m;
    ASSERT_NE(want, nullptr) << n.metadata.name;
    EXPECT_EQ(n.metadata.labels, want->metadata.labels) << n.metadata.name;
    EXPECT_EQ(n.taints, want->taints) << n.metadata.name;
    EXPECT_EQ(n.unschedulable, want->unschedulable) << n.metadata.name;
    EXPECT_EQ(n.allocatable, want->allocatable) << n.metadata.name;
    EXPECT_EQ(n.ready_status(), want->ready_status()) << n.metadata.name;
    EXPECT_EQ(n.conditions.size(), 4u) << "the describe's four kubelet conditions";
  }
  EXPECT_EQ(a.daemonsets.size(), b.daemonsets.size());
  EXPECT_EQ(a.pods.size(), b.pods.size()) << "gpu_operator_pod.yaml's pod is gpu_operand_pods.yaml's, kept once";
  EXPECT_EQ(a.cluster_policies.size(), 1u);
  EXPECT_EQ(mg.namespaces(), (std::vector<std::string>{"gpu-operator"}));
  // The node files named alone, with the YAML files: the same nodes.
  core::SnapshotCluster loose(
      {kFixture + "/gpu_nodes.labels", kFixture + "/gpu_nodes.descr", kFixture + "/gpu_operand_ds.yaml"});
  EXPECT_EQ(loose.state("gpu-operator").nodes.size(), 2u);
  EXPECT_EQ(loose.state("gpu-operator").daemonsets.size(), b.daemonsets.size());
}

// A Node object in the folder (someone added `kubectl get nodes -o yaml`)
// is exact: it wins over the node files for its name.
TEST(MustGather, ANodeObjectWinsOverTheNodeFiles) {
  Dir d;
  d.write("gpu_nodes.labels", "gpu-a\n- from=labels\n\ngpu-b\n- from=labels\n\n");
  d.write("nodes.yaml", "apiVersion: v1\nkind: Node\nmetadata:\n  name: gpu-a\n  labels:\n    from: yaml\n");
  d.write("must-gather.log", "{{ not yaml: [\n");
  core::SnapshotCluster c({d.path});
  auto s = c.state("gpu-operator");
  ASSERT_EQ(s.nodes.size(), 2u);
  EXPECT_EQ(s.nodes[0].metadata.labels.at("from"), "yaml");
  EXPECT_EQ(s.nodes[1].metadata.labels.at("from"), "labels");
}

namespace {

// The fixture copied to `to`, as `oc adm must-gather` leaves it: the gather
// script's /must-gather under a folder named for the image.
void copy_fixture(const std::string& to) {
  std::filesystem::create_directories(to);
  std::filesystem::copy(kFixture, to, std::filesystem::copy_options::recursive);
}

}  // namespace

// `oc adm must-gather` writes must-gather.local.<N>/<image>/ with the script's
// files, beside its own timestamp and event-filter.html: --snapshot on the
// outer folder reads the inner one.
TEST(MustGather, TheFolderOcAdmMustGatherWrites) {
  Dir d;
  const std::string outer = d.path + "/must-gather.local.5274983921";
  const std::string inner = outer + "/nvcr-io-nvidia-gpu-operator-sha256-4f1e2d";
  copy_fixture(inner);
  std::ofstream(outer + "/timestamp") << "2026-12-02 02:10:00.000 +0000 UTC m=+0.1\n";
  std::ofstream(outer + "/event-filter.html") << "<html></html>\n";
  EXPECT_EQ(core::resolve_must_gather(outer), inner);
  EXPECT_EQ(core::resolve_must_gather(inner), inner);
  EXPECT_EQ(core::resolve_must_gather(d.path), inner);  // two levels down
  auto a = core::SnapshotCluster({outer}).state("gpu-operator");
  auto b = core::SnapshotCluster({kFixture}).state("gpu-operator");
  ASSERT_EQ(a.nodes.size(), 2u);
  EXPECT_EQ(a.nodes.size(), b.nodes.size());
  EXPECT_EQ(a.daemonsets.size(), b.daemonsets.size());
  EXPECT_EQ(a.pods.size(), b.pods.size());
  // A folder with dumps of its own is read as it is, not searched.
  std::ofstream(outer + "/nodes.json") << R"({"kind":"List","items":[]})";
  EXPECT_EQ(core::resolve_must_gather(outer), outer);
}

TEST(MustGather, SeveralMustGathersAreNamed) {
  Dir d;
  copy_fixture(d.path + "/a/img");
  copy_fixture(d.path + "/b/img");
  try {
    core::SnapshotCluster s({d.path});
    ADD_FAILURE() << "read";
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.file(), d.path);
    EXPECT_EQ(e.message(), "this folder holds several must-gathers (" + d.path + "/a/img, " + d.path +
                               "/b/img): name one with --snapshot");
  }
  // Three levels down is not searched: the folder is read as it is (no nodes).
  Dir e;
  copy_fixture(e.path + "/x/y/z");
  EXPECT_EQ(core::resolve_must_gather(e.path), e.path);
}

// ------------------------------------------------------------ an untrusted folder

// A must-gather is often someone else's: a node file that is a symbolic link
// out of the folder, or a hard link (which may be any file of the machine),
// is refused by name, before a byte of it is read, so nothing of the file it
// leads to is printed (a planted link to a token would otherwise show its
// first line in the parse error). A link that stays inside is followed.
TEST(MustGather, NodeFilesThatLeaveTheFolderAreRefused) {
  Dir outside;
  const std::string secret = outside.write("token", "eyJhbGciOiJSUzI1NiIsImtpZCI6IlNFQ1JFVCJ9\n");
  for (const char* node_file : {"gpu_nodes.labels", "gpu_nodes.descr", "gpu_nodes.status"}) {
    Dir d;
    copy_fixture(d.path);
    const std::string planted = d.path + "/" + node_file;
    std::filesystem::remove(planted);
    std::filesystem::create_symlink(secret, planted);
    try {
      core::SnapshotCluster s({d.path});
      ADD_FAILURE() << node_file << " read";
    } catch (const core::InputError& e) {
      EXPECT_EQ(e.file(), planted);
      EXPECT_EQ(e.message(), "leads outside " + d.path + " (to " + secret + ")");
      EXPECT_EQ(std::string(e.what()).find("eyJhbGci"), std::string::npos) << e.what();
    }
    // The same file as a hard link.
    std::filesystem::remove(planted);
    std::filesystem::create_hard_link(secret, planted);
    try {
      core::SnapshotCluster s({d.path});
      ADD_FAILURE() << node_file << " read through a hard link";
    } catch (const core::InputError& e) {
      EXPECT_EQ(e.file(), planted);
      EXPECT_EQ(e.message(), "has 2 hard links, so it may be a file outside " + d.path);
    }
    std::filesystem::remove(planted);
  }
  // A link inside the folder is the folder's own file.
  Dir d;
  copy_fixture(d.path);
  std::filesystem::rename(d.path + "/gpu_nodes.labels", d.path + "/labels.txt");
  std::filesystem::create_symlink("labels.txt", d.path + "/gpu_nodes.labels");
  EXPECT_EQ(core::SnapshotCluster({d.path}).state("gpu-operator").nodes.size(), 2u);
}

// The same rule for a folder of dumps: its *.json and *.yaml are its own.
TEST(MustGather, DumpsThatLeaveTheFolderAreRefused) {
  Dir outside;
  const std::string secret = outside.write("netrc.json", "machine example login me password SECRET-42\n");
  Dir d;
  d.write("nodes.json", R"({"kind":"List","items":[]})");
  std::filesystem::create_symlink(secret, d.path + "/pods.json");
  try {
    core::SnapshotCluster s({d.path});
    ADD_FAILURE() << "read";
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.file(), d.path + "/pods.json");
    EXPECT_EQ(e.message(), "leads outside " + d.path + " (to " + secret + ")");
    EXPECT_EQ(std::string(e.what()).find("SECRET-42"), std::string::npos) << e.what();
  }
  // Named on the command line, the same file is read: the user chose it.
  try {
    core::SnapshotCluster s({secret});
    ADD_FAILURE() << "parsed";
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.file(), secret);
  }
}
