// The field cases (tests/data/cases/*/cluster.json) through core::diagnose: each
// case that asks for more than the lab contract gets the finding its README
// describes, with exact names and nodes.
#include <gtest/gtest.h>
#include <boost/json/serialize.hpp>

#include <variant>

#include "core/cluster/snapshot.h"
#include "core/codec/decode.h"
#include "core/codec/documents.h"
#include "core/codec/encode.h"
#include "core/diagnose/diagnose.h"

namespace gpuops::core {
namespace {

const std::string kCases = std::string(GPUOPS_CASES_DIR) + "/";

ClusterState load(const std::string& name) {
  SnapshotCluster snap({kCases + name + "/cluster.json"});
  return snap.state("gpu-operator");
}

// "<node> <operand> <name>" for every finding, in order.
std::vector<std::string> names(const std::vector<Finding>& fs) {
  std::vector<std::string> out;
  for (const auto& f : fs) out.push_back(f.node + " " + (f.operand.empty() ? "-" : f.operand) + " " + f.name);
  return out;
}

const Finding* find(const std::vector<Finding>& fs, const std::string& node, const std::string& operand,
                    const std::string& name) {
  for (const auto& f : fs)
    if (f.node == node && f.operand == operand && f.name == name) return &f;
  return nullptr;
}

std::string ev(const Finding& f, const std::string& key) {
  for (const auto& [k, v] : f.evidence)
    if (k == key) return v;
  return "<no evidence " + key + ">";
}

TEST(DiagnoseCases, EmptyLabelValues) {
  auto fs = diagnose(load("empty-label-values"), load_catalog("lab"), {});
  EXPECT_EQ(names(fs), (std::vector<std::string>{
                           "gpu-a driver running",
                           "gpu-a container-toolkit label-empty-value",
                           "gpu-a device-plugin label-empty-value",
                           "gpu-a gpu-feature-discovery label-empty-value",
                           "gpu-a dcgm-exporter label-empty-value",
                       }));
  for (size_t i = 1; i < fs.size(); ++i) {
    EXPECT_EQ(fs[i].severity, Severity::kError);
    EXPECT_EQ(fs[i].evidence.at(0).second, "");
    EXPECT_NE(fs[i].reason.find("stale pause marker"), std::string::npos);
    EXPECT_NE(fs[i].reason.find("the operand is off on this node"), std::string::npos);
  }
  EXPECT_EQ(exit_code(fs), 1);
}

TEST(DiagnoseCases, MissingDeployLabels) {
  auto fs = diagnose(load("missing-deploy-labels"), load_catalog("lab"), {});
  EXPECT_EQ(names(fs), (std::vector<std::string>{
                           "gpu-a driver running",
                           "gpu-a container-toolkit running",
                           "gpu-a device-plugin running",
                           "gpu-a gpu-feature-discovery running",
                           "gpu-a dcgm-exporter running",
                           "gpu-b - missing-deploy-labels",
                           "gpu-b driver running",
                           "gpu-b container-toolkit label-absent",
                           "gpu-b device-plugin label-absent",
                           "gpu-b gpu-feature-discovery label-absent",
                           "gpu-b dcgm-exporter label-absent",
                       }));
  const Finding* f = find(fs, "gpu-b", "", "missing-deploy-labels");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kError);
  EXPECT_EQ(f->evidence, (std::vector<std::pair<std::string, std::string>>{
                             {"workload config", "container"},
                             {"label nvidia.com/gpu.deploy.container-toolkit", "(absent)"},
                             {"label nvidia.com/gpu.deploy.device-plugin", "(absent)"},
                             {"label nvidia.com/gpu.deploy.gpu-feature-discovery", "(absent)"},
                             {"label nvidia.com/gpu.deploy.dcgm-exporter", "(absent)"},
                         }));
  EXPECT_NE(f->reason.find("lacks deploy labels container-toolkit, device-plugin, gpu-feature-discovery, "
                           "dcgm-exporter: their DaemonSets never select it, so no pod comes"),
            std::string::npos);
  EXPECT_EQ(exit_code(fs), 1);

  // The full catalog names the same four, plus the rest of the container set.
  auto full = diagnose(load("missing-deploy-labels"), load_catalog("gpu-operator"), {"gpu-b"});
  const Finding* g = find(full, "gpu-b", "", "missing-deploy-labels");
  ASSERT_NE(g, nullptr);
  EXPECT_NE(g->reason.find("lacks deploy labels container-toolkit, device-plugin, gpu-feature-discovery, "
                           "dcgm-exporter, operator-validator, dcgm, node-status-exporter:"),
            std::string::npos);
}

TEST(DiagnoseCases, PendingInsufficientMemory) {
  auto fs = diagnose(load("pending-insufficient-memory"), load_catalog("lab"), {"gpu-small"});
  const Finding* f = find(fs, "gpu-small", "driver", "pending-unschedulable");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kError);
  EXPECT_EQ(ev(*f, "pod"), "nvidia-driver-daemonset-ba24c");
  EXPECT_EQ(ev(*f, "phase"), "Pending");
  EXPECT_EQ(ev(*f, "status"), "Pending");
  EXPECT_EQ(ev(*f, "scheduler"),
            "0/2 nodes are available: 1 Insufficient memory, 1 node(s) didn't match Pod's node "
            "affinity/selector. preemption: 0/2 nodes are available: 1 No preemption victims found for "
            "incoming pod, 1 Preemption is not helpful for scheduling.");
  EXPECT_NE(f->reason.find("Insufficient memory"), std::string::npos);
  // The toolkit runs there without a driver pod: the order rule says so.
  EXPECT_EQ(names(fs), (std::vector<std::string>{
                           "gpu-small driver pending-unschedulable",
                           "gpu-small container-toolkit running",
                           "gpu-small device-plugin running",
                           "gpu-small gpu-feature-discovery running",
                           "gpu-small dcgm-exporter running",
                           "gpu-small container-toolkit container-toolkit-without-driver",
                       }));
  EXPECT_EQ(exit_code(fs), 1);
}

