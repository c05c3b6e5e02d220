// core/diagnose/diagnose_nfd.cpp: where the chain begins, Node Feature Discovery (docs/DIAGNOSE.md "NFD"),
// a Diagnoser member (core/diagnose/diagnoser.h); the rules are core/gpu_operator/nfd.h's.
#include "core/diagnose/diagnoser.h"
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

}  // namespace gpuops::core::diagnose_internal
