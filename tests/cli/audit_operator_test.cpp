// gpuops audit in operator mode judges a GPU node against what the operator
// would deploy there, not only against the deploy labels that read "true".
// Expected lines from the operator's and Kubernetes' rules: the deploy labels
// labelGPUNodes sets on a container-config GPU node (gpuStateLabels,
// gpu-operator controllers/state_manager.go), the DaemonSet's nodeSelector
// that requires "true" (NodeShouldRunDaemonPod, pkg/controller/daemon),
// an opt-out ("false") the operator keeps, and removeAllGPUStateLabels for
// nvidia.com/gpu.deploy.operands=false.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <functional>
#include <string>

#include "../common/cli_run.h"
#include "../common/edited_dump.h"

namespace {

using gpuops::testing::run_gpuops;

// healthy-v26.7 with `edit` applied (tests/common/edited_dump.h).
std::string edited_dump(const std::string& name, const std::function<bool(boost::json::object&)>& edit) {
  return gpuops::testing::edited_dump("healthy-v26.7", name, edit);
}

std::string str(const boost::json::value& v) { return std::string(v.as_string()); }

TEST(AuditOperatorMode, LabelsThatKeepAWantedOperandOffAreBlocked) {
  const std::string dump = edited_dump("blocked", [](boost::json::object& o) {
    const std::string kind = str(o.at("kind"));
    auto& md = o.at("metadata").as_object();
    const std::string name = str(md.at("name"));
    if (kind == "Node" && name == "gpu-node-1") {
      auto& labels = md.at("labels").as_object();
      labels["nvidia.com/gpu.deploy.device-plugin"] = "";  // a stale pause stamp
      labels.erase("nvidia.com/gpu.deploy.container-toolkit");
      labels["nvidia.com/gpu.deploy.dcgm-exporter"] = "false";  // an opt-out
    }
    if (kind == "Node" && name == "gpu-node-2") {
      auto& labels = md.at("labels").as_object();
      for (auto it = labels.begin(); it != labels.end();)
        it = str(boost::json::value(it->key())).starts_with("nvidia.com/gpu.deploy.") ? labels.erase(it) : it + 1;
      labels["nvidia.com/gpu.deploy.operands"] = "false";
    }
    // Without the label "true" the DaemonSet controller has deleted those pods.
    if (kind == "Pod") {
      if (name == "nvidia-device-plugin-daemonset-g1d" || name == "nvidia-container-toolkit-daemonset-g1b" ||
          name == "nvidia-dcgm-exporter-g1a")
        return false;
      if (name.ends_with("-g2a") || name.ends_with("-g2b") || name.ends_with("-g2c") || name.ends_with("-g2d"))
        return false;
    }
    return true;
  });
  auto r = run_gpuops({"audit", "--snapshot", dump});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(r.out,
            "cpu-node-1 OK\n"
            "gpu-node-1 BLOCKED container-toolkit (no deploy label)\n"
            "gpu-node-1 BLOCKED device-plugin (label \"\")\n"
            "gpu-node-2 OK\n");
  auto j = run_gpuops({"audit", "--snapshot", dump, "-o", "json"});
  EXPECT_EQ(j.code, 1);
  auto nodes = boost::json::parse(j.out).at("nodes").as_array();
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(
      boost::json::serialize(nodes[1].at("blocked")),
      R"([{"operand":"container-toolkit","why":"no deploy label"},{"operand":"device-plugin","why":"label \"\""}])");

  // The same install healthy: silent.
  auto healthy =
      run_gpuops({"audit", "--snapshot", std::string(GPUOPS_SOURCE_DIR) + "/tests/data/operator/healthy-v26.7"});
  EXPECT_EQ(healthy.code, 0) << healthy.out;
  EXPECT_EQ(healthy.out, "cpu-node-1 OK\ngpu-node-1 OK\ngpu-node-2 OK\n");
}

// A status string from a dump (a container's waiting reason) with ESC and CR
// in it: `matrix -o wide` writes the cell as kubectl's printers do
// (WriteEscaped: ESC as ^[, CR as \r), so a dump cannot drive the terminal.
TEST(AuditOperatorMode, WideMatrixCellsAreEscaped) {
  const std::string dump = edited_dump("escapes", [](boost::json::object& o) {
    if (str(o.at("kind")) == "Pod" && str(o.at("metadata").at("name")) == "nvidia-device-plugin-daemonset-g1d") {
      auto& st = o["status"].as_object();
      st["phase"] = "Pending";
      boost::json::object waiting{{"reason", "\x1b[2JBad\rPass"}};
      boost::json::object state{{"waiting", waiting}};
      boost::json::object cs{{"name", "nvidia-device-plugin"},
                             {"ready", false},
                             {"restartCount", 0},
                             {"image", "x"},
                             {"imageID", ""},
                             {"state", state}};
      st["containerStatuses"] = boost::json::array{cs};
    }
    return true;
  });
  auto r = run_gpuops({"matrix", "-o", "wide", "--snapshot", dump});
  EXPECT_NE(r.out.find("^[[2JBad\\rPass"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
  EXPECT_EQ(r.out.find('\r'), std::string::npos);
}

}  // namespace
