// The whole chain a GPU node needs, on field cases rebuilt from GPU Operator
// reports (shared/reference/field-cases.md): the healthy v26.7 render of
// tests/data/operator/healthy-v26.7 with the failure written in as the
// kubelet, NFD and the operator's helpers leave it. Each test names the
// report and the upstream rule its expected values come from.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <functional>
#include <string>
#include <vector>

#include "../common/cli_run.h"
#include "../common/edited_dump.h"

namespace {

namespace json = boost::json;
using gpuops::testing::run_gpuops;

std::string str(const json::value& v) { return std::string(v.as_string()); }

std::string edited_dump(const std::string& name, const std::function<bool(json::object&)>& edit,
                        const json::array& extra = {}) {
  return gpuops::testing::edited_dump("healthy-v26.7", name, edit, extra);
}

// `diagnose -o json --severity info` of a dump: its findings and exit code.
struct Diagnosis {
  int code = 0;
  json::array findings;
  std::string err;
};

Diagnosis diagnose(const std::string& dump, std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"diagnose", "-o", "json", "--severity", "info", "--snapshot", dump};
  args.insert(args.end(), extra.begin(), extra.end());
  auto r = run_gpuops(args);
  Diagnosis d;
  d.code = r.code;
  d.err = r.err;
  d.findings = json::parse(r.out).as_array();
  return d;
}

// The findings of `node` named `name` (and of `operand`, when given).
std::vector<json::object> find(const Diagnosis& d, const std::string& node, const std::string& name,
                               const std::string& operand = "*") {
  std::vector<json::object> out;
  for (const auto& v : d.findings) {
    const auto& f = v.as_object();
    if (str(f.at("node")) == node && str(f.at("name")) == name && (operand == "*" || str(f.at("operand")) == operand))
      out.push_back(f);
  }
  return out;
}

// The values of evidence `key` of a finding, in order.
std::vector<std::string> evidence(const json::object& f, const std::string& key) {
  std::vector<std::string> out;
  for (const auto& e : f.at("evidence").as_array())
    if (str(e.at("key")) == key) out.push_back(str(e.at("value")));
  return out;
}

bool is(const json::object& o, const char* kind, const std::string& name) {
  return str(o.at("kind")) == kind && str(o.at("metadata").at("name")) == name;
}

json::object waiting(const std::string& name, const std::string& reason) {
  return json::object{{"name", name},      {"ready", false},
                      {"restartCount", 0}, {"image", "x"},
                      {"imageID", ""},     {"state", json::object{{"waiting", json::object{{"reason", reason}}}}}};
}

// The status the kubelet leaves while RunPodSandbox fails (kuberuntime
// SyncPod returns before any container is created; generateAPIPodStatus):
// Pending, no podIP, PodReadyToStartContainers False, every container
// waiting in PodInitializing; scheduled at `scheduled`.
void sandbox_never_started(json::object& pod, const std::string& scheduled) {
  json::object& st = pod["status"].as_object();
  st["phase"] = "Pending";
  st.erase("podIP");
  st["conditions"] = json::array{
      json::object{{"type", "PodReadyToStartContainers"}, {"status", "False"}, {"lastTransitionTime", scheduled}},
      json::object{{"type", "Initialized"},
                   {"status", "False"},
                   {"reason", "ContainersNotInitialized"},
                   {"lastTransitionTime", scheduled}},
      json::object{
          {"type", "Ready"}, {"status", "False"}, {"reason", "ContainersNotReady"}, {"lastTransitionTime", scheduled}},
      json::object{{"type", "ContainersReady"},
                   {"status", "False"},
                   {"reason", "ContainersNotReady"},
                   {"lastTransitionTime", scheduled}},
      json::object{{"type", "PodScheduled"}, {"status", "True"}, {"lastTransitionTime", scheduled}}};
  json::array init, main;
  for (const auto& c : pod.at("spec").at("initContainers").as_array())
    init.push_back(waiting(str(c.at("name")), "PodInitializing"));
  for (const auto& c : pod.at("spec").at("containers").as_array())
    main.push_back(waiting(str(c.at("name")), "PodInitializing"));
  st["initContainerStatuses"] = init;
  st["containerStatuses"] = main;
}

const std::vector<std::string> kSandboxPods = {"nvidia-operator-validator-g2c", "nvidia-device-plugin-daemonset-g2d",
                                               "nvidia-dcgm-exporter-g2a", "gpu-feature-discovery-g2b"};

