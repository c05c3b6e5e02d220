// The GPU Operator install cases of tests/data/operator through the CLI:
// operator mode detected, the catalog of the version, the verdicts of audit,
// matrix and diagnose. Each dump's header says how it is shaped after the
// operator's source (assets/state-*, controllers/object_controls.go,
// controllers/nodelabeling_controller.go). Expected values follow from:
//  * the present rule of operator mode (core/analysis/analysis.h): Running and Ready
//    (podutil.IsPodReady), the pod's STATUS column as printPod prints it;
//  * which operands the install renders (isStateEnabled,
//    controllers/state_manager.go; Helm defaults dcgm and nodeStatusExporter
//    off) and which the DaemonSets select (nodeSelector: MPS needs
//    nvidia.com/mps.capable=true, the MIG manager its deploy label, set only on
//    MIG-capable nodes: hasMIGCapableGPU);
//  * the validation gates (docs/reference/gpu-operator.md §3) for the root cause.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <string>

#include "../common/cli_run.h"
#include "../common/edited_dump.h"

namespace {

using gpuops::testing::lines_with;
using gpuops::testing::run_gpuops;

std::string dump(const std::string& c) {
  return std::string(GPUOPS_SOURCE_DIR) + "/tests/data/operator/" + c + "/dump.yaml";
}

// The finding whose first line starts with `head`, with its evidence lines
// (those indented by four spaces below it); empty when there is none.
std::string finding_block(const std::string& text, const std::string& head) {
  size_t at = text.find(head);
  if (at == std::string::npos || (at > 0 && text[at - 1] != '\n')) return "";
  size_t end = text.find('\n', at);
  while (end != std::string::npos && text.compare(end + 1, 4, "    ") == 0) end = text.find('\n', end + 1);
  return text.substr(at, end == std::string::npos ? std::string::npos : end + 1 - at);
}

// One line under 120 columns (cli::operator_banner): the release from the
// helm.sh/chart label, the catalog for it; the dump holds its ClusterPolicy.
const char* const kNote26 =
    "gpuops: operator mode: GPU Operator v26.7.0, catalog gpu-operator (--operands overrides)\n";

// Columns of a default container install: the operands with a DaemonSet, in
// catalog order (no dcgm host engine, no node-status-exporter, no sandbox),
// named by operand in operator mode.
const char* const kHealthyMatrix =
    "cpu-node-1 driver=no container-toolkit=no device-plugin=no gpu-feature-discovery=no dcgm-exporter=no "
    "operator-validator=no mps-control-daemon=no mig-manager=no\n"
    "gpu-node-1 driver=yes container-toolkit=yes device-plugin=yes gpu-feature-discovery=yes dcgm-exporter=yes "
    "operator-validator=yes mps-control-daemon=no mig-manager=no\n"
    "gpu-node-2 driver=yes container-toolkit=yes device-plugin=yes gpu-feature-discovery=yes dcgm-exporter=yes "
    "operator-validator=yes mps-control-daemon=no mig-manager=no\n"
    // 2 GPU nodes x 6 operand pods + 3 NFD workers (every DaemonSet pod of the
    // namespace); the operator's own pod is a ReplicaSet's.
    "TOTAL_PODS=15\n";

}  // namespace

TEST(OperatorCases, HealthyInstallIsCleanEverywhere) {
  auto a = run_gpuops({"audit", "--snapshot", dump("healthy-v26.7")});
  EXPECT_EQ(a.out, "cpu-node-1 OK\ngpu-node-1 OK\ngpu-node-2 OK\n");
  EXPECT_EQ(a.err, kNote26);
  EXPECT_EQ(a.code, 0);
  auto m = run_gpuops({"matrix", "--snapshot", dump("healthy-v26.7")});
  EXPECT_EQ(m.out, kHealthyMatrix);
  EXPECT_EQ(m.code, 0);
  auto d = run_gpuops({"diagnose", "--snapshot", dump("healthy-v26.7")});
  EXPECT_EQ(d.out, "nothing at severity warning or above on 3 nodes (--severity info lists every check)\n");
  EXPECT_EQ(d.code, 0);
}

