#include "core/gpu_operator/nfd.h"

#include <algorithm>
#include <utility>

#include "core/gpu_operator/gpu_node_rules.h"
#include "core/gpu_operator/operator_install.h"
#include "core/kube/placement.h"
#include "core/kube/pod_status.h"

namespace gpuops::core {

namespace {

constexpr const char* kNfdLabelPrefix = "feature.node.kubernetes.io/";

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : "; ") + x;
  return s;
}

}  // namespace

bool has_nfd_labels(const Node& node) {
  for (const auto& [k, v] : node.metadata.labels)
    if (k.rfind(kNfdLabelPrefix, 0) == 0) return true;
  return false;
}

std::vector<std::pair<std::string, std::string>> unlabelled_gpu_signs(const Node& node) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& t : node.taints)
    if (t.key == "nvidia.com/gpu") out.emplace_back("taint", format_taint(t));
  for (const auto& [k, v] : node.metadata.labels)
    if (k.rfind("nvidia.com/", 0) == 0) out.emplace_back("label " + k, v);
  if (auto it = node.allocatable.find("nvidia.com/gpu"); it != node.allocatable.end() && !it->second.is_zero())
    out.emplace_back("allocatable nvidia.com/gpu", it->second.to_string());
  return out;
}

std::vector<const DaemonSet*> nfd_workers(const ClusterState& state) {
  std::vector<const DaemonSet*> out;
  for (const auto& ds : state.daemonsets) {
    const auto& l = ds.metadata.labels;
    auto name = l.find("app.kubernetes.io/name");
    auto role = l.find("role");
    bool chart =
        name != l.end() && name->second == "node-feature-discovery" && role != l.end() && role->second == "worker";
    if (chart || ds.metadata.name.ends_with("node-feature-discovery-worker") || ds.metadata.name == "nfd-worker")
      out.push_back(&ds);
  }
  return out;
}

NfdGap nfd_gap(const StateIndex& index, const Node& node) {
  NfdGap g;
  const ClusterState& state = index.state();
  const auto workers = nfd_workers(state);
  if (workers.empty()) {
    g.why = "no NFD worker DaemonSet in namespace " + state.namespace_;
    g.detail =
        "NFD installed apart, by its own chart or operator, lives in another namespace: kubectl get daemonsets -A -l "
        "app.kubernetes.io/name=node-feature-discovery";
    return g;
  }
  const DaemonSet& ds = *workers.front();
  g.evidence.emplace_back("nfd worker daemonset", ds.metadata.name);
  const Placement pl = should_run(ds, node);
  std::vector<const Pod*> pods;
  for (const Pod* p : index.pods_on(node.metadata.name)) {
    const OwnerReference* ref = p->metadata.controller_ref();
    if (ref && ref->kind == "DaemonSet" && ref->name == ds.metadata.name) pods.push_back(p);
  }
  for (const Pod* p : pods) g.evidence.emplace_back("nfd worker pod", p->metadata.name + " " + pod_status_column(*p));
  if (pl.untolerated_taint) {
    const std::string ts = format_taint(*pl.untolerated_taint);
    g.why = "its NFD worker does not tolerate taint " + ts;
    g.detail = "DaemonSet " + ds.metadata.name +
               " never runs here: add the toleration to the chart's node-feature-discovery.worker.tolerations";
    g.evidence.emplace_back("taint", ts);
  } else if (!pl.should_run) {
    g.why = "its NFD worker DaemonSet does not select it";
    g.detail = "DaemonSet " + ds.metadata.name + ": " + joined(pl.reasons);
  } else if (pods.empty()) {
    g.why = "no NFD worker pod on it";
    g.detail = "DaemonSet " + ds.metadata.name + " wants this node but has no pod on it";
  } else if (const Pod* p = pods.front(); p->status.phase != "Running" || !p->is_ready()) {
    g.why = "its NFD worker pod is " + pod_status_column(*p);
    g.detail = "kubectl logs -n " + p->metadata.namespace_ + " " + p->metadata.name;
  } else {
    g.why = "its NFD worker runs, yet no feature label reached it";
    g.detail = "nfd-master applies them: its log, and the node's NodeFeature object, say why";
  }
  return g;
}