// NVIDIA/gpu-operator#730 (v23.9.2), #759: driver and toolkit Ready on the
// node, yet every pod with runtimeClassName nvidia stays Init:0/N with no
// pod IP ("no runtime for "nvidia" is configured"): the runtime's
// configuration lacks the handler the toolkit writes. The dump's newest time
// is 08:05 (the other pods' Ready), the pods were scheduled at 08:00: 5 min,
// past the 2 min a sandbox takes (kubectl's AGE prints it "5m":
// duration.HumanDuration).
TEST(ChainCases, SandboxesThatNeverStartAreTheToolkitsRuntimeConfiguration) {
  const std::string dump = edited_dump("sandbox", [](json::object& o) {
    for (const auto& p : kSandboxPods)
      if (is(o, "Pod", p)) sandbox_never_started(o, "2026-11-30T08:00:00Z");
    return true;
  });
  auto d = diagnose(dump);
  EXPECT_EQ(d.code, 1);
  // One cause: the toolkit's link (it writes the handler), blocking the four.
  auto root = find(d, "gpu-node-2", "root-cause");
  ASSERT_EQ(root.size(), 1u);
  EXPECT_EQ(str(root[0].at("operand")), "container-toolkit");
  EXPECT_EQ(evidence(root[0], "blocked"), (std::vector<std::string>{"device-plugin", "gpu-feature-discovery",
                                                                    "dcgm-exporter", "operator-validator"}));
  for (const char* op : {"device-plugin", "gpu-feature-discovery", "dcgm-exporter", "operator-validator"}) {
    auto f = find(d, "gpu-node-2", "sandbox-not-started", op);
    ASSERT_EQ(f.size(), 1u) << op;
    EXPECT_EQ(str(f[0].at("severity")), "warning") << op;  // blocked by the root
    EXPECT_EQ(str(f[0].at("reason")).rfind("blocked by container-toolkit: ", 0), 0u) << op;
    EXPECT_EQ(evidence(f[0], "runtimeClassName"), std::vector<std::string>{"nvidia"});
    EXPECT_EQ(evidence(f[0], "waiting for a sandbox"), std::vector<std::string>{"5m (since 2026-11-30T08:00:00Z)"});
  }
  // The validator's gates never ran: not blamed on the driver.
  for (const auto& v : d.findings)
    EXPECT_EQ(str(v.at("reason")).find("waits for a usable driver"), std::string::npos) << v;
  // gpu-node-1 is untouched.
  EXPECT_TRUE(find(d, "gpu-node-1", "root-cause").empty());
}

// The same shape 30 s after scheduling is a sandbox being created, not a
// failure: a warning, and nothing to blame.
TEST(ChainCases, ASandboxBeingCreatedIsNotCalledFailing) {
  const std::string dump = edited_dump("sandbox-young", [](json::object& o) {
    if (is(o, "Pod", "nvidia-device-plugin-daemonset-g2d")) sandbox_never_started(o, "2026-11-30T08:04:30Z");
    return true;
  });
  auto d = diagnose(dump);
  auto f = find(d, "gpu-node-2", "pending", "device-plugin");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(str(f[0].at("severity")), "warning");
  EXPECT_TRUE(find(d, "gpu-node-2", "sandbox-not-started").empty());
  EXPECT_TRUE(find(d, "gpu-node-2", "root-cause").empty());
  EXPECT_EQ(d.code, 0);
}

// The driver pod of gpu-node-2 was replaced (OnDelete) and its
// k8s-driver-manager cannot unload the old modules: "Could not unload NVIDIA
// driver kernel modules, driver is in use" (unloadDriver,
// cmd/driver-manager/main.go of NVIDIA/k8s-driver-manager), because a
// training pod holds the GPUs. The old driver is loaded and validated (the
// toolkit's driver-validation passed), so nothing runs "without a driver".
json::array workloads() {
  json::object limits{{"nvidia.com/gpu", "2"}};
  json::object train{{"name", "train"},
                     {"image", "nvcr.io/nvidia/pytorch:25.01-py3"},
                     {"resources", json::object{{"limits", limits}}}};
  json::object running{{"name", "train"}, {"ready", true}, {"restartCount", 0},
                       {"image", "x"},    {"imageID", ""}, {"state", json::object{{"running", json::object{}}}}};
  json::object trainer{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", json::object{{"name", "trainer-0"},
                                {"namespace", "ml"},
                                {"uid", "pod-uid-trainer-0"},
                                {"creationTimestamp", "2026-11-30T08:01:00Z"}}},
      {"spec", json::object{{"nodeName", "gpu-node-2"}, {"containers", json::array{train}}}},
      {"status", json::object{{"phase", "Running"},
                              {"podIP", "10.244.1.40"},
                              {"conditions", json::array{json::object{{"type", "Ready"}, {"status", "True"}}}},
                              {"containerStatuses", json::array{running}}}}};
  json::object dns{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", json::object{{"name", "coredns-5d78c9869d-abcde"}, {"namespace", "kube-system"}}},
      {"spec", json::object{{"nodeName", "cpu-node-1"},
                            {"containers", json::array{json::object{{"name", "coredns"}, {"image", "x"}}}}}},
      {"status", json::object{{"phase", "Running"}}}};
  return json::array{trainer, dns};
}

