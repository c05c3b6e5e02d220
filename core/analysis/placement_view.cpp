// core/analysis/placement_view.cpp: see placement_view.h.
#include "core/analysis/placement_view.h"

#include <boost/json.hpp>

#include <algorithm>

#include "core/base/terminal.h"
#include "core/gpu_operator/operator_install.h"
#include "core/kube/placement.h"
#include "core/kube/pod_status.h"
#include "core/model/state_index.h"

namespace gpuops::core {

namespace {

std::string pod_word(const Pod& p) {
  if (p.metadata.deletion_timestamp) return "Terminating";
  return p.status.phase.empty() ? "Pending" : p.status.phase;
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : "; ") + s;
  return out;
}

std::string quoted(const std::string& s) { return boost::json::serialize(boost::json::value(s)); }

}  // namespace

PlacementView placement_view(const ClusterState& state, const Catalog& catalog) {
  PlacementView v;
  v.namespace_ = state.namespace_;
  std::vector<const Node*> nodes;
  for (const auto& n : state.nodes) nodes.push_back(&n);
  std::sort(nodes.begin(), nodes.end(),
            [](const Node* a, const Node* b) { return a->metadata.name < b->metadata.name; });
  for (const Node* n : nodes) {
    ViewNode vn;
    vn.name = n->metadata.name;
    for (const auto& [k, val] : n->metadata.labels)
      if (k.rfind("nvidia.com/", 0) == 0) vn.nvidia_labels[k] = val;
    for (const auto& t : n->taints) vn.taints.push_back(format_taint(t));
    vn.ready = n->ready_status();
    vn.unschedulable = n->unschedulable;
    v.nodes.push_back(std::move(vn));
  }
  StateIndex index(state);
  for (const auto& op : catalog.operands) {
    v.operands.push_back(op.name);
    auto dss = operand_daemonsets(state, catalog, op);
    std::vector<ViewCell> row;
    for (const Node* n : nodes) {
      ViewCell c;
      c.has_daemonset = !dss.empty();
      if (dss.empty()) c.reasons.push_back("no DaemonSet");
      for (const DaemonSet* ds : dss) {
        Placement p = should_run(*ds, *n);
        if (p.should_run) {
          c.wants = true;
          c.reasons.clear();
          break;
        }
        if (c.reasons.empty()) c.reasons = p.reasons;
      }
      // The operand's pod on the node, in any phase.
      if (const Pod* best = operand_pod_on(index, catalog, op, dss, n->metadata.name)) {
        c.pod = pod_word(*best);
        c.status = pod_status_column(*best);
      }
      row.push_back(std::move(c));
    }
    v.cells.push_back(std::move(row));
  }
  return v;
}

std::string render_wide(const PlacementView& view, const std::vector<std::pair<std::string, std::string>>& columns) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header{"NODE", "STATUS"};
  std::vector<long> index;
  for (const auto& [name, head] : columns) {
    header.push_back(head);
    auto it = std::find(view.operands.begin(), view.operands.end(), name);
    index.push_back(it == view.operands.end() ? -1 : it - view.operands.begin());
  }
  rows.push_back(std::move(header));
  for (size_t n = 0; n < view.nodes.size(); ++n) {
    // Every cell written as kubectl's printers write one (WriteEscaped,
    // k8s.io/cli-runtime pkg/printers/terminal.go): a status string from a
    // dump can carry ESC or CR.
    std::vector<std::string> row{escape_terminal(view.nodes[n].name),
                                 node_status_column(view.nodes[n].ready, view.nodes[n].unschedulable)};
    for (long i : index) {
      if (i < 0) {
        row.push_back("-");
        continue;
      }
      const ViewCell& c = view.cells[i][n];
      row.push_back(!c.status.empty() ? escape_terminal(c.status) : c.wants ? "<none>" : "-");
    }
    rows.push_back(std::move(row));
  }
  // text/tabwriter as kubectl's printers.GetNewTabWriter sets it up:
  // minwidth 10, padding 3, ' ' padding; a line's last cell is not aligned.
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& r : rows)
    for (size_t c = 0; c + 1 < r.size(); ++c) width[c] = std::max(width[c], std::max<size_t>(10, r[c].size() + 3));
  std::string out;
  for (const auto& r : rows) {
    for (size_t c = 0; c < r.size(); ++c)
      out += c + 1 < r.size() ? r[c] + std::string(width[c] - r[c].size(), ' ') : r[c];
    out += "\n";
  }
  return out;
}

