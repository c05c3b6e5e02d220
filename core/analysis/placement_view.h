// core/analysis/placement_view.h: the live placement view of `gpuops serve --ui` and
// the HTML reports (core/diagnose/html_report.h) as data: one column per node, one
// row per operand, and in each cell whether the operand's DaemonSet wants
// the node and what its pod on the node is doing.
//
// A pure function of a ClusterState and a Catalog. "Wants" is
// core::should_run (NodeShouldRunDaemonPod) of the operand's DaemonSets
// (core::operand_daemonsets); the pod is the operand's pod on the node
// (core::operand_pod_on: of its pods whose target node is the node, the first
// in the DaemonSet controller's order). Nothing is decided here that
// placement.h or operator_install.h decides.
#pragma once

#include <boost/json/value.hpp>

#include <map>
#include <string>
#include <vector>

#include "core/gpu_operator/operands.h"
#include "core/model/model.h"

namespace gpuops::core {

// What the operand's pod on a node is doing: "Running", "Pending",
// "Terminating" (deletionTimestamp set, any phase), "absent" (no pod), or
// another phase as written ("Succeeded", "Failed", "Unknown").
struct ViewCell {
  bool has_daemonset = false;  // the operand has a DaemonSet in the state
  bool wants = false;          // should_run of one of its DaemonSets
  std::string pod = "absent";
  std::string status;  // that pod's STATUS column (print_pod), "" when absent
  // Why no DaemonSet wants the node (should_run's reasons of the first
  // DaemonSet, or "no DaemonSet"); empty when one wants it.
  std::vector<std::string> reasons;
  bool operator==(const ViewCell& o) const {
    return wants == o.wants && pod == o.pod && has_daemonset == o.has_daemonset;
  }
};

struct ViewNode {
  std::string name;
  Labels nvidia_labels;             // the node's labels whose key starts with "nvidia.com/"
  std::vector<std::string> taints;  // format_taint
  std::string ready;                // Node::ready_status(): "True", "False", "Unknown", ""
  bool unschedulable = false;       // cordoned (spec.unschedulable)
};

struct PlacementView {
  std::string namespace_;
  std::vector<std::string> operands;  // catalog order
  std::vector<ViewNode> nodes;        // sorted by name
  // cells[operand][node], same orders as above.
  std::vector<std::vector<ViewCell>> cells;
};

PlacementView placement_view(const ClusterState& state, const Catalog& catalog);

// {"namespace":..,"operands":[..],"nodes":[{"name","labels":{..},"taints":[..],"ready","unschedulable"}],
//  "cells":[[{"w":bool,"d":bool,"p":"Running"},..],..]} (cells per operand, per node).
boost::json::value to_json(const PlacementView& view);

// `gpuops matrix -o wide`: a table as kubectl's printers write one
// (text/tabwriter, minimum width 10, padding 3, the last column unpadded):
// the header NODE STATUS then each of `columns` (an operand name of the
// view and its header), then a row per node: its STATUS
// (node_status_column), and per operand the STATUS of its pod there
// (print_pod), "<none>" when a DaemonSet of it wants the node and no pod is
// there, "-" when none wants it and no pod is there. An operand `columns`
// names that the view lacks is a column of "-".
std::string render_wide(const PlacementView& view, const std::vector<std::pair<std::string, std::string>>& columns);

// What changed from `before` to `after`, one line each, in node order then
// operand order, e.g.
//   lab-node-1 label nvidia.com/gpu.deploy.dcgm-exporter="false" (was "true")
//   lab-node-1 dcgm-exporter pod deleted: nodeSelector nvidia.com/gpu.deploy.dcgm-exporter=true: node has "false"
//   lab-node-2 driver pod created, Pending
//   lab-node-2 dcgm-exporter DaemonSet created, does not want the node: nodeSelector ...
//   lab-node-0 cordoned | uncordoned | Ready=False (was True) | taint added k=v:NoSchedule
//   lab-node-3 node added | node removed
// A pod that leaves a node, or goes Terminating, carries the reasons no
// DaemonSet wants the node any more, when that is why.
std::vector<std::string> view_changes(const PlacementView& before, const PlacementView& after);

}  // namespace gpuops::core
