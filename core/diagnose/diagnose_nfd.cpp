// core/diagnose/diagnose_nfd.cpp: where the chain begins, Node Feature Discovery (docs/DIAGNOSE.md "NFD"),
// a Diagnoser member (core/diagnose/diagnoser.h).
//
// The operator counts a node as a GPU node only by NFD's labels (hasGPULabels,
// controllers/state_manager.go); NFD's worker (a DaemonSet, deployed by the
// GPU Operator's chart as <release>-node-feature-discovery-worker, labels
// app.kubernetes.io/name=node-feature-discovery, role=worker) reads the PCI
// devices and nfd-master writes the feature.node.kubernetes.io/ labels. A
// node the worker never ran on has none of them.
#include "core/diagnose/diagnoser.h"

namespace gpuops::core::diagnose_internal {

namespace {

constexpr const char* kNfdLabelPrefix = "feature.node.kubernetes.io/";

bool has_nfd_labels(const Node& node) {
  for (const auto& [k, v] : node.metadata.labels)
    if (starts_with(k, kNfdLabelPrefix)) return true;
  return false;
}

// The NFD worker DaemonSets of the state's namespace: the chart's labels, or
// the names the chart and the NFD operator give them.
std::vector<const DaemonSet*> nfd_workers(const ClusterState& state) {
  std::vector<const DaemonSet*> out;
  for (const auto& ds : state.daemonsets) {
    const auto& l = ds.metadata.labels;
    auto name = l.find("app.kubernetes.io/name");
    auto role = l.find("role");
    bool chart =
        name != l.end() && name->second == "node-feature-discovery" && role != l.end() && role->second == "worker";
    if (chart || ends_with(ds.metadata.name, "node-feature-discovery-worker") || ds.metadata.name == "nfd-worker")
      out.push_back(&ds);
  }
  return out;
}

// What on a node NFD has not labelled says it has an NVIDIA GPU: the taint
// GPU nodes are commonly given (nvidia.com/gpu), a label the operator, GFD
// or a person wrote under nvidia.com/, allocatable nvidia.com/gpu. As
// evidence pairs.
std::vector<std::pair<std::string, std::string>> nfd_unlabelled_gpu_signs(const Node& node) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& t : node.taints)
    if (t.key == "nvidia.com/gpu") out.emplace_back("taint", format_taint(t));
  for (const auto& [k, v] : node.metadata.labels)
    if (starts_with(k, "nvidia.com/")) out.emplace_back("label " + k, v);
  if (auto it = node.allocatable.find("nvidia.com/gpu"); it != node.allocatable.end() && !it->second.is_zero())
    out.emplace_back("allocatable nvidia.com/gpu", it->second.to_string());
  return out;
}

}  // namespace

Finding Diagnoser::nfd_finding() const {
  // Lab mode has no NFD: its nodes are labelled by the lab.
  if (!catalog_.operator_mode || has_nfd_labels(node_))
    return make("not-a-gpu-node", Severity::kInfo, name_, "",
                "no NFD NVIDIA PCI label (pci-10de.present): the operator treats it as a "
                "non-GPU node and gives it no deploy labels");
  const auto signs = nfd_unlabelled_gpu_signs(node_);
  const ClusterState& state = index_.state();
  std::string why;
  std::vector<std::pair<std::string, std::string>> evidence;
  const auto workers = nfd_workers(state);
  if (workers.empty()) {
    why = "there is no NFD worker DaemonSet in namespace " + state.namespace_ +
          " (NFD installed apart, by its own chart or operator, lives in another namespace: kubectl get "
          "daemonsets -A -l app.kubernetes.io/name=node-feature-discovery)";
  } else {
    const DaemonSet& ds = *workers.front();
    evidence.emplace_back("nfd worker daemonset", ds.metadata.name);
    const Placement pl = should_run(ds, node_);
    std::vector<const Pod*> pods;
    for (const Pod* p : index_.pods_on(name_)) {
      const OwnerReference* ref = p->metadata.controller_ref();
      if (ref && ref->kind == "DaemonSet" && ref->name == ds.metadata.name) pods.push_back(p);
    }
    for (const Pod* p : pods) evidence.emplace_back("nfd worker pod", p->metadata.name + " " + pod_status_column(*p));
    if (pl.untolerated_taint) {
      const std::string ts = format_taint(*pl.untolerated_taint);
      why = "the NFD worker DaemonSet " + ds.metadata.name + " does not tolerate taint " + ts +
            ", so it never runs here (add the toleration to the chart's node-feature-discovery.worker.tolerations)";
      evidence.emplace_back("taint", ts);
    } else if (!pl.should_run) {
      why = "the NFD worker DaemonSet " + ds.metadata.name + " does not select this node (" + join(pl.reasons) + ")";
    } else if (pods.empty()) {
      why = "the NFD worker DaemonSet " + ds.metadata.name + " wants this node but has no pod on it";
    } else if (const Pod* p = pods.front(); p->status.phase != "Running" || !p->is_ready()) {
      why = "its NFD worker pod " + p->metadata.name + " is " + pod_status_column(*p) + " (kubectl logs -n " +
            p->metadata.namespace_ + " " + p->metadata.name + ")";
    } else {
      why =
          "the NFD worker runs here, yet no feature label reached the node: nfd-master applies them (its log, "
          "and the node's NodeFeature object, say why)";
    }
  }
  Finding f = make("nfd-not-labelled", signs.empty() ? Severity::kWarning : Severity::kError, name_, "",
                   std::string("NFD has not labelled this node (no feature.node.kubernetes.io/ label): ") + why +
                       (signs.empty() ? "; whether it has an NVIDIA GPU is unknown, and the operator treats it as a "
                                        "non-GPU node"
                                      : "; it shows signs of an NVIDIA GPU, yet the operator treats it as a non-GPU "
                                        "node and deploys nothing here"));
  for (auto& e : signs) f.evidence.push_back(e);
  for (auto& e : evidence) f.evidence.push_back(std::move(e));
  return f;
}

}  // namespace gpuops::core::diagnose_internal
