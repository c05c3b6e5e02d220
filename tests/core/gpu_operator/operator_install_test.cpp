// Operator mode's rules one by one: detection and version
// (core/gpu_operator/operator_install.h), isStateEnabled with the IsEnabled defaults
// (core/gpu_operator/cluster_policy.h), the root cause graph (core/diagnose/root_cause.h), and the
// catalogs of each release (data/operands).
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "core/diagnose/root_cause.h"
#include "core/gpu_operator/cluster_policy.h"
#include "core/gpu_operator/operands.h"
#include "core/gpu_operator/operator_install.h"

namespace core = gpuops::core;
namespace json = boost::json;

namespace {

core::DaemonSet ds(const std::string& name, core::Labels labels = {}) {
  core::DaemonSet d;
  d.metadata.name = name;
  d.metadata.namespace_ = "gpu-operator";
  d.metadata.uid = "uid-" + name;
  d.metadata.labels = labels;
  d.template_.labels = labels;
  return d;
}

core::OwnerReference owner(const std::string& api_version, const std::string& kind, bool controller = true) {
  return core::OwnerReference{api_version, kind, "cluster-policy", "cp-uid", controller};
}

core::ClusterPolicy policy(const std::string& spec_json) {
  core::ClusterPolicy p;
  p.metadata.name = "cluster-policy";
  p.raw = json::object{{"spec", json::parse(spec_json)}};
  return p;
}

}  // namespace

TEST(OperatorInstall, DetectedByControllerOwnerOrManagedByLabel) {
  core::ClusterState lab;
  lab.daemonsets = {ds("nvidia-driver-daemonset", {{"app", "nvidia-driver-daemonset"}})};
  EXPECT_FALSE(core::detect_operator_install(lab).detected);

  core::ClusterState owned = lab;
  owned.daemonsets[0].metadata.owner_references = {owner("nvidia.com/v1", "ClusterPolicy")};
  auto o = core::detect_operator_install(owned);
  EXPECT_TRUE(o.detected);
  EXPECT_EQ(o.evidence, "DaemonSet gpu-operator/nvidia-driver-daemonset is controlled by ClusterPolicy cluster-policy");

  // An owner that is not the controller, or of another group, is not the
  // operator's.
  core::ClusterState other = lab;
  other.daemonsets[0].metadata.owner_references = {owner("nvidia.com/v1", "ClusterPolicy", false)};
  EXPECT_FALSE(core::detect_operator_install(other).detected);
  other.daemonsets[0].metadata.owner_references = {owner("example.com/v1", "ClusterPolicy")};
  EXPECT_FALSE(core::detect_operator_install(other).detected);

  core::ClusterState labelled = lab;
  labelled.daemonsets[0].metadata.labels[core::kManagedByLabel] = "gpu-operator";
  EXPECT_EQ(core::detect_operator_install(labelled).evidence,
            "DaemonSet gpu-operator/nvidia-driver-daemonset is labelled app.kubernetes.io/managed-by=gpu-operator");

  core::ClusterState with_policy;
  with_policy.cluster_policies = {policy("{}")};
  EXPECT_EQ(core::detect_operator_install(with_policy).evidence, "ClusterPolicy cluster-policy is part of the input");
}

TEST(OperatorInstall, VersionFromTheChartLabelElseTheValidatorImage) {
  core::ClusterState s;
  s.daemonsets = {ds("nvidia-driver-daemonset", {{core::kManagedByLabel, "gpu-operator"}})};
  core::Container c;
  c.image = "nvcr.io/nvidia/cloud-native/gpu-operator-validator:v25.3.4";
  s.daemonsets[0].template_.spec.init_containers = {c};
  auto o = core::detect_operator_install(s);
  EXPECT_EQ(o.version, "v25.3.4");
  EXPECT_EQ(o.version_source,
            "image nvcr.io/nvidia/cloud-native/gpu-operator-validator:v25.3.4 of DaemonSet "
            "gpu-operator/nvidia-driver-daemonset");
  s.daemonsets[0].template_.labels[core::kHelmChartLabel] = "gpu-operator-v26.7.0";
  o = core::detect_operator_install(s);
  EXPECT_EQ(o.version, "v26.7.0");
  EXPECT_EQ(o.version_source, "helm.sh/chart label of DaemonSet gpu-operator/nvidia-driver-daemonset");
  // Another chart's label or an image of another name tells nothing.
  core::ClusterState n;
  n.daemonsets = {ds("x", {{core::kManagedByLabel, "gpu-operator"}, {core::kHelmChartLabel, "nfd-0.19.0"}})};
  c.image = "nvcr.io/nvidia/k8s-device-plugin:v0.20.0";
  n.daemonsets[0].template_.spec.containers = {c};
  EXPECT_EQ(core::detect_operator_install(n).version, "");
}