TEST(OperatorCases, HealthyInstallWithEveryCatalog) {
  for (const char* catalog : {"lab", "gpu-operator", "gpu-operator-v25.3"}) {
    auto a = run_gpuops({"audit", "--operands", catalog, "--snapshot", dump("healthy-v26.7")});
    EXPECT_EQ(a.out, "cpu-node-1 OK\ngpu-node-1 OK\ngpu-node-2 OK\n") << catalog;
    EXPECT_EQ(a.code, 0) << catalog;
    auto d = run_gpuops({"diagnose", "--operands", catalog, "--snapshot", dump("healthy-v26.7")});
    EXPECT_EQ(d.code, 0) << catalog << d.out;
    EXPECT_EQ(d.out, "nothing at severity warning or above on 3 nodes (--severity info lists every check)\n")
        << catalog;
  }
  // The catalog named: every one of its operands is a column (operator
  // mode: by operand name, whichever catalog).
  auto m = run_gpuops({"matrix", "--operands", "lab", "--snapshot", dump("healthy-v26.7")});
  EXPECT_EQ(m.out,
            "cpu-node-1 driver=no container-toolkit=no device-plugin=no gpu-feature-discovery=no dcgm-exporter=no\n"
            "gpu-node-1 driver=yes container-toolkit=yes device-plugin=yes gpu-feature-discovery=yes "
            "dcgm-exporter=yes\n"
            "gpu-node-2 driver=yes container-toolkit=yes device-plugin=yes gpu-feature-discovery=yes "
            "dcgm-exporter=yes\n"
            "TOTAL_PODS=15\n");
}

TEST(OperatorCases, AuditJsonSaysOperatorMode) {
  auto a = run_gpuops({"audit", "-o", "json", "--snapshot", dump("driver-crashloop")});
  auto doc = boost::json::parse(a.out).as_object();
  EXPECT_EQ(doc.at("mode"), "operator");
  EXPECT_EQ(doc.at("operatorVersion"), "v26.7.0");
  const auto& node2 = doc.at("nodes").as_array().at(2).as_object();
  EXPECT_EQ(node2.at("node"), "gpu-node-2");
  EXPECT_EQ(node2.at("ok"), false);
  EXPECT_TRUE(node2.at("missing").as_array().empty());
  const auto& first = node2.at("notReady").as_array().at(0).as_object();
  EXPECT_EQ(first.at("operand"), "driver");
  EXPECT_EQ(first.at("status"), "CrashLoopBackOff");
  EXPECT_EQ(first.at("pod"), "nvidia-driver-daemonset-g2a");
}

