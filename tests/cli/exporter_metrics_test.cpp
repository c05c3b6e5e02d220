// cli/exporter_metrics.h with the constant labels of `gpuops exporter
// --cluster`: the exact exposition text of a one-node state, every series
// carrying cluster="b"; --cluster's validation (a usage error, exit 2).
#include "cli/exporter_metrics.h"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "../common/builders.h"
#include "../common/cli_run.h"

namespace {

using gpuops::testing::daemonset;
using gpuops::testing::node;
using gpuops::testing::pod;
using gpuops::testing::run_gpuops;

// The text split at each "# HELP" line: one block per family, its sample
// lines sorted (prometheus-cpp keeps a family's series in a hash map, so
// their order is its own; the families' order is the order they were
// registered in).
std::vector<std::vector<std::string>> families(const std::string& text) {
  std::vector<std::vector<std::string>> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("# HELP ", 0) == 0) out.emplace_back();
    if (out.empty()) out.emplace_back();
    out.back().push_back(line);
  }
  for (auto& f : out) std::sort(f.begin() + std::min<size_t>(2, f.size()), f.end());
  return out;
}

// One GPU node, gpu-0, asking (deploy label "true") for the device plugin and
// GPU feature discovery and for nothing else; the lab's device plugin
// DaemonSet has a Running and Ready pod there; no other DaemonSet exists.
gpuops::core::ClusterState one_node_state() {
  gpuops::core::ClusterState s;
  s.namespace_ = "gpu-operator";
  s.nodes.push_back(node("gpu-0", {{"nvidia.com/gpu.deploy.device-plugin", "true"},
                                   {"nvidia.com/gpu.deploy.gpu-feature-discovery", "true"}}));
  auto ds = daemonset("nvidia-device-plugin-daemonset", "nvidia.com/gpu.deploy.device-plugin");
  s.pods.push_back(pod(ds, "gpu-0"));
  s.daemonsets.push_back(ds);
  return s;
}

TEST(ExporterMetrics, EverySeriesCarriesTheClusterLabel) {
  auto catalog = gpuops::core::load_catalog("lab");
  std::ostringstream text;
  prometheus::TextSerializer().Serialize(
      text, gpuops::cli::state_metrics(one_node_state(), catalog, false, {{"cluster", "b"}}));
  // The lab catalog's five operands are the matrix's columns, each with one
  // series per node in both operand families. The audit checks the two
  // operands gpu-0 asks for; only the device plugin has a pod, Running and
  // Ready. GPU feature discovery asked for with no pod is gpu-0's one gap,
  // "missing". The device plugin runs without the container toolkit it needs
  // (catalog: needs [container-toolkit]): an error. gpu-0 carries deploy
  // labels but nothing saying it has a GPU (no nvidia.com/gpu.present, no NFD
  // label): deploy-labels-on-non-gpu-node, a node finding (operand ""), a
  // warning. Not a GPU Operator install (no operator in the namespace).
  // prometheus-cpp writes a family's constant labels before a series' own.
  std::vector<std::vector<std::string>> want = {
      {"# HELP gpuops_operand_expected 1 when the operand's deploy label asks for it on the node (gpuops audit "
       "checks it)",
       "# TYPE gpuops_operand_expected gauge",
       R"(gpuops_operand_expected{cluster="b",node="gpu-0",operand="container-toolkit"} 0)",
       R"(gpuops_operand_expected{cluster="b",node="gpu-0",operand="dcgm-exporter"} 0)",
       R"(gpuops_operand_expected{cluster="b",node="gpu-0",operand="device-plugin"} 1)",
       R"(gpuops_operand_expected{cluster="b",node="gpu-0",operand="driver"} 0)",
       R"(gpuops_operand_expected{cluster="b",node="gpu-0",operand="gpu-feature-discovery"} 1)"},
      {"# HELP gpuops_operand_ready 1 when the operand's pod on the node is Running (and Ready on a GPU Operator "
       "install)",
       "# TYPE gpuops_operand_ready gauge",
       R"(gpuops_operand_ready{cluster="b",node="gpu-0",operand="container-toolkit"} 0)",
       R"(gpuops_operand_ready{cluster="b",node="gpu-0",operand="dcgm-exporter"} 0)",
       R"(gpuops_operand_ready{cluster="b",node="gpu-0",operand="device-plugin"} 1)",
       R"(gpuops_operand_ready{cluster="b",node="gpu-0",operand="driver"} 0)",
       R"(gpuops_operand_ready{cluster="b",node="gpu-0",operand="gpu-feature-discovery"} 0)"},
      {"# HELP gpuops_diagnose_finding 1 per finding of gpuops diagnose at severity warning or error (code: its name)",
       "# TYPE gpuops_diagnose_finding gauge",
       R"(gpuops_diagnose_finding{cluster="b",code="deploy-labels-on-non-gpu-node",node="gpu-0",operand="",severity="warning"} 1)",
       R"(gpuops_diagnose_finding{cluster="b",code="device-plugin-without-toolkit",node="gpu-0",operand="device-plugin",severity="error"} 1)"},
      {"# HELP gpuops_audit_nodes Nodes audited", "# TYPE gpuops_audit_nodes gauge",
       R"(gpuops_audit_nodes{cluster="b"} 1)"},
      {"# HELP gpuops_audit_nodes_with_gaps Nodes where gpuops audit found at least one gap",
       "# TYPE gpuops_audit_nodes_with_gaps gauge", R"(gpuops_audit_nodes_with_gaps{cluster="b"} 1)"},
      {"# HELP gpuops_audit_gaps Gaps found by gpuops audit, by verdict (missing, not_ready, paused, blocked, "
       "unlabelled)",
       "# TYPE gpuops_audit_gaps gauge", R"(gpuops_audit_gaps{cluster="b",verdict="blocked"} 0)",
       R"(gpuops_audit_gaps{cluster="b",verdict="missing"} 1)",
       R"(gpuops_audit_gaps{cluster="b",verdict="not_ready"} 0)",
       R"(gpuops_audit_gaps{cluster="b",verdict="paused"} 0)",
       R"(gpuops_audit_gaps{cluster="b",verdict="unlabelled"} 0)"},
      {"# HELP gpuops_operator_mode 1 when the namespace holds a GPU Operator install (operator mode)",
       "# TYPE gpuops_operator_mode gauge", R"(gpuops_operator_mode{cluster="b"} 0)"},
  };
  EXPECT_EQ(families(text.str()), want) << text.str();
}

