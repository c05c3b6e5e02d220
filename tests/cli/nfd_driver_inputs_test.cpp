// The NFD labels the operator reads off its first GPU node to render the
// driver (core::driver_input_gap), through diagnose on the healthy v26.7
// install with labels taken away. Expected messages from the operator's
// source: getGPUNodeOSInfo and init (controllers/state_manager.go v26.7.0),
// kernelFullVersion and resolveDriverTag (controllers/object_controls.go
// v25.3.4); the ClusterPolicy's Error condition carries init's error as
// Reconcile sets it (SetConditionsError(..., ReconcileFailed, err.Error()),
// controllers/clusterpolicy_controller.go v26.7.0).
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <string>

#include "../common/cli_run.h"
#include "../common/edited_dump.h"

namespace {

using gpuops::testing::edited_dump;
using gpuops::testing::lines_with;
using gpuops::testing::run_gpuops;
namespace json = boost::json;

const char* const kId = "feature.node.kubernetes.io/system-os_release.ID";
const char* const kKernel = "feature.node.kubernetes.io/kernel-version.full";
const char* const kInitFailure =
    "failed to retrieve GPU node OS info: unable to retrieve OS name from label "
    "feature.node.kubernetes.io/system-os_release.ID";

bool is_gpu_node(const json::object& o) {
  if (o.at("kind") != "Node") return false;
  const auto& labels = o.at("metadata").at("labels").as_object();
  auto it = labels.find("nvidia.com/gpu.present");
  return it != labels.end() && it->value() == "true";
}

// The healthy install without label `key` on GPU node `only` (every GPU node
// when empty); with `failed`, the ClusterPolicy's Error condition says so.
std::string without(const std::string& key, const std::string& only, const std::string& failed) {
  return edited_dump("healthy-v26.7", "without-label", [&](json::object& o) {
    if (is_gpu_node(o) && (only.empty() || o.at("metadata").at("name") == json::string(only)))
      o["metadata"].as_object()["labels"].as_object().erase(key);
    if (o.at("kind") == "ClusterPolicy" && !failed.empty()) {
      json::object& status = o["status"].as_object();
      status["state"] = "notReady";
      for (auto& c : status["conditions"].as_array()) {
        json::object& cond = c.as_object();
        if (cond["type"] == "Ready") cond["status"] = "False", cond["reason"] = "Error", cond["message"] = "";
        if (cond["type"] == "Error")
          cond["status"] = "True", cond["reason"] = "ReconcileFailed", cond["message"] = failed;
      }
    }
    return true;
  });
}

// The finding lines of `name` in diagnose's text.
std::string lines_of(const std::string& text, const std::string& name) { return lines_with(text, " " + name + ": "); }

TEST(NfdDriverInputs, NoOsReleaseOnV267IsTheInitFailureTheClusterPolicyQuotes) {
  auto d = run_gpuops({"diagnose", "--snapshot", without(kId, "", kInitFailure)});
  EXPECT_EQ(d.code, 1) << d.out;
  const std::string found = lines_of(d.out, "nfd-driver-labels-missing");
  const std::string reason =
      " driver error nfd-driver-labels-missing: an NFD label the operator reads off the first GPU node to render "
      "the driver is missing here (feature.node.kubernetes.io/system-os_release.ID): without them the operator's "
      "reconcile fails before any state (\"" +
      std::string(kInitFailure) +
      "\"): nothing is rendered or updated; NFD's worker writes them from its kernel and system feature sources "
      "(check that nfd-worker.conf does not disable them, and the worker's logs on this node)\n";
  EXPECT_EQ(found, "gpu-node-1" + reason + "gpu-node-2" + reason);
  // The evidence: the label absent, the condition that quotes the failure.
  auto j = run_gpuops({"diagnose", "-o", "json", "--snapshot", without(kId, "", kInitFailure)});
  const json::value doc = json::parse(j.out);
  bool seen = false;
  for (const auto& f : doc.as_array()) {
    if (f.at("name") != "nfd-driver-labels-missing" || f.at("node") != "gpu-node-1") continue;
    seen = true;
    const json::array& ev = f.at("evidence").as_array();
    ASSERT_EQ(ev.size(), 2u) << json::serialize(ev);
    EXPECT_EQ(ev[0].at("key"), "label feature.node.kubernetes.io/system-os_release.ID");
    EXPECT_EQ(ev[0].at("value"), "(absent)");
    EXPECT_EQ(ev[1].at("key"), "ClusterPolicy/cluster-policy condition Error");
    EXPECT_EQ(ev[1].at("value"), kInitFailure);
  }
  EXPECT_TRUE(seen) << j.out;
}

TEST(NfdDriverInputs, MissingLabelsTheOperatorHasNotFailedOnAreAWarning) {
  // No failure in the ClusterPolicy (it was rendered before the label went):
  // the next pass would stop, which is a warning, not what happened.
  auto d = run_gpuops({"diagnose", "--snapshot", without(kId, "gpu-node-2", "")});
  const std::string found = lines_of(d.out, "nfd-driver-labels-missing");
  EXPECT_EQ(found.rfind("gpu-node-2 driver warning nfd-driver-labels-missing: an NFD label", 0), 0u) << found;
  EXPECT_EQ(found.find("gpu-node-1"), std::string::npos) << found;
}

TEST(NfdDriverInputs, AKernelLabelOnSomeGpuNodesOnlyLeavesTheV253OutcomeOpen) {
  // v25.3 reads kernel-version.full; gpu-node-1 lacks it, gpu-node-2 has it:
  // which one the operator lists first decides.
  auto d = run_gpuops({"diagnose", "--operator-version", "v25.3.4", "--snapshot", without(kKernel, "gpu-node-1", "")});
  const std::string found = lines_of(d.out, "nfd-driver-labels-missing");
  EXPECT_NE(found.find("gpu-node-1 driver warning nfd-driver-labels-missing: an NFD label the operator reads off the "
                       "first GPU node to render the driver is missing here "
                       "(feature.node.kubernetes.io/kernel-version.full): without it state-driver fails (\"Failed to "
                       "reconcile state-driver: ERROR: Could not find kernel full version: ('', '')\") and no state "
                       "after it is reconciled; other GPU nodes have them, and the operator reads whichever GPU node "
                       "its cache lists first, so whether it stops is not set by the state;"),
            std::string::npos)
      << found;
  EXPECT_EQ(found.find("gpu-node-2"), std::string::npos) << found;
  // v26.7 does not read the kernel label: nothing to say.
  auto v26 = run_gpuops({"diagnose", "--snapshot", without(kKernel, "gpu-node-1", "")});
  EXPECT_EQ(lines_of(v26.out, "nfd-driver-labels-missing"), "");
}

}  // namespace
