// make_dump (docs/PERFORMANCE.md): a large kubectl-shaped dump of a healthy GPU Operator
// install, for timing the snapshot commands (audit, matrix, diagnose, plan).
//
//   make_dump --nodes 5000 --operands 16 OUT.json [--indent]
//
// What `kubectl get nodes,daemonsets,pods -A -o json` prints for a cluster of
// `--nodes` GPU nodes running the first `--operands` operands of the
// gpu-operator catalog (bench_common.h), one Running, Ready pod per (node,
// operand) pair: a List with the Nodes, the DaemonSets and the Pods. Each
// object has the bulk a real one has besides the fields gpuops reads: a node's
// NFD labels, addresses, capacity, images and nodeInfo; a pod's env,
// hostPath volumes and their mounts, security context, resources, init
// container, the controller-revision-hash and its full status (the shapes of
// tests/data/operator/healthy-v26.7 and of a v26.7 install's operand pods).
// kubectl (1.21 and later) omits managedFields, so does this. Compact JSON;
// with --indent, kubectl's four-space indentation (Boost.JSON cannot indent:
// the compact text is written through python3's json module).
// Exit 2 on bad arguments, 1 when the file cannot be written.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

#include <boost/json.hpp>
#include <cxxopts.hpp>

#include "bench/bench_common.h"

namespace json = boost::json;
using gpuops::core::Operand;
namespace bench = gpuops::bench;

namespace {

const char* kTime = "2026-11-30T08:00:00Z";

json::object node(int i, const std::vector<Operand>& ops) {
  std::string name = bench::node_name(i);
  json::object labels{{"kubernetes.io/hostname", name},
                      {"kubernetes.io/os", "linux"},
                      {"kubernetes.io/arch", "amd64"},
                      {"beta.kubernetes.io/os", "linux"},
                      {"beta.kubernetes.io/arch", "amd64"},
                      {"node.kubernetes.io/instance-type", "p5.48xlarge"},
                      {"feature.node.kubernetes.io/pci-10de.present", "true"},
                      {"feature.node.kubernetes.io/kernel-version.full", "6.8.0-1015-aws"},
                      {"feature.node.kubernetes.io/system-os_release.ID", "ubuntu"},
                      {"feature.node.kubernetes.io/system-os_release.VERSION_ID", "24.04"},
                      {"nvidia.com/gpu.present", "true"},
                      {"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"},
                      {"nvidia.com/gpu.count", "8"},
                      {"nvidia.com/gpu.memory", "81559"},
                      {"nvidia.com/cuda.driver-version.full", "580.82.07"},
                      {"nvidia.com/mig.capable", "true"},
                      {"nvidia.com/gpu.workload.config", "container"}};
  for (const auto& op : ops) labels[op.label] = "true";
  // Every state label the operator writes on a MIG-capable container node
  // (gpuStateLabels, nodelabeling_controller.go v26.7), whichever operands
  // the dump holds: a dump the operator would not relabel (plan's drift).
  for (const char* key : {"driver", "container-toolkit", "device-plugin", "gpu-feature-discovery", "dcgm",
                          "dcgm-exporter", "node-status-exporter", "operator-validator", "client", "mig-manager"})
    labels[std::string("nvidia.com/gpu.deploy.") + key] = "true";
  json::object resources{{"cpu", "192"},
                         {"memory", "2097152Mi"},
                         {"pods", "110"},
                         {"nvidia.com/gpu", "8"},
                         {"ephemeral-storage", "1000Gi"}};
  json::array conditions;
  for (const char* t : {"MemoryPressure", "DiskPressure", "PIDPressure"})
    conditions.push_back(json::object{{"type", t},
                                      {"status", "False"},
                                      {"lastHeartbeatTime", kTime},
                                      {"lastTransitionTime", kTime},
                                      {"reason", std::string("KubeletHas") + "Sufficient" + t},
                                      {"message", "kubelet has sufficient resources"}});
  conditions.push_back(json::object{{"type", "Ready"},
                                    {"status", "True"},
                                    {"lastHeartbeatTime", kTime},
                                    {"lastTransitionTime", kTime},
                                    {"reason", "KubeletReady"},
                                    {"message", "kubelet is posting ready status"}});
  json::array images;
  for (const auto& op : ops)
    images.push_back(json::object{{"names", json::array{op.image.empty() ? "nvcr.io/nvidia/" + op.name : op.image}},
                                  {"sizeBytes", 412345678}});
  return json::object{
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata",
       json::object{{"name", name},
                    {"uid", "node-uid-" + std::to_string(i)},
                    {"resourceVersion", std::to_string(1000 + i)},
                    {"creationTimestamp", kTime},
                    {"labels", labels},
                    {"annotations", json::object{{"node.alpha.kubernetes.io/ttl", "0"},
                                                 {"volumes.kubernetes.io/controller-managed-attach-detach", "true"}}}}},
      {"spec",
       json::object{{"podCIDR", "10.244." + std::to_string(i % 256) + ".0/24"}, {"providerID", "aws:///" + name}}},
      {"status", json::object{{"capacity", resources},
                              {"allocatable", resources},
                              {"conditions", conditions},
                              {"addresses", json::array{json::object{{"type", "InternalIP"}, {"address", "10.0.0.1"}},
                                                        json::object{{"type", "Hostname"}, {"address", name}}}},
                              {"daemonEndpoints", json::object{{"kubeletEndpoint", json::object{{"Port", 10250}}}}},
                              {"nodeInfo", json::object{{"machineID", "0123456789abcdef"},
                                                        {"kernelVersion", "6.8.0-1015-aws"},
                                                        {"osImage", "Ubuntu 24.04.1 LTS"},
                                                        {"containerRuntimeVersion", "containerd://1.7.22"},
                                                        {"kubeletVersion", "v1.37.2"},
                                                        {"operatingSystem", "linux"},
                                                        {"architecture", "amd64"}}},
                              {"images", images}}}};
}

