// core/scenario/scenario_cleanup.h: what a scenario created on a live
// cluster, in creation order, and its deletion in reverse order at the
// scenario's end (core::run_scenario with RunOptions::clean_up). Internal to
// core/scenario/ (scenario_run.cpp and scenario_cleanup.cpp).
#pragma once

#include <string>
#include <vector>

#include "core/cluster/cluster.h"
#include "core/scenario/scenario.h"

namespace gpuops::core::scenario_internal {

// One object a scenario created: kind "Node", "Namespace", "DaemonSet",
// "Pod" or "ClusterPolicy"; `ns` for the namespaced kinds.
struct CreatedObject {
  std::string kind;
  std::string ns;
  std::string name;
  bool operator==(const CreatedObject&) const = default;
};

// The objects a scenario created, each once, in the order of their first
// creation. Recorded before the write that creates them (a write cut short,
// or one that half succeeded, is still cleaned up; the deletion of an
// object that is not there counts as done).
class CreatedObjects {
 public:
  void add(CreatedObject object);
  // What `step`'s action creates: addNode's node, createNamespace's
  // namespace, installOperator's ClusterPolicy, and apply's nodes,
  // DaemonSets, pods and ClusterPolicies (namespaced ones without a
  // namespace in `scenario.namespace_`). An apply's Namespace objects are
  // not recorded: the operator's namespace is applied beside its operands
  // on clusters where the operator runs in it. Nothing for the other actions.
  void add_step(const Step& step, const Scenario& scenario);
  const std::vector<CreatedObject>& objects() const { return objects_; }

 private:
  std::vector<CreatedObject> objects_;
};

// Deletes `created` in reverse order (DaemonSets with cascade background,
// their pods to the garbage collector), each deletion's 404 counting as
// done. After the last of consecutive ClusterPolicies, with options.poll,
// waits (at most options.default_timeout) until the scenario's namespace has
// neither DaemonSets nor pods (the garbage collector takes the operator's).
// Returns each deletion that failed, "deleting node \"gpu-a\": <error>", in
// the order tried; never throws.
std::vector<std::string> delete_created(const std::vector<CreatedObject>& created, const Scenario& scenario,
                                        Cluster& cluster, const RunOptions& options);

// The objects of an apply step, decoded and validated (all before any
// write). Throws InputError as the apply would.
std::vector<Object> decode_apply(const Step& step, const Scenario& scenario);

}  // namespace gpuops::core::scenario_internal
