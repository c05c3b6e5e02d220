// A GPU Operator must-gather folder (hack/must-gather.sh) read with
// --snapshot: tests/data/operator/must-gather is the driver-crashloop case as
// the script saves it (its README). audit, matrix and diagnose give the
// dump's verdicts for the nodes the script gathers (the GPU nodes; the dump's
// cpu-node-1 is not in a must-gather); what the describe says of a node
// reaches diagnose; a broken node file is exit 2 with its file and line.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "../common/cli_run.h"

namespace fs = std::filesystem;

namespace {

using gpuops::testing::run_gpuops;

const std::string kOperator = std::string(GPUOPS_SOURCE_DIR) + "/tests/data/operator/";
const std::string kFolder = kOperator + "must-gather";
const std::string kDump = kOperator + "driver-crashloop/dump.yaml";

// `text` without the lines about `node`: a line starting "NODE " and the
// indented evidence lines under it.
std::string without_node(const std::string& text, const std::string& node) {
  std::istringstream in(text);
  std::string out;
  bool skipping = false;
  for (std::string l; std::getline(in, l);) {
    if (l.rfind(node + " ", 0) == 0)
      skipping = true;
    else if (l.rfind("    ", 0) != 0)
      skipping = false;
    if (!skipping) out += l + "\n";
  }
  return out;
}

// A copy of the fixture to change.
struct Copy {
  explicit Copy(const std::string& name) : path((fs::temp_directory_path() / name).string()) {
    fs::remove_all(path);
    fs::copy(kFolder, path);
  }
  ~Copy() { fs::remove_all(path); }
  void replace(const std::string& file, const std::string& from, const std::string& to) const {
    std::ifstream in(path + "/" + file);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string s = ss.str();
    auto at = s.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    s.replace(at, from.size(), to);
    std::ofstream(path + "/" + file) << s;
  }
  std::string path;
};

}  // namespace

TEST(MustGather, AuditMatrixDiagnoseGiveTheDumpsVerdicts) {
  for (std::vector<std::string> cmd : {std::vector<std::string>{"audit"},
                                       {"matrix"},
                                       {"diagnose"},
                                       {"diagnose", "--severity", "info"},
                                       {"diagnose", "gpu-node-2"},
                                       {"order-check", "gpu-node-2"}}) {
    auto args = cmd;
    args.insert(args.end(), {"--snapshot", kFolder});
    auto mg = run_gpuops(args);
    args.back() = kDump;
    auto dump = run_gpuops(args);
    std::string what = cmd[0] + (cmd.size() > 1 ? " " + cmd[1] : "");
    EXPECT_EQ(mg.out, without_node(dump.out, "cpu-node-1")) << what;
    EXPECT_EQ(mg.code, dump.code) << what;
    // Operator mode, the same release (the helm.sh/chart label of the first
    // DaemonSet of gpu_operand_ds.yaml, which kubectl sorts by name).
    EXPECT_EQ(mg.err, "gpuops: operator mode: GPU Operator v26.7.0, catalog gpu-operator (--operands overrides)\n")
        << what;
  }
  auto a = run_gpuops({"audit", "--snapshot", kFolder});
  EXPECT_EQ(a.out,
            "gpu-node-1 OK\n"
            "gpu-node-2 NOT-READY driver (CrashLoopBackOff)\n"
            "gpu-node-2 NOT-READY container-toolkit (Init:0/1)\n"
            "gpu-node-2 NOT-READY device-plugin (Init:0/2)\n"
            "gpu-node-2 NOT-READY gpu-feature-discovery (Init:0/2)\n"
            "gpu-node-2 NOT-READY dcgm-exporter (Init:0/1)\n"
            "gpu-node-2 NOT-READY operator-validator (Init:0/4)\n");
  EXPECT_EQ(a.code, 1);
  auto m = run_gpuops({"matrix", "--snapshot", kFolder});
  EXPECT_EQ(m.out,
            "gpu-node-1 driver=yes container-toolkit=yes device-plugin=yes gpu-feature-discovery=yes "
            "dcgm-exporter=yes operator-validator=yes mps-control-daemon=no mig-manager=no\n"
            "gpu-node-2 driver=not-ready container-toolkit=not-ready device-plugin=not-ready "
            "gpu-feature-discovery=not-ready dcgm-exporter=not-ready operator-validator=not-ready "
            "mps-control-daemon=no mig-manager=no\n"
            "TOTAL_PODS=10\n");
  auto d = run_gpuops({"diagnose", "--snapshot", kFolder});
  EXPECT_EQ(d.code, 1);
  EXPECT_NE(d.out.find("gpu-node-2 driver error root-cause: driver CrashLoopBackOff (exit 1: \"nvidia module in use: "
                       "rmmod: ERROR: Module nvidia is in use by: nvidia_uvm\") blocks 5 operands"),
            std::string::npos)
      << d.out;
}