boost::json::value to_json(const PlacementView& view) {
  boost::json::object o;
  o["namespace"] = view.namespace_;
  boost::json::array ops;
  for (const auto& s : view.operands) ops.emplace_back(s);
  o["operands"] = std::move(ops);
  boost::json::array nodes;
  for (const auto& n : view.nodes) {
    boost::json::object no;
    no["name"] = n.name;
    boost::json::object labels;
    for (const auto& [k, v] : n.nvidia_labels) labels[k] = v;
    no["labels"] = std::move(labels);
    boost::json::array taints;
    for (const auto& t : n.taints) taints.emplace_back(t);
    no["taints"] = std::move(taints);
    no["ready"] = n.ready;
    no["unschedulable"] = n.unschedulable;
    nodes.push_back(std::move(no));
  }
  o["nodes"] = std::move(nodes);
  boost::json::array cells;
  for (const auto& row : view.cells) {
    boost::json::array r;
    for (const auto& c : row) r.push_back(boost::json::object{{"w", c.wants}, {"d", c.has_daemonset}, {"p", c.pod}});
    cells.push_back(std::move(r));
  }
  o["cells"] = std::move(cells);
  return o;
}

std::vector<std::string> view_changes(const PlacementView& before, const PlacementView& after) {
  std::vector<std::string> out;
  auto find_node = [](const PlacementView& v, const std::string& name) -> long {
    auto it = std::lower_bound(v.nodes.begin(), v.nodes.end(), name,
                               [](const ViewNode& n, const std::string& s) { return n.name < s; });
    return it != v.nodes.end() && it->name == name ? it - v.nodes.begin() : -1;
  };
  auto find_op = [](const PlacementView& v, const std::string& name) -> long {
    auto it = std::find(v.operands.begin(), v.operands.end(), name);
    return it == v.operands.end() ? -1 : it - v.operands.begin();
  };
  for (const auto& n : before.nodes)
    if (find_node(after, n.name) < 0) out.push_back(n.name + " node removed");
  for (size_t ni = 0; ni < after.nodes.size(); ++ni) {
    const ViewNode& n = after.nodes[ni];
    long bi = find_node(before, n.name);
    if (bi < 0) {
      out.push_back(n.name + " node added");
      continue;
    }
    const ViewNode& b = before.nodes[bi];
    for (const auto& [k, v] : n.nvidia_labels) {
      auto it = b.nvidia_labels.find(k);
      if (it == b.nvidia_labels.end())
        out.push_back(n.name + " label " + k + "=" + quoted(v) + " (was absent)");
      else if (it->second != v)
        out.push_back(n.name + " label " + k + "=" + quoted(v) + " (was " + quoted(it->second) + ")");
    }
    for (const auto& [k, v] : b.nvidia_labels)
      if (!n.nvidia_labels.count(k)) out.push_back(n.name + " label " + k + " removed (was " + quoted(v) + ")");
    if (b.unschedulable != n.unschedulable) out.push_back(n.name + (n.unschedulable ? " cordoned" : " uncordoned"));
    if (b.ready != n.ready)
      out.push_back(n.name + " Ready=" + n.ready + " (was " + (b.ready.empty() ? "absent" : b.ready) + ")");
    for (const auto& t : n.taints)
      if (std::find(b.taints.begin(), b.taints.end(), t) == b.taints.end()) out.push_back(n.name + " taint added " + t);
    for (const auto& t : b.taints)
      if (std::find(n.taints.begin(), n.taints.end(), t) == n.taints.end())
        out.push_back(n.name + " taint removed " + t);
    for (size_t oi = 0; oi < after.operands.size(); ++oi) {
      long boi = find_op(before, after.operands[oi]);
      if (boi < 0) continue;
      const ViewCell& c = after.cells[oi][ni];
      const ViewCell& p = before.cells[boi][bi];
      std::string who = n.name + " " + after.operands[oi];
      std::string why = c.wants ? "" : ": " + joined(c.reasons);
      if (p.pod != c.pod) {
        if (p.pod == "absent")
          out.push_back(who + " pod created, " + c.pod);
        else if (c.pod == "absent")
          out.push_back(who + " pod deleted" + why);
        else
          out.push_back(who + " pod " + c.pod + " (was " + p.pod + ")" + (c.pod == "Terminating" ? why : ""));
      } else if (p.has_daemonset != c.has_daemonset) {
        out.push_back(who + (!c.has_daemonset ? " DaemonSet removed"
                             : c.wants        ? " DaemonSet created, wants the node"
                                              : " DaemonSet created, does not want the node" + why));
      } else if (p.wants != c.wants) {
        out.push_back(who + (c.wants ? " DaemonSet wants the node" : " DaemonSet no longer wants the node" + why));
      }
    }
  }
  return out;
}

}  // namespace gpuops::core
