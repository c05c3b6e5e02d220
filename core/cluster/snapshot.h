// core/cluster/snapshot.h: a core::ClusterReader over kubectl dumps.
//
// Input: the output of `kubectl get nodes,daemonsets,pods -A -o json` (or
// -o yaml), a List, single objects, several files, or a folder of them
// (core/codec/documents.h read_paths); or a GPU Operator must-gather folder
// (hack/must-gather.sh), whose YAML files are read so and whose nodes come
// from gpu_nodes.labels, gpu_nodes.descr and gpu_nodes.status
// (core/cluster/must_gather.h; those files may also be named alone). Nodes are
// cluster-wide; DaemonSets and pods are filtered by namespace in state().
// A snapshot is read only by its type: it implements core::ClusterReader, not
// core::Cluster, so it has no writes and no settle() to call.
#pragma once

#include <deque>
#include <string>
#include <vector>

#include "core/cluster/cluster.h"

namespace gpuops::core {

// What a SnapshotCluster keeps of each object besides its typed fields.
struct SnapshotOptions {
  // Each node's and pod's whole JSON (Node::raw, Pod::raw): needed only where
  // they are written out again (`gpuops serve --snapshot` serves them with
  // every field). The analyses read the typed fields; without it a pod costs
  // about a third. DaemonSets, ClusterPolicies and NVIDIADrivers keep theirs
  // always (the template hash and the spec read from it; they are few).
  bool keep_raw = true;
};

// The newest timestamp a state carries: creation times (not deletion times,
// which lie in the future by the grace period), taints' timeAdded, pod and
// custom resource conditions' lastTransitionTime, pods' startTime, running
// containers' startedAt, the upgrade controller's start-time annotations
// on nodes (k8s-operator-libs pkg/upgrade consts.go, Unix seconds) and the
// times of the nodes' managedFields entries (core/kube/managed_fields.h). What a
// SnapshotCluster gives as ClusterState::observed_at: a dump says nothing of
// when it was taken, and every one of these times is at or before it.
// nullopt when the state has none.
std::optional<Time> newest_timestamp(const ClusterState& state);

class SnapshotCluster : public ClusterReader {
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
  // JSON files are read item by item (core/codec/documents.h stream_documents):
  // memory is the objects kept, not the file's DOM.
  explicit SnapshotCluster(const std::vector<std::string>& paths, SnapshotOptions options = {});
  // From already decoded objects (tests).
  explicit SnapshotCluster(std::vector<Object> objects);

  // The objects of namespace `ns` (nodes and the custom resources: all), with
  // observed_at = newest_timestamp of that state.
  ClusterState state(const std::string& ns) override;

  // state(ns), with the objects moved out instead of copied: afterwards the
  // snapshot holds no nodes, ClusterPolicies or NVIDIADrivers, and only the
  // other namespaces' DaemonSets and pods (namespaces() lists those). For a
  // caller that reads the state once, as the CLI does.
  ClusterState take_state(const std::string& ns);

  // Namespaces that hold DaemonSets or pods in the dump, sorted.
  std::vector<std::string> namespaces() const;

  // Namespaces holding a DaemonSet controlled by a ClusterPolicy or an
  // NVIDIADriver (the GPU Operator's own, core::detect_operator_install's
  // first rule, core::operator_controlled), sorted.
  std::vector<std::string> operator_namespaces() override;

 private:
  // Deques: no relocation as they grow, nor a second copy while take_state
  // moves them out.
  std::deque<Node> nodes_;
  std::deque<DaemonSet> daemonsets_;
  std::deque<Pod> pods_;
  std::deque<ClusterPolicy> cluster_policies_;
  std::deque<NVIDIADriver> nvidia_drivers_;
};

}  // namespace gpuops::core