TEST(OperatorInstall, CatalogPerRelease) {
  EXPECT_EQ(core::operator_catalog_name("v25.3.4"), "gpu-operator-v25.3");
  EXPECT_EQ(core::operator_catalog_name("v26.3.3"), "gpu-operator-v26.3");
  EXPECT_EQ(core::operator_catalog_name("v26.6.0"), "gpu-operator-v26.3");  // the newest line at or before it
  EXPECT_EQ(core::operator_catalog_name("v25.10.1"), "gpu-operator-v25.10");
  EXPECT_EQ(core::operator_catalog_name("v25.9.0"), "gpu-operator-v25.3");
  EXPECT_EQ(core::operator_catalog_name("v24.9.2"), "gpu-operator-v24.9");
  EXPECT_EQ(core::operator_catalog_name("24.6.1"), "gpu-operator-v24.6");
  EXPECT_EQ(core::operator_catalog_name("v24.3.0"), "gpu-operator-v24.3");
  EXPECT_EQ(core::operator_catalog_name("v23.9.2"), "gpu-operator-v23.9");
  EXPECT_EQ(core::operator_catalog_name("v23.6.1"), "gpu-operator-v23.9");  // older than any: the oldest
  EXPECT_EQ(core::operator_catalog_name("v26.7.0"), "gpu-operator");
  EXPECT_EQ(core::operator_catalog_name("v27.1.0"), "gpu-operator");
  EXPECT_EQ(core::operator_catalog_name(""), "gpu-operator");
  EXPECT_TRUE(core::version_at_least("v26.7", 26, 7));
  EXPECT_FALSE(core::version_at_least("25.10.1", 26, 0));
  EXPECT_TRUE(core::version_at_least("nonsense", 26, 7));

  core::Catalog v25 = core::load_catalog("gpu-operator-v25.3");
  core::Catalog v26 = core::load_catalog("gpu-operator");
  EXPECT_EQ(v25.version, "v25.3");
  EXPECT_EQ(v26.version, "v26.7");
  // kata-sandbox-device-plugin came with v26.3 (docs/reference/gpu-operator.md §1).
  EXPECT_EQ(v25.by_name("kata-sandbox-device-plugin"), nullptr);
  EXPECT_NE(v26.by_name("kata-sandbox-device-plugin"), nullptr);
  EXPECT_EQ(v26.by_name("driver")->component, "nvidia-driver");
  EXPECT_EQ(core::load_catalog("lab").by_name("driver")->component, "nvidia-driver");
}

// A release's line is its major.minor (the chart's release tags: v25.10.1 is
// the v25.10 line, not v25.1); a note only where the lines differ.
TEST(OperatorInstall, ReleaseLineAndTheCatalogNote) {
  EXPECT_EQ(core::release_major_minor("v24.9.2"), "v24.9");
  EXPECT_EQ(core::release_major_minor("25.10.1"), "v25.10");
  EXPECT_EQ(core::release_major_minor("v26.7"), "v26.7");
  EXPECT_EQ(core::release_major_minor(""), "");
  EXPECT_EQ(core::release_major_minor("v26"), "");
  EXPECT_EQ(core::release_major_minor("latest"), "");
  EXPECT_EQ(core::catalogued_releases(),
            (std::vector<std::string>{"v23.9", "v24.3", "v24.6", "v24.9", "v25.3", "v25.10", "v26.3", "v26.7"}));

  EXPECT_EQ(core::catalog_release_note("v25.3.4", "v25.3"), "");
  EXPECT_EQ(core::catalog_release_note("v26.7.0", "v26.7"), "");
  EXPECT_EQ(core::catalog_release_note("", "v26.7"), "");    // unknown: the banner says it
  EXPECT_EQ(core::catalog_release_note("v24.9.2", ""), "");  // a catalog of no release
  EXPECT_EQ(core::catalog_release_note("v25.10.1", "v25.10"), "");
  const std::string v236 = core::catalog_release_note("v23.6.1", "v23.9");
  EXPECT_EQ(v236.rfind("gpuops: GPU Operator v23.6.1: no catalog for v23.6 (gpuops has v23.9, v24.3, v24.6, v24.9, "
                       "v25.3, v25.10, v26.3, v26.7); judged with v23.9's,",
                       0),
            0u)
      << v236;
  EXPECT_NE(core::catalog_release_note("v25.3.4", "v26.7").find("judged with v26.7's catalog, as --operands names it"),
            std::string::npos);
}

