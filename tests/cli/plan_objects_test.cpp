// gpuops plan of ClusterPolicy changes on the healthy v26.7 render: the
// DaemonSets they change, each template change with what its update strategy
// makes of it, exit 1 whenever anything changes, and what the simulation
// cannot follow said, not guessed.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <fstream>
#include <string>
#include <string_view>

#include "../common/cli_run.h"
#include "../common/edited_dump.h"

namespace {

using gpuops::testing::run_gpuops;

const std::string kDump = std::string(GPUOPS_SOURCE_DIR) + "/tests/data/operator/healthy-v26.7";

gpuops::testing::CliRun plan_patch(const std::string& patch, bool json = false) {
  std::vector<std::string> args{"plan",           "--snapshot", kDump,   "patch", "clusterpolicy",
                                "cluster-policy", "--type",     "merge", "-p",    patch};
  if (json) args.insert(args.end(), {"-o", "json"});
  return run_gpuops(args);
}

bool has(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

// driver.version on the OnDelete driver DaemonSet (assets/state-driver:
// updateStrategy OnDelete): TransformDriver's image is
// <repository>/<image>:<version>-<os> with the os of the GPU nodes' NFD
// os_release labels (ubuntu24.04); the DaemonSet controller replaces no pod
// (OnDelete: kubernetes pkg/controller/daemon/update.go does nothing), so no
// pod changes, yet the plan is not "nothing": exit 1.
TEST(PlanObjects, ADriverVersionOnAnOnDeleteDaemonSet) {
  auto r = plan_patch(R"({"spec":{"driver":{"version":"580.95.05"}}})");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_TRUE(has(r.out,
                  "daemonset nvidia-driver-daemonset (driver) changed:\n"
                  "  spec.template.spec.containers[0].image: \"nvcr.io/nvidia/driver:595.91.07-ubuntu24.04\" -> "
                  "\"nvcr.io/nvidia/driver:580.95.05-ubuntu24.04\"\n"
                  "  OnDelete: the pods keep the old template until each is deleted, by hand or, for the driver, by "
                  "the operator's upgrade controller (driver.upgradePolicy.autoUpgrade)\n"))
      << r.out;
  EXPECT_TRUE(has(r.out, "0 pods deleted on 0 nodes, 0 created, 0 replaced")) << r.out;
  auto j = plan_patch(R"({"spec":{"driver":{"version":"580.95.05"}}})", true);
  auto doc = boost::json::parse(j.out).as_object();
  EXPECT_TRUE(doc.at("pods").as_array().empty());
  EXPECT_EQ(doc.at("changes"), true);
  ASSERT_EQ(doc.at("daemonsets").as_array().size(), 1u);
  EXPECT_EQ(doc.at("daemonsets").at(0).at("kind"), "changed");
  EXPECT_EQ(doc.at("daemonsets").at(0).at("operand"), "driver");
}

// The device plugin's image on RollingUpdate DaemonSets (maxUnavailable 1,
// maxSurge 0 after SetDefaults_DaemonSet): both pods replaced; the "before"
// is the cluster's image (v0.20.0, which the operator's deployment set), not
// the simulation's default.
TEST(PlanObjects, AnImageOnARollingUpdateDaemonSet) {
  auto r = plan_patch(R"({"spec":{"devicePlugin":{"repository":"nvcr.io/nvidia","image":"k8s-device-plugin",)"
                      R"("version":"v0.21.0"}}})");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_TRUE(has(r.out,
                  "daemonset nvidia-device-plugin-daemonset (device-plugin) changed:\n"
                  "  spec.template.spec.containers[0].image: \"nvcr.io/nvidia/k8s-device-plugin:v0.20.0\" -> "
                  "\"nvcr.io/nvidia/k8s-device-plugin:v0.21.0\"\n"
                  "  RollingUpdate: the pods are replaced node by node, at most 1 unavailable at once (maxSurge 0)\n"))
      << r.out;
  EXPECT_TRUE(has(r.out, "0 created, 2 replaced")) << r.out;
}

// toolkit.env: TransformToolkit sets each variable on the toolkit container
// (setContainerEnv), a template change of the RollingUpdate DaemonSet: its
// two pods replaced, exit 1. The change is that one variable, not the env
// list: where the cluster's DaemonSet already holds it (transformForRuntime
// writes CONTAINERD_CONFIG), its value there is the "before", and the
// asset's other variables are no change.
TEST(PlanObjects, ToolkitEnvIsATemplateChangeOfThatVariable) {
  const char* patch = R"({"spec":{"toolkit":{"env":[{"name":"CONTAINERD_CONFIG","value":"/etc/k3s.toml"}]}}})";
  auto r = plan_patch(patch);
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(has(r.out,
                  "daemonset nvidia-container-toolkit-daemonset (container-toolkit) changed:\n"
                  "  spec.template.spec.containers[0].env.CONTAINERD_CONFIG: (absent) -> \"/etc/k3s.toml\"\n"
                  "  RollingUpdate: the pods are replaced node by node, at most 1 unavailable at once (maxSurge 0)\n"))
      << r.out;
  EXPECT_TRUE(has(r.out, "0 created, 2 replaced")) << r.out;
  auto j = boost::json::parse(plan_patch(patch, true).out).as_object();
  EXPECT_TRUE(j.at("unpredicted").as_array().empty());

  const std::string dump = gpuops::testing::edited_dump("healthy-v26.7", "toolkit-env", [](boost::json::object& o) {
    if (o.at("kind") == "DaemonSet" && o.at("metadata").at("name") == "nvidia-container-toolkit-daemonset")
      o["spec"].as_object()["template"].as_object()["spec"].as_object()["containers"].as_array()[0].as_object()["env"] =
          boost::json::parse(R"([{"name":"RUNTIME","value":"containerd"},
                                 {"name":"CONTAINERD_CONFIG","value":"/runtime/config-dir/config.toml"}])");
    return true;
  });
  auto held = run_gpuops(
      {"plan", "--snapshot", dump, "patch", "clusterpolicy", "cluster-policy", "--type", "merge", "-p", patch});
  EXPECT_EQ(held.code, 1) << held.err;
  EXPECT_TRUE(has(held.out,
                  "  spec.template.spec.containers[0].env.CONTAINERD_CONFIG: \"/runtime/config-dir/config.toml\" -> "
                  "\"/etc/k3s.toml\"\n"))
      << held.out;
  EXPECT_FALSE(has(held.out, "RUNTIME")) << held.out;
}

// driver.startupProbe: TransformDriver writes it into the driver
// container's probe, which the simulated operator does not render: the plan
// says it cannot tell, and exits 1 rather than 0.
TEST(PlanObjects, AFieldTheSimulationDoesNotRenderIsSaidAndNotZero) {
  const char* patch = R"({"spec":{"driver":{"startupProbe":{"initialDelaySeconds":120}}}})";
  auto r = plan_patch(patch);
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(has(r.err,
                  "gpuops plan: note: spec.driver changes (spec.driver.startupProbe: (absent) -> "
                  "{\"initialDelaySeconds\":120}), which the simulated operator renders into no DaemonSet"))
      << r.err;
  auto j = boost::json::parse(plan_patch(patch, true).out).as_object();
  EXPECT_EQ(j.at("unpredicted").as_array().size(), 1u);
  // A field it renders is not in that list.
  auto d = boost::json::parse(plan_patch(R"({"spec":{"driver":{"version":"580.95.05"}}})", true).out).as_object();
  EXPECT_TRUE(d.at("unpredicted").as_array().empty());
}

// Host paths, as the transforms move them (controllers/object_controls.go
// v25.3.4): toolkit.installDir moves the toolkit's toolkit-install-dir volume
// and sets ROOT (TransformToolkit); hostPaths.rootFS moves host-root in every
// DaemonSet whose asset has one and sets HOST_ROOT on each of its containers,
// and host-dev-char to <rootFS>/dev/char (transformForHostRoot). Which
// DaemonSets have which volume is v25.3.4's assets (assets/state-*/): the
// toolkit has all four, the GFD and DCGM exporter none. On a state recorded
// from the real v25.3.4 operator.
TEST(PlanObjects, HostPathsMoveTheAssetsVolumes) {
  const std::string dump = std::string(GPUOPS_SOURCE_DIR) + "/tests/data/operator/daemonsets-tolerations/dump.json";
  auto plan = [&](const std::string& patch) {
    return run_gpuops(
        {"plan", "--snapshot", dump, "patch", "clusterpolicy", "cluster-policy", "--type", "merge", "-p", patch});
  };
  auto t = plan(R"({"spec":{"toolkit":{"installDir":"/opt/nvidia"}}})");
  EXPECT_EQ(t.code, 1) << t.err;
  EXPECT_FALSE(has(t.err, "renders into no DaemonSet")) << t.err;
  EXPECT_TRUE(has(t.out,
                  "daemonset nvidia-container-toolkit-daemonset (container-toolkit) changed:\n"
                  // the recorded DaemonSet holds the asset's ROOT, the default install dir
                  "  spec.template.spec.containers[0].env.ROOT: \"/usr/local/nvidia\" -> \"/opt/nvidia\"\n"
                  "  spec.template.spec.volumes.toolkit-install-dir: \"/usr/local/nvidia\" -> \"/opt/nvidia\"\n"))
      << t.out;
  EXPECT_TRUE(has(t.out, ", 1 DaemonSet created, deleted or changed\n")) << t.out;

  auto r = plan(R"({"spec":{"hostPaths":{"rootFS":"/host/"}}})");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_TRUE(has(r.out, "  spec.template.spec.volumes.host-dev-char: \"/dev/char\" -> \"/host/dev/char\"\n")) << r.out;
  EXPECT_TRUE(has(r.out, "  spec.template.spec.volumes.host-root: \"/\" -> \"/host/\"\n")) << r.out;
  for (const char* ds : {"nvidia-container-toolkit-daemonset (container-toolkit)", "nvidia-driver-daemonset (driver)",
                         "nvidia-device-plugin-daemonset (device-plugin)",
                         "nvidia-operator-validator (operator-validator)", "nvidia-mig-manager (mig-manager)"})
    EXPECT_TRUE(has(r.out, std::string("daemonset ") + ds + " changed:\n")) << ds << "\n" << r.out;
  for (const char* ds : {"gpu-feature-discovery", "nvidia-dcgm-exporter "})
    EXPECT_FALSE(has(r.out, std::string("daemonset ") + ds)) << ds << "\n" << r.out;
  EXPECT_TRUE(has(r.out, ", 5 DaemonSets created, deleted or changed\n")) << r.out;
  // The default moves nothing.
  auto same = plan(R"({"spec":{"hostPaths":{"rootFS":"/"}}})");
  EXPECT_FALSE(has(same.out, "daemonset ")) << same.out;
}

// A component disabled: its DaemonSet deleted (isStateEnabled false), said
// as such beside its pods.
TEST(PlanObjects, AComponentDisabledDeletesItsDaemonSet) {
  auto r = plan_patch(R"({"spec":{"dcgmExporter":{"enabled":false}}})");
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(has(r.out, "daemonset nvidia-dcgm-exporter (dcgm-exporter) deleted\n")) << r.out;
  EXPECT_TRUE(has(r.out, ", 1 DaemonSet created, deleted or changed\n")) << r.out;
}

// kubectl drain evicts every pod of the node, whatever its namespace
// (pkg/drain/filters.go: DaemonSet pods need --ignore-daemonsets, pods
// without a controller --force). A GPU workload of another namespace is not
// in the simulated copy (one namespace is), so plan lists it itself.
std::string with_trainer(bool controlled, const std::string& owner_kind = "Job") {
  boost::json::object meta{{"name", "trainer-0"}, {"namespace", "ml"}, {"uid", "pod-uid-trainer-0"}};
  if (controlled)
    meta["ownerReferences"] =
        boost::json::array{boost::json::object{{"apiVersion", owner_kind == "Job" ? "batch/v1" : "apps/v1"},
                                               {"kind", owner_kind},
                                               {"name", "trainer"},
                                               {"uid", "owner-uid"},
                                               {"controller", true}}};
  boost::json::object trainer{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", meta},
      {"spec",
       boost::json::object{
           {"nodeName", "gpu-node-2"},
           {"containers",
            boost::json::array{boost::json::object{
                {"name", "train"},
                {"image", "x"},
                {"resources", boost::json::object{{"limits", boost::json::object{{"nvidia.com/gpu", "2"}}}}}}}}}},
      {"status", boost::json::object{{"phase", "Running"}}}};
  return gpuops::testing::edited_dump(
      "healthy-v26.7", "drain-" + (controlled ? owner_kind : std::string("bare")),
      [](boost::json::object&) { return true; }, boost::json::array{trainer});
}

TEST(PlanObjects, ADrainEvictsTheGpuWorkloadsOfEveryNamespace) {
  auto r = run_gpuops({"plan", "--snapshot", with_trainer(true), "drain", "gpu-node-2", "--ignore-daemonsets"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_TRUE(has(r.out,
                  "  - pod ml/trainer-0 deleted: evicted by the drain: a GPU workload (nvidia.com/gpu: 2); its Job "
                  "trainer makes another elsewhere, if a node has room\n"))
      << r.out;
  EXPECT_TRUE(has(r.out, "1 pod deleted on 1 node")) << r.out;
  // No controller: refused as kubectl drain refuses it, unless --force.
  auto bare = run_gpuops({"plan", "--snapshot", with_trainer(false), "drain", "gpu-node-2", "--ignore-daemonsets"});
  EXPECT_EQ(bare.code, 2);
  EXPECT_TRUE(has(bare.err, "cannot delete Pods that declare no controller (use --force to override): ml/trainer-0"))
      << bare.err;
  auto forced =
      run_gpuops({"plan", "--snapshot", with_trainer(false), "drain", "gpu-node-2", "--ignore-daemonsets", "--force"});
  EXPECT_EQ(forced.code, 1);
  EXPECT_TRUE(has(forced.out, "nothing makes it again (no controller, --force)")) << forced.out;
  // A GPU DaemonSet of another namespace: left, as kubectl drain leaves it
  // with --ignore-daemonsets.
  auto ds =
      run_gpuops({"plan", "--snapshot", with_trainer(true, "DaemonSet"), "drain", "gpu-node-2", "--ignore-daemonsets"});
  EXPECT_FALSE(has(ds.out, "ml/trainer-0")) << ds.out;
  // A dump of one namespace: the other pods of the node are unknown, said.
  auto blind = run_gpuops({"plan", "--snapshot", kDump, "drain", "gpu-node-2", "--ignore-daemonsets"});
  EXPECT_TRUE(has(blind.err,
                  "gpuops plan: note: the input holds only namespace gpu-operator's pods: a drain also evicts the "
                  "other pods on the node"))
      << blind.err;
}

// docs/reference/gpu-operator-live.md steps 2 and 3, measured on the real
// v25.3.4: an opt-out (dcgm-exporter=false) is kept; operands=false removes
// every deploy label, the opt-out too, and removing operands writes all of
// them back as "true": the opt-out is lost. Planned as two steps from a
// node that has the opt-out, the operator acts between them, and the label's
// history shows what the net hides, with the loss in words.
TEST(PlanObjects, TheHistoryOfALabelShowsALostOptOut) {
  const std::string dump = gpuops::testing::edited_dump("healthy-v26.7", "optout", [](boost::json::object& o) {
    if (o.at("kind") == "Node" && o.at("metadata").at("name") == "gpu-node-2")
      o["metadata"].as_object()["labels"].as_object()["nvidia.com/gpu.deploy.dcgm-exporter"] = "false";
    return !(o.at("kind") == "Pod" && o.at("metadata").at("name") == "nvidia-dcgm-exporter-g2a");
  });
  const std::string steps = ::testing::TempDir() + "/operands-false-and-back.yaml";
  std::ofstream(steps) << "- label: {node: gpu-node-2, set: {nvidia.com/gpu.deploy.operands: \"false\"}}\n"
                          "- label: {node: gpu-node-2, remove: [nvidia.com/gpu.deploy.operands]}\n";
  auto r = run_gpuops({"plan", "--snapshot", dump, "--steps", steps});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_TRUE(has(r.out,
                  "  label nvidia.com/gpu.deploy.dcgm-exporter: \"false\" -> (absent) -> \"true\" (the operator or "
                  "its helpers)\n"
                  "    the opt-out nvidia.com/gpu.deploy.dcgm-exporter=false is lost: the operator or its helpers "
                  "removed it, and it is \"true\" now\n"))
      << r.out;
  // A label taken and put back (net nothing) is still shown: its pods went
  // and came.
  EXPECT_TRUE(has(r.out,
                  "  label nvidia.com/gpu.deploy.device-plugin: \"true\" -> (absent) -> \"true\" (the operator or "
                  "its helpers)\n"))
      << r.out;
  EXPECT_TRUE(has(r.out, "  label nvidia.com/gpu.deploy.operands: (absent) -> \"false\" -> (absent) (the change)\n"))
      << r.out;
  // The opt-out's pod comes: dcgm-exporter runs again on gpu-node-2.
  EXPECT_TRUE(has(r.out, "dcgm-exporter=no->yes")) << r.out;
  auto j = boost::json::parse(run_gpuops({"plan", "--snapshot", dump, "--steps", steps, "-o", "json"}).out);
  bool found = false;
  for (const auto& l : j.at("labels").as_array())
    if (l.at("key") == "nvidia.com/gpu.deploy.dcgm-exporter") {
      found = true;
      EXPECT_EQ(l.at("optOutLost"), true);
      EXPECT_EQ(l.at("history"), boost::json::parse(R"(["false", null, "true"])"));
    }
  EXPECT_TRUE(found);
}

// A deploy label set by hand on an operands=false node: the operator
// of v25.3 removes it again at once (removeAllGPUStateLabels,
// labelGPUNodes, controllers/state_manager.go, run on the DaemonSet's
// status change; measured on the real v25.3.4 operator by
// scripts/plan-predict.sh --operator: the node's labels after are those
// before, no pod). The label is shown with its history, and nothing changes:
// exit 0.
TEST(PlanObjects, ALabelTheOperatorRemovesAgainChangesNothing) {
  const std::string dump = gpuops::testing::edited_dump("healthy-v26.7", "operands-false", [](boost::json::object& o) {
    if (o.at("kind") == "Node" && o.at("metadata").at("name") == "gpu-node-2") {
      auto& labels = o["metadata"].as_object()["labels"].as_object();
      for (auto it = labels.begin(); it != labels.end();)
        it = std::string_view(it->key()).starts_with("nvidia.com/gpu.deploy.") ? labels.erase(it) : it + 1;
      labels["nvidia.com/gpu.deploy.operands"] = "false";
    }
    // The operands' pods gone from the node (NFD's worker stays).
    if (o.at("kind") == "Pod") {
      const auto& spec = o.at("spec").as_object();
      const std::string_view name = o.at("metadata").at("name").as_string();
      if (spec.contains("nodeName") && spec.at("nodeName") == "gpu-node-2" &&
          !name.starts_with("gpu-operator-node-feature-discovery"))
        return false;
    }
    return true;
  });
  // The v25.3 operator, as measured (v26.7's no longer relabels on its
  // DaemonSets' events: the label stays until the next reconcile).
  auto r = run_gpuops({"plan", "--snapshot", dump, "--operator-version", "v25.3", "label", "node", "gpu-node-2",
                       "nvidia.com/gpu.deploy.device-plugin=true", "--overwrite"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "  label nvidia.com/gpu.deploy.device-plugin: (absent) -> \"true\" -> (absent)")) << r.out;
  EXPECT_TRUE(has(r.out, "0 pods deleted on 0 nodes, 0 created, 0 replaced")) << r.out;
}

}  // namespace