bool driver_in_use(json::object& o) {
  if (!is(o, "Pod", "nvidia-driver-daemonset-g2a")) return true;
  json::object& st = o["status"].as_object();
  st["phase"] = "Pending";
  for (auto& c : st["conditions"].as_array())
    if (str(c.at("type")) != "PodScheduled" && str(c.at("type")) != "PodReadyToStartContainers")
      c.as_object()["status"] = "False";
  json::object manager = waiting("k8s-driver-manager", "CrashLoopBackOff");
  manager["restartCount"] = 6;
  manager["lastState"] = json::object{
      {"terminated",
       json::object{{"exitCode", 1},
                    {"reason", "Error"},
                    {"message",
                     "Unloading NVIDIA driver kernel modules\nCould not unload NVIDIA driver kernel modules, driver is "
                     "in use\nfailed to unload driver: device or resource busy"}}}};
  st["initContainerStatuses"] = json::array{manager};
  json::array main;
  for (const auto& c : o.at("spec").at("containers").as_array())
    main.push_back(waiting(str(c.at("name")), "PodInitializing"));
  st["containerStatuses"] = main;
  return true;
}

TEST(ChainCases, ADriverInUseNamesWhatHoldsItNotAMissingDriver) {
  auto d = diagnose(edited_dump("driver-in-use", driver_in_use, workloads()));
  EXPECT_EQ(d.code, 1);
  for (const auto& v : d.findings) {
    const std::string name = str(v.at("name"));
    EXPECT_FALSE(name.size() > 15 && name.ends_with("-without-driver")) << v;
    EXPECT_EQ(str(v.at("reason")).find("nothing provides the driver"), std::string::npos) << v;
  }
  auto root = find(d, "gpu-node-2", "root-cause");
  ASSERT_EQ(root.size(), 1u);
  EXPECT_EQ(str(root[0].at("operand")), "driver");
  EXPECT_TRUE(evidence(root[0], "blocked").empty());  // the operands run on the old driver
  auto hints = evidence(root[0], "hint");
  ASSERT_EQ(hints.size(), 1u);
  EXPECT_NE(hints[0].find("(NVIDIA/nvidia-docker#1242)"), std::string::npos) << hints[0];
  auto state = find(d, "gpu-node-2", "stuck-in-init", "driver");
  ASSERT_EQ(state.size(), 1u);
  EXPECT_EQ(evidence(state[0], "loaded driver"),
            std::vector<std::string>{"driver-validation of pod nvidia-container-toolkit-daemonset-g2b passed: a "
                                     "driver was loaded and working when it ran (driver-ready)"});
  // The GPU workloads of the node, any namespace; none of the CPU node's.
  EXPECT_EQ(evidence(state[0], "GPU workload"), std::vector<std::string>{"ml/trainer-0 Running (nvidia.com/gpu: 2)"});
}

// The same dump without other namespaces (kubectl get pods -n gpu-operator):
// the workloads cannot be known, and it says so with the command that adds
// them.
TEST(ChainCases, WorkloadsNotInTheInputAreSaidToBeUnknown) {
  auto d = diagnose(edited_dump("driver-in-use-one-ns", driver_in_use));
  auto state = find(d, "gpu-node-2", "stuck-in-init", "driver");
  ASSERT_EQ(state.size(), 1u);
  EXPECT_TRUE(evidence(state[0], "GPU workload").empty());
  EXPECT_EQ(evidence(state[0], "GPU workloads"),
            std::vector<std::string>{
                "not in the input (only namespace gpu-operator's pods): kubectl get pods -A -o json adds them"});
}

