// What a change would do; see plan.h.
#include "core/plan/plan.h"

#include <boost/json/serialize.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "core/diagnose/diagnose.h"
#include "core/gpu_operator/operator_install.h"
#include "core/kube/placement.h"
#include "core/kube/pod_status.h"

namespace gpuops::core {

namespace {

constexpr const char* kTemplateGeneration = "pod-template-generation";

bool live(const Pod& p) {
  return !p.metadata.deletion_timestamp && p.status.phase != "Succeeded" && p.status.phase != "Failed";
}

// Nodes and DaemonSets of a state by name.
struct ByName {
  explicit ByName(const ClusterState& s) {
    for (const auto& n : s.nodes) nodes.emplace(n.metadata.name, &n);
    for (const auto& d : s.daemonsets) daemonsets.emplace(d.metadata.name, &d);
  }
  const Node* node(const std::string& name) const {
    auto it = nodes.find(name);
    return it == nodes.end() ? nullptr : it->second;
  }
  const DaemonSet* daemonset(const std::string& name) const {
    auto it = daemonsets.find(name);
    return it == daemonsets.end() ? nullptr : it->second;
  }
  std::unordered_map<std::string, const Node*> nodes;
  std::unordered_map<std::string, const DaemonSet*> daemonsets;
};

// The catalog operand DaemonSet `name` (`d`, when known) runs, by the rule
// every analysis uses (core::is_operand_daemonset).
std::string operand_of(const Catalog& catalog, const DaemonSet* d, const std::string& name) {
  if (const Operand* op = catalog.by_daemonset(name)) return op->name;
  if (!d) return "";
  for (const auto& op : catalog.operands)
    if (is_operand_daemonset(catalog, op, *d)) return op.name;
  return "";
}

std::string joined(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

std::string label_of(const Pod& p, const char* key) {
  auto it = p.metadata.labels.find(key);
  return it == p.metadata.labels.end() ? "" : it->second;
}

// Live pods by (node, DaemonSet name); pods no DaemonSet controls under
// DaemonSet "".
using PodKey = std::pair<std::string, std::string>;
std::map<PodKey, std::vector<const Pod*>> pods_by_key(const ClusterState& s) {
  std::map<PodKey, std::vector<const Pod*>> out;
  for (const auto& p : s.pods) {
    if (!live(p)) continue;
    const OwnerReference* ref = p.metadata.controller_ref();
    std::string ds = ref && ref->kind == "DaemonSet" ? ref->name : "";
    // A pod not bound yet counts on the node it targets (the DaemonSet
    // controller pins it there by node affinity).
    out[{p.spec.node_name.empty() ? p.target_node() : p.spec.node_name, ds}].push_back(&p);
  }
  return out;
}

std::string plural(size_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string shown(const std::optional<std::string>& v) { return v ? "\"" + *v + "\"" : "(absent)"; }

std::map<std::pair<std::string, std::string>, MatrixCell> cells_of(const MatrixResult& m) {
  std::map<std::pair<std::string, std::string>, MatrixCell> out;
  for (const auto& row : m.rows)
    for (size_t i = 0; i < m.columns.size() && i < row.cells.size(); ++i)
      out[{row.node, m.columns[i]->name}] = row.cells[i];
  return out;
}

using FindingKey = std::tuple<std::string, std::string, std::string>;
std::map<FindingKey, const Finding*> findings_by_key(const std::vector<Finding>& fs) {
  std::map<FindingKey, const Finding*> out;
  for (const auto& f : fs)
    if (f.severity != Severity::kInfo) out.emplace(FindingKey{f.node, f.operand, f.name}, &f);
  return out;
}

}  // namespace

std::string label_writer(const std::string& key, bool by_change) {
  if (by_change) return "change";
  return key.starts_with("nvidia.com/") ? "operator" : "controller";
}

namespace {

// plan_changes' body: `whole_matrix_before` is the matrix of the whole state
// before the change, nullopt when `before` is that whole state.
PlanResult plan_of(std::optional<MatrixResult> whole_matrix_before, const ClusterState& before,
                   const ClusterState& after, const Catalog& catalog,
                   const std::set<std::pair<std::string, std::string>>& direct);

}  // namespace

PlanResult plan_changes(const ClusterState& before, const ClusterState& after, const Catalog& catalog,
                        const std::set<std::pair<std::string, std::string>>& direct) {
  return plan_of(std::nullopt, before, after, catalog, direct);
}

PlanResult plan_changes(const ClusterState& whole_before, const ClusterState& before, const ClusterState& after,
                        const Catalog& catalog, const std::set<std::pair<std::string, std::string>>& direct) {
  if (&whole_before == &before) return plan_of(std::nullopt, before, after, catalog, direct);
  return plan_of(matrix_result(whole_before, catalog, true), before, after, catalog, direct);
}

PlanResult plan_changes(MatrixResult whole_matrix_before, const ClusterState& before_part,
                        const ClusterState& after_part, const Catalog& catalog,
                        const std::set<std::pair<std::string, std::string>>& direct) {
  return plan_of(std::move(whole_matrix_before), before_part, after_part, catalog, direct);
}

namespace {

// Nodes added and removed, and the labels that differ on the nodes of
// both states or that an added node carries.
void plan_nodes_and_labels(PlanResult& plan, const ClusterState& before, const ClusterState& after,
                           const ByName& in_before, const ByName& in_after,
                           const std::set<std::pair<std::string, std::string>>& direct) {
  for (const auto& n : after.nodes)
    if (!in_before.node(n.metadata.name)) plan.nodes_added.push_back(n.metadata.name);
  for (const auto& n : before.nodes) {
    const Node* a = in_after.node(n.metadata.name);
    if (!a) {
      plan.nodes_removed.push_back(n.metadata.name);
      continue;
    }
    std::set<std::string> keys;
    for (const auto& [k, v] : n.metadata.labels) keys.insert(k);
    for (const auto& [k, v] : a->metadata.labels) keys.insert(k);
    for (const auto& k : keys) {
      auto b = n.metadata.labels.find(k);
      auto f = a->metadata.labels.find(k);
      std::optional<std::string> bv, av;
      if (b != n.metadata.labels.end()) bv = b->second;
      if (f != a->metadata.labels.end()) av = f->second;
      if (bv == av) continue;
      bool direct_write = direct.count({n.metadata.name, k}) > 0;
      plan.labels.push_back({n.metadata.name, k, bv, av, direct_write, label_writer(k, direct_write), {}, false});
    }
  }
  std::sort(plan.nodes_added.begin(), plan.nodes_added.end());
  std::sort(plan.nodes_removed.begin(), plan.nodes_removed.end());
  // A node added: every label it carries after the change, from (absent);
  // those the change did not write come from controllers or the operator.
  for (const auto& n : after.nodes)
    if (std::binary_search(plan.nodes_added.begin(), plan.nodes_added.end(), n.metadata.name))
      for (const auto& [k, v] : n.metadata.labels)
        plan.labels.push_back({n.metadata.name,
                               k,
                               std::nullopt,
                               v,
                               direct.count({n.metadata.name, k}) > 0,
                               label_writer(k, direct.count({n.metadata.name, k}) > 0),
                               {},
                               false});
  std::sort(plan.labels.begin(), plan.labels.end(), [](const LabelChange& x, const LabelChange& y) {
    return std::tie(x.node, x.key) < std::tie(y.node, y.key);
  });
}

// The pods of one group (node, DaemonSet `ds`, "" for pods no DaemonSet
// controls) before (`was`) and after (`now`): deleted, created or replaced,
// and why.
void plan_pod_group(PlanResult& plan, const std::string& node, const std::string& ds,
                    const std::vector<const Pod*>& was, const std::vector<const Pod*>& now, const ByName& in_before,
                    const ByName& in_after, const Catalog& catalog) {
  const DaemonSet* d_after = ds.empty() ? nullptr : in_after.daemonset(ds);
  const DaemonSet* d_before = ds.empty() ? nullptr : in_before.daemonset(ds);
  const Node* n_after = in_after.node(node);
  const Node* n_before = in_before.node(node);
  const std::string operand = ds.empty() ? "" : operand_of(catalog, d_after ? d_after : d_before, ds);
  auto change = [&](PodChange::Kind kind, const Pod& p, std::string why) {
    // A new pod that would not come up says how it would stay: the
    // scheduler's FitError (a resource, a taint), an init gate.
    if (kind != PodChange::Kind::kDeleted && !p.is_ready()) {
      why += "; it would stay " + pod_status_column(p);
      for (const auto& c : p.status.conditions)
        if (c.type == "PodScheduled" && c.status == "False" && !c.message.empty()) why += " (" + c.message + ")";
    }
    plan.pods.push_back({kind, node, ds, operand, p.metadata.name, std::move(why)});
  };
  if (ds.empty()) {
    // By uid: evicted or new.
    std::set<std::string> now_uids, was_uids;
    for (const Pod* p : now) now_uids.insert(p->metadata.uid);
    for (const Pod* p : was) was_uids.insert(p->metadata.uid);
    for (const Pod* p : was)
      if (!now_uids.count(p->metadata.uid)) change(PodChange::Kind::kDeleted, *p, n_after ? "evicted" : "node deleted");
    for (const Pod* p : now)
      if (!was_uids.count(p->metadata.uid)) change(PodChange::Kind::kCreated, *p, "new pod");
    return;
  }
  if (!was.empty() && now.empty()) {
    std::string why;
    if (!n_after)
      why = "node deleted";
    else if (!d_after)
      why = "DaemonSet deleted";
    else {
      Placement pl = should_run(*d_after, *n_after);
      why = pl.reasons.empty() ? "the DaemonSet still wants the node; its pod is gone" : joined(pl.reasons, "; ");
    }
    for (const Pod* p : was) change(PodChange::Kind::kDeleted, *p, why);
  } else if (was.empty() && !now.empty()) {
    std::string why;
    if (!n_before)
      why = "new node";
    else if (!d_before)
      why = "new DaemonSet";
    else {
      Placement pl = should_run(*d_before, *n_before);
      why = pl.reasons.empty() ? "the DaemonSet now places its pod"
                               : "now placed (before: " + joined(pl.reasons, "; ") + ")";
    }
    for (const Pod* p : now) change(PodChange::Kind::kCreated, *p, why);
  } else {
    std::set<std::string> was_uids;
    for (const Pod* p : was) was_uids.insert(p->metadata.uid);
    for (const Pod* p : now) {
      if (was_uids.count(p->metadata.uid)) continue;
      std::string g0 = label_of(*was.front(), kTemplateGeneration), g1 = label_of(*p, kTemplateGeneration);
      change(PodChange::Kind::kReplaced, *p,
             g0 != g1 ? "template changed (pod-template-generation " + g0 + " -> " + g1 + ")"
                      : "deleted and recreated from the same template");
    }
  }
}

// The pods, group by group (plan_pod_group).
void plan_pods(PlanResult& plan, const ClusterState& before, const ClusterState& after, const ByName& in_before,
               const ByName& in_after, const Catalog& catalog) {
  auto b = pods_by_key(before), a = pods_by_key(after);
  std::set<PodKey> keys;
  for (const auto& [k, v] : b) keys.insert(k);
  for (const auto& [k, v] : a) keys.insert(k);
  // A pod that is there before and after (one uid) changed group only: a
  // DaemonSet deleted with --cascade=orphan leaves its pods running without
  // an owner. It is neither deleted nor created.
  std::set<std::string> uids_before, kept_uids;
  for (const auto& [k, pods] : b)
    for (const Pod* p : pods) uids_before.insert(p->metadata.uid);
  for (const auto& [k, pods] : a)
    for (const Pod* p : pods)
      if (uids_before.count(p->metadata.uid)) kept_uids.insert(p->metadata.uid);
  for (const auto& key : keys) {
    const std::string& node = key.first;
    const std::string& ds = key.second;
    const std::vector<const Pod*> none;
    const std::vector<const Pod*> was_all = b.count(key) ? b.at(key) : none;
    const std::vector<const Pod*> now_all = a.count(key) ? a.at(key) : none;
    // Pods of one uid in both states and the same group are compared below
    // as before; one that moved to another group is left out of both.
    std::set<std::string> here_before, here_after;
    for (const Pod* p : was_all) here_before.insert(p->metadata.uid);
    for (const Pod* p : now_all) here_after.insert(p->metadata.uid);
    std::vector<const Pod*> was, now;
    for (const Pod* p : was_all)
      if (!kept_uids.count(p->metadata.uid) || here_after.count(p->metadata.uid)) was.push_back(p);
    for (const Pod* p : now_all)
      if (!kept_uids.count(p->metadata.uid) || here_before.count(p->metadata.uid)) now.push_back(p);
    if (was.empty() && now.empty()) continue;
    plan_pod_group(plan, node, ds, was, now, in_before, in_after, catalog);
  }
}

// The matrix and the changed cells. The parts' rows replace the whole
// matrix's rows of their nodes (a node's row reads its pods and the
// DaemonSets only); its TOTAL_PODS changes by the parts' difference.
void plan_matrix(PlanResult& plan, std::optional<MatrixResult> whole_matrix_before, const ClusterState& before,
                 const ClusterState& after, const Catalog& catalog) {
  MatrixResult part_before = matrix_result(before, catalog, true);
  MatrixResult part_after = matrix_result(after, catalog, true);
  auto cb = cells_of(part_before), ca = cells_of(part_after);
  if (!whole_matrix_before) {
    plan.matrix_before = std::move(part_before);
    plan.matrix_after = std::move(part_after);
  } else {
    plan.matrix_before = std::move(*whole_matrix_before);
    std::set<std::string> redone;
    for (const auto& row : part_before.rows) redone.insert(row.node);
    for (const auto& row : part_after.rows) redone.insert(row.node);
    plan.matrix_after.columns = part_after.columns;
    plan.matrix_after.headers = part_after.headers;
    plan.matrix_after.total_pods = plan.matrix_before.total_pods - part_before.total_pods + part_after.total_pods;
    auto kept = plan.matrix_before.rows.begin(), end = plan.matrix_before.rows.end();
    for (const auto& row : part_after.rows) {
      for (; kept != end && kept->node < row.node; ++kept)
        if (!redone.count(kept->node)) plan.matrix_after.rows.push_back(*kept);
      plan.matrix_after.rows.push_back(row);
    }
    for (; kept != end; ++kept)
      if (!redone.count(kept->node)) plan.matrix_after.rows.push_back(*kept);
  }
  for (const auto& [k, cell] : ca) {
    auto it = cb.find(k);
    MatrixCell was = it == cb.end() ? MatrixCell::kNo : it->second;
    if (was != cell) plan.cells.push_back({k.first, k.second, was, cell});
  }
  for (const auto& [k, cell] : cb)
    if (!ca.count(k) && cell != MatrixCell::kNo) plan.cells.push_back({k.first, k.second, cell, MatrixCell::kNo});
}

// Findings are per node: only the nodes the change touches can differ
// (a node's findings read its labels, taints and pods, and its operands'
// DaemonSets, whose pods there are compared above).
void plan_findings(PlanResult& plan, const ClusterState& before, const ClusterState& after, const ByName& in_before,
                   const ByName& in_after, const Catalog& catalog) {
  std::set<std::string> touched;
  for (const auto& l : plan.labels) touched.insert(l.node);
  for (const auto& p : plan.pods) touched.insert(p.node);
  for (const auto& c : plan.cells) touched.insert(c.node);
  std::vector<std::string> fb_nodes, fa_nodes;
  for (const auto& n : touched) {
    if (in_before.node(n)) fb_nodes.push_back(n);
    if (in_after.node(n)) fa_nodes.push_back(n);
  }
  std::vector<Finding> fb = fb_nodes.empty() ? std::vector<Finding>{} : diagnose(before, catalog, fb_nodes);
  std::vector<Finding> fa = fa_nodes.empty() ? std::vector<Finding>{} : diagnose(after, catalog, fa_nodes);
  auto kb = findings_by_key(fb), ka = findings_by_key(fa);
  for (const auto& [k, f] : ka)
    if (!kb.count(k)) plan.findings_new.push_back(*f);
  for (const auto& [k, f] : kb)
    if (!ka.count(k)) plan.findings_cleared.push_back(*f);
}

PlanResult plan_of(std::optional<MatrixResult> whole_matrix_before, const ClusterState& before,
                   const ClusterState& after, const Catalog& catalog,
                   const std::set<std::pair<std::string, std::string>>& direct) {
  PlanResult plan;
  const ByName in_before(before), in_after(after);
  // Nodes and labels.
  plan_nodes_and_labels(plan, before, after, in_before, in_after, direct);
  // Pods.
  plan_pods(plan, before, after, in_before, in_after, catalog);
  // The matrix and the findings.
  plan_matrix(plan, std::move(whole_matrix_before), before, after, catalog);
  plan_findings(plan, before, after, in_before, in_after, catalog);
  // The objects behind the pods.
  plan.daemonsets = daemonset_changes(before, after, catalog);
  plan.cluster_policies = cluster_policy_changes(before, after);
  update_plan_summary(plan);
  return plan;
}

}  // namespace

void update_plan_summary(PlanResult& plan) {
  size_t deleted = 0, created = 0, replaced = 0;
  std::set<std::string> deleted_on;
  for (const auto& p : plan.pods) {
    if (p.kind == PodChange::Kind::kDeleted) {
      ++deleted;
      deleted_on.insert(p.node);
    }
    if (p.kind == PodChange::Kind::kCreated) ++created;
    if (p.kind == PodChange::Kind::kReplaced) ++replaced;
  }
  size_t by_operator = 0, by_controllers = 0;
  for (const auto& l : plan.labels) {
    by_operator += l.writer == "operator";
    by_controllers += l.writer == "controller";
  }
  plan.summary = plural(deleted, "pod", "pods") + " deleted on " + plural(deleted_on.size(), "node", "nodes") + ", " +
                 std::to_string(created) + " created, " + std::to_string(replaced) + " replaced, " +
                 plural(by_operator, "label", "labels") + " changed by the operator or its helpers, " +
                 (by_controllers ? plural(by_controllers, "label", "labels") + " by Kubernetes controllers, " : "") +
                 plural(plan.findings_new.size(), "new finding", "new findings") + ", " +
                 std::to_string(plan.findings_cleared.size()) + " cleared";
  // Said only when some change (the summary of a plan that changes no
  // DaemonSet stays as it was).
  if (!plan.daemonsets.empty())
    plan.summary += ", " + plural(plan.daemonsets.size(), "DaemonSet", "DaemonSets") + " created, deleted or changed";
}

void set_label_history(PlanResult& plan, const LabelWrites& writes, const ChangeLabels& change) {
  const std::optional<std::string> kFalse("false");
  auto meant = [&](const LabelChange& l) {
    auto it = change.find({l.node, l.key});
    return it != change.end() ? it->second : l.before;
  };
  std::set<std::pair<std::string, std::string>> seen;
  for (auto& l : plan.labels) {
    seen.insert({l.node, l.key});
    auto it = writes.find({l.node, l.key});
    if (it == writes.end()) continue;
    std::vector<std::optional<std::string>> h{l.before};
    for (const auto& v : it->second)
      if (h.back() != v) h.push_back(v);
    if (h.size() > 2) l.history = std::move(h);
  }
  for (auto& l : plan.labels) l.opt_out_lost = meant(l) == kFalse && l.after != kFalse;
  // Back where it was: net nothing, yet it went and came.
  for (const auto& [key, values] : writes) {
    if (seen.count(key) || values.size() < 2) continue;
    LabelChange l;
    l.node = key.first;
    l.key = key.second;
    l.by_change = change.count(key) > 0;
    l.writer = label_writer(l.key, l.by_change);
    // The value before is the last one, where the label came back to.
    l.before = l.after = values.back();
    l.history.push_back(l.before);
    for (const auto& v : values)
      if (l.history.back() != v) l.history.push_back(v);
    if (l.history.size() < 3) continue;
    l.opt_out_lost = meant(l) == kFalse && l.after != kFalse;
    plan.labels.push_back(std::move(l));
  }
  std::sort(plan.labels.begin(), plan.labels.end(), [](const LabelChange& x, const LabelChange& y) {
    return std::tie(x.node, x.key) < std::tie(y.node, y.key);
  });
  update_plan_summary(plan);
}

namespace {

// Per node its label and pod changes, nodes added and removed first.
void append_node_changes(const PlanResult& plan, std::ostringstream& out) {
  std::set<std::string> nodes;
  for (const auto& l : plan.labels) nodes.insert(l.node);
  for (const auto& p : plan.pods) nodes.insert(p.node);
  for (const auto& n : plan.nodes_added) out << "node " << n << " added\n";
  for (const auto& n : plan.nodes_removed) out << "node " << n << " removed\n";
  for (const auto& node : nodes) {
    out << (node.empty() ? "(no node)" : node) << ":\n";
    for (const auto& l : plan.labels) {
      if (l.node == node) {
        out << "  label " << l.key << ": ";
        if (l.history.empty()) {
          out << shown(l.before) << " -> " << shown(l.after);
        } else {
          for (size_t i = 0; i < l.history.size(); ++i) out << (i ? " -> " : "") << shown(l.history[i]);
        }
        out << (l.writer == "change"     ? " (the change)"
                : l.writer == "operator" ? " (the operator or its helpers)"
                                         : " (a Kubernetes controller)")
            << "\n";
        if (l.opt_out_lost)
          out << "    the opt-out " << l.key << "=false is lost: the operator or its helpers removed it, and "
              << (l.after ? "it is " + shown(l.after) + " now" : std::string("it stays absent")) << "\n";
      }
    }
    for (const auto& p : plan.pods) {
      if (p.node != node) continue;
      const char* sign = p.kind == PodChange::Kind::kCreated ? "+" : p.kind == PodChange::Kind::kDeleted ? "-" : "~";
      const char* verb = p.kind == PodChange::Kind::kCreated   ? "created"
                         : p.kind == PodChange::Kind::kDeleted ? "deleted"
                                                               : "replaced";
      out << "  " << sign << " pod " << p.pod;
      if (!p.daemonset.empty()) out << " (" << (p.operand.empty() ? "daemonset " + p.daemonset : p.operand) << ")";
      out << " " << verb << ": " << p.why << "\n";
    }
  }
}

}  // namespace

std::string render_drift_text(const PlanResult& drift) {
  if (!drift.changes()) return "";
  std::ostringstream out;
  out << "drift: the input is mid-change; without any change its controllers and the operator would do this "
         "(the change below starts from there):\n";
  append_node_changes(drift, out);
  std::string objects;
  append_object_changes_text(drift.daemonsets, drift.cluster_policies, objects);
  out << objects;
  out << "drift: " << drift.summary << "\n";
  return out.str();
}

std::string render_plan_text(const PlanResult& plan) {
  std::ostringstream out;
  append_node_changes(plan, out);
  // The matrix after, changed cells as before->after.
  std::map<std::pair<std::string, std::string>, const CellChange*> changed;
  std::set<std::string_view> changed_rows;
  for (const auto& c : plan.cells) {
    changed[{c.node, c.operand}] = &c;
    changed_rows.insert(c.node);
  }
  out << "matrix after the change (changed cells before->after):\n";
  // A row at a time into one string (a stream's insertions, a few per cell,
  // were most of the plan's text at 15,000 nodes).
  std::string rows;
  for (const auto& row : plan.matrix_after.rows) {
    rows += row.node;
    const bool row_changed = changed_rows.count(row.node) > 0;
    for (size_t i = 0; i < plan.matrix_after.columns.size() && i < row.cells.size(); ++i) {
      const Operand* col = plan.matrix_after.columns[i];
      rows += ' ';
      rows += plan.matrix_after.headers[i];
      rows += '=';
      if (row_changed)
        if (auto it = changed.find({row.node, col->name}); it != changed.end()) {
          rows += matrix_cell_text(it->second->before);
          rows += "->";
        }
      rows += matrix_cell_text(row.cells[i]);
    }
    rows += '\n';
  }
  out << rows;
  std::string objects;
  append_object_changes_text(plan.daemonsets, plan.cluster_policies, objects);
  out << objects;
  if (!plan.findings_new.empty() || !plan.findings_cleared.empty()) {
    out << "findings:\n";
    for (const auto& f : plan.findings_new)
      out << "  + " << f.node << " " << (f.operand.empty() ? "-" : f.operand) << " " << severity_name(f.severity) << " "
          << f.name << ": " << f.reason << "\n";
    for (const auto& f : plan.findings_cleared)
      out << "  - " << f.node << " " << (f.operand.empty() ? "-" : f.operand) << " " << severity_name(f.severity) << " "
          << f.name << ": " << f.reason << "\n";
  }
  out << plan.summary << "\n";
  return out.str();
}

boost::json::object render_plan_json(const PlanResult& plan) {
  namespace json = boost::json;
  json::object o;
  o["summary"] = plan.summary;
  o["changes"] = plan.changes();
  {
    json::object objects = object_changes_json(plan.daemonsets, plan.cluster_policies);
    o["daemonsets"] = std::move(objects["daemonsets"]);
    o["clusterPolicies"] = std::move(objects["clusterPolicies"]);
  }
  json::array pods;
  for (const auto& p : plan.pods) {
    const char* kind = p.kind == PodChange::Kind::kCreated   ? "created"
                       : p.kind == PodChange::Kind::kDeleted ? "deleted"
                                                             : "replaced";
    pods.push_back(json::object{{"kind", kind},
                                {"node", p.node},
                                {"daemonset", p.daemonset},
                                {"operand", p.operand},
                                {"pod", p.pod},
                                {"why", p.why}});
  }
  o["pods"] = std::move(pods);
  json::array labels;
  for (const auto& l : plan.labels) {
    json::object x{{"node", l.node}, {"key", l.key}, {"byChange", l.by_change}, {"writer", l.writer}};
    x["before"] = l.before ? json::value(*l.before) : json::value(nullptr);
    x["after"] = l.after ? json::value(*l.after) : json::value(nullptr);
    if (!l.history.empty()) {
      json::array h;
      for (const auto& v : l.history) h.push_back(v ? json::value(*v) : json::value(nullptr));
      x["history"] = std::move(h);
    }
    if (l.opt_out_lost) x["optOutLost"] = true;
    labels.push_back(std::move(x));
  }
  o["labels"] = std::move(labels);
  json::array added(plan.nodes_added.begin(), plan.nodes_added.end());
  json::array removed(plan.nodes_removed.begin(), plan.nodes_removed.end());
  o["nodesAdded"] = std::move(added);
  o["nodesRemoved"] = std::move(removed);
  auto matrix = [](const MatrixResult& m) {
    json::object rows;
    for (const auto& row : m.rows) {
      json::object cells;
      for (size_t i = 0; i < m.columns.size() && i < row.cells.size(); ++i)
        cells[m.columns[i]->name] = matrix_cell_text(row.cells[i]);
      rows[row.node] = std::move(cells);
    }
    return rows;
  };
  json::array columns;
  for (const Operand* c : plan.matrix_after.columns) columns.push_back(json::value(c->name));
  o["matrix"] = json::object{
      {"columns", std::move(columns)}, {"before", matrix(plan.matrix_before)}, {"after", matrix(plan.matrix_after)}};
  json::array cells;
  for (const auto& c : plan.cells)
    cells.push_back(json::object{{"node", c.node},
                                 {"operand", c.operand},
                                 {"before", matrix_cell_text(c.before)},
                                 {"after", matrix_cell_text(c.after)}});
  o["cells"] = std::move(cells);
  o["findingsNew"] = to_json(plan.findings_new);
  o["findingsCleared"] = to_json(plan.findings_cleared);
  return o;
}

int plan_exit_code(const PlanResult& plan) { return plan.changes() ? 1 : 0; }

}  // namespace gpuops::core
