#include "core/analysis/analysis.h"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/terminal.h"
#include "core/gpu_operator/gpu_node_rules.h"
#include "core/gpu_operator/nfd.h"
#include "core/gpu_operator/operator_install.h"
#include "core/kube/placement.h"
#include "core/kube/pod_status.h"

namespace gpuops::core {

std::string Report::text() const {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

namespace {

// Bound, Running, not being deleted: the present rule without the operand.
bool counts(const Pod& pod) {
  return !pod.spec.node_name.empty() && pod.status.phase == "Running" && !pod.metadata.deletion_timestamp;
}

// The present rule's health half: in operator mode also Ready.
bool healthy(const Catalog& catalog, const Pod& pod) {
  return counts(pod) && (!catalog.operator_mode || pod.is_ready());
}

std::vector<const Node*> sorted_nodes(const ClusterState& state) {
  std::vector<const Node*> nodes;
  for (const auto& n : state.nodes) nodes.push_back(&n);
  std::sort(nodes.begin(), nodes.end(),
            [](const Node* a, const Node* b) { return a->metadata.name < b->metadata.name; });
  return nodes;
}

// For a catalog with `audit: deployed`: one of the operand's DaemonSets exists
// and the rest of its nodeSelector (every key but the deploy label) matches
// the node.
bool wanted_by_operator(const std::vector<const DaemonSet*>& dss, const Operand& op, const Node& node) {
  for (const DaemonSet* ds : dss)
    if (selects_node_but_label(*ds, op, node)) return true;
  return false;
}

// Whether the operator counts the node a GPU node whose operands run:
// hasGPULabels (NFD's GPU labels; without them the labeller sets
// gpu.present=false and removes the state labels, whatever gpu.present said)
// and not gpu.deploy.operands=false (removeAllGPUStateLabels), labelGPUNodes'
// tests (state_manager.go).
bool operator_gpu_node(const Node& node) {
  if (!is_gpu_node(node)) return false;
  const Labels& l = node.metadata.labels;
  auto operands = l.find("nvidia.com/gpu.deploy.operands");
  return operands == l.end() || operands->second != "false";
}

// Why the deploy label `key` keeps its operand off the node although the
// operator sets it there: "no deploy label", or `label "<value>"` for "" and
// any value but "true", "false", "pre-installed" and the helpers' paused
// ones (core::classify_label); nullopt when it does not block.
std::optional<std::string> blocking_label(const Labels& labels, const std::string& key) {
  auto it = labels.find(key);
  if (it == labels.end()) return std::string("no deploy label");
  switch (classify_label(it->second)) {
    case LabelClass::kEmpty:
    case LabelClass::kOther: return "label " + go_quote(it->second);
    default: return std::nullopt;
  }
}

// Per operand of the catalog: its DaemonSets, and the sorted names of the
// nodes where it is present (computed once: a scan of the pods per (node,
// operand) grew with the square of the cluster).
// One pass over the pods, each judged healthy once (`state` must outlive
// it: the names are its pods').
struct Presence {
  std::vector<std::vector<const DaemonSet*>> daemonsets;
  std::vector<std::vector<std::string_view>> nodes;

  Presence(const ClusterState& state, const Catalog& catalog) {
    const size_t n = catalog.operands.size();
    for (const auto& op : catalog.operands) daemonsets.push_back(operand_daemonsets(state, catalog, op));
    nodes.resize(n);
    for (const auto& p : state.pods) {
      if (!healthy(catalog, p)) continue;
      for (size_t i = 0; i < n; ++i)
        if (pod_of_operand(catalog, catalog.operands[i], daemonsets[i], p)) nodes[i].push_back(p.spec.node_name);
    }
    for (auto& where : nodes) std::sort(where.begin(), where.end());
  }
  bool present(size_t op, const std::string& node) const {
    return std::binary_search(nodes[op].begin(), nodes[op].end(), std::string_view(node));
  }
};

}  // namespace

std::vector<const Pod*> present_pods(const ClusterState& state, const Catalog& catalog, const Operand& op) {
  std::vector<const Pod*> out;
  auto dss = operand_daemonsets(state, catalog, op);
  for (const auto& p : state.pods)
    if (healthy(catalog, p) && pod_of_operand(catalog, op, dss, p)) out.push_back(&p);
  return out;
}

const Pod* present_pod(const StateIndex& index, const Catalog& catalog, const Operand& op, const std::string& node) {
  return operand_pod_on(index, catalog, op, operand_daemonsets(index.state(), catalog, op), node,
                        [&](const Pod& p) { return healthy(catalog, p); });
}

bool operand_present(const StateIndex& index, const Catalog& catalog, const Operand& op, const std::string& node) {
  return present_pod(index, catalog, op, node) != nullptr;
}

bool operand_present(const ClusterState& state, const Catalog& catalog, const Operand& op, const std::string& node) {
  for (const Pod* p : present_pods(state, catalog, op))
    if (p->spec.node_name == node) return true;
  return false;
}

Report roster(const Catalog& catalog) {
  Report r;
  for (const auto& o : catalog.operands) r.lines.push_back(o.name + "=" + o.label);
  return r;
}

AuditResult audit_result(const ClusterState& state, const Catalog& catalog) {
  AuditResult r;
  const Presence presence(state, catalog);
  std::optional<StateIndex> index;  // operator mode only: the pods of a node with a gap
  if (catalog.operator_mode) index.emplace(state);
  for (const Node* n : sorted_nodes(state)) {
    AuditNode an{n->metadata.name, {}, {}, {}};
    // Operator mode: the deploy labels the operator sets on this node, where
    // it counts the node a GPU node and the operands are not turned off.
    std::vector<std::string> wanted_labels;
    if (catalog.operator_mode && operator_gpu_node(*n)) wanted_labels = expected_deploy_labels(*n, catalog);
    for (size_t i = 0; i < catalog.operands.size(); ++i) {
      const Operand& op = catalog.operands[i];
      auto it = n->metadata.labels.find(op.label);
      if (std::find(wanted_labels.begin(), wanted_labels.end(), op.label) != wanted_labels.end()) {
        if (std::optional<std::string> blocked = blocking_label(n->metadata.labels, op.label);
            blocked && wanted_by_operator(presence.daemonsets[i], op, *n)) {
          an.checked.push_back(op.name);
          an.gaps.push_back(AuditGap{op.name, AuditGap::Verdict::kBlocked, *blocked, ""});
          continue;
        }
      }
      if (it == n->metadata.labels.end()) continue;
      bool paused = false;
      if (it->second != "true") {
        LabelClass cls = classify_label(it->second);
        paused = catalog.operator_mode &&
                 (cls == LabelClass::kPausedForDriverUpgrade || cls == LabelClass::kPausedForMigChange ||
                  cls == LabelClass::kPausedForVgpuChange);
        if (!paused) continue;
      }
      if (catalog.audit_deployed_only && !wanted_by_operator(presence.daemonsets[i], op, *n)) continue;
      an.checked.push_back(op.name);
      if (paused) {
        an.gaps.push_back(AuditGap{op.name, AuditGap::Verdict::kPaused, it->second, ""});
        continue;
      }
      if (presence.present(i, n->metadata.name)) continue;
      AuditGap gap{op.name, AuditGap::Verdict::kMissing, "", ""};
      if (index) {
        if (const Pod* p = operand_pod_on(*index, catalog, op, presence.daemonsets[i], n->metadata.name)) {
          gap.verdict = AuditGap::Verdict::kNotReady;
          gap.status = pod_status_column(*p);
          gap.pod = p->metadata.name;
        }
      }
      an.gaps.push_back(std::move(gap));
    }
    if (catalog.operator_mode && !has_nfd_labels(*n) && !unlabelled_gpu_signs(*n).empty())
      an.unlabelled = nfd_gap(*index, *n).why;
    if (!an.gaps.empty() || !an.unlabelled.empty()) r.exit_code = 1;
    r.nodes.push_back(std::move(an));
  }
  return r;
}

Report render_audit(const AuditResult& result) {
  Report r;
  for (const auto& n : result.nodes) {
    if (!n.unlabelled.empty()) r.lines.push_back(n.node + " UNLABELLED (" + n.unlabelled + ")");
    for (const auto& g : n.gaps) {
      if (g.verdict == AuditGap::Verdict::kMissing)
        r.lines.push_back(n.node + " MISSING " + g.operand);
      else if (g.verdict == AuditGap::Verdict::kNotReady)
        r.lines.push_back(n.node + " NOT-READY " + g.operand + " (" + g.status + ")");
      else if (g.verdict == AuditGap::Verdict::kPaused)
        r.lines.push_back(n.node + " PAUSED " + g.operand + " (" + g.status + ")");
      else
        r.lines.push_back(n.node + " BLOCKED " + g.operand + " (" + g.status + ")");
    }
    if (n.gaps.empty() && n.unlabelled.empty()) r.lines.push_back(n.node + " OK");
  }
  r.exit_code = result.exit_code;
  return r;
}

Report audit(const ClusterState& state, const Catalog& catalog) { return render_audit(audit_result(state, catalog)); }

Report order_check(const ClusterState& state, const Catalog& catalog, const std::string& node) {
  const Operand* dp = catalog.by_name("device-plugin");
  const Operand* tk = catalog.by_name("container-toolkit");
  if (!dp || !tk)
    throw InputError("", 0, "operands",
                     "the operand catalog needs operands named \"device-plugin\" and \"container-toolkit\" for the "
                     "order check");
  Report r;
  if (operand_present(state, catalog, *dp, node) && !operand_present(state, catalog, *tk, node)) {
    r.lines.push_back("device-plugin-without-toolkit");
    r.exit_code = 1;
  } else {
    r.lines.push_back("ok");
  }
  return r;
}

const char* matrix_cell_text(MatrixCell cell) {
  switch (cell) {
    case MatrixCell::kYes: return "yes";
    case MatrixCell::kNo: return "no";
    case MatrixCell::kNotReady: return "not-ready";
  }
  return "no";
}

MatrixResult matrix_result(const ClusterState& state, const Catalog& catalog, bool only_deployed) {
  MatrixResult r;
  const Presence presence(state, catalog);
  std::vector<size_t> shown;
  for (size_t i = 0; i < catalog.operands.size(); ++i) {
    if (only_deployed && catalog.operator_mode && presence.daemonsets[i].empty()) continue;
    shown.push_back(i);
    r.columns.push_back(&catalog.operands[i]);
    r.headers.push_back(catalog.operator_mode ? catalog.operands[i].name : catalog.operands[i].column);
  }
  std::optional<StateIndex> index;
  if (catalog.operator_mode) index.emplace(state);
  for (const Node* n : sorted_nodes(state)) {
    MatrixRow row{n->metadata.name, {}};
    for (size_t i : shown) {
      MatrixCell cell = presence.present(i, n->metadata.name) ? MatrixCell::kYes : MatrixCell::kNo;
      if (cell == MatrixCell::kNo && index &&
          operand_pod_on(*index, catalog, catalog.operands[i], presence.daemonsets[i], n->metadata.name))
        cell = MatrixCell::kNotReady;
      row.cells.push_back(cell);
    }
    r.rows.push_back(std::move(row));
  }
  // TOTAL_PODS: Running DaemonSet pods in the namespace, by the same rule
  // (bound, Running, not being deleted), whichever DaemonSet controls them.
  for (const auto& p : state.pods) {
    const OwnerReference* ref = p.metadata.controller_ref();
    if (ref && ref->kind == "DaemonSet" && counts(p)) ++r.total_pods;
  }
  return r;
}

Report render_matrix(const MatrixResult& result) {
  Report r;
  for (const auto& row : result.rows) {
    std::string line = row.node;
    for (size_t c = 0; c < result.columns.size(); ++c)
      line += " " + result.headers[c] + "=" + matrix_cell_text(row.cells[c]);
    r.lines.push_back(line);
  }
  r.lines.push_back("TOTAL_PODS=" + std::to_string(result.total_pods));
  return r;
}

Report matrix(const ClusterState& state, const Catalog& catalog) {
  return render_matrix(matrix_result(state, catalog));
}

}  // namespace gpuops::core
