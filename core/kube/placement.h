// core/kube/placement.h: which nodes a DaemonSet wants, as the DaemonSet controller
// decides it.
//
// Mirrors NodeShouldRunDaemonPod (kubernetes pkg/controller/daemon/
// daemon_controller.go), with node affinity from component-helpers
// scheduling/corev1/nodeaffinity (RequiredNodeAffinity.Match), selector
// operators from apimachinery pkg/labels (Requirement.Matches) and taint
// matching from component-helpers scheduling/corev1/helpers.go
// (FindMatchingUntoleratedTaint) with k8s.io/api core/v1 ToleratesTaint.
// Resources never matter here: the controller ignores them (the scheduler
// does not; see simulator/).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/model/model.h"

namespace gpuops::core {

// Result of should_run. Reasons are one line each, in the order checked, and
// say why shouldRun is false (empty when it is true), e.g.
//   "nodeSelector nvidia.com/gpu.deploy.driver=true: node has \"false\""
//   "untolerated taint dedicated=ml-team:NoSchedule"
struct Placement {
  bool should_run = false;
  bool should_continue_running = false;
  std::vector<std::string> reasons;
  // The first untolerated NoSchedule/NoExecute taint, if that is what stopped it.
  std::optional<Taint> untolerated_taint;
  bool selector_mismatch = false;  // nodeName, nodeSelector or required affinity
};

// Mirrors NodeShouldRunDaemonPod: (false,false) when nodeName, nodeSelector or
// required node affinity do not match; (false, no untolerated NoExecute taint)
// when a NoSchedule/NoExecute taint is not tolerated by the template's
// tolerations plus the ones the controller adds (daemon_tolerations()); else
// (true,true).
Placement should_run(const DaemonSet& ds, const Node& node);

// The tolerations the DaemonSet controller adds to every daemon pod
// (AddOrUpdateDaemonPodTolerations, pkg/controller/daemon/util): not-ready and
// unreachable NoExecute; disk-pressure, memory-pressure, pid-pressure and
// unschedulable NoSchedule; network-unavailable NoSchedule when hostNetwork.
std::vector<Toleration> daemon_tolerations(bool host_network);

// `user` plus daemon_tolerations, replacing a user toleration with the same
// key/effect/operator/value as upstream's AddOrUpdateTolerationInPodSpec.
std::vector<Toleration> with_daemon_tolerations(const std::vector<Toleration>& user, bool host_network);

// k8s.io/api core/v1 Toleration.ToleratesTaint.
bool tolerates(const Toleration& t, const Taint& taint);

// FindMatchingUntoleratedTaint restricted to the given effects.
std::optional<Taint> untolerated_taint(const std::vector<Taint>& taints, const std::vector<Toleration>& tolerations,
                                       const std::vector<std::string>& effects);

// labels.Requirement.Matches (apimachinery pkg/labels/selector.go) for one
// requirement of a NodeSelectorTerm, a LabelSelector or a `labelSelector=`
// query against labels: In/NotIn/Exists/DoesNotExist; Gt/Lt compare the label
// value and the requirement's single value as integers (strconv.ParseInt: an
// optional sign, decimal digits, int64 range), and never match a label that
// is absent or not an integer. NotIn and DoesNotExist match labels without the
// key. Invalid requirements (unknown operator, wrong number of values, Gt/Lt
// with a non-integer value) never match, as NewRequirement's errors make a
// term match nothing. The one implementation: placement, the simulator's
// scheduler and its list/watch label selectors all call it.
bool requirement_matches(const Requirement& r, const Labels& labels);

// A pod's spec.nodeSelector against a node's labels
// (labels.SelectorFromSet(nodeSelector).Matches, as
// nodeaffinity.GetRequiredNodeAffinity does): every key present with exactly
// that value. An empty nodeSelector matches every node.
bool node_selector_matches(const Labels& node_selector, const Labels& labels);

// The keys of `node_selector` that `labels` does not satisfy (absent, or
// another value), in key order; empty exactly when node_selector_matches.
std::vector<std::string> node_selector_mismatches(const Labels& node_selector, const Labels& labels);

// metav1.LabelSelector against labels (LabelSelectorAsSelector). An empty
// selector matches everything.
bool selector_matches(const LabelSelector& s, const Labels& labels);

// nodeSelector AND required node affinity (RequiredNodeAffinity.Match).
bool node_affinity_matches(const PodSpec& spec, const Node& node);

// Taint rendered as kubectl shows it: "key=value:Effect" or "key:Effect".
std::string format_taint(const Taint& t);

}  // namespace gpuops::core