namespace {

// The major version of a VERSION_ID ("9" of "9.4") and whether Go's
// strconv.Atoi takes it (digits only, within int64: getGPUNodeOSTag v26.3.0).
std::pair<std::string, bool> os_major(const std::string& version) {
  std::string major = version.substr(0, version.find('.'));
  const bool numeric = !major.empty() && major.size() <= 18 &&
                       std::all_of(major.begin(), major.end(), [](unsigned char c) { return c >= '0' && c <= '9'; });
  return {std::move(major), numeric};
}

}  // namespace

std::string driver_os_tag(const Node& node, const std::string& release) {
  const auto id = node_label(node, kOsReleaseIdLabel);
  const auto version = node_label(node, kOsVersionIdLabel);
  if (!version_at_least(release, 26, 3)) {
    // kernelFullVersion returns no tag without the kernel label.
    if (!node_label(node, kKernelVersionFullLabel) || !id || !version) return "";
    return *id + *version;
  }
  if (!id || !version) return "";
  const auto [major, numeric] = os_major(*version);
  const bool major_only = version_at_least(release, 26, 7)
                              ? *id == "ol" || *id == "rocky" || *id == "rhel"
                              : *id == "rocky" || (*id == "rhel" && numeric && std::stoll(major) >= 10);
  return *id + (major_only ? major : *version);
}

DriverInputGap driver_input_gap(const Node& node, const std::string& release) {
  DriverInputGap gap;
  const auto id = node_label(node, kOsReleaseIdLabel);
  const auto version = node_label(node, kOsVersionIdLabel);
  if (!version_at_least(release, 26, 3)) {
    if (!node_label(node, kKernelVersionFullLabel)) {
      gap.missing.push_back(kKernelVersionFullLabel);
      gap.failure = "ERROR: Could not find kernel full version: ('', '')";
    }
    if (!id) gap.missing.push_back(kOsReleaseIdLabel);
    if (!version) gap.missing.push_back(kOsVersionIdLabel);
    gap.bad_image_tag = gap.failure.empty() && (!id || !version);
    return gap;
  }
  if (!id) gap.missing.push_back(kOsReleaseIdLabel);
  if (!version) gap.missing.push_back(kOsVersionIdLabel);
  const bool v267 = version_at_least(release, 26, 7);
  if (!gap.missing.empty()) {
    gap.fails_init = true;
    gap.failure = std::string(v267 ? "failed to retrieve GPU node OS info: " : "failed to retrieve GPU node OS tag: ") +
                  "unable to retrieve OS " + (id ? "version" : "name") + " from label " +
                  (id ? kOsVersionIdLabel : kOsReleaseIdLabel);
    return gap;
  }
  if (!v267) {
    // getGPUNodeOSTag (v26.3): strconv.Atoi of the major version, always.
    if (const auto [major, numeric] = os_major(*version); !numeric) {
      gap.fails_init = true;
      gap.failure = "failed to retrieve GPU node OS tag: error processing OS major version " + major +
                    ": strconv.Atoi: parsing \"" + major + "\": invalid syntax";
    }
    return gap;
  }
  // init (v26.7): an empty name or tag is refused after getGPUNodeOSInfo.
  const std::string tag = driver_os_tag(node, release);
  if (id->empty() || tag.empty()) {
    gap.fails_init = true;
    gap.failure = "GPU node OS info is empty: release=\"" + *id + "\", tag=\"" + tag + "\"";
  }
  return gap;
}

std::vector<std::string> driver_input_disagreement(const ClusterState& state, const std::string& release) {
  std::vector<const Node*> gpu;
  for (const auto& n : state.nodes)
    if (has_common_gpu_label(n.metadata.labels)) gpu.push_back(&n);
  std::sort(gpu.begin(), gpu.end(), [](const Node* a, const Node* b) { return a->metadata.name < b->metadata.name; });
  std::vector<std::string> stops;
  for (const Node* n : gpu)
    if (!driver_input_gap(*n, release).failure.empty()) stops.push_back(n->metadata.name);
  if (stops.size() == gpu.size()) stops.clear();
  return stops;
}

}  // namespace gpuops::core