TEST(DiagnoseCases, StuckInInit) {
  auto fs = diagnose(load("stuck-in-init"), load_catalog("lab"), {});
  EXPECT_EQ(names(fs), (std::vector<std::string>{
                           "gpu-a driver running",
                           "gpu-a container-toolkit running",
                           "gpu-a device-plugin stuck-in-init",
                           "gpu-a gpu-feature-discovery stuck-in-init",
                           "gpu-a dcgm-exporter stuck-in-init",
                       }));
  for (size_t i = 2; i < 5; ++i) {
    EXPECT_EQ(fs[i].severity, Severity::kError);
    EXPECT_EQ(ev(fs[i], "gate"), "toolkit-validation");
    EXPECT_EQ(ev(fs[i], "status"), "Init:0/1");
    EXPECT_EQ(ev(fs[i], "phase"), "Pending");
    EXPECT_NE(fs[i].reason.find("waiting on gate toolkit-validation"), std::string::npos);
    EXPECT_NE(fs[i].reason.find("toolkit-ready, which only the operator-validator"), std::string::npos);
  }
  // With the full catalog the root cause shows too: no validator label on the node.
  auto full = diagnose(load("stuck-in-init"), load_catalog("gpu-operator"), {});
  const Finding* v = find(full, "gpu-a", "operator-validator", "label-absent");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->severity, Severity::kError);
}

TEST(DiagnoseCases, TerminatingAfterOptOut) {
  auto fs = diagnose(load("terminating-after-optout"), load_catalog("lab"), {"gpu-b"});
  EXPECT_EQ(names(fs), (std::vector<std::string>{
                           "gpu-b driver running",
                           "gpu-b container-toolkit running",
                           "gpu-b device-plugin running",
                           "gpu-b gpu-feature-discovery running",
                           "gpu-b dcgm-exporter label-false",
                       }));
  EXPECT_EQ(ev(fs[4], "status"), "Terminating");
  EXPECT_EQ(ev(fs[4], "phase"), "Running");
  EXPECT_EQ(ev(fs[4], "pod"), "nvidia-dcgm-exporter-00a71");
  EXPECT_EQ(exit_code(diagnose(load("terminating-after-optout"), load_catalog("lab"), {})), 0);
}

TEST(DiagnoseCases, UntoleratedTaint) {
  auto fs = diagnose(load("untolerated-taint"), load_catalog("lab"), {"gpu-b"});
  EXPECT_EQ(names(fs), (std::vector<std::string>{
                           "gpu-b driver untolerated-taint",
                           "gpu-b container-toolkit untolerated-taint",
                           "gpu-b device-plugin untolerated-taint",
                           "gpu-b gpu-feature-discovery untolerated-taint",
                           "gpu-b dcgm-exporter untolerated-taint",
                       }));
  for (const auto& f : fs) {
    EXPECT_EQ(f.severity, Severity::kError);
    EXPECT_EQ(ev(f, "taint"), "dedicated=ml-team:NoSchedule");
    EXPECT_NE(f.reason.find("taint dedicated=ml-team:NoSchedule is not tolerated"), std::string::npos);
  }
}

TEST(DiagnoseCases, LabFinalState) {
  auto fs = diagnose(load("lab-final-state"), load_catalog("lab"), {"lab-node-1", "lab-node-2"});
  EXPECT_EQ(names(fs), (std::vector<std::string>{
                           "lab-node-1 driver label-false",
                           "lab-node-1 container-toolkit running",
                           "lab-node-1 device-plugin running",
                           "lab-node-1 gpu-feature-discovery running",
                           "lab-node-1 dcgm-exporter label-false",
                           "lab-node-2 - not-a-gpu-node",
                           "lab-node-2 - deploy-labels-on-non-gpu-node",
                           "lab-node-2 driver label-absent",
                           "lab-node-2 container-toolkit label-absent",
                           "lab-node-2 device-plugin running",
                           "lab-node-2 gpu-feature-discovery label-absent",
                           "lab-node-2 dcgm-exporter label-absent",
                           "lab-node-2 device-plugin device-plugin-without-toolkit",
                       }));
  EXPECT_EQ(exit_code(fs), 1);
}

// The same state read through the codec again (as a backend would hand it
// over) gives the same findings.
TEST(DiagnoseCases, SameFindingsAfterAnEncodeDecodeRoundTrip) {
  for (const char* name : {"empty-label-values", "missing-deploy-labels", "pending-insufficient-memory",
                           "stuck-in-init", "terminating-after-optout", "untolerated-taint", "lab-final-state"}) {
    ClusterState s = load(name);
    std::vector<Object> objects;
    auto again = [&](const boost::json::object& o) {
      auto docs = read_documents(boost::json::serialize(o), "roundtrip.json");
      objects.push_back(decode_object(docs.at(0)));
    };
    for (const auto& n : s.nodes) again(encode(n));
    for (const auto& d : s.daemonsets) again(encode(d));
    for (const auto& p : s.pods) again(encode(p));
    SnapshotCluster snap(std::move(objects));
    Catalog c = load_catalog("gpu-operator");
    EXPECT_EQ(render_json(diagnose(snap.state("gpu-operator"), c, {})), render_json(diagnose(s, c, {}))) << name;
  }
}

}  // namespace
}  // namespace gpuops::core