// The driver crash-loops (Running, not Ready): it is NOT-READY, not OK, and
// so is every operand behind it; diagnose names the driver as the cause.
TEST(OperatorCases, DriverCrashLoopIsTheRootCause) {
  auto a = run_gpuops({"audit", "--snapshot", dump("driver-crashloop")});
  EXPECT_EQ(a.out,
            "cpu-node-1 OK\n"
            "gpu-node-1 OK\n"
            "gpu-node-2 NOT-READY driver (CrashLoopBackOff)\n"
            "gpu-node-2 NOT-READY container-toolkit (Init:0/1)\n"
            "gpu-node-2 NOT-READY device-plugin (Init:0/2)\n"
            "gpu-node-2 NOT-READY gpu-feature-discovery (Init:0/2)\n"
            "gpu-node-2 NOT-READY dcgm-exporter (Init:0/1)\n"
            "gpu-node-2 NOT-READY operator-validator (Init:0/4)\n");
  EXPECT_EQ(a.code, 1);
  auto m = run_gpuops({"matrix", "--snapshot", dump("driver-crashloop")});
  EXPECT_EQ(lines_with(m.out, "gpu-node-2"),
            "gpu-node-2 driver=not-ready container-toolkit=not-ready device-plugin=not-ready "
            "gpu-feature-discovery=not-ready dcgm-exporter=not-ready operator-validator=not-ready "
            "mps-control-daemon=no mig-manager=no\n");
  auto d = run_gpuops({"diagnose", "gpu-node-2", "--snapshot", dump("driver-crashloop")});
  EXPECT_EQ(d.code, 1);
  // One cause, one error line for it beside the driver's own finding; the
  // five operands behind it are warnings that say so.
  EXPECT_EQ(lines_with(d.out, " error "),
            "gpu-node-2 driver error root-cause: driver CrashLoopBackOff (exit 1: \"nvidia module in use: rmmod: "
            "ERROR: Module nvidia is in use by: nvidia_uvm\") blocks 5 operands: container-toolkit, device-plugin, "
            "gpu-feature-discovery, dcgm-exporter, operator-validator (first broken link of driver -> toolkit -> "
            "validator -> the rest; see driver running-not-ready below)\n"
            "gpu-node-2 driver error running-not-ready: pod is Running but not Ready (CrashLoopBackOff)\n");
  // The ClusterPolicy's state comes first (it is notReady, a warning), then
  // the node, led by its root cause.
  EXPECT_EQ(d.out.rfind("ClusterPolicy/cluster-policy - warning operator-resource-not-ready: ClusterPolicy "
                        "status.state notReady: ClusterPolicy is not ready, states not ready: [state-driver",
                        0),
            0u)
      << d.out;
  EXPECT_EQ(d.out.find("\ngpu-node-2 "), d.out.find("\ngpu-node-2 driver error root-cause"))
      << "the root cause leads the node";
  EXPECT_NE(d.out.find("    logs: kubectl logs -n gpu-operator nvidia-driver-daemonset-g2a -c nvidia-driver-ctr "
                       "--previous\n"),
            std::string::npos)
      << d.out;
  EXPECT_NE(d.out.find("    restarts: 7\n"), std::string::npos);
  EXPECT_EQ(lines_with(d.out, "blocked by driver: ").size() > 0, true);
  for (const char* op :
       {"container-toolkit", "device-plugin", "gpu-feature-discovery", "dcgm-exporter", "operator-validator"})
    EXPECT_NE(d.out.find(std::string("gpu-node-2 ") + op + " warning stuck-in-init: blocked by driver: "),
              std::string::npos)
        << op << "\n"
        << d.out;
}

// Every driver DaemonSet name the operator uses is the driver operand: no
// false MISSING, no foreign pod, driver=yes.
TEST(OperatorCases, DriverVariantsAreTheDriver) {
  for (const char* c : {"driver-precompiled", "driver-nvidiadriver"}) {
    auto a = run_gpuops({"audit", "--snapshot", dump(c)});
    EXPECT_EQ(a.out, "cpu-node-1 OK\ngpu-node-1 OK\ngpu-node-2 OK\n") << c;
    EXPECT_EQ(a.code, 0) << c;
    auto m = run_gpuops({"matrix", "--snapshot", dump(c)});
    EXPECT_EQ(m.out, kHealthyMatrix) << c;
    auto d = run_gpuops({"diagnose", "--snapshot", dump(c)});
    EXPECT_EQ(d.out, "nothing at severity warning or above on 3 nodes (--severity info lists every check)\n") << c;
    EXPECT_EQ(d.code, 0) << c;
  }
  auto e = run_gpuops({"explain", "gpu-node-1", "driver", "--snapshot", dump("driver-nvidiadriver")});
  EXPECT_EQ(e.out.substr(0, e.out.find('\n')),
            "gpu-node-1 driver: daemonset nvidia-gpu-driver-ubuntu24.04-7c6d7bd86b found; label "
            "nvidia.com/gpu.deploy.driver=true");
  // Detected by the NVIDIADriver that controls the driver DaemonSet
  // (detect_operator_install): -o json says how.
  auto n = run_gpuops({"audit", "-o", "json", "--snapshot", dump("driver-nvidiadriver")});
  EXPECT_EQ(boost::json::parse(n.out).at("operatorEvidence"),
            "DaemonSet gpu-operator/nvidia-gpu-driver-ubuntu24.04-7c6d7bd86b is controlled by NVIDIADriver default");
}

