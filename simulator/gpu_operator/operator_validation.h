// simulator/gpu_operator/operator_validation.h: internal to simulator/. The GPU
// Operator's validation gates, as the simulated kubelet (profile kubelet)
// runs an operand pod's init containers: each completes only when what it
// validates is there on the node, in order, so a broken driver holds the
// toolkit, the validator and everything behind toolkit-ready in Init as on a
// real node (docs/reference/gpu-operator.md §3). Mirrors NVIDIA/gpu-operator
// cmd/nvidia-validator/main.go (the driver, toolkit and plugin components,
// and the files they write under /run/nvidia/validations) and the
// toolkit-validation init scripts of the assets (`until [ -f
// .../toolkit-ready ]`):
//  * driver-validation: the node's driver pod (app.kubernetes.io/component
//    nvidia-driver) is Ready, or the node's driver is the host's
//    (nvidia.com/gpu.deploy.driver=pre-installed, or `host_driver`: a driver
//    installed on the machine, which the validator finds under /host);
//  * toolkit-validation of the operator validator: the toolkit pod is Ready
//    (it runs nvidia-smi through the nvidia runtime the toolkit configured);
//  * toolkit-validation of every other operand: toolkit-ready exists, which
//    only the validator's own toolkit-validation writes: the validator pod on
//    the node has passed it;
//  * plugin-validation: the device plugin pod is Ready (nvidia.com/gpu in
//    the node's capacity);
//  * any other init container (cuda-validation, config-manager-init,
//    k8s-driver-manager, the sandbox validations): completes at once.
// An init container the caller's `played` answers for (k8s-driver-manager,
// whose process driver_manager.h plays) completes when it says so.
// A pod found nowhere on the node does not count. Not in the kwok profile:
// KWOK runs no init container (measured: every pod Running and Ready at
// once, docs/reference/gpu-operator-live.md).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/gpu_operator/operands.h"
#include "core/model/model.h"
#include "simulator/kube/kubelet.h"
#include "simulator/store/object_store.h"

namespace gpuops::simulator::internal {

// Whether `pod` is one of `op`'s (null: no): its app.kubernetes.io/component
// label is op.component, or it carries op's selector labels (op.selector,
// else app=<op.app>).
bool is_operand_pod(const PodRecord& pod, const core::Operand* op);

// How many of `pod`'s init containers, from the first, have what they
// validate on `node`, whose bound pods are `node_pods`. `catalog` names the
// operands' pod labels (the release's). Returns the number of init
// containers for a pod that is not an operand of the catalog.
// `played(c)`: nullopt for a container it does not play, else whether its
// run has completed (may be empty: none played).
size_t validated_init_containers(const PodRecord& pod, const core::Node& node,
                                 const std::vector<const PodRecord*>& node_pods, const core::Catalog& catalog,
                                 bool host_driver,
                                 const std::function<std::optional<bool>(const core::Container&)>& played = {});

// The gates above for the operands of one catalog (the installed operator's),
// as the kubelet asks them (Kubelet::set_init_gates). The catalog must
// outlive the gates' use.
class ValidationGates : public InitContainerGates {
 public:
  explicit ValidationGates(const core::Catalog& catalog) : catalog_(catalog) {}
  size_t passed(const PodRecord& pod, const core::Node& node, const std::vector<const PodRecord*>& node_pods,
                bool host_driver,
                const std::function<std::optional<bool>(const core::Container&)>& played) const override {
    return validated_init_containers(pod, node, node_pods, catalog_, host_driver, played);
  }

 private:
  const core::Catalog& catalog_;
};

}  // namespace gpuops::simulator::internal