TEST(ExporterMetrics, NoConstantLabelsByDefault) {
  auto catalog = gpuops::core::load_catalog("lab");
  std::ostringstream text;
  prometheus::TextSerializer().Serialize(text, gpuops::cli::state_metrics(one_node_state(), catalog, false));
  EXPECT_EQ(text.str().find("cluster="), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("\ngpuops_audit_nodes 1\n"), std::string::npos) << text.str();
}

TEST(ExporterMetrics, ClusterLabelValues) {
  using gpuops::cli::cluster_label_problem;
  EXPECT_EQ(cluster_label_problem("a"), "");
  EXPECT_EQ(cluster_label_problem("eu-west-1/prod gpu"), "");
  EXPECT_EQ(cluster_label_problem(std::string(63, 'x')), "");
  EXPECT_EQ(cluster_label_problem("\xc3\xa9t\xc3\xa9"), "");  // "été": 3 characters, 5 bytes
  std::string e63;
  for (int i = 0; i < 63; ++i) e63 += "\xc3\xa9";
  EXPECT_EQ(cluster_label_problem(e63), "");  // 63 characters, 126 bytes
  EXPECT_EQ(cluster_label_problem(e63 + "\xc3\xa9"), "is longer than 63 characters");
  EXPECT_EQ(cluster_label_problem(""), "is empty");
  EXPECT_EQ(cluster_label_problem(std::string(64, 'x')), "is longer than 63 characters");
  EXPECT_EQ(cluster_label_problem("a\nb"), "holds a control character");
  EXPECT_EQ(cluster_label_problem("a\tb"), "holds a control character");
  EXPECT_EQ(cluster_label_problem("a\x7f"), "holds a control character");
  EXPECT_EQ(cluster_label_problem("a\xc2\x85"), "holds a control character");  // U+0085, NEL
  EXPECT_EQ(cluster_label_problem("a\xff"), "is not UTF-8");
  EXPECT_EQ(cluster_label_problem("a\xc3"), "is not UTF-8");         // cut short
  EXPECT_EQ(cluster_label_problem("\xc0\xaf"), "is not UTF-8");      // overlong "/"
  EXPECT_EQ(cluster_label_problem("\xed\xa0\x80"), "is not UTF-8");  // a surrogate
}

TEST(ExporterMetrics, ClusterFlagRefusedIsAUsageError) {
  for (const std::string& bad : {std::string(), std::string(64, 'c'), std::string("a\rb")}) {
    auto r = run_gpuops({"exporter", "--cluster", bad, "--kubeconfig", "/nonexistent"});
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("--cluster "), std::string::npos) << r.err;
  }
}

}  // namespace
