#include "core/model/model.h"

#include <algorithm>

namespace gpuops::core {

Labels LabelsBuilder::take() {
  Labels::sequence_type pairs = std::move(pairs_);
  pairs_.clear();
  // Stable, so that of a key's pairs the last added stays last; keep that one.
  std::stable_sort(pairs.begin(), pairs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  size_t out = 0;
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (i + 1 < pairs.size() && pairs[i + 1].first == pairs[i].first) continue;
    if (out != i) pairs[out] = std::move(pairs[i]);
    ++out;
  }
  pairs.erase(pairs.begin() + static_cast<std::ptrdiff_t>(out), pairs.end());
  Labels labels;
  labels.adopt_sequence(boost::container::ordered_unique_range, std::move(pairs));
  return labels;
}

const char* selector_operator_name(SelectorOperator op) {
  switch (op) {
    case SelectorOperator::kIn: return "In";
    case SelectorOperator::kNotIn: return "NotIn";
    case SelectorOperator::kExists: return "Exists";
    case SelectorOperator::kDoesNotExist: return "DoesNotExist";
    case SelectorOperator::kGt: return "Gt";
    case SelectorOperator::kLt: return "Lt";
    case SelectorOperator::kUnknown: return "";
  }
  return "";
}

SelectorOperator parse_selector_operator(const std::string& text) {
  for (SelectorOperator op : {SelectorOperator::kIn, SelectorOperator::kNotIn, SelectorOperator::kExists,
                              SelectorOperator::kDoesNotExist, SelectorOperator::kGt, SelectorOperator::kLt})
    if (text == selector_operator_name(op)) return op;
  return SelectorOperator::kUnknown;
}

std::string Requirement::op_text() const {
  return op == SelectorOperator::kUnknown ? unknown_op : selector_operator_name(op);
}

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
    if (f.key == "metadata.name" && f.op == SelectorOperator::kIn && f.values.size() == 1) return f.values[0];
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

// mirrors GetScaledValueFromIntOrPercent, apimachinery pkg/util/intstr/intstr.go:
// ceil or floor of percent * total / 100.
int scaled_value(const IntOrPercent& v, int total, bool round_up) {
  if (!v.percent) return v.value;
  int64_t product = static_cast<int64_t>(v.value) * total;
  if (round_up) return static_cast<int>((product + 99) / 100);
  return static_cast<int>(product / 100);
}

bool in_state_part(const Pod& pod, const std::set<std::string>& nodes) {
  std::string target = pod.target_node();
  return target.empty() || nodes.count(target) > 0;
}

ClusterState state_part(const ClusterState& state, const std::set<std::string>& nodes) {
  ClusterState out;
  out.namespace_ = state.namespace_;
  out.observed_at = state.observed_at;
  for (const auto& n : state.nodes)
    if (nodes.count(n.metadata.name)) out.nodes.push_back(n);
  for (const auto& p : state.pods)
    if (in_state_part(p, nodes)) out.pods.push_back(p);
  out.daemonsets = state.daemonsets;
  out.cluster_policies = state.cluster_policies;
  out.nvidia_drivers = state.nvidia_drivers;
  if (state.gpu_workloads) {
    out.gpu_workloads.emplace();
    for (const auto& p : *state.gpu_workloads)
      if (in_state_part(p, nodes)) out.gpu_workloads->push_back(p);
  }
  return out;
}

}  // namespace gpuops::core
