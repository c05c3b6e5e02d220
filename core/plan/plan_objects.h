// core/plan/plan_objects.h: what a change does to the objects behind the
// pods: the DaemonSets of the namespace (created, deleted, their pod
// template or update strategy changed) and the ClusterPolicy's status.
// Part of gpuops plan (core/plan/plan.h, docs/PLAN.md); pure functions of two
// ClusterStates.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "core/gpu_operator/operands.h"
#include "core/model/model.h"

namespace gpuops::core {

struct DaemonSetChange {
  enum class Kind { kCreated, kDeleted, kChanged };
  Kind kind = Kind::kChanged;
  std::string name;
  std::string operand;  // the catalog operand it renders, "" when none
  // kChanged: each field that differs, "<path>: <before> -> <after>" (JSON
  // values, "(absent)" for a missing one), spec.template first, then
  // spec.updateStrategy; at most kMaxFieldChanges, then "... N more".
  std::vector<std::string> fields;
  // kChanged with a template change: what the update strategy makes of it.
  // RollingUpdate: "RollingUpdate: the pods are replaced node by node, at
  // most <maxUnavailable> unavailable at once (maxSurge <maxSurge>)";
  // OnDelete: "OnDelete: the pods keep the old template until each is
  // deleted, by hand or, for the driver, by the operator's upgrade controller
  // (driver.upgradePolicy.autoUpgrade)" (kubernetes
  // pkg/controller/daemon/update.go rollingUpdate; OnDelete does nothing).
  std::string rollout;
};

inline constexpr size_t kMaxFieldChanges = 20;

// The DaemonSets of `before` and `after` compared by name: created,
// deleted, and those whose spec.template or spec.updateStrategy differ (by
// their JSON; a key present on one side only whose value is the API server's
// default for it (or null, {} or []) is no difference: a DaemonSet read back from the API carries
// the defaults, one rendered by the simulated operator does not; the table
// mirrors SetDefaults_Container, SetDefaults_PodSpec, SetDefaults_Volume and
// the HostPath/ConfigMap defaults, pkg/apis/core/v1/defaults.go). By name.
std::vector<DaemonSetChange> daemonset_changes(const ClusterState& before, const ClusterState& after,
                                               const Catalog& catalog);

// One step of a path into a JSON value: an object's key, or (key empty) an
// array's index.
struct JsonStep {
  std::string key;
  size_t index = 0;
};

// One difference of two JSON values: where, and the value on each side
// (nullptr: absent there). Points into the values compared.
struct JsonChange {
  std::vector<JsonStep> path;
  const boost::json::value* before = nullptr;
  const boost::json::value* after = nullptr;
};

// The differences of two JSON values, objects key by key (sorted), arrays
// index by index, defaults ignored as above, numbers by value.
std::vector<JsonChange> json_changes(const boost::json::value& before, const boost::json::value& after);

// `root` then the path: ".key" steps, "[i]" steps ("spec.template.spec.containers[0].image").
std::string json_path_text(const std::string& root, const std::vector<JsonStep>& path);

// The value at `path` in `root`, nullptr when it is not there.
const boost::json::value* json_at(const boost::json::value& root, const std::vector<JsonStep>& path);

// The member of `o` at `keys`, object by object ({"spec", "template"}),
// nullptr when one is missing or not an object on the way.
const boost::json::value* json_member(const boost::json::object& o, std::initializer_list<const char*> keys);

// "<path>: <before> -> <after>", each JSON value cut to 80 bytes, "(absent)"
// for a missing one.
std::string json_change_text(const std::string& root, const JsonChange& change);

// The JSON differences of two values, as DaemonSetChange::fields (paths
// from `path`, "spec.template.spec.containers[0].image"), defaults ignored as
// above, at most `max` lines then "... N more".
std::vector<std::string> json_differences(const boost::json::value& before, const boost::json::value& after,
                                          const std::string& path, size_t max = kMaxFieldChanges);

struct ClusterPolicyChange {
  std::string name;
  std::string state_before, state_after;  // status.state, "(unset)" when empty
  std::string ready_before, ready_after;  // the Ready condition: "True (Reconciled)", "(none)"
};

// ClusterPolicies in both states whose status.state or Ready condition
// (status and reason) differ; by name.
std::vector<ClusterPolicyChange> cluster_policy_changes(const ClusterState& before, const ClusterState& after);

// The text plan's lines for them, appended to `out`: per DaemonSet
// `daemonset <name> (<operand>) created|deleted|changed:`, its fields and its
// rollout indented by two spaces; per ClusterPolicy
// `clusterpolicy <name>: status.state <a> -> <b>, Ready <x> -> <y>`.
void append_object_changes_text(const std::vector<DaemonSetChange>& daemonsets,
                                const std::vector<ClusterPolicyChange>& policies, std::string& out);

// {"daemonsets": [{name, operand, kind, fields, rollout}], "clusterPolicies":
// [{name, stateBefore, stateAfter, readyBefore, readyAfter}]}.
boost::json::object object_changes_json(const std::vector<DaemonSetChange>& daemonsets,
                                        const std::vector<ClusterPolicyChange>& policies);

}  // namespace gpuops::core