// The operand's container, with the bulk of a real one.
json::object container(const Operand& op) {
  json::array env, mounts;
  for (const char* e : {"NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES", "NVIDIA_MIG_MONITOR_DEVICES"})
    env.push_back(json::object{{"name", e}, {"value", "all"}});
  env.push_back(json::object{
      {"name", "NODE_NAME"},
      {"valueFrom", json::object{{"fieldRef", json::object{{"apiVersion", "v1"}, {"fieldPath", "spec.nodeName"}}}}}});
  for (const char* m : {"run-nvidia", "host-root", "driver-install-dir", "host-dev", "run-nvidia-validations"})
    mounts.push_back(json::object{{"name", m}, {"mountPath", std::string("/") + m}});
  return json::object{
      {"name", op.container.empty() ? op.name : op.container},
      {"image", op.image.empty() ? "nvcr.io/nvidia/" + op.name + ":v26.7.0" : op.image},
      {"imagePullPolicy", "IfNotPresent"},
      {"env", env},
      {"resources", json::object{{"requests", json::object{{"memory", op.memory.empty() ? "64Mi" : op.memory}}}}},
      {"securityContext", json::object{{"privileged", true}}},
      {"volumeMounts", mounts},
      {"terminationMessagePath", "/dev/termination-log"},
      {"terminationMessagePolicy", "File"}};
}

