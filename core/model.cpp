#include "core/model.h"

namespace gpuops::core {

const OwnerReference* ObjectMeta::controller_ref() const {
  for (const auto& r : owner_references)
    if (r.controller) return &r;
  return nullptr;
}

std::string Node::ready_status() const {
  for (const auto& c : conditions)
    if (c.type == "Ready") return c.status;
  return "";
}

// Mirrors util.GetTargetNodeName (pkg/controller/daemon/util).
std::string Pod::target_node() const {
  if (!spec.node_name.empty()) return spec.node_name;
  if (!spec.required_node_affinity) return "";
  const auto& terms = *spec.required_node_affinity;
  if (terms.size() != 1) return "";
  for (const auto& f : terms[0].match_fields) {
    if (f.key == "metadata.name" && f.op == "In" && f.values.size() == 1) return f.values[0];
  }
  return "";
}

const PodCondition* Pod::condition(const std::string& type) const {
  for (const auto& c : status.conditions)
    if (c.type == type) return &c;
  return nullptr;
}

bool Pod::is_ready() const {
  const PodCondition* c = condition("Ready");
  return c && c->status == "True";
}

}  // namespace gpuops::core
