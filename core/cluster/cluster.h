// core/cluster/cluster.h: the ports every backend implements.
//
// Two ports: core::ClusterReader (the reads) and core::Cluster (the reads and
// the writes). Backends: simulator::FakeCluster (in-process) and
// real::ApiCluster (HTTPS to a Kubernetes API server) are Clusters;
// core::SnapshotCluster (kubectl dumps) is only a ClusterReader, so a command
// that writes cannot be given one. A command that only reads takes a
// ClusterReader; the runners take a Cluster; tests mock either with
// GoogleMock.
//
// Errors: writes the API would refuse throw core::InputError (exit 2); a
// backend that cannot do what was asked (connection, auth, a missing node, a
// cluster that does not settle) throws core::ClusterError (exit 3). A failed
// call leaves the cluster as it was.
#pragma once

#include <boost/json/object.hpp>
#include <optional>

#include <set>
#include <string>
#include <vector>

#include "core/base/errors.h"
#include "core/model/model.h"

namespace gpuops::core {

// The parts of a ClusterState a reader needs (ClusterReader::partial_state): the
// others are left empty. The default is every part.
struct StateParts {
  bool nodes = true;
  bool daemonsets = true;
  bool pods = true;
  bool cluster_policies = true;  // ClusterPolicies and NVIDIADrivers
  // When set, only the part of these nodes (core::state_part, model.h) of
  // the parts read: the nodes named, and the pods in_state_part.
  const std::set<std::string>* of_nodes = nullptr;
  bool all() const { return nodes && daemonsets && pods && cluster_policies && !of_nodes; }
};

// The read port: what a command that only reads a cluster needs (audit,
// order-check, matrix, diagnose, explain, plan's and serve's import of a
// cluster). Reading changes nothing in the cluster.
class ClusterReader {
 public:
  virtual ~ClusterReader() = default;

  // Every node, and the DaemonSets and pods of namespace `ns`, as they are now.
  virtual ClusterState state(const std::string& ns) = 0;
  // The same with only `parts` filled (every part as state() reads it), for
  // a reader that needs less than the whole cluster: the scenario runner
  // checking a DaemonSet's status reads no pods. The default reads the
  // whole state (its part of_nodes when set).
  virtual ClusterState partial_state(const std::string& ns, const StateParts& parts) {
    return parts.of_nodes ? state_part(state(ns), *parts.of_nodes) : state(ns);
  }

  // Whether the cluster serves clusterpolicies.nvidia.com (the GPU
  // Operator's CRD is installed, so its operator is assumed to run there).
  // A scenario with `operator:` runs on a backend without simulator controls
  // only when it does. Throws ClusterError when the cluster cannot be asked.
  // The default: false.
  virtual bool serves_cluster_policies() { return false; }

  // The namespaces holding a DaemonSet whose controller is a ClusterPolicy
  // or an NVIDIADriver (group nvidia.com: the GPU Operator's operands,
  // object_controls.go sets the owner), sorted: where the operator runs
  // when the namespace asked holds none of its DaemonSets (OpenShift's
  // nvidia-gpu-operator, a chart installed elsewhere). The default: none
  // known. Throws ClusterError when the cluster cannot be asked.
  virtual std::vector<std::string> operator_namespaces() { return {}; }
};

// The read-write port: the reads of ClusterReader, the writes, and settle()
// (what the scenario runner, the lab and `plan`'s simulated copy use).
class Cluster : public ClusterReader {
 public:
  // Creates or updates each object (Namespace, Node, DaemonSet) in order. All
  // objects are validated before the first write, so a bad one applies none.
  virtual void apply(const std::vector<Object>& objects) = 0;

  // Creates namespace `name` if it does not exist.
  virtual void create_namespace(const std::string& name) = 0;

  // Sets label `key` on node `node` to `value`, or removes it when nullopt.
  // Other labels are untouched. Throws ClusterError if the node is missing,
  // InputError if key or value is not a valid label key/value.
  virtual void set_node_label(const std::string& node, const std::string& key,
                              const std::optional<std::string>& value) = 0;

  // Creates a node (POST /api/v1/nodes). A node of that name that exists
  // already is refused, as the API server refuses it: ClusterError 409
  // `nodes "NAME" already exists` (AlreadyExists), and nothing is written.
  // (apply() of a Node is the create-or-update.)
  virtual void add_node(const Node& node) = 0;
  // Deletes a node. Its pods are garbage-collected as upstream does.
  virtual void delete_node(const std::string& node) = 0;

  // Node spec and condition changes. Throw ClusterError if the node is missing.
  virtual void set_node_taints(const std::string& node, const std::vector<Taint>& taints) = 0;
  virtual void set_node_unschedulable(const std::string& node, bool unschedulable) = 0;
  // Sets the Ready condition to "True", "False" or "Unknown".
  virtual void set_node_ready(const std::string& node, const std::string& status) = 0;

  // Deletes a namespace and everything in it (scenario clean-up on a real
  // cluster). The default throws ClusterError: not every backend can.
  virtual void delete_namespace(const std::string& name) {
    throw ClusterError("this backend cannot delete namespace \"" + name + "\"");
  }

  // The GPU Operator's ClusterPolicy (cluster-scoped, nvidia.com/v1): an RFC
  // 7386 JSON merge patch of the object (`kubectl patch clusterpolicy NAME
  // --type merge -p PATCH`), and its deletion (background: the garbage
  // collector takes the DaemonSets it controls). Throw ClusterError 404 when
  // it (or its CRD) does not exist, InputError when the patched object is
  // refused. The defaults throw ClusterError: not every backend can.
  virtual void patch_cluster_policy(const std::string& name, const boost::json::object& merge_patch) {
    (void)merge_patch;
    throw ClusterError("this backend cannot patch clusterpolicy \"" + name + "\"");
  }
  virtual void delete_cluster_policy(const std::string& name) {
    throw ClusterError("this backend cannot delete clusterpolicy \"" + name + "\"");
  }

  // Deletes DaemonSet `name` of namespace `ns` as `kubectl delete ds
  // --cascade=<cascade>` does, the garbage collector taking care of its
  // pods: "background" (the DaemonSet goes at once, its pods after it),
  // "foreground" (the DaemonSet stays, with a deletionTimestamp and the
  // foregroundDeletion finalizer, until its pods are gone) or "orphan" (its
  // pods stay, without their owner reference). InputError for another
  // cascade, ClusterError 404 when it does not exist. The default throws
  // ClusterError: not every backend can.
  virtual void delete_daemonset(const std::string& ns, const std::string& name, const std::string& cascade) {
    (void)ns;
    (void)cascade;
    throw ClusterError("this backend cannot delete DaemonSet \"" + name + "\"");
  }

  // The DeleteOptions.propagationPolicy of a kubectl --cascade value
  // ("background" -> "Background", "foreground" -> "Foreground", "orphan" ->
  // "Orphan"); throws InputError naming field `field` for anything else.
  static std::string propagation_policy(const std::string& cascade, const std::string& field = "cascade") {
    if (cascade == "background") return "Background";
    if (cascade == "foreground") return "Foreground";
    if (cascade == "orphan") return "Orphan";
    throw InputError("", 0, field, "invalid cascade \"" + cascade + "\": must be background, foreground or orphan");
  }

  // Deletes one pod (graceful, as `kubectl delete pod`).
  virtual void delete_pod(const std::string& ns, const std::string& name) = 0;

  // Waits until the controllers have converged (the simulator: runs them until
  // none has work; a real cluster: polls or watches with a deadline). Throws
  // ClusterError when the cluster does not converge.
  virtual void settle() = 0;
};

}  // namespace gpuops::core
