// core/plan/plan.h: what a change would do to a cluster (`gpuops plan`,
// docs/PLAN.md): the difference between the settled state before it and
// after it, both computed by the simulator on an imported copy, told in the
// operands' terms. A pure function of two ClusterStates and a Catalog.
//
// Pods are matched by DaemonSet and node: a pod of DaemonSet D on node N in
// `after` and not in `before` is created, the reverse deleted, a different
// uid on both sides replaced (a template change rolling out, or a pod
// deleted and recreated). Pods no DaemonSet controls are compared by uid
// (a drain's evictions). Each change names the rule that decides it: for a
// deleted pod, core::should_run's reasons on the node after the change
// (the nodeSelector, an untolerated taint), else "node deleted" or
// "DaemonSet deleted"; for a created one, the change that made the
// DaemonSet want the node, and, for a new pod that would not be Ready, its
// STATUS column and the scheduler's message ("it would stay Pending (0/3
// nodes are available: 1 Insufficient memory ...)").
#pragma once

#include <boost/json/object.hpp>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/analysis/analysis.h"
#include "core/diagnose/finding.h"
#include "core/gpu_operator/operands.h"
#include "core/model/model.h"
#include "core/plan/plan_objects.h"

namespace gpuops::core {

struct PodChange {
  enum class Kind { kCreated, kDeleted, kReplaced };
  Kind kind = Kind::kCreated;
  std::string node;
  std::string daemonset;  // "" for a pod no DaemonSet controls
  std::string operand;    // the catalog operand of the DaemonSet, "" when none
  std::string pod;        // its name (the new pod's when created or replaced)
  std::string why;        // one line
};

struct LabelChange {
  std::string node;
  std::string key;
  std::optional<std::string> before, after;  // nullopt: absent
  bool by_change = false;                    // written by the change itself
  // Who wrote it: "change" (by_change), else "operator" for a key under
  // nvidia.com/ (the operator's labeller, k8s-driver-manager, the MIG
  // manager), else "controller" (Kubernetes' own: the node lifecycle
  // controller's beta.kubernetes.io/os and arch, reconcileNodeLabels).
  // label_writer() decides.
  std::string writer;
  // Every value the label took on its way, in order, `before` first and
  // `after` last, when it took more than those two (a key the operator
  // removed and wrote back): empty otherwise. set_label_history fills it.
  std::vector<std::optional<std::string>> history;
  // The label was an opt-out ("false") before, is not after, and the change
  // did not write it: the operator or its helpers took it (operands=false
  // removes every deploy label; gpu.present turning false too).
  bool opt_out_lost = false;
};

// The values each (node, label key) took while the change settled, in write
// order, the value before the change not included (nullopt: removed).
using LabelWrites = std::map<std::pair<std::string, std::string>, std::vector<std::optional<std::string>>>;
// The value the change itself last wrote to each (node, label key) it wrote
// (nullopt: it removed the key).
using ChangeLabels = std::map<std::pair<std::string, std::string>, std::optional<std::string>>;

// The writer of a label the plan shows (LabelChange::writer).
std::string label_writer(const std::string& key, bool by_change);

struct CellChange {
  std::string node;
  std::string operand;
  MatrixCell before = MatrixCell::kNo, after = MatrixCell::kNo;
};

struct PlanResult {
  std::vector<PodChange> pods;      // by node, then DaemonSet, then pod
  std::vector<LabelChange> labels;  // by node, then key; an added node's: all its labels, before absent
  std::vector<std::string> nodes_added, nodes_removed;
  MatrixResult matrix_before, matrix_after;             // the catalog's columns
  std::vector<CellChange> cells;                        // the cells that differ
  std::vector<Finding> findings_new, findings_cleared;  // diagnose, errors and warnings only
  std::vector<DaemonSetChange> daemonsets;              // core/plan/plan_objects.h
  std::vector<ClusterPolicyChange> cluster_policies;    // status.state or Ready changed
  // "3 pods deleted on 2 nodes, 0 created, 0 replaced, 1 label changed by the
  // operator or its helpers, 1 new finding, 0 cleared"; labels written by
  // Kubernetes' controllers add ", 2 labels by Kubernetes controllers" after
  // the operator's count when there are any.
  std::string summary;
  // Whether anything would change: a pod, a label's value (one written and
  // put back where it was, a deploy label the operator removes again from
  // an operands=false node, is listed with its history but changes
  // nothing: what its pods did on the way is in `pods`), a node, a cell of
  // the matrix (a pod left running without its DaemonSet, --cascade=orphan,
  // changes no pod but takes the operand's cell), a DaemonSet (created,
  // deleted, its template or update strategy: an OnDelete template change
  // replaces no pod yet) or a ClusterPolicy's status.
  bool changes() const {
    bool label_changed = false;
    for (const auto& l : labels) label_changed = label_changed || l.before != l.after;
    return !pods.empty() || label_changed || !nodes_added.empty() || !nodes_removed.empty() || !cells.empty() ||
           !daemonsets.empty() || !cluster_policies.empty();
  }
};

// The plan of a change: `before` and `after` are the settled states (same
// namespace), `direct` the (node, label key) pairs the change itself
// writes. `catalog` must outlive the result (the matrices point into it).
PlanResult plan_changes(const ClusterState& before, const ClusterState& after, const Catalog& catalog,
                        const std::set<std::pair<std::string, std::string>>& direct);

// The same plan from the parts of the two states that the change touched
// (core::state_part, model.h, of both for the nodes it wrote to or whose pods it wrote), and
// the whole state before it, whose matrix rows for every other node stand
// as they are in the matrix after. Equal to plan_changes(whole_before,
// whole_after, ...) when nothing outside the parts differs between the two
// states: no other node, no pod on another node, no DaemonSet but in its
// status (the caller checks; gpuops plan reads it off the simulator's
// events since the change, docs/PLAN.md). Either part may be the whole state.
PlanResult plan_changes(const ClusterState& whole_before, const ClusterState& before_part,
                        const ClusterState& after_part, const Catalog& catalog,
                        const std::set<std::pair<std::string, std::string>>& direct);
// The same, with the whole state before the change given by its matrix
// (matrix_result(whole_before, catalog, true)), which the caller may compute
// while it makes the state after.
PlanResult plan_changes(MatrixResult whole_matrix_before, const ClusterState& before_part,
                        const ClusterState& after_part, const Catalog& catalog,
                        const std::set<std::pair<std::string, std::string>>& direct);

// Text: per node its pod and label changes, then the matrix after the
// change with changed cells marked `before->after`, the findings the change
// introduces (+) and clears (-), then the summary line.
// Sets plan.summary from its changes (PlanResult::summary); plan_changes
// calls it, and a caller that edits the changes calls it again.
void update_plan_summary(PlanResult& plan);

// Fills LabelChange::history from `writes`, and adds a LabelChange for a
// label that came back to its value before (a key the operator removed and
// put back: net nothing, yet its pods went and came; by_change when the
// change wrote it). opt_out_lost: the label was meant to be "false" (the
// change's own last value for it, else its value before) and is not after.
// Then update_plan_summary.
void set_label_history(PlanResult& plan, const LabelWrites& writes, const ChangeLabels& change);

std::string render_plan_text(const PlanResult& plan);
// The drift of an input caught mid-change (docs/PLAN.md "Drift"): the plan
// from the input as it is to the copy settled before any change, which
// `gpuops plan` prints first. "" when it changes nothing; else a header
// line, per node its label and pod changes (as render_plan_text's), the
// DaemonSet and ClusterPolicy changes, and `drift: <summary>`.
std::string render_drift_text(const PlanResult& drift);
// JSON: {"summary", "changes": bool, "pods": [{kind, node, daemonset,
// operand, pod, why}], "labels": [{node, key, before, after, byChange, writer}],
// "nodesAdded", "nodesRemoved", "matrix": {"columns": [...], "before":
// {node: {col: cell}}, "after": {...}}, "cells": [{node, operand, before,
// after}], "findingsNew": [...], "findingsCleared": [...]} (findings as
// render_findings_json's items).
boost::json::object render_plan_json(const PlanResult& plan);

// kubectl diff's exit codes: 0 nothing would change, 1 something would.
int plan_exit_code(const PlanResult& plan);

}  // namespace gpuops::core
