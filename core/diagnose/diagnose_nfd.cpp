// core/diagnose/diagnose_nfd.cpp: where the chain begins, Node Feature Discovery (docs/DIAGNOSE.md "NFD"),
// a Diagnoser member (core/diagnose/diagnoser.h); the rules are core/gpu_operator/nfd.h's.
#include <algorithm>

#include "core/diagnose/diagnoser.h"
#include "core/gpu_operator/gpu_node_rules.h"
#include "core/gpu_operator/nfd.h"

namespace gpuops::core::diagnose_internal {

Finding Diagnoser::nfd_finding() const {
  // Lab mode has no NFD: its nodes are labelled by the lab.
  if (!catalog_.operator_mode || has_nfd_labels(node_))
    return make("not-a-gpu-node", Severity::kInfo, name_, "",
                "no NFD NVIDIA PCI label (pci-10de.present): the operator treats it as a "
                "non-GPU node and gives it no deploy labels");
  const auto signs = unlabelled_gpu_signs(node_);
  NfdGap gap = nfd_gap(index_, node_);
  Finding f = make("nfd-not-labelled", signs.empty() ? Severity::kWarning : Severity::kError, name_, "",
                   "NFD has not labelled this node (no feature.node.kubernetes.io/ label): " + gap.why + " (" +
                       gap.detail + ")" +
                       (signs.empty() ? "; whether it has an NVIDIA GPU is unknown, and the operator treats it as a "
                                        "non-GPU node"
                                      : "; it shows signs of an NVIDIA GPU, yet the operator treats it as a non-GPU "
                                        "node and deploys nothing here"));
  for (const auto& e : signs) f.evidence.push_back(e);
  for (auto& e : gap.evidence) f.evidence.push_back(std::move(e));
  return f;
}

namespace {

// What the operator does without the labels, in one phrase.
std::string consequence(const DriverInputGap& gap) {
  if (gap.fails_init)
    return std::string(gap.missing.empty() ? "" : "without them ") +
           "the operator's reconcile fails before any state (\"" + gap.failure + "\"): nothing is rendered or updated";
  if (!gap.failure.empty())
    return "without it state-driver fails (\"Failed to reconcile state-driver: " + gap.failure +
           "\") and no state after it is reconciled";
  return "the driver image is then rendered with a tag ending in \"-\" (the driver version, \"-\" and an empty OS "
         "tag), an image no registry has";
}

// The ClusterPolicy's Error condition message, when it quotes `failure`.
const Condition* quoting(const ClusterState& state, const std::string& failure, std::string* policy) {
  if (failure.empty()) return nullptr;
  for (const auto& cp : state.cluster_policies)
    for (const auto& c : cp.conditions)
      if (c.type == "Error" && c.status == "True" && c.message.find(failure) != std::string::npos) {
        *policy = cp.metadata.name;
        return &c;
      }
  return nullptr;
}

// A driver image whose tag ends in "-" (rendered without an OS tag).
bool dash_tagged_driver(const ClusterState& state) {
  for (const auto& d : state.daemonsets) {
    auto it = d.template_.labels.find("app.kubernetes.io/component");
    if (it == d.template_.labels.end() || it->second != "nvidia-driver") continue;
    for (const auto& c : d.template_.spec.containers)
      if (!c.image.empty() && c.image.back() == '-') return true;
  }
  return false;
}

}  // namespace

std::vector<Finding> nfd_driver_input_findings(const ClusterState& state, const Catalog& catalog,
                                               const std::vector<const Node*>& targets) {
  std::vector<Finding> out;
  if (!catalog.operator_mode) return out;
  const std::vector<std::string> undetermined = driver_input_disagreement(state, catalog.version);
  for (const Node* n : targets) {
    if (!has_common_gpu_label(n->metadata.labels) || !has_nfd_labels(*n)) continue;
    const DriverInputGap gap = driver_input_gap(*n, catalog.version);
    if (gap.missing.empty() && gap.failure.empty()) continue;
    std::string policy;
    const Condition* said = quoting(state, gap.failure, &policy);
    const bool shown_wrong = gap.bad_image_tag && dash_tagged_driver(state);
    std::string keys;
    for (const auto& k : gap.missing) keys += (keys.empty() ? "" : ", ") + k;
    std::string reason =
        gap.missing.empty()
            ? "the operator cannot use this GPU node's NFD OS labels (system-os_release ID and VERSION_ID) to "
              "render the driver: " +
                  consequence(gap)
            : std::string(gap.missing.size() == 1 ? "an NFD label" : "NFD labels") +
                  " the operator reads off the first GPU node to render the driver " +
                  (gap.missing.size() == 1 ? "is" : "are") + " missing here (" + keys + "): " + consequence(gap);
    if (std::find(undetermined.begin(), undetermined.end(), n->metadata.name) != undetermined.end())
      reason +=
          "; other GPU nodes have them, and the operator reads whichever GPU node its cache lists first, so "
          "whether it stops is not set by the state";
    reason +=
        "; NFD's worker writes them from its kernel and system feature sources (check that nfd-worker.conf "
        "does not disable them, and the worker's logs on this node)";
    Finding f = make("nfd-driver-labels-missing", said || shown_wrong ? Severity::kError : Severity::kWarning,
                     n->metadata.name, "driver", reason);
    for (const auto& key : gap.missing) f.evidence.emplace_back("label " + key, kAbsent);
    if (gap.missing.empty())
      for (const char* key : {kOsReleaseIdLabel, kOsVersionIdLabel})
        f.evidence.emplace_back(std::string("label ") + key, n->metadata.labels.at(key));
    if (said) f.evidence.emplace_back("ClusterPolicy/" + policy + " condition Error", said->message);
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace gpuops::core::diagnose_internal