// toolkit.enabled=false: no toolkit DaemonSet; the host's toolkit serves, the
// gates passed, nothing is an error (before: five `-without-toolkit`).
TEST(OperatorCases, ToolkitDisabledIsNotFiveErrors) {
  auto d = run_gpuops({"diagnose", "--snapshot", dump("toolkit-disabled")});
  EXPECT_EQ(d.out, "nothing at severity warning or above on 3 nodes (--severity info lists every check)\n");
  EXPECT_EQ(d.code, 0);
  auto i = run_gpuops({"diagnose", "gpu-node-1", "--severity", "info", "--snapshot", dump("toolkit-disabled")});
  EXPECT_NE(i.out.find("gpu-node-1 container-toolkit info no-daemonset: deploy label is \"true\" but ClusterPolicy "
                       "cluster-policy does not render container-toolkit (spec.toolkit.enabled=false)"),
            std::string::npos)
      << i.out;
  auto a = run_gpuops({"audit", "--snapshot", dump("toolkit-disabled")});
  EXPECT_EQ(a.out, "cpu-node-1 OK\ngpu-node-1 OK\ngpu-node-2 OK\n");
}

TEST(OperatorCases, UpgradeFailedIsAnError) {
  auto a = run_gpuops({"audit", "--snapshot", dump("upgrade-failed")});
  // The driver pod crash-loops in k8s-driver-manager; the operands it paused
  // are wanted by the operator but off (PAUSED), dcgm and node-status-exporter
  // are not rendered, so not checked.
  EXPECT_EQ(a.out,
            "cpu-node-1 OK\n"
            "gpu-node-1 NOT-READY driver (Init:CrashLoopBackOff)\n"
            "gpu-node-1 PAUSED container-toolkit (paused-for-driver-upgrade)\n"
            "gpu-node-1 PAUSED device-plugin (paused-for-driver-upgrade)\n"
            "gpu-node-1 PAUSED gpu-feature-discovery (paused-for-driver-upgrade)\n"
            "gpu-node-1 PAUSED dcgm-exporter (paused-for-driver-upgrade)\n"
            "gpu-node-1 PAUSED operator-validator (paused-for-driver-upgrade)\n"
            "gpu-node-2 OK\n");
  EXPECT_EQ(a.code, 1);
  auto d = run_gpuops({"diagnose", "gpu-node-1", "--snapshot", dump("upgrade-failed")});
  EXPECT_EQ(d.code, 1);
  EXPECT_NE(d.out.find("gpu-node-1 - error driver-upgrade-failed: "), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("gpu-node-1 driver error root-cause: driver Init:CrashLoopBackOff (exit 1: \"Unable to unload "
                       "driver: nvidia module refcount 3\") blocks 5 operands: container-toolkit, device-plugin, "
                       "gpu-feature-discovery, dcgm-exporter, operator-validator"),
            std::string::npos)
      << d.out;
}

// A planned driver-manager init during an upgrade is in progress, not stuck:
// warnings, no error.
TEST(OperatorCases, UpgradeInProgressIsWarningsOnly) {
  auto d = run_gpuops({"diagnose", "gpu-node-1", "--snapshot", dump("upgrade-in-progress")});
  EXPECT_EQ(d.code, 0) << d.out;
  EXPECT_EQ(lines_with(d.out, " error "), "");
  EXPECT_NE(d.out.find("gpu-node-1 - warning driver-upgrade-in-progress: "), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("gpu-node-1 driver warning init-during-upgrade: "), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("gpu-node-1 device-plugin warning label-paused-for-driver-upgrade: "), std::string::npos);
}

