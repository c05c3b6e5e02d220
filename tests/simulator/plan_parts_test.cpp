// gpuops plan compares only the parts of the states before and after a
// change that the change touched (simulator::touched_nodes,
// core::state_part, plan_changes' part form). The reference is the plan
// of the two whole states: on every field case and operator dump, for each
// change of the kinds plan offers on each node, the plan from the parts is
// the same document, text and JSON, as the plan from the wholes.
#include <gtest/gtest.h>

#include <boost/json/serialize.hpp>

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/cluster/snapshot.h"
#include "core/gpu_operator/operator_install.h"
#include "core/plan/plan.h"
#include "simulator/fake_cluster.h"
#include "simulator/store/touched_nodes.h"
#include "tests/simulator/helpers.h"

namespace gpuops::simulator {
namespace {

const char* kNs = "gpu-operator";

struct Change {
  std::string what;
  std::function<void(FakeCluster&)> apply;
  bool whole = false;  // a change past what parts hold: touched_nodes gives nothing
};

std::vector<Change> changes_of(const core::ClusterState& s) {
  std::vector<Change> out;
  for (const auto& n : s.nodes) {
    const std::string node = n.metadata.name;
    for (const auto& [key, value] : n.metadata.labels) {
      if (!key.starts_with("nvidia.com/gpu.deploy.")) continue;
      const std::string flipped = value == "false" ? "true" : "false";
      out.push_back({node + " " + key + "=" + flipped, [=](FakeCluster& c) { c.set_node_label(node, key, flipped); }});
      out.push_back({node + " " + key + "-", [=](FakeCluster& c) { c.set_node_label(node, key, std::nullopt); }});
    }
    out.push_back({node + " nvidia.com/gpu.deploy.operands=false",
                   [=](FakeCluster& c) { c.set_node_label(node, "nvidia.com/gpu.deploy.operands", "false"); }});
    out.push_back({node + " nvidia.com/gpu.present-",
                   [=](FakeCluster& c) { c.set_node_label(node, "nvidia.com/gpu.present", std::nullopt); }});
    out.push_back({"cordon " + node, [=](FakeCluster& c) { c.set_node_unschedulable(node, true); }});
    for (const char* effect : {"NoSchedule", "NoExecute"}) {
      std::vector<core::Taint> taints = n.taints;
      taints.push_back(core::Taint{"example.com/maintenance", "x", effect, std::nullopt});
      out.push_back({"taint " + node + " " + effect, [=](FakeCluster& c) { c.set_node_taints(node, taints); }});
    }
    out.push_back({"delete node " + node, [=](FakeCluster& c) { c.delete_node(node); }});
  }
  for (const auto& p : s.pods)
    if (p.metadata.namespace_ == kNs && !p.metadata.deletion_timestamp) {
      const std::string name = p.metadata.name;
      out.push_back({"delete pod " + name, [=](FakeCluster& c) { c.delete_pod(kNs, name); }});
      break;
    }
  for (const auto& d : s.daemonsets)
    if (d.metadata.namespace_ == kNs) {
      core::DaemonSet changed = d;
      changed.metadata.resource_version.clear();
      changed.template_.spec.tolerations.push_back(core::Toleration{"example.com/maintenance", "Exists", "", "", {}});
      out.push_back(
          {"template of " + d.metadata.name, [=](FakeCluster& c) { c.apply({core::Object(changed)}); }, true});
      break;
    }
  return out;
}

TEST(PlanParts, ThePlanFromThePartsIsThePlanFromTheWholes) {
  size_t compared = 0;
  for (const auto& dir : testing::dumps()) {
    SCOPED_TRACE(dir);
    core::SnapshotCluster snap({dir});
    const core::ClusterState read = snap.state(kNs);
    const core::OperatorInstall install = core::detect_operator_install(read);
    const core::Catalog catalog = core::load_catalog(core::default_catalog_name(install));
    std::optional<core::Catalog> operator_catalog;
    if (install.detected) operator_catalog = catalog;
    for (const auto& change : changes_of(read)) {
      SCOPED_TRACE(change.what);
      FakeCluster::Options o;
      o.start = FakeCluster::import_start(read);
      FakeCluster c(o);
      c.import_state(read, operator_catalog ? &*operator_catalog : nullptr);
      c.settle();
      const core::ClusterState before = c.state(kNs);
      const uint64_t mark = c.store().resource_version();
      change.apply(c);
      c.settle();
      const std::optional<std::set<std::string>> touched = touched_nodes(c.store(), mark, before);
      ASSERT_EQ(touched.has_value(), !change.whole);
      const core::PlanResult whole = core::plan_changes(before, c.state(kNs), catalog, {});
      if (!touched) continue;
      const core::PlanResult parts =
          core::plan_changes(before, core::state_part(before, *touched),
                             c.partial_state(kNs, core::StateParts{.of_nodes = &*touched}), catalog, {});
      EXPECT_EQ(core::render_plan_text(parts), core::render_plan_text(whole));
      EXPECT_EQ(boost::json::serialize(core::render_plan_json(parts)),
                boost::json::serialize(core::render_plan_json(whole)));
      // gpuops plan's form: the whole state before given by its matrix.
      const core::PlanResult by_matrix =
          core::plan_changes(core::matrix_result(before, catalog, true), core::state_part(before, *touched),
                             c.partial_state(kNs, core::StateParts{.of_nodes = &*touched}), catalog, {});
      EXPECT_EQ(boost::json::serialize(core::render_plan_json(by_matrix)),
                boost::json::serialize(core::render_plan_json(whole)));
      // What the plan found changed is on the nodes it compared.
      for (const auto& p : whole.pods) EXPECT_TRUE(p.node.empty() || touched->count(p.node)) << p.node;
      for (const auto& l : whole.labels) EXPECT_TRUE(touched->count(l.node)) << l.node;
      ++compared;
    }
  }
  EXPECT_GE(compared, 300u);
}

}  // namespace
}  // namespace gpuops::simulator
