#include "simulator/gpu_operator/operator_render.h"

#include "simulator/gpu_operator/operator_object_controls.h"

namespace gpuops::simulator {

core::DaemonSet rendered_daemonset(const core::Operand& op, const core::ClusterPolicy& policy,
                                   const core::Catalog& catalog, const std::string& ns, const std::string& os_tag) {
  return internal::render_operand_daemonset(op, policy, catalog, ns, os_tag);
}

}  // namespace gpuops::simulator