// k8s-driver-manager has no deadline of its own (DRAIN_TIMEOUT_SECONDS 0,
// cmd/driver-manager of NVIDIA/k8s-driver-manager): the same upgrade with its
// init container started at 05:00:00 has run 3h5m by the dump's newest time
// (08:05:00), past the default --stuck-after of 30m: the planned step is a
// hang, an error naming the container's log, and exit 1. With --stuck-after
// 4h it is still in progress, a warning.
TEST(OperatorCases, ADriverManagerRunningPastStuckAfterIsAnError) {
  const std::string path =
      gpuops::testing::edited_dump("upgrade-in-progress", "driver-manager-for-hours", [](boost::json::object& o) {
        if (o.at("kind") == "Pod" && o.at("metadata").at("name") == "nvidia-driver-daemonset-g1a")
          o.at("status").at("initContainerStatuses").as_array()[0].at("state").at("running").as_object()["startedAt"] =
              "2026-11-30T05:00:00Z";
        return true;
      });
  auto d = run_gpuops({"diagnose", "gpu-node-1", "--snapshot", path});
  EXPECT_EQ(d.code, 1) << d.out;
  EXPECT_NE(d.out.find("gpu-node-1 driver error driver-manager-stuck: pod is in Init (Init:0/1) running "
                       "k8s-driver-manager during the driver upgrade (pod-restart-required) for at least 3h5m, past "
                       "--stuck-after 30m: "),
            std::string::npos)
      << d.out;
  EXPECT_NE(d.out.find("(kubectl logs -n gpu-operator nvidia-driver-daemonset-g1a -c k8s-driver-manager)"),
            std::string::npos)
      << d.out;
  EXPECT_EQ(lines_with(d.out, "init-during-upgrade"), "");

  auto patient = run_gpuops({"diagnose", "gpu-node-1", "--stuck-after", "4h", "--snapshot", path});
  EXPECT_EQ(patient.code, 0) << patient.out;
  EXPECT_NE(patient.out.find("gpu-node-1 driver warning init-during-upgrade: pod is in Init (Init:0/1) running "
                             "k8s-driver-manager during the driver upgrade (pod-restart-required): it drains the GPU "
                             "operands and unloads the old driver, as planned; called stuck after 4h"),
            std::string::npos)
      << patient.out;
}

// How long: k8s-driver-manager's init container started at 05:00:00
// (state.running.startedAt), the dump's newest time is 08:05:00 (the pods'
// conditions), so 3 h 5 min, which HumanDuration (apimachinery
// pkg/util/duration) prints "3h5m" (185 minutes: past 3 h, under 8 h, the
// minutes kept). Without the upgrade state label the pod in Init is not a
// planned step of an upgrade: stuck-in-init stays an error; the paused labels
// stay "in progress" while the driver pod initializes.
TEST(OperatorCases, HungDriverManagerSaysForHowLong) {
  auto d = run_gpuops({"diagnose", "gpu-node-1", "--snapshot", dump("driver-manager-hung")});
  EXPECT_EQ(d.code, 1) << d.out;
  EXPECT_EQ(lines_with(d.out, "k8s-driver-manager running for"),
            "    k8s-driver-manager running for: 3h5m (since 2026-11-30T05:00:00Z)\n"
            "    k8s-driver-manager running for: 3h5m (since 2026-11-30T05:00:00Z)\n"
            "    k8s-driver-manager running for: 3h5m (since 2026-11-30T05:00:00Z)\n"
            "    k8s-driver-manager running for: 3h5m (since 2026-11-30T05:00:00Z)\n"
            "    k8s-driver-manager running for: 3h5m (since 2026-11-30T05:00:00Z)\n"
            "    k8s-driver-manager running for: 3h5m (since 2026-11-30T05:00:00Z)\n");
  EXPECT_NE(d.out.find("gpu-node-1 driver error stuck-in-init: pod is stuck in Init (Init:0/1), waiting on gate "
                       "k8s-driver-manager"),
            std::string::npos)
      << d.out;
  EXPECT_NE(d.out.find("    gate: k8s-driver-manager\n    k8s-driver-manager running for: 3h5m (since "
                       "2026-11-30T05:00:00Z)\n"),
            std::string::npos)
      << d.out;
  // A paused operand: in progress while the driver pod initializes (a
  // warning), with the driver pod's k8s-driver-manager time.
  EXPECT_EQ(finding_block(d.out, "gpu-node-1 device-plugin warning label-paused-for-driver-upgrade: "),
            "gpu-node-1 device-plugin warning label-paused-for-driver-upgrade: "
            "nvidia.com/gpu.deploy.device-plugin=\"paused-for-driver-upgrade\": k8s-driver-manager paused the "
            "operand for a driver (re)install and restores \"true\" at its reschedule step; in progress (the "
            "driver pod is still initializing)\n"
            "    label nvidia.com/gpu.deploy.device-plugin: paused-for-driver-upgrade\n"
            "    label nvidia.com/gpu-driver-upgrade-state: (absent)\n"
            "    driver pod: nvidia-driver-daemonset-g1a Init:0/1\n"
            "    k8s-driver-manager running for: 3h5m (since 2026-11-30T05:00:00Z)\n");
  // -o json carries the same evidence.
  auto j = run_gpuops({"diagnose", "gpu-node-1", "--snapshot", dump("driver-manager-hung"), "-o", "json"});
  EXPECT_NE(j.out.find("\"k8s-driver-manager running for\""), std::string::npos) << j.out;
}