// NFD's worker does not tolerate a taint of gpu-node-2, so NFD never labelled
// it: the operator (hasGPULabels, controllers/state_manager.go) sees no GPU
// there and deploys nothing (#423 shape). The node's nvidia.com/gpu taint
// says it has one: an error that names the taint NFD does not tolerate.
TEST(ChainCases, AGpuNodeNfdNeverLabelledIsAnErrorNamingTheTaint) {
  const std::string dump = edited_dump("nfd-taint", [](json::object& o) {
    if (is(o, "Node", "gpu-node-2")) {
      auto& labels = o["metadata"].as_object()["labels"].as_object();
      for (auto it = labels.begin(); it != labels.end();) {
        const std::string k(it->key());
        it = k.starts_with("feature.node.kubernetes.io/") || k.starts_with("nvidia.com/") ? labels.erase(it) : it + 1;
      }
      o["spec"].as_object()["taints"].as_array().push_back(
          json::object{{"key", "dedicated"}, {"value", "ml"}, {"effect", "NoSchedule"}});
    }
    // No NFD worker and no operand ever ran there.
    if (str(o.at("kind")) == "Pod" && o.at("spec").as_object().if_contains("nodeName") &&
        str(o.at("spec").at("nodeName")) == "gpu-node-2")
      return false;
    return true;
  });
  auto d = diagnose(dump);
  EXPECT_EQ(d.code, 1);
  auto f = find(d, "gpu-node-2", "nfd-not-labelled");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(str(f[0].at("severity")), "error");
  EXPECT_EQ(evidence(f[0], "taint"),
            (std::vector<std::string>{"nvidia.com/gpu:NoSchedule", "dedicated=ml:NoSchedule"}));
  EXPECT_EQ(evidence(f[0], "nfd worker daemonset"),
            std::vector<std::string>{"gpu-operator-node-feature-discovery-worker"});
  EXPECT_TRUE(find(d, "gpu-node-2", "not-a-gpu-node").empty());
  // audit says so too, instead of OK.
  auto a = run_gpuops({"audit", "--snapshot", dump});
  EXPECT_EQ(a.out,
            "cpu-node-1 OK\n"
            "gpu-node-1 OK\n"
            "gpu-node-2 UNLABELLED (its NFD worker does not tolerate taint dedicated=ml:NoSchedule)\n");
  EXPECT_EQ(a.code, 1);
}

// A CPU node NFD has not labelled (a taint its worker does not tolerate)
// shows no sign of a GPU: unknown, said as a warning; exit 0.
TEST(ChainCases, AnUnlabelledNodeWithoutGpuSignsIsAWarning) {
  auto d = diagnose(edited_dump("nfd-cpu", [](json::object& o) {
    if (is(o, "Node", "cpu-node-1")) {
      auto& labels = o["metadata"].as_object()["labels"].as_object();
      for (auto it = labels.begin(); it != labels.end();)
        it = std::string(it->key()).starts_with("feature.node.kubernetes.io/") ? labels.erase(it) : it + 1;
      o["spec"].as_object()["taints"] =
          json::array{json::object{{"key", "dedicated"}, {"value", "infra"}, {"effect", "NoSchedule"}}};
    }
    return !is(o, "Pod", "gpu-operator-node-feature-discovery-worker-w2");
  }));
  auto f = find(d, "cpu-node-1", "nfd-not-labelled");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(str(f[0].at("severity")), "warning");
  EXPECT_EQ(evidence(f[0], "taint"), std::vector<std::string>{"dedicated=infra:NoSchedule"});
  EXPECT_EQ(d.code, 0);
}

// docs/reference/gpu-operator-live.md step 5, measured on the real v25.3.4:
// a deploy label set by hand on a CPU node is kept (labelGPUNodes acts only
// where it sets or clears gpu.present). The v26.7 catalog's labeller removes
// state labels from a node without gpu.present=true (labels_need_gpu_present,
// data/operands/gpu-operator.yaml). Diagnose says what the labeller of the
// catalog does: the rule the simulated operator runs.
TEST(ChainCases, AHandLabelOnACpuNodeIsWhatTheLabellerDoes) {
  const std::string dump = edited_dump("cpu-hand-label", [](json::object& o) {
    if (is(o, "Node", "cpu-node-1"))
      o["metadata"].as_object()["labels"].as_object()["nvidia.com/gpu.deploy.device-plugin"] = "true";
    return true;
  });
  auto v25 = diagnose(dump, {"--operands", "gpu-operator-v25.3"});
  auto kept = find(v25, "cpu-node-1", "deploy-labels-on-non-gpu-node");
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_NE(str(kept[0].at("reason")).find("the operator keeps them"), std::string::npos) << kept[0];
  EXPECT_EQ(str(kept[0].at("reason")).find("next pass"), std::string::npos) << kept[0];
  auto v26 = diagnose(dump);
  auto removed = find(v26, "cpu-node-1", "deploy-labels-on-non-gpu-node");
  ASSERT_EQ(removed.size(), 1u);
  EXPECT_NE(str(removed[0].at("reason")).find("removes them on its next pass"), std::string::npos) << removed[0];
}

