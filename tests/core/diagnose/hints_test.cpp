// The hint table of core/diagnose/hints.h: a hint is attached where a
// finding quotes its message, once, with its source.
#include <gtest/gtest.h>

#include <string>

#include "core/diagnose/hints.h"

namespace gpuops {
namespace {

TEST(Hints, MessagesOfReportsFindTheirHint) {
  // kubelet's FailedCreatePodSandBox as NVIDIA/gpu-operator#730 quotes it.
  auto h = core::hints_for(
      "Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime "
      "for \"nvidia\" is configured");
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0]->source, "NVIDIA/gpu-operator#730, #413, #349");
  // CUDA error 802 from the cuda validator on an NVSwitch system (#375).
  h = core::hints_for("cudaErrorSystemNotReady: system not yet initialized");
  ASSERT_EQ(h.size(), 1u);
  EXPECT_NE(std::string(h[0]->hint).find("fabric manager"), std::string::npos);
  // ASCII case does not matter.
  EXPECT_EQ(core::hints_for("FAILED TO INITIALIZE NVML: UNKNOWN ERROR").size(), 1u);
  EXPECT_EQ(core::hints_for("nvidia-container-cli: requirement error: unsatisfied condition: cuda >= 9.0").size(), 1u);
  EXPECT_EQ(core::hints_for("0/3 nodes are available: 3 Insufficient nvidia.com/gpu.").size(), 1u);
  EXPECT_TRUE(core::hints_for("Back-off restarting failed container").empty());
  EXPECT_TRUE(core::hints_for("").empty());
}

TEST(Hints, AddedOncePerFindingFromReasonOrEvidence) {
  core::Finding f;
  f.name = "root-cause";
  f.reason = "driver Init:CrashLoopBackOff";
  f.evidence = {{"message", "Could not unload NVIDIA driver kernel modules, driver is in use"},
                {"logs", "kubectl logs -n gpu-operator nvidia-driver-daemonset-x -c k8s-driver-manager --previous"}};
  core::add_hints(f);
  ASSERT_EQ(f.evidence.size(), 3u);
  EXPECT_EQ(f.evidence[2].first, "hint");
  EXPECT_EQ(f.evidence[2].second.substr(f.evidence[2].second.size() - 27), "(NVIDIA/nvidia-docker#1242)");
  core::add_hints(f);  // again: nothing new
  EXPECT_EQ(f.evidence.size(), 3u);
  core::Finding quiet;
  quiet.reason = "pod is Running and Ready";
  core::add_hints(quiet);
  EXPECT_TRUE(quiet.evidence.empty());
}

}  // namespace
}  // namespace gpuops
