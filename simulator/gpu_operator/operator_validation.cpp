// The GPU Operator's validation gates; see operator_validation.h.
#include "simulator/gpu_operator/operator_validation.h"

#include "core/gpu_operator/gpu_node_rules.h"

namespace gpuops::simulator::internal {

namespace {

bool has_labels(const PodRecord& p, const std::vector<std::pair<std::string, std::string>>& want) {
  const auto& labels = p.shared_meta().labels;
  for (const auto& [k, v] : want) {
    auto it = labels.find(k);
    if (it == labels.end() || it->second != v) return false;
  }
  return !want.empty();
}

// The pod labels that select the operand's pods (its selector, else app).
std::vector<std::pair<std::string, std::string>> selector_of(const core::Operand& op) {
  if (!op.selector.empty()) return op.selector;
  return {{"app", op.app}};
}

}  // namespace

bool is_operand_pod(const PodRecord& p, const core::Operand* op) {
  if (!op) return false;
  if (!op->component.empty() && has_labels(p, {{"app.kubernetes.io/component", op->component}})) return true;
  return has_labels(p, selector_of(*op));
}

namespace {

const PodRecord* operand_pod(const std::vector<const PodRecord*>& pods, const core::Operand* op) {
  for (const PodRecord* p : pods)
    if (!p->deletion_timestamp && is_operand_pod(*p, op)) return p;
  return nullptr;
}

bool ready(const PodRecord* p) { return p && p->is_ready(); }

// Whether the pod's init container `name` has completed (terminated 0).
bool init_done(const PodRecord* p, const std::string& name) {
  if (!p) return false;
  for (const auto& s : p->status->init_container_statuses)
    if (s.name == name) return s.state == "terminated" && s.exit_code.value_or(1) == 0;
  return false;
}

}  // namespace

// mirrors the validator's components (cmd/nvidia-validator/main.go) and the
// assets' toolkit-validation scripts
size_t validated_init_containers(const PodRecord& pod, const core::Node& node,
                                 const std::vector<const PodRecord*>& node_pods, const core::Catalog& catalog,
                                 bool host_driver,
                                 const std::function<std::optional<bool>(const core::Container&)>& played) {
  const auto& inits = pod.shared_spec().init_containers;
  const core::Operand* validator = catalog.by_name("operator-validator");
  const core::Operand* driver = catalog.by_name("driver");
  const core::Operand* toolkit = catalog.by_name("container-toolkit");
  const core::Operand* plugin = catalog.by_name("device-plugin");
  bool operand = false;
  for (const auto& op : catalog.operands) operand = operand || is_operand_pod(pod, &op);
  if (!operand) return inits.size();
  const bool is_validator = is_operand_pod(pod, validator);
  size_t done = 0;
  for (const auto& c : inits) {
    bool ok = true;
    if (std::optional<bool> done = played ? played(c) : std::nullopt) {
      ok = *done;
    } else if (c.name == "driver-validation") {
      auto v = core::node_label(node, core::kDriverDeployLabel);
      ok = ready(operand_pod(node_pods, driver)) || (v && *v == "pre-installed") || host_driver;
    } else if (c.name == "toolkit-validation") {
      ok = is_validator ? ready(operand_pod(node_pods, toolkit))
                        : init_done(operand_pod(node_pods, validator), "toolkit-validation");
    } else if (c.name == "plugin-validation") {
      ok = ready(operand_pod(node_pods, plugin));
    }
    if (!ok) break;
    ++done;
  }
  return done;
}

}  // namespace gpuops::simulator::internal
