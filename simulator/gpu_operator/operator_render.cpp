#include "simulator/gpu_operator/operator_render.h"

#include "core/gpu_operator/gpu_node_rules.h"
#include "simulator/gpu_operator/operator_object_controls.h"

namespace gpuops::simulator {

std::string driver_os_tag(const std::vector<const core::Node*>& nodes_by_name) {
  for (const core::Node* n : nodes_by_name) {
    const auto& l = n->metadata.labels;
    auto present = l.find(core::kGpuPresentLabel);
    if (present == l.end() || present->second != "true") continue;
    auto id = l.find("feature.node.kubernetes.io/system-os_release.ID");
    auto ver = l.find("feature.node.kubernetes.io/system-os_release.VERSION_ID");
    return id != l.end() && ver != l.end() ? id->second + ver->second : "";
  }
  return "";
}

core::DaemonSet rendered_daemonset(const core::Operand& op, const core::ClusterPolicy& policy,
                                   const core::Catalog& catalog, const std::string& ns, const std::string& os_tag) {
  return internal::render_operand_daemonset(op, policy, catalog, ns, os_tag);
}

}  // namespace gpuops::simulator