json::object pod_spec(const Operand& op) {
  json::array volumes;
  for (const char* v : {"run-nvidia", "host-root", "driver-install-dir", "host-dev", "run-nvidia-validations"})
    volumes.push_back(
        json::object{{"name", v}, {"hostPath", json::object{{"path", std::string("/") + v}, {"type", ""}}}});
  json::object init = container(op);
  init["name"] = "toolkit-validation";
  init["image"] = "nvcr.io/nvidia/gpu-operator:v26.7.0";
  return json::object{
      {"nodeSelector", json::object{{op.label, "true"}}},
      {"tolerations",
       json::array{json::object{{"key", "nvidia.com/gpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}}},
      {"priorityClassName", "system-node-critical"},
      {"serviceAccountName", op.daemonset},
      {"initContainers", json::array{init}},
      {"containers", json::array{container(op)}},
      {"volumes", volumes},
      {"restartPolicy", "Always"},
      {"dnsPolicy", "ClusterFirst"},
      {"schedulerName", "default-scheduler"},
      {"terminationGracePeriodSeconds", 30},
      {"securityContext", json::object{}}};
}

json::object daemonset(const Operand& op, size_t k, int nodes) {
  json::object tmpl_labels{
      {"app", op.app}, {"app.kubernetes.io/managed-by", "gpu-operator"}, {"helm.sh/chart", "gpu-operator-v26.7.0"}};
  return json::object{
      {"apiVersion", "apps/v1"},
      {"kind", "DaemonSet"},
      {"metadata",
       json::object{{"name", op.daemonset},
                    {"namespace", bench::kNs},
                    {"uid", "ds-uid-" + std::to_string(k)},
                    {"resourceVersion", "900"},
                    {"generation", 1},
                    {"creationTimestamp", kTime},
                    {"labels", json::object{{"app", op.app}, {"app.kubernetes.io/managed-by", "gpu-operator"}}},
                    {"annotations", json::object{{"deprecated.daemonset.template.generation", "1"}}}}},
      {"spec",
       json::object{
           {"selector", json::object{{"matchLabels", json::object{{"app", op.app}}}}},
           {"template", json::object{{"metadata", json::object{{"labels", tmpl_labels}}}, {"spec", pod_spec(op)}}},
           {"updateStrategy", json::object{{"type", "RollingUpdate"},
                                           {"rollingUpdate", json::object{{"maxUnavailable", 1}, {"maxSurge", 0}}}}},
           {"revisionHistoryLimit", 10}}},
      {"status", json::object{{"currentNumberScheduled", nodes},
                              {"desiredNumberScheduled", nodes},
                              {"numberAvailable", nodes},
                              {"numberMisscheduled", 0},
                              {"numberReady", nodes},
                              {"observedGeneration", 1},
                              {"updatedNumberScheduled", nodes}}}};
}

json::object pod(const Operand& op, size_t k, int i) {
  std::string node = bench::node_name(i), name = op.daemonset + "-" + std::to_string(i);
  json::object spec = pod_spec(op);
  spec["nodeName"] = node;
  spec["affinity"] = json::object{
      {"nodeAffinity",
       json::object{
           {"requiredDuringSchedulingIgnoredDuringExecution",
            json::object{{"nodeSelectorTerms",
                          json::array{json::object{
                              {"matchFields", json::array{json::object{{"key", "metadata.name"},
                                                                       {"operator", "In"},
                                                                       {"values", json::array{node}}}}}}}}}}}}};
  json::array conditions;
  for (const char* t : {"PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"})
    conditions.push_back(
        json::object{{"type", t}, {"status", "True"}, {"lastProbeTime", nullptr}, {"lastTransitionTime", kTime}});
  auto status = [&](const std::string& cname, bool init) {
    json::object s{{"name", cname},
                   {"image", "nvcr.io/nvidia/" + op.name + ":v26.7.0"},
                   {"imageID", "nvcr.io/nvidia/" + op.name +
                                   "@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},
                   {"containerID", "containerd://0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},
                   {"ready", !init},
                   {"restartCount", 0},
                   {"started", !init}};
    if (init)
      s["state"] = json::object{
          {"terminated",
           json::object{{"exitCode", 0}, {"reason", "Completed"}, {"startedAt", kTime}, {"finishedAt", kTime}}}};
    else
      s["state"] = json::object{{"running", json::object{{"startedAt", kTime}}}};
    return s;
  };
  std::string cname = op.container.empty() ? op.name : op.container;
  return json::object{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", json::object{{"name", name},
                                {"generateName", op.daemonset + "-"},
                                {"namespace", bench::kNs},
                                {"uid", "ds-uid-" + std::to_string(k) + "-pod-" + std::to_string(i)},
                                {"resourceVersion", std::to_string(10000 + i * 32 + static_cast<int>(k))},
                                {"creationTimestamp", kTime},
                                {"labels", json::object{{"app", op.app},
                                                        {"app.kubernetes.io/managed-by", "gpu-operator"},
                                                        {"helm.sh/chart", "gpu-operator-v26.7.0"},
                                                        {"controller-revision-hash", "6b9f8d7c5d"},
                                                        {"pod-template-generation", "1"}}},
                                {"ownerReferences", json::array{json::object{{"apiVersion", "apps/v1"},
                                                                             {"kind", "DaemonSet"},
                                                                             {"name", op.daemonset},
                                                                             {"uid", "ds-uid-" + std::to_string(k)},
                                                                             {"controller", true},
                                                                             {"blockOwnerDeletion", true}}}}}},
      {"spec", spec},
      {"status", json::object{{"phase", "Running"},
                              {"hostIP", "10.0.0.1"},
                              {"hostIPs", json::array{json::object{{"ip", "10.0.0.1"}}}},
                              {"podIP", "10.244.1.10"},
                              {"podIPs", json::array{json::object{{"ip", "10.244.1.10"}}}},
                              {"startTime", kTime},
                              {"qosClass", "Burstable"},
                              {"conditions", conditions},
                              {"initContainerStatuses", json::array{status("toolkit-validation", true)}},
                              {"containerStatuses", json::array{status(cname, false)}}}}};
}

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options options("make_dump", "a large kubectl-shaped dump of a healthy GPU Operator install");
  options.add_options()("nodes", "GPU nodes", cxxopts::value<int>()->default_value("5000"))(
      "operands", "operands of the gpu-operator catalog (at most 18)", cxxopts::value<int>()->default_value("16"))(
      "indent", "kubectl's four-space indentation (through python3)")("out", "output file",
                                                                      cxxopts::value<std::string>())("h,help", "help");
  options.parse_positional({"out"});
  cxxopts::ParseResult args;
  try {
    args = options.parse(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "make_dump: " << e.what() << "\n";
    return 2;
  }
  if (args.count("help") || !args.count("out")) {
    std::cout << options.help();
    return args.count("help") ? 0 : 2;
  }
  const int nodes = args["nodes"].as<int>(), n_ops = args["operands"].as<int>();
  if (nodes < 1 || n_ops < 1 || n_ops > 18) {
    std::cerr << "make_dump: --nodes must be at least 1, --operands 1 to 18\n";
    return 2;
  }
  auto ops = bench::operands(n_ops);
  const std::string out = args["out"].as<std::string>();
  const std::string compact = args.count("indent") ? out + ".compact" : out;
  {
    std::ofstream f(compact);
    // One item at a time: the whole List as one DOM would be several GB.
    // The envelope serialised once and cut where its empty items array is.
    const std::string envelope = json::serialize(json::object{{"apiVersion", "v1"},
                                                              {"items", json::array{}},
                                                              {"kind", "List"},
                                                              {"metadata", json::object{{"resourceVersion", ""}}}});
    const size_t cut = envelope.find("[]") + 1;
    f << envelope.substr(0, cut);
    bool first = true;
    auto put = [&](const json::object& o) {
      f << (first ? "" : ",") << json::serialize(o);
      first = false;
    };
    // Each kind in the API's list order (by name), as kubectl prints it.
    std::vector<std::string> node_names, ds_names, pod_names;
    std::vector<std::pair<size_t, int>> pod_of;  // (operand, node) of each pod name
    for (int i = 0; i < nodes; ++i) node_names.push_back(bench::node_name(i));
    for (const auto& op : ops) ds_names.push_back(op.daemonset);
    for (int i = 0; i < nodes; ++i)
      for (size_t k = 0; k < ops.size(); ++k) {
        pod_names.push_back(ops[k].daemonset + "-" + std::to_string(i));
        pod_of.emplace_back(k, i);
      }
    for (size_t i : bench::kubectl_order(node_names)) put(node(static_cast<int>(i), ops));
    for (size_t k : bench::kubectl_order(ds_names)) put(daemonset(ops[k], k, nodes));
    for (size_t j : bench::kubectl_order(pod_names)) put(pod(ops[pod_of[j].first], pod_of[j].first, pod_of[j].second));
    f << envelope.substr(cut) << "\n";
    if (!f) {
      std::cerr << "make_dump: cannot write " << compact << "\n";
      return 1;
    }
  }
  if (args.count("indent")) {
    std::string cmd =
        "python3 -c 'import json,sys; json.dump(json.load(open(sys.argv[1])), open(sys.argv[2], \"w\"), indent=4)' '" +
        compact + "' '" + out + "'";
    int rc = std::system(cmd.c_str());
    std::remove(compact.c_str());
    if (rc != 0) {
      std::cerr << "make_dump: python3 could not indent the dump\n";
      return 1;
    }
  }
  return 0;
}
