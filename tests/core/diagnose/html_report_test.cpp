// core/analysis/placement_view.h and core/diagnose/html_report.h: the view's cells and change
// lines, and that cluster strings are escaped in every HTML output.
#include <gtest/gtest.h>

#include "core/analysis/placement_view.h"
#include "core/diagnose/html_report.h"
#include "core/lab/lab.h"

namespace gpuops::core {
namespace {

ClusterState two_nodes() {
  ClusterState s;
  s.namespace_ = "gpu-operator";
  s.nodes = lab_nodes();
  s.nodes.resize(2);
  return s;
}

DaemonSet dcgm() {
  DaemonSet ds;
  ds.metadata.name = "nvidia-dcgm-exporter";
  ds.metadata.namespace_ = "gpu-operator";
  ds.metadata.uid = "u1";
  ds.template_.spec.node_selector = {{"nvidia.com/gpu.deploy.dcgm-exporter", "true"}};
  return ds;
}

Pod pod_on(const std::string& node, const std::string& phase) {
  Pod p;
  p.metadata.name = "nvidia-dcgm-exporter-" + node;
  p.metadata.namespace_ = "gpu-operator";
  p.metadata.owner_references.push_back({"apps/v1", "DaemonSet", "nvidia-dcgm-exporter", "u1", true});
  p.spec.node_name = node;
  p.status.phase = phase;
  return p;
}

TEST(PlacementView, CellsSayWhetherTheDaemonSetWantsTheNodeAndWhatItsPodDoes) {
  ClusterState s = two_nodes();
  s.nodes[0].metadata.labels["nvidia.com/gpu.deploy.dcgm-exporter"] = "true";
  s.nodes[1].metadata.labels["nvidia.com/gpu.deploy.dcgm-exporter"] = "false";
  s.daemonsets.push_back(dcgm());
  s.pods.push_back(pod_on("lab-node-0", "Pending"));
  PlacementView v = placement_view(s, load_catalog("lab"));
  ASSERT_EQ(v.operands.size(), 5u);
  EXPECT_EQ(v.operands[4], "dcgm-exporter");
  ASSERT_EQ(v.nodes.size(), 2u);
  EXPECT_EQ(v.nodes[1].nvidia_labels, (Labels{{"nvidia.com/gpu.deploy.dcgm-exporter", "false"}}));
  EXPECT_TRUE(v.cells[4][0].wants);
  EXPECT_EQ(v.cells[4][0].pod, "Pending");
  EXPECT_FALSE(v.cells[4][1].wants);
  EXPECT_EQ(v.cells[4][1].pod, "absent");
  EXPECT_EQ(v.cells[4][1].reasons,
            std::vector<std::string>{"nodeSelector nvidia.com/gpu.deploy.dcgm-exporter=true: node has \"false\""});
  EXPECT_FALSE(v.cells[0][0].has_daemonset);
  EXPECT_EQ(v.cells[0][0].reasons, std::vector<std::string>{"no DaemonSet"});
}

TEST(PlacementView, ChangesNameTheLabelThePodAndWhy) {
  ClusterState s = two_nodes();
  s.nodes[1].metadata.labels["nvidia.com/gpu.deploy.dcgm-exporter"] = "true";
  s.daemonsets.push_back(dcgm());
  s.pods.push_back(pod_on("lab-node-1", "Running"));
  Catalog c = load_catalog("lab");
  PlacementView before = placement_view(s, c);
  s.nodes[1].metadata.labels["nvidia.com/gpu.deploy.dcgm-exporter"] = "false";
  s.pods[0].metadata.deletion_timestamp = Time{};
  s.nodes[0].unschedulable = true;
  PlacementView after = placement_view(s, c);
  EXPECT_EQ(view_changes(before, after),
            (std::vector<std::string>{"lab-node-0 cordoned",
                                      "lab-node-1 label nvidia.com/gpu.deploy.dcgm-exporter=\"false\" (was \"true\")",
                                      "lab-node-1 dcgm-exporter pod Terminating (was Running): nodeSelector "
                                      "nvidia.com/gpu.deploy.dcgm-exporter=true: node has \"false\""}));
  s.pods.clear();
  EXPECT_EQ(view_changes(after, placement_view(s, c)),
            (std::vector<std::string>{"lab-node-1 dcgm-exporter pod deleted: nodeSelector "
                                      "nvidia.com/gpu.deploy.dcgm-exporter=true: node has \"false\""}));
}

TEST(HtmlReport, EscapesTheFiveCharacters) {
  EXPECT_EQ(html_escape("<a href=\"x\">'&'</a>"), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
}

TEST(HtmlReport, AHostileLabelValueOrNodeNameIsText) {
  ClusterState s = two_nodes();
  s.nodes[0].metadata.name = "<b>n</b>";
  s.nodes[0].metadata.labels["nvidia.com/x"] = "<script>alert(1)</script>";
  s.nodes[0].taints.push_back({"k", "<img src=x>", "NoSchedule", std::nullopt});
  Catalog c = load_catalog("lab");
  std::string html = render_matrix_html(placement_view(s, c), "<b>n</b> driver=no\n");
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("<b>n"), std::string::npos);
  EXPECT_NE(html.find("x=&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html.find("data-node=\"&lt;b&gt;n&lt;/b&gt;\""), std::string::npos);
  EXPECT_NE(html.find("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                      "style-src 'unsafe-inline'\">"),
            std::string::npos);
  Finding f{"label-false", Severity::kError, "<b>n</b>", "driver", "reason <i>", {{"label", "<script>"}}};
  std::string d = render_diagnose_html({f});
  EXPECT_EQ(d.find("<script>"), std::string::npos);
  EXPECT_EQ(d.find("<i>"), std::string::npos);
  EXPECT_NE(d.find("<td>&lt;b&gt;n&lt;/b&gt;</td>"), std::string::npos);
  EXPECT_NE(d.find("label: &lt;script&gt;"), std::string::npos);
}

}  // namespace
}  // namespace gpuops::core
