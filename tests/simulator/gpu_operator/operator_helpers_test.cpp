// The GPU Operator's label-pausing helpers in the kubelet profile:
// k8s-driver-manager (simulator/gpu_operator/driver_manager.h) and the MIG manager
// (simulator/gpu_operator/mig_manager.h). Expected label values follow the tools'
// source: k8s-driver-manager v0.8.1's driver-manager script and v0.12.0's
// cmd/driver-manager/main.go (maybeSetPaused, maybeSetTrue,
// uninstallDriver), mig-parted v0.12.3's reconfigure-mig.sh and v0.15.0's
// pkg/mig/reconfigure/reconfigure.go (docs/reference/gpu-operator.md §2.8).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "core/gpu_operator/cluster_policy.h"
#include "core/gpu_operator/operands.h"
#include "simulator/fake_cluster.h"
#include "tests/simulator/helpers.h"

namespace gpuops::simulator {
namespace {

using testing::kNs;
using testing::make_node;

constexpr const char* kToolkit = "nvidia.com/gpu.deploy.container-toolkit";
constexpr const char* kPlugin = "nvidia.com/gpu.deploy.device-plugin";
constexpr const char* kDriver = "nvidia.com/gpu.deploy.driver";
constexpr const char* kNvsm = "nvidia.com/gpu.deploy.nvsm";
constexpr const char* kSandboxValidator = "nvidia.com/gpu.deploy.sandbox-validator";
constexpr const char* kMigState = "nvidia.com/mig.config.state";
constexpr const char* kMigConfig = "nvidia.com/mig.config";
constexpr const char* kAbsent = "<absent>";

// Every value one node's labels take, in order (kAbsent when removed).
class LabelHistory : public StoreObserver {
 public:
  explicit LabelHistory(std::string node) : node_(std::move(node)) {}
  void on_node(EventType type, const core::Node& n) override {
    if (n.metadata.name != node_ || type == EventType::kDeleted) return;
    for (const auto& [k, v] : n.metadata.labels) note(k, v);
    for (auto& [k, values] : seen_)
      if (!n.metadata.labels.count(k)) note(k, kAbsent);
  }
  const std::vector<std::string>& of(const std::string& key) { return seen_[key]; }
  bool ever(const std::string& key, const std::string& value) {
    const auto& v = of(key);
    return std::find(v.begin(), v.end(), value) != v.end();
  }