TEST(OperatorInstall, DriverDaemonSetsByComponentOnlyInOperatorMode) {
  core::Catalog c = core::load_catalog("gpu-operator");
  const core::Operand& driver = *c.by_name("driver");
  core::DaemonSet pre =
      ds("nvidia-driver-daemonset-6.8.0-101-generic-ubuntu24.04", {{core::kComponentLabel, "nvidia-driver"}});
  core::DaemonSet plain = ds("nvidia-driver-daemonset");
  EXPECT_TRUE(core::is_operand_daemonset(c, driver, plain));
  EXPECT_FALSE(core::is_operand_daemonset(c, driver, pre));
  c.operator_mode = true;
  EXPECT_TRUE(core::is_operand_daemonset(c, driver, pre));
  core::ClusterState s;
  s.daemonsets = {plain, pre, ds("nvidia-container-toolkit-daemonset")};
  auto dss = core::operand_daemonsets(s, c, driver);
  ASSERT_EQ(dss.size(), 2u);

  core::Pod p;
  p.metadata.owner_references = {
      core::OwnerReference{"apps/v1", "DaemonSet", pre.metadata.name, pre.metadata.uid, true}};
  EXPECT_TRUE(core::pod_of_operand(c, driver, dss, p));
  p.metadata.owner_references[0].uid = "another-uid";  // an older DaemonSet of that name
  EXPECT_FALSE(core::pod_of_operand(c, driver, dss, p));
  // A DaemonSet not in the state: by name, or by the pod's component label.
  p.metadata.owner_references[0].name = "nvidia-gpu-driver-ubuntu22.04-7c6d7bd86b";
  EXPECT_FALSE(core::pod_of_operand(c, driver, dss, p));
  p.metadata.labels[core::kComponentLabel] = "nvidia-driver";
  EXPECT_TRUE(core::pod_of_operand(c, driver, dss, p));
}

// isStateEnabled, state by state, with api/nvidia/v1 IsEnabled defaults.
TEST(ClusterPolicy, StateEnabledFollowsIsStateEnabled) {
  core::ClusterPolicy empty = policy("{}");
  for (const char* on : {"driver", "container-toolkit", "device-plugin", "mps-control-daemon", "dcgm", "dcgm-exporter",
                         "mig-manager", "gpu-feature-discovery", "operator-validator"})
    EXPECT_EQ(core::state_enabled(empty, on, "v26.7"), std::optional<bool>(true)) << on;
  for (const char* off :
       {"node-status-exporter", "sandbox-validator", "vfio-manager", "sandbox-device-plugin", "vgpu-manager",
        "vgpu-device-manager", "cc-manager", "kata-manager", "kata-sandbox-device-plugin"})
    EXPECT_EQ(core::state_enabled(empty, off, "v26.7"), std::optional<bool>(false)) << off;
  EXPECT_EQ(core::state_enabled(empty, "my-own-operand", "v26.7"), std::nullopt);

  core::ClusterPolicy p = policy(R"({"toolkit":{"enabled":false},"dcgm":{"enabled":"yes"}})");
  EXPECT_EQ(core::state_enabled(p, "container-toolkit", "v26.7"), std::optional<bool>(false));
  EXPECT_EQ(core::state_enabled(p, "dcgm", "v26.7"), std::optional<bool>(true));  // not a bool: the default

  core::ClusterPolicy sandbox = policy(
      R"({"sandboxWorkloads":{"enabled":true},"vfioManager":{"enabled":true},"sandboxDevicePlugin":{"enabled":true},)"
      R"("kataSandboxDevicePlugin":{"enabled":true},"ccManager":{"enabled":true},"kataManager":{"enabled":true}})");
  EXPECT_EQ(core::state_enabled(sandbox, "sandbox-validator", "v26.7"), std::optional<bool>(true));
  EXPECT_EQ(core::state_enabled(sandbox, "vfio-manager", "v26.7"), std::optional<bool>(true));
  // mode defaults to kubevirt: the sandbox device plugin, not the kata one.
  EXPECT_EQ(core::state_enabled(sandbox, "sandbox-device-plugin", "v26.7"), std::optional<bool>(true));
  EXPECT_EQ(core::state_enabled(sandbox, "kata-sandbox-device-plugin", "v26.7"), std::optional<bool>(false));
  // cc-manager needs kata from v26.0; kata-manager is never rendered from v26.7.
  EXPECT_EQ(core::state_enabled(sandbox, "cc-manager", "v26.7"), std::optional<bool>(false));
  EXPECT_EQ(core::state_enabled(sandbox, "cc-manager", "v25.3"), std::optional<bool>(true));
  EXPECT_EQ(core::state_enabled(sandbox, "kata-manager", "v26.7"), std::optional<bool>(false));
  EXPECT_EQ(core::state_enabled(sandbox, "kata-manager", "v25.3"), std::optional<bool>(true));
  EXPECT_EQ(core::default_workload(sandbox), "container");
  EXPECT_EQ(core::default_workload(policy(R"({"sandboxWorkloads":{"defaultWorkload":"vm-vgpu"}})")), "vm-vgpu");
  EXPECT_EQ(core::default_workload(policy(R"({"sandboxWorkloads":{"defaultWorkload":"vm"}})")), "container");
}