// The validation clock: nvidia.com/gpu-driver-upgrade-validation-start-time
// is 1796025000 (2026-11-30T07:50:00Z); the dump's newest time is 08:05:00:
// 15 minutes ("15m"), past validationTimeoutSeconds = 600 ("10m",
// k8s-operator-libs pkg/upgrade validation_manager.go), after which
// handleTimeout sets upgrade-failed.
TEST(OperatorCases, ValidationTimeoutPassed) {
  auto d = run_gpuops({"diagnose", "gpu-node-2", "--snapshot", dump("upgrade-validation-timeout")});
  EXPECT_EQ(d.code, 1) << d.out;
  EXPECT_NE(d.out.find("gpu-node-2 - warning driver-upgrade-in-progress: a driver upgrade is under way on this node "
                       "(validation-required)"),
            std::string::npos)
      << d.out;
  EXPECT_EQ(finding_block(d.out, "gpu-node-2 - warning driver-upgrade-in-progress: "),
            "gpu-node-2 - warning driver-upgrade-in-progress: a driver upgrade is under way on this node "
            "(validation-required): paused operands and a driver pod in Init are expected until upgrade-done\n"
            "    label nvidia.com/gpu-driver-upgrade-state: validation-required\n"
            "    cordoned: true\n"
            "    validating for: 15m (since 2026-11-30T07:50:00Z)\n"
            "    validation timeout: 10m, passed: the upgrade controller sets upgrade-failed on its next pass; "
            "still validation-required means it has not run since (is the operator up?)\n");
}

TEST(OperatorCases, MigReconfigurationFailedIsAnError) {
  auto a = run_gpuops({"audit", "--snapshot", dump("mig-failed")});
  EXPECT_EQ(lines_with(a.out, "gpu-node-1"),
            "gpu-node-1 PAUSED device-plugin (paused-for-mig-change)\n"
            "gpu-node-1 PAUSED gpu-feature-discovery (paused-for-mig-change)\n"
            "gpu-node-1 PAUSED dcgm-exporter (paused-for-mig-change)\n");
  EXPECT_EQ(a.code, 1);
  auto m = run_gpuops({"matrix", "--snapshot", dump("mig-failed")});
  EXPECT_EQ(lines_with(m.out, "gpu-node-1"),
            "gpu-node-1 driver=yes container-toolkit=yes device-plugin=no gpu-feature-discovery=no "
            "dcgm-exporter=no operator-validator=yes mps-control-daemon=no mig-manager=yes\n");
  auto d = run_gpuops({"diagnose", "gpu-node-1", "--snapshot", dump("mig-failed")});
  EXPECT_EQ(d.code, 1);
  EXPECT_NE(d.out.find("gpu-node-1 - error mig-config-failed: mig-manager could not apply "
                       "nvidia.com/mig.config=\"all-1g.10gb\""),
            std::string::npos)
      << d.out;
}