 private:
  void note(const std::string& k, const std::string& v) {
    auto& values = seen_[k];
    if (values.empty() || values.back() != v) values.push_back(v);
  }
  std::string node_;
  std::map<std::string, std::vector<std::string>> seen_;
};

core::Labels gpu_labels(core::Labels extra = {}) {
  core::Labels l{{"feature.node.kubernetes.io/pci-10de.present", "true"},
                 {"feature.node.kubernetes.io/kernel-version.full", "6.8.0-101-generic"},
                 {"feature.node.kubernetes.io/system-os_release.ID", "ubuntu"},
                 {"feature.node.kubernetes.io/system-os_release.VERSION_ID", "22.04"}};
  for (auto& [k, v] : extra) l[k] = v;
  return l;
}

struct Rig {
  explicit Rig(const std::string& version, const std::string& node = "gpu-1")
      : catalog(core::load_catalog(version == "v25.3" ? "gpu-operator-v25.3" : "gpu-operator")),
        cluster(options()),
        history(node) {
    cluster.store().add_observer(&history);
  }
  static FakeCluster::Options options() {
    FakeCluster::Options o;
    o.profile = KubeletProfile::kKubelet;
    return o;
  }
  void install(const boost::json::object& spec = {}) {
    cluster.install_operator(catalog, kNs);
    core::ClusterPolicy cp;
    cp.metadata.name = "cluster-policy";
    cp.raw = boost::json::object{{"spec", core::with_required_spec_fields(spec)}};
    cluster.apply({core::Object(cp)});
    cluster.settle();
  }
  std::optional<std::string> label(const std::string& node, const std::string& key) {
    const core::Node* n = cluster.store().find_node(node);
    if (!n) return std::nullopt;
    auto it = n->metadata.labels.find(key);
    if (it == n->metadata.labels.end()) return std::nullopt;
    return it->second;
  }
  // The pod of DaemonSet app `app` on `node` (nullptr: none).
  const PodRecord* pod(const std::string& node, const std::string& app) {
    for (const auto& obj : cluster.store().list(Kind::kPod, kNs)) {
      const auto& p = std::get<core::Pod>(obj);
      auto it = p.metadata.labels.find("app");
      if (p.spec.node_name == node && it != p.metadata.labels.end() && it->second == app)
        return cluster.store().find_pod(kNs, p.metadata.name);
    }
    return nullptr;
  }
  void delete_pod(const std::string& node, const std::string& app) {
    const PodRecord* p = pod(node, app);
    ASSERT_NE(p, nullptr) << app << " on " << node;
    cluster.delete_pod(kNs, p->name);
  }
  core::Catalog catalog;
  FakeCluster cluster;
  LabelHistory history;
};

// ------------------------------------------------------ k8s-driver-manager

// v0.8.1 evicts on every run, a fresh install included: the operator's
// "true" labels go paused-for-driver-upgrade and back, absent keys of its
// list are written "" (nvsm stays "": the operator does not manage it; the
// sandbox and vGPU keys, foreign to a container node, the v25.3 labeller
// deletes again: removeGPUStateLabels).
TEST(DriverManager, V081PausesOnAFreshInstallAndStampsEmptyValues) {
  Rig r("v25.3");
  r.cluster.add_node(make_node("gpu-1", gpu_labels()));
  r.install();
  EXPECT_EQ(r.history.of(kToolkit), (std::vector<std::string>{"true", "paused-for-driver-upgrade", "true"}));
  EXPECT_EQ(r.history.of(kPlugin), (std::vector<std::string>{"true", "paused-for-driver-upgrade", "true"}));
  EXPECT_EQ(r.label("gpu-1", kNvsm), "");
  EXPECT_TRUE(r.history.ever(kSandboxValidator, ""));
  EXPECT_EQ(r.label("gpu-1", kSandboxValidator), std::nullopt);
  EXPECT_EQ(r.label("gpu-1", kDriver), "true");
  ASSERT_NE(r.pod("gpu-1", "nvidia-driver-daemonset"), nullptr);
  EXPECT_TRUE(r.pod("gpu-1", "nvidia-driver-daemonset")->is_ready());
  ASSERT_NE(r.pod("gpu-1", "nvidia-container-toolkit-daemonset"), nullptr);
  EXPECT_TRUE(r.pod("gpu-1", "nvidia-container-toolkit-daemonset")->is_ready());
  EXPECT_EQ(r.cluster.store().cluster_policies().at("cluster-policy").state, "ready");
}

// v0.12 skips the eviction when no driver is loaded ("No NVIDIA driver
// loaded, skipping eviction"), but rescheduleGPUOperatorComponents still
// writes its whole list: absent keys become "".
TEST(DriverManager, V012SkipsEvictionWithoutALoadedDriver) {
  Rig r("v26.7");
  r.cluster.add_node(make_node("gpu-1", gpu_labels()));
  r.install();
  EXPECT_EQ(r.history.of(kToolkit), (std::vector<std::string>{"true"}));
  EXPECT_EQ(r.label("gpu-1", kNvsm), "");
  EXPECT_EQ(r.label("gpu-1", "nvidia.com/gpu.deploy.dra-driver"), "");
  EXPECT_EQ(r.label("gpu-1", "nvidia.com/gpu.deploy.client"), "true");
}

// A driver restart with the modules loaded: v0.12 pauses, finds the loaded
// driver has this pod's config (shouldSkipUninstall) and restores; the
// operands come back.
TEST(DriverManager, V012RestartWithTheSameConfigPausesAndRestores) {
  Rig r("v26.7");
  r.cluster.add_node(make_node("gpu-1", gpu_labels()));
  r.install();
  const std::string toolkit_uid = r.pod("gpu-1", "nvidia-container-toolkit-daemonset")->uid;
  r.delete_pod("gpu-1", "nvidia-driver-daemonset");
  r.cluster.settle();
  EXPECT_EQ(r.history.of(kToolkit), (std::vector<std::string>{"true", "paused-for-driver-upgrade", "true"}));
  ASSERT_NE(r.pod("gpu-1", "nvidia-container-toolkit-daemonset"), nullptr);
  EXPECT_NE(r.pod("gpu-1", "nvidia-container-toolkit-daemonset")->uid, toolkit_uid);
  EXPECT_TRUE(r.pod("gpu-1", "nvidia-driver-daemonset")->is_ready());
}

// maybeSetPaused keeps "false" and suffixes any other value; maybeSetTrue
// strips the suffix again: a user's values survive a driver restart.
TEST(DriverManager, KeepsFalseAndSuffixesOtherValues) {
  Rig r("v25.3");
  r.cluster.add_node(make_node("gpu-1", gpu_labels({{kToolkit, "false"}, {kPlugin, "custom"}})));
  r.install();
  EXPECT_EQ(r.history.of(kToolkit), (std::vector<std::string>{"false"}));
  EXPECT_EQ(r.history.of(kPlugin), (std::vector<std::string>{"custom", "custom_paused-for-driver-upgrade", "custom"}));
  EXPECT_EQ(r.pod("gpu-1", "nvidia-container-toolkit-daemonset"), nullptr);
}

// A host driver (isHostDriver): driver=pre-installed, the driver pod goes
// (its selector no longer matches), the operands validate the host driver.
TEST(DriverManager, HostDriverLabelsPreInstalled) {
  Rig r("v25.3");
  r.cluster.add_node(make_node("gpu-1", gpu_labels()));
  r.cluster.set_host(core::HostSpec{"gpu-1", "pre-installed", {}, {}, {}});
  r.install();
  EXPECT_EQ(r.label("gpu-1", kDriver), "pre-installed");
  EXPECT_EQ(r.pod("gpu-1", "nvidia-driver-daemonset"), nullptr);
  ASSERT_NE(r.pod("gpu-1", "nvidia-device-plugin-daemonset"), nullptr);
  EXPECT_TRUE(r.pod("gpu-1", "nvidia-device-plugin-daemonset")->is_ready());
  // The paused labels of a run never started stay untouched.
  EXPECT_EQ(r.history.of(kToolkit), (std::vector<std::string>{"true"}));
}

// A loaded driver held by a process: the unload fails, the labels are
// restored first (_exit_failed), and the init container crash-loops until
// the kubelet's back-off reaches its cap.
TEST(DriverManager, DriverInUseCrashLoopsWithTheLabelsRestored) {
  Rig r("v25.3");
  r.cluster.add_node(make_node("gpu-1", gpu_labels()));
  r.install();
  r.cluster.set_host(core::HostSpec{"gpu-1", {}, true, {}, {}});
  r.delete_pod("gpu-1", "nvidia-driver-daemonset");
  r.cluster.settle();
  const PodRecord* driver = r.pod("gpu-1", "nvidia-driver-daemonset");
  ASSERT_NE(driver, nullptr);
  EXPECT_EQ(driver->status->phase, "Pending");
  ASSERT_EQ(driver->status->init_container_statuses.size(), 1u);
  const auto& init = driver->status->init_container_statuses[0];
  EXPECT_EQ(init.name, "k8s-driver-manager");
  EXPECT_EQ(init.state, "waiting");
  EXPECT_EQ(init.reason, "CrashLoopBackOff");
  EXPECT_EQ(init.restart_count, 5);
  EXPECT_NE(init.message.find("back-off 5m0s restarting failed container=k8s-driver-manager"), std::string::npos);
  ASSERT_TRUE(init.last_terminated);
  EXPECT_EQ(init.last_terminated->reason, "Error");
  EXPECT_EQ(init.last_terminated->exit_code, 1);
  EXPECT_EQ(r.label("gpu-1", kToolkit), "true");
  // Six runs (the first and five restarts), each pausing and restoring.
  EXPECT_EQ(std::count(r.history.of(kToolkit).begin(), r.history.of(kToolkit).end(), "paused-for-driver-upgrade"),
            7);  // the fresh install's run, then six
  ASSERT_NE(r.pod("gpu-1", "nvidia-container-toolkit-daemonset"), nullptr);
}

// A driver-manager that hangs after the pause leaves the operands paused
// (#316); deleting the pod lets the next run restore them (maybeSetTrue of
// paused-for-driver-upgrade).
TEST(DriverManager, HungRunLeavesLabelsPausedUntilTheNextRun) {
  Rig r("v25.3");
  r.cluster.add_node(make_node("gpu-1", gpu_labels()));
  r.install();
  Fault hang;
  hang.kind = FaultKind::kStuckInInit;
  hang.node = "gpu-1";
  hang.daemonset = "nvidia-driver-daemonset";
  const int fault = r.cluster.inject_fault(hang);
  r.delete_pod("gpu-1", "nvidia-driver-daemonset");
  r.cluster.settle();
  EXPECT_EQ(r.label("gpu-1", kToolkit), "paused-for-driver-upgrade");
  EXPECT_EQ(r.label("gpu-1", kPlugin), "paused-for-driver-upgrade");
  EXPECT_EQ(r.label("gpu-1", kDriver), "true");
  EXPECT_EQ(r.pod("gpu-1", "nvidia-container-toolkit-daemonset"), nullptr);
  EXPECT_EQ(r.pod("gpu-1", "nvidia-device-plugin-daemonset"), nullptr);
  r.cluster.clear_fault(fault);
  r.cluster.settle();
  EXPECT_EQ(r.label("gpu-1", kToolkit), "paused-for-driver-upgrade");  // a hung process stays hung
  r.delete_pod("gpu-1", "nvidia-driver-daemonset");
  r.cluster.settle();
  EXPECT_EQ(r.label("gpu-1", kToolkit), "true");
  ASSERT_NE(r.pod("gpu-1", "nvidia-device-plugin-daemonset"), nullptr);
  EXPECT_TRUE(r.pod("gpu-1", "nvidia-device-plugin-daemonset")->is_ready());
}

// The kwok profile runs no container process: nothing is paused.
TEST(DriverManager, NotPlayedInTheKwokProfile) {
  core::Catalog catalog = core::load_catalog("gpu-operator-v25.3");
  FakeCluster c;
  LabelHistory history("gpu-1");
  c.store().add_observer(&history);
  c.add_node(make_node("gpu-1", gpu_labels()));
  c.install_operator(catalog, kNs);
  core::ClusterPolicy cp;
  cp.metadata.name = "cluster-policy";
  cp.raw = boost::json::object{{"spec", core::with_required_spec_fields({})}};
  c.apply({core::Object(cp)});
  c.settle();
  EXPECT_EQ(history.of(kToolkit), (std::vector<std::string>{"true"}));
  EXPECT_FALSE(c.store().find_node("gpu-1")->metadata.labels.count(kNvsm));
}

// ------------------------------------------------------------ MIG manager

// The Helm chart's migManager.config (values.yaml): the operator then sets
// nvidia.com/mig.config=all-disabled on MIG-capable nodes without one.
boost::json::object helm_mig_config() {
  return {{"migManager", {{"config", {{"name", "default-mig-parted-config"}, {"default", "all-disabled"}}}}}};
}

core::Labels mig_node_labels() {
  return gpu_labels({{"nvidia.com/mig.capable", "true"}, {"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-40GB"}});
}

// On start the manager reads mig.config (all-disabled, set by the operator),
// finds it applied and reports success through setState; a change pauses
// the clients, applies, restarts the validator and restores.
TEST(MigManager, ReconfiguresOnALabelChange) {
  Rig r("v25.3");
  r.cluster.add_node(make_node("gpu-1", mig_node_labels()));
  r.install(helm_mig_config());
  EXPECT_EQ(r.label("gpu-1", kMigConfig), "all-disabled");
  EXPECT_EQ(r.label("gpu-1", kMigState), "success");
  ASSERT_NE(r.pod("gpu-1", "nvidia-mig-manager"), nullptr);
  const std::string validator_uid = r.pod("gpu-1", "nvidia-operator-validator")->uid;
  r.cluster.set_node_label("gpu-1", kMigConfig, "all-1g.5gb");
  r.cluster.settle();
  EXPECT_EQ(r.history.of(kMigState), (std::vector<std::string>{"success", "pending", "success"}));
  EXPECT_EQ(r.history.of(kPlugin).back(), "true");
  EXPECT_TRUE(r.history.ever(kPlugin, "paused-for-mig-change"));
  // v0.12.3 restores nvsm after a change (paused from "" to paused, then true).
  EXPECT_EQ(r.label("gpu-1", kNvsm), "true");
  EXPECT_NE(r.pod("gpu-1", "nvidia-operator-validator")->uid, validator_uid);
  ASSERT_NE(r.pod("gpu-1", "nvidia-device-plugin-daemonset"), nullptr);
  EXPECT_TRUE(r.pod("gpu-1", "nvidia-device-plugin-daemonset")->is_ready());
}

// A name missing from the mig-parted config fails validateMigConfig before
// anything is paused; an apply that fails ends failed with the clients back.
TEST(MigManager, InvalidConfigAndFailedApply) {
  Rig r("v25.3");
  r.cluster.add_node(make_node("gpu-1", mig_node_labels()));
  r.install(helm_mig_config());
  r.cluster.set_node_label("gpu-1", kMigConfig, "all-bogus");
  r.cluster.settle();
  EXPECT_EQ(r.label("gpu-1", kMigState), "failed");
  EXPECT_FALSE(r.history.ever(kPlugin, "paused-for-mig-change"));
  r.cluster.set_host(core::HostSpec{"gpu-1", {}, {}, {}, true});
  r.cluster.set_node_label("gpu-1", kMigConfig, "all-balanced");
  r.cluster.settle();
  EXPECT_EQ(r.label("gpu-1", kMigState), "failed");
  EXPECT_TRUE(r.history.ever(kPlugin, "paused-for-mig-change"));
  EXPECT_EQ(r.label("gpu-1", kPlugin), "true");
  // reconfigure-mig.sh's exit path (__set_state_and_exit) does not restore nvsm.
  EXPECT_EQ(r.label("gpu-1", kNvsm), "paused-for-mig-change");
}

// v0.15's setState restores nvsm too: on start with the config applied, an
// absent nvsm (or the "" the driver manager stamped) becomes "true".
TEST(MigManager, V015RestoresNvsmOnStart) {
  Rig r("v26.7");
  r.cluster.add_node(make_node("gpu-1", mig_node_labels()));
  r.install(helm_mig_config());
  EXPECT_EQ(r.label("gpu-1", kMigState), "success");
  EXPECT_EQ(r.label("gpu-1", kNvsm), "true");
}

TEST(Host, RefusesAnUnknownDriverValue) {
  FakeCluster c;
  try {
    c.set_host(core::HostSpec{"gpu-1", "installed", {}, {}, {}});
    FAIL() << "no error";
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.field(), "host.driver");
    EXPECT_EQ(e.http_status, 422);
  }
}

}  // namespace
}  // namespace gpuops::simulator
