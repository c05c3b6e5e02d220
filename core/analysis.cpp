#include "core/analysis.h"

#include <algorithm>

#include "core/placement.h"

namespace gpuops::core {

std::string Report::text() const {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

namespace {

// The DaemonSet of the operand in this state, or nullptr.
const DaemonSet* find_ds(const ClusterState& state, const std::string& name) {
  for (const auto& ds : state.daemonsets)
    if (ds.metadata.name == name) return &ds;
  return nullptr;
}

// Controlled by a DaemonSet named `ds_name` (and, when that DaemonSet is in
// the state, with its uid: a pod left by an older DaemonSet of the same name
// is not its pod).
bool controlled_by(const Pod& pod, const std::string& ds_name, const DaemonSet* ds) {
  const OwnerReference* ref = pod.metadata.controller_ref();
  if (!ref || ref->kind != "DaemonSet" || ref->name != ds_name) return false;
  if (ds && !ds->metadata.uid.empty() && !ref->uid.empty() && ds->metadata.uid != ref->uid) return false;
  return true;
}

bool counts(const Pod& pod) {
  return !pod.spec.node_name.empty() && pod.status.phase == "Running" && !pod.metadata.deletion_timestamp;
}

std::vector<std::string> sorted_node_names(const ClusterState& state) {
  std::vector<std::string> names;
  for (const auto& n : state.nodes) names.push_back(n.metadata.name);
  std::sort(names.begin(), names.end());
  return names;
}

// For a catalog with `audit: deployed`: the operand's DaemonSet exists and the
// rest of its nodeSelector (every key but the deploy label) matches the node.
bool wanted_by_operator(const DaemonSet* ds, const Operand& op, const Node& node) {
  if (!ds) return false;
  for (const auto& k : node_selector_mismatches(ds->template_.spec.node_selector, node.metadata.labels))
    if (k != op.label) return false;
  return true;
}

}  // namespace

std::vector<const Pod*> present_pods(const ClusterState& state, const Operand& op) {
  std::vector<const Pod*> out;
  const DaemonSet* ds = find_ds(state, op.daemonset);
  for (const auto& p : state.pods)
    if (counts(p) && controlled_by(p, op.daemonset, ds)) out.push_back(&p);
  return out;
}

const Pod* present_pod(const StateIndex& index, const Operand& op, const std::string& node) {
  const DaemonSet* ds = index.daemonset(op.daemonset);
  for (const Pod* p : index.pods_on(node))
    if (p->spec.node_name == node && counts(*p) && controlled_by(*p, op.daemonset, ds)) return p;
  return nullptr;
}

bool operand_present(const StateIndex& index, const Operand& op, const std::string& node) {
  return present_pod(index, op, node) != nullptr;
}

bool operand_present(const ClusterState& state, const Operand& op, const std::string& node) {
  for (const Pod* p : present_pods(state, op))
    if (p->spec.node_name == node) return true;
  return false;
}

Report roster(const Catalog& catalog) {
  Report r;
  for (const auto& o : catalog.operands) r.lines.push_back(o.name + "=" + o.label);
  return r;
}

Report audit(const ClusterState& state, const Catalog& catalog) {
  Report r;
  std::vector<const Node*> nodes;
  for (const auto& n : state.nodes) nodes.push_back(&n);
  std::sort(nodes.begin(), nodes.end(),
            [](const Node* a, const Node* b) { return a->metadata.name < b->metadata.name; });
  // Present (operand, node) pairs, computed once.
  std::vector<std::vector<std::string>> present(catalog.operands.size());
  std::vector<const DaemonSet*> deployed(catalog.operands.size());
  for (size_t i = 0; i < catalog.operands.size(); ++i) {
    deployed[i] = find_ds(state, catalog.operands[i].daemonset);
    for (const Pod* p : present_pods(state, catalog.operands[i])) present[i].push_back(p->spec.node_name);
    std::sort(present[i].begin(), present[i].end());
  }
  for (const Node* n : nodes) {
    bool gap = false;
    for (size_t i = 0; i < catalog.operands.size(); ++i) {
      auto it = n->metadata.labels.find(catalog.operands[i].label);
      if (it == n->metadata.labels.end() || it->second != "true") continue;
      if (catalog.audit_deployed_only && !wanted_by_operator(deployed[i], catalog.operands[i], *n)) continue;
      if (!std::binary_search(present[i].begin(), present[i].end(), n->metadata.name)) {
        r.lines.push_back(n->metadata.name + " MISSING " + catalog.operands[i].name);
        gap = true;
      }
    }
    if (!gap) r.lines.push_back(n->metadata.name + " OK");
    if (gap) r.exit_code = 1;
  }
  return r;
}

Report order_check(const ClusterState& state, const Catalog& catalog, const std::string& node) {
  const Operand* dp = catalog.by_name("device-plugin");
  const Operand* tk = catalog.by_name("container-toolkit");
  if (!dp || !tk)
    throw InputError("", 0, "operands",
                     "the operand catalog needs operands named \"device-plugin\" and \"container-toolkit\" for the "
                     "order check");
  Report r;
  if (operand_present(state, *dp, node) && !operand_present(state, *tk, node)) {
    r.lines.push_back("device-plugin-without-toolkit");
    r.exit_code = 1;
  } else {
    r.lines.push_back("ok");
  }
  return r;
}

Report matrix(const ClusterState& state, const Catalog& catalog) {
  Report r;
  // Nodes where each operand is present, sorted, computed once (as in audit):
  // a scan of the present pods per (node, operand) grew with the square of the
  // cluster.
  std::vector<std::vector<std::string>> present(catalog.operands.size());
  for (size_t i = 0; i < catalog.operands.size(); ++i) {
    for (const Pod* p : present_pods(state, catalog.operands[i])) present[i].push_back(p->spec.node_name);
    std::sort(present[i].begin(), present[i].end());
  }
  for (const auto& name : sorted_node_names(state)) {
    std::string line = name;
    for (size_t i = 0; i < catalog.operands.size(); ++i) {
      bool yes = std::binary_search(present[i].begin(), present[i].end(), name);
      line += " " + catalog.operands[i].column + "=" + (yes ? "yes" : "no");
    }
    r.lines.push_back(line);
  }
  // TOTAL_PODS: Running DaemonSet pods in the namespace, by the same rule
  // (bound, Running, not being deleted), whichever DaemonSet controls them.
  int total = 0;
  for (const auto& p : state.pods) {
    const OwnerReference* ref = p.metadata.controller_ref();
    if (ref && ref->kind == "DaemonSet" && counts(p)) ++total;
  }
  r.lines.push_back("TOTAL_PODS=" + std::to_string(total));
  return r;
}

}  // namespace gpuops::core