TEST(MustGather, JsonAuditIsTheDumpsWithoutTheCpuNode) {
  auto mg = boost::json::parse(run_gpuops({"audit", "-o", "json", "--snapshot", kFolder}).out).as_object();
  auto dump = boost::json::parse(run_gpuops({"audit", "-o", "json", "--snapshot", kDump}).out).as_object();
  auto& nodes = dump["nodes"].as_array();
  ASSERT_EQ(nodes.at(0).at("node"), "cpu-node-1");
  nodes.erase(nodes.begin());
  // The detecting DaemonSet is each input's first (kubectl sorts the
  // must-gather's by name): gpu-feature-discovery there, the driver here.
  EXPECT_EQ(mg.at("operatorEvidence"),
            "DaemonSet gpu-operator/gpu-feature-discovery is controlled by ClusterPolicy cluster-policy");
  EXPECT_EQ(dump.at("operatorEvidence"),
            "DaemonSet gpu-operator/nvidia-driver-daemonset is controlled by ClusterPolicy cluster-policy");
  for (auto* doc : {&mg, &dump}) {
    doc->erase("operatorEvidence");
    doc->erase("operatorVersionSource");
  }
  EXPECT_EQ(mg, dump);
}

// The node files named alone with the YAML files, and the folder with -n:
// the same audit.
TEST(MustGather, NodeFilesNamedAlone) {
  std::string files;
  for (const char* f : {"gpu_nodes.labels", "gpu_nodes.descr", "gpu_nodes.status", "gpu_operand_ds.yaml",
                        "gpu_operand_pods.yaml", "cluster_policy.yaml"})
    files += (files.empty() ? "" : ",") + kFolder + "/" + f;
  auto a = run_gpuops({"audit", "--snapshot", files});
  auto b = run_gpuops({"audit", "--snapshot", kFolder, "-n", "gpu-operator"});
  EXPECT_EQ(a.out, b.out);
  EXPECT_EQ(a.code, 1);
}

// What the describe says of a node is what diagnose reads: a NotReady,
// cordoned gpu-node-1.
TEST(MustGather, TheDescribeReachesDiagnose) {
  Copy c("gpuops-must-gather-notready");
  c.replace("gpu_nodes.descr", "Unschedulable:      false", "Unschedulable:      true");
  c.replace("gpu_nodes.descr",
            "  Ready            True    Mon, 30 Nov 2026 08:05:00 +0000   Mon, 30 Nov 2026 08:00:00 +0000   "
            "KubeletReady                 kubelet is posting ready status",
            "  Ready            False   Mon, 30 Nov 2026 08:05:00 +0000   Mon, 30 Nov 2026 08:00:00 +0000   "
            "KubeletNotReady              PLEG is not healthy: pleg was last seen active 3m0s ago");
  auto d = run_gpuops({"diagnose", "gpu-node-1", "--severity", "info", "--snapshot", c.path});
  EXPECT_EQ(d.code, 1);
  EXPECT_NE(d.out.find("gpu-node-1 - error node-not-ready: node Ready=False: it leaves every DaemonSet's desired "
                       "set; existing daemon pods stay (misscheduled)\n"
                       "    condition Ready: False\n"
                       "    reason: KubeletNotReady\n"
                       "    message: PLEG is not healthy: pleg was last seen active 3m0s ago\n"),
            std::string::npos)
      << d.out;
  EXPECT_NE(d.out.find("gpu-node-1 - info node-cordoned: "), std::string::npos) << d.out;
}

// Without gpu_nodes.descr the labels still make the nodes, and the status
// table their Ready condition: the same verdicts.
TEST(MustGather, LabelsAloneStillAudit) {
  Copy c("gpuops-must-gather-labels-only");
  fs::remove(c.path + "/gpu_nodes.descr");
  auto a = run_gpuops({"audit", "--snapshot", c.path});
  EXPECT_EQ(a.out, run_gpuops({"audit", "--snapshot", kFolder}).out);
  EXPECT_EQ(a.code, 1);
}

TEST(MustGather, BrokenNodeFileIsExit2WithFileAndLine) {
  Copy c("gpuops-must-gather-junk");
  c.replace("gpu_nodes.labels", "- nvidia.com/gpu.count=2\n", "- nvidia.com/gpu.count\n");
  for (const char* cmd : {"audit", "matrix", "diagnose"}) {
    auto r = run_gpuops({cmd, "--snapshot", c.path});
    EXPECT_EQ(r.code, 2) << cmd;
    EXPECT_EQ(r.out, "") << cmd;
    EXPECT_EQ(r.err, "gpuops: error: " + c.path +
                         "/gpu_nodes.labels:11: node \"gpu-node-1\": \"nvidia.com/gpu.count\" is not a key=value "
                         "label\n")
        << cmd;
  }
}

// A must-gather whose node files list no node (the script found no NVIDIA
// PCI label) says so, not "save a kubectl dump".
TEST(MustGather, NoNodesInTheMustGather) {
  Copy c("gpuops-must-gather-empty");
  std::ofstream(c.path + "/gpu_nodes.labels", std::ios::trunc);
  std::ofstream(c.path + "/gpu_nodes.descr", std::ios::trunc);
  auto r = run_gpuops({"audit", "--snapshot", c.path});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "gpuops: error: " + c.path +
                       ": no nodes in this must-gather: gpu_nodes.labels and gpu_nodes.descr list none (the script "
                       "found no node with an NVIDIA PCI label or nvidia.com/gpu.present=true); add `kubectl get "
                       "nodes -o yaml` to the folder\n");
}