TEST(RootCause, TheWaitEndsAtTheFirstBrokenLink) {
  using core::ChainLink;
  // driver broken; toolkit waits on it; the plugin on the validator, which
  // waits on the driver; GFD is fine.
  std::vector<ChainLink> links = {{"driver", true, ""},
                                  {"container-toolkit", true, "driver"},
                                  {"device-plugin", true, "operator-validator"},
                                  {"gpu-feature-discovery", false, "operator-validator"},
                                  {"operator-validator", true, "driver"}};
  auto rc = core::find_root_cause(links);
  ASSERT_TRUE(rc);
  EXPECT_EQ(rc->root, 0u);
  EXPECT_EQ(rc->blocked, (std::vector<size_t>{1, 2, 4}));

  // A wait on a link that is not broken ends there: both are roots; the one
  // that blocks more wins, ties go to order.
  links = {{"driver", false, ""},
           {"container-toolkit", true, "driver"},
           {"device-plugin", true, ""},
           {"dcgm-exporter", true, "device-plugin"}};
  rc = core::find_root_cause(links);
  ASSERT_TRUE(rc);
  EXPECT_EQ(rc->root, 2u);
  EXPECT_EQ(rc->blocked, (std::vector<size_t>{3}));

  // A cycle (the validator's plugin-validation and the plugin's
  // toolkit-validation): the first broken link stands for it.
  links = {{"device-plugin", true, "operator-validator"}, {"operator-validator", true, "device-plugin"}};
  rc = core::find_root_cause(links);
  ASSERT_TRUE(rc);
  EXPECT_EQ(rc->root, 0u);
  EXPECT_EQ(rc->blocked, (std::vector<size_t>{1}));

  EXPECT_FALSE(core::find_root_cause({{"driver", false, ""}}));
  EXPECT_EQ(core::gate_writer("toolkit-validation"), "operator-validator");
  EXPECT_EQ(core::gate_writer("cuda-validation"), "");
}

TEST(RootCause, LastFailureIsWhatKubectlLogsPreviousShows) {
  core::Pod p;
  p.metadata.name = "nvidia-driver-daemonset-x";
  core::ContainerStatus init;
  init.name = "k8s-driver-manager";
  init.state = "terminated";
  init.exit_code = 0;
  core::ContainerStatus ctr;
  ctr.name = "nvidia-driver-ctr";
  ctr.state = "waiting";
  ctr.reason = "CrashLoopBackOff";
  ctr.last_terminated = core::ContainerStatus::Termination{1, "Error", "nvidia module in use"};
  p.status.init_container_statuses = {init};
  p.status.container_statuses = {ctr};
  auto f = core::last_failure(p);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->container, "nvidia-driver-ctr");
  EXPECT_FALSE(f->init);
  EXPECT_EQ(f->exit_code, 1);
  EXPECT_EQ(f->message, "nvidia module in use");
  EXPECT_TRUE(f->previous);
  EXPECT_EQ(core::logs_command("gpu-operator", p, *f),
            "kubectl logs -n gpu-operator nvidia-driver-daemonset-x -c nvidia-driver-ctr --previous");
  // A container that failed and did not restart (restartPolicy OnFailure
  // pod, Failed): its current state is the failed run, and kubectl logs
  // without --previous shows it.
  {
    core::Pod failed = p;
    failed.status.container_statuses[0].state = "terminated";
    failed.status.container_statuses[0].reason = "Error";
    failed.status.container_statuses[0].exit_code = 2;
    failed.status.container_statuses[0].message = "boom";
    failed.status.container_statuses[0].last_terminated.reset();
    auto g = core::last_failure(failed);
    ASSERT_TRUE(g);
    EXPECT_FALSE(g->previous);
    EXPECT_EQ(g->exit_code, 2);
    EXPECT_EQ(core::logs_command("gpu-operator", failed, *g),
              "kubectl logs -n gpu-operator nvidia-driver-daemonset-x -c nvidia-driver-ctr");
  }
  p.status.container_statuses[0] = core::ContainerStatus{};
  p.status.container_statuses[0].name = "nvidia-driver-ctr";
  p.status.container_statuses[0].state = "running";
  EXPECT_FALSE(core::last_failure(p));
}
