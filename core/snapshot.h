// core/snapshot.h: a read-only Cluster over kubectl dumps.
//
// Input: the output of `kubectl get nodes,daemonsets,pods -A -o json` (or
// -o yaml), a List, single objects, several files, or a folder of them
// (core/documents.h read_paths); or a GPU Operator must-gather folder
// (hack/must-gather.sh), whose YAML files are read so and whose nodes come
// from gpu_nodes.labels, gpu_nodes.descr and gpu_nodes.status
// (core/must_gather.h; those files may also be named alone). Nodes are
// cluster-wide; DaemonSets and pods are filtered by namespace in state().
// Every write throws ClusterError ("a snapshot is read-only"); settle() does
// nothing.
#pragma once

#include <string>
#include <vector>

#include "core/cluster.h"

namespace gpuops::core {

class SnapshotCluster : public Cluster {
 public:
  // Reads and decodes every document of `paths`. Only Nodes, DaemonSets,
  // Pods and the GPU Operator's ClusterPolicies and NVIDIADrivers (cluster-
  // scoped: in every namespace's state) are kept; objects of other kinds (Namespaces, Services,
  // ReplicaSets, ...) are skipped. Throws
  // InputError for unreadable or malformed input (a must-gather's text files
  // included, with file and line). An object met twice (same kind, namespace
  // and name: overlapping dumps) is kept once, the first; a must-gather's
  // nodes come after every Node of the YAML input, so a Node object wins over
  // the must-gather's text for the same name.
  explicit SnapshotCluster(const std::vector<std::string>& paths);
  // From already decoded objects (tests).
  explicit SnapshotCluster(std::vector<Object> objects);

  ClusterState state(const std::string& ns) override;
  void apply(const std::vector<Object>& objects) override;
  void create_namespace(const std::string& name) override;
  void set_node_label(const std::string& node, const std::string& key,
                      const std::optional<std::string>& value) override;
  void add_node(const Node& node) override;
  void delete_node(const std::string& node) override;
  void set_node_taints(const std::string& node, const std::vector<Taint>& taints) override;
  void set_node_unschedulable(const std::string& node, bool unschedulable) override;
  void set_node_ready(const std::string& node, const std::string& status) override;
  void delete_pod(const std::string& ns, const std::string& name) override;
  void settle() override {}

  // Namespaces that hold DaemonSets or pods in the dump, sorted.
  std::vector<std::string> namespaces() const;

 private:
  std::vector<Node> nodes_;
  std::vector<DaemonSet> daemonsets_;
  std::vector<Pod> pods_;
  std::vector<ClusterPolicy> cluster_policies_;
  std::vector<NVIDIADriver> nvidia_drivers_;
};

}  // namespace gpuops::core