// The sandbox operands of a vm-passthrough node are in the operator's catalog:
// a crash-looping vfio-manager is NOT-READY, and it blocks the two that wait
// in vfio-pci-validation.
TEST(OperatorCases, SandboxVfioManagerCrashLoop) {
  auto a = run_gpuops({"audit", "--snapshot", dump("sandbox-vfio-crashloop")});
  EXPECT_EQ(a.out,
            "cpu-node-1 OK\n"
            "gpu-node-1 OK\n"
            "gpu-node-2 NOT-READY sandbox-validator (Init:0/3)\n"
            "gpu-node-2 NOT-READY vfio-manager (CrashLoopBackOff)\n"
            "gpu-node-2 NOT-READY sandbox-device-plugin (Init:0/2)\n");
  EXPECT_EQ(a.code, 1);
  auto d = run_gpuops({"diagnose", "gpu-node-2", "--snapshot", dump("sandbox-vfio-crashloop")});
  EXPECT_NE(d.out.find("gpu-node-2 vfio-manager error root-cause: vfio-manager CrashLoopBackOff (exit 1: \"unable to "
                       "bind device 0000:3b:00.0 to vfio-pci: device or resource busy\") blocks 2 operands: "
                       "sandbox-validator, sandbox-device-plugin"),
            std::string::npos)
      << d.out;
}

TEST(OperatorCases, CudaValidatorFailing) {
  auto a = run_gpuops({"audit", "--snapshot", dump("cuda-validator-failing")});
  EXPECT_EQ(lines_with(a.out, "gpu-node-2"), "gpu-node-2 NOT-READY operator-validator (Init:CrashLoopBackOff)\n");
  auto d = run_gpuops({"diagnose", "gpu-node-2", "--snapshot", dump("cuda-validator-failing")});
  EXPECT_EQ(d.code, 1);
  EXPECT_NE(d.out.find("gpu-node-2 operator-validator error root-cause: operator-validator Init:CrashLoopBackOff "
                       "(exit 1: \"Failed to run cuda validation: cuda workload validation failed\")"),
            std::string::npos)
      << d.out;
  EXPECT_NE(d.out.find("    logs: kubectl logs -n gpu-operator nvidia-operator-validator-g2c -c cuda-validation "
                       "--previous\n"),
            std::string::npos)
      << d.out;
  // The cause behind "cuda workload validation failed": the workload pod the
  // validator created on the node (app=nvidia-cuda-validator, spec.nodeName,
  // runCudaValidation in cmd/nvidia-validator/main.go). Its init container
  // failed and did not restart (restartPolicy OnFailure, the pod Failed):
  // STATUS Init:Error (printPod: a terminated init container with a reason),
  // and its log is the current one, so no --previous. The same four lines
  // lead the root cause and close the state finding.
  const std::string validator =
      "    cuda validator pod: nvidia-cuda-validator-8x2lq Init:Error\n"
      "    cuda validator termination: init container cuda-validation exit code 1 (Error)\n"
      "    cuda validator message: cudaErrorSystemNotReady: system not yet initialized\n"
      "    cuda validator logs: kubectl logs -n gpu-operator nvidia-cuda-validator-8x2lq -c cuda-validation\n";
  EXPECT_EQ(lines_with(d.out, "    cuda validator "), validator + validator) << d.out;
  // Both quote CUDA's "system not yet initialized": the fabric manager hint
  // (core/diagnose/hints.cpp, NVIDIA/gpu-operator#375) closes each.
  const std::string hint =
      "    hint: CUDA error 802 on an NVSwitch system (HGX, DGX): the fabric manager is not running or failed; it "
      "runs beside the driver (the driver container's nvidia-fabricmanager, or the host's systemd unit "
      "nvidia-fabricmanager for a host driver) and must match the driver's version (NVIDIA/gpu-operator#375, #286, "
      "#1043)\n";
  EXPECT_NE(d.out.find("--previous\n" + validator + hint + "gpu-node-2 operator-validator error stuck-in-init: "),
            std::string::npos)
      << d.out;
  EXPECT_NE(d.out.find("    gate state: waiting CrashLoopBackOff\n" + validator), std::string::npos) << d.out;
}

// The lab (hand-written DaemonSets, no operator owner or labels) is not an
// operator install: no note, the lab's formats.
TEST(OperatorCases, TheLabIsNotAnOperatorInstall) {
  auto a = run_gpuops({"audit", "--snapshot", std::string(GPUOPS_CASES_DIR) + "/lab-final-state/cluster.json"});
  EXPECT_EQ(a.err, "");
  EXPECT_EQ(a.out, "lab-node-0 OK\nlab-node-1 OK\nlab-node-2 OK\n");
}