// mig-manager set mig.config.state=pending three hours before the dump and
// paused the GPU clients (reconfigure.go: setNodeLabel pending,
// shutdownKubernetesGPUClients); a wait timed out and it returned without
// writing failed. The node's managedFields (kubectl get node
// --show-managed-fields) date the write.
json::array managed_fields(const std::string& time) {
  return json::array{json::object{
      {"manager", "nvidia-mig-manager"},
      {"operation", "Update"},
      {"apiVersion", "v1"},
      {"time", time},
      {"fieldsType", "FieldsV1"},
      {"fieldsV1",
       json::object{
           {"f:metadata",
            json::object{{"f:labels", json::object{{"f:nvidia.com/mig.config.state", json::object{}},
                                                   {"f:nvidia.com/gpu.deploy.device-plugin", json::object{}}}}}}}}}};
}

std::function<bool(json::object&)> mig_pending(const std::string& written) {
  return [written](json::object& o) {
    if (is(o, "Node", "gpu-node-1")) {
      auto& md = o["metadata"].as_object();
      auto& labels = md["labels"].as_object();
      labels["nvidia.com/mig.config"] = "all-1g.10gb";
      labels["nvidia.com/mig.config.state"] = "pending";
      labels["nvidia.com/gpu.deploy.device-plugin"] = "paused-for-mig-change";
      md["managedFields"] = managed_fields(written);
    }
    return !is(o, "Pod", "nvidia-device-plugin-daemonset-g1d");
  };
}

TEST(ChainCases, AMigChangePendingForHoursIsStuck) {
  auto d = diagnose(edited_dump("mig-stuck", mig_pending("2026-11-30T05:05:00Z")));
  EXPECT_EQ(d.code, 1);
  auto f = find(d, "gpu-node-1", "mig-config-stuck");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(str(f[0].at("severity")), "error");
  EXPECT_EQ(evidence(f[0], "written"), std::vector<std::string>{"nvidia-mig-manager at 2026-11-30T05:05:00Z"});
  auto paused = find(d, "gpu-node-1", "label-paused-for-mig-change", "device-plugin");
  ASSERT_EQ(paused.size(), 1u);
  EXPECT_NE(str(paused[0].at("reason")).find("for at least 3h"), std::string::npos) << paused[0];
  // Under the threshold it is in progress: a warning, exit 0.
  auto young = diagnose(edited_dump("mig-young", mig_pending("2026-11-30T07:55:00Z")));
  EXPECT_EQ(find(young, "gpu-node-1", "mig-config-in-progress").size(), 1u);
  EXPECT_TRUE(find(young, "gpu-node-1", "mig-config-stuck").empty());
  EXPECT_EQ(young.code, 0);
  // --stuck-after moves the line.
  auto strict = diagnose(edited_dump("mig-strict", mig_pending("2026-11-30T07:55:00Z")), {"--stuck-after", "5m"});
  EXPECT_EQ(find(strict, "gpu-node-1", "mig-config-stuck").size(), 1u);
  EXPECT_EQ(strict.code, 1);
  auto bad = run_gpuops({"diagnose", "--stuck-after", "soon", "--snapshot", edited_dump("mig-bad", mig_pending("x"))});
  EXPECT_EQ(bad.code, 2) << bad.err;
  EXPECT_NE(bad.err.find("--stuck-after: time: invalid duration \"soon\""), std::string::npos) << bad.err;
}

// Without managedFields the time is unknown: in progress, and it says how to
// learn it.
TEST(ChainCases, AMigChangeOfUnknownAgeSaysHowToDateIt) {
  auto d = diagnose(edited_dump("mig-unknown", [](json::object& o) {
    bool keep = mig_pending("2026-11-30T05:05:00Z")(o);
    if (is(o, "Node", "gpu-node-1")) o["metadata"].as_object().erase("managedFields");
    return keep;
  }));
  auto f = find(d, "gpu-node-1", "mig-config-in-progress");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(str(f[0].at("reason")).find("kubectl get node gpu-node-1 --show-managed-fields -o json"), std::string::npos)
      << f[0];
  EXPECT_EQ(d.code, 0);
}

}  // namespace
