// real/api_cluster.h: core::Cluster over a Kubernetes API server.
//
// Every operation is a fixed number of API calls, whatever the cluster size:
//  - state(ns): three paged lists (limit/continue, page size 500):
//    GET /api/v1/nodes, /apis/apps/v1/namespaces/{ns}/daemonsets and
//    /api/v1/namespaces/{ns}/pods. A continue token answered 410 Expired
//    restarts that list once without a limit (client-go tools/pager
//    ListPager.List, FullListIfExpired). Each page is parsed into its own
//    arena and its items decode with core::decode_*_typed: the objects of a
//    state have their typed fields only, `raw` empty (nothing that reads a
//    state writes it back).
//  - set_node_label: one JSON merge patch (RFC 7386) of metadata.labels, null
//    for a removal, as `kubectl label` sends it (kubectl pkg/cmd/label).
//  - apply: server-side apply (PATCH, application/apply-patch+yaml with a JSON
//    body, fieldManager=gpuops, force=true), as `kubectl apply --server-side
//    --force-conflicts` (kubectl pkg/cmd/apply). Every object is re-validated
//    with core::decode_object before the first request.
//  - create_namespace: POST; 409 AlreadyExists is success.
//  - a Node in apply: server-side apply of the Node, then its status
//    (allocatable, conditions, as a KWOK node needs) as a merge patch of the
//    status subresource, since apply drops status (the Node strategy's reset
//    fields); add_node: POST of the Node (409 AlreadyExists when it exists:
//    core::ClusterError 409 with the server's message), then its status the
//    same way; delete_node / delete_pod: DELETE.
//  - set_node_taints, set_node_unschedulable: merge patch of spec;
//    set_node_ready: strategic merge patch of status.conditions (merge key
//    "type") on the status subresource.
//  - settle(): lists state and waits (watching the namespace's pods from the
//    list's resourceVersion, re-listing on any event, at the poll interval, and
//    after a dropped or expired watch) until settle_pending() is empty, or
//    throws core::ClusterError at the deadline with what is still pending.
//
// With dry_run every write carries dryRun=All: the API server validates and
// admits it but stores nothing.
//
// Errors: a 400/422 answer to a write throws core::InputError (the upstream
// message and field); 404 on a node or pod throws core::ClusterError naming
// it; every other failure throws core::ClusterError / real::ApiError (see
// real/client.h).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "core/cluster/cluster.h"
#include "core/cluster/diagnostic_reader.h"
#include "core/codec/documents.h"
#include "real/client.h"
#include "real/kubeconfig.h"

namespace gpuops::real {

struct ApiClusterOptions {
  bool dry_run = false;                  // send dryRun=All on every write
  std::string field_manager = "gpuops";  // server-side apply field manager
  // settle() deadline. 120 s: a deleted node's pods go only when pod GC
  // deletes them (gcOrphaned: 20 s period, 40 s quarantine, so 40-80 s).
  std::chrono::milliseconds settle_timeout{120000};
  std::chrono::milliseconds settle_poll{2000};  // longest wait between two re-lists in settle()
  int64_t page_size = 500;                      // list `limit` (client-go pager default)
  // Where settle() writes its progress line ("\r" rewritten). nullptr: stderr
  // when stderr is a terminal (isatty(2)), else nothing.
  std::ostream* progress = nullptr;
  // Polled by settle() before each re-list (at most settle_poll apart): once
  // true, settle() throws core::ClusterError "interrupted" (`gpuops run` on
  // SIGINT/SIGTERM). Empty: never.
  std::function<bool()> interrupted;
};

class ApiCluster : public core::Cluster, public core::DiagnosticReader {
 public:
  // Connects lazily (the first call opens the connection). `config` usually
  // comes from load_rest_config. Throws core::InputError when its TLS material
  // does not load.
  explicit ApiCluster(RestConfig config, ApiClusterOptions options = {}, ClientOptions client_options = {});

  // Nodes, the namespace's DaemonSets and pods, then the GPU Operator's
  // ClusterPolicies (nvidia.com/v1) and NVIDIADrivers (nvidia.com/v1alpha1),
  // each one paged list; a 404 or 403 on those two leaves them empty (no CRD,
  // or a role without them). Then the GPU workloads (gpu_workloads).
  core::ClusterState state(const std::string& ns) override;
  // The pods of every namespace but `ns` that hold GPUs (core::holds_gpu),
  // in the API's order: one paged list of /api/v1/pods, keeping only those
  // (what the driver needs gone before it unloads: diagnose's evidence,
  // plan's drain). nullopt on 403 (a role that may not list pods across
  // namespaces), said by the analyses; other errors throw as list().
  std::optional<std::vector<core::Pod>> gpu_workloads(const std::string& ns);
  // One paged list of every namespace's DaemonSets
  // (/apis/apps/v1/daemonsets): the namespaces of those the GPU Operator
  // controls (core::operator_controlled), sorted. A 403 (a role bound to
  // one namespace) is none known; other errors throw as list().
  std::vector<std::string> operator_namespaces() override;
  // state() without the GPU Operator's resources: nodes, and the namespace's
  // DaemonSets and pods (three lists), what settle() polls.
  core::ClusterState workload_state(const std::string& ns);
  void apply(const std::vector<core::Object>& objects) override;
  void create_namespace(const std::string& name) override;
  void set_node_label(const std::string& node, const std::string& key,
                      const std::optional<std::string>& value) override;
  void add_node(const core::Node& node) override;
  void delete_node(const std::string& node) override;
  void set_node_taints(const std::string& node, const std::vector<core::Taint>& taints) override;
  void set_node_unschedulable(const std::string& node, bool unschedulable) override;
  void set_node_ready(const std::string& node, const std::string& status) override;
  void delete_pod(const std::string& ns, const std::string& name) override;
  // DELETE of the DaemonSet with DeleteOptions {propagationPolicy} (what
  // `kubectl delete ds --cascade=` sends); the garbage collector does the rest.
  void delete_daemonset(const std::string& ns, const std::string& name, const std::string& cascade) override;
  // mirrors `kubectl delete namespace NAME` with its default --wait=true:
  // DELETE, then GET until 404 (the namespace controller has deleted its
  // contents and removed the kubernetes finalizer), polling every
  // min(settle_poll, 500ms) until settle_timeout. A namespace that is already
  // gone is fine; with dry_run nothing is waited for. Throws
  // core::ClusterError when it is still there at the deadline.
  void delete_namespace(const std::string& name) override;
  // Waits for the namespace of the RestConfig (the one of the last state()
  // call, if any) to settle; see settle_pending.
  void settle() override;
  // PATCH application/merge-patch+json / DELETE on
  // /apis/nvidia.com/v1/clusterpolicies/NAME.
  void patch_cluster_policy(const std::string& name, const boost::json::object& merge_patch) override;
  void delete_cluster_policy(const std::string& name) override;
  // Discovery, as kubectl's `api-resources` reads it: GET /apis/nvidia.com/v1
  // (an APIResourceList) names the resource "clusterpolicies"; 404 (no
  // such group version: the CRD is not installed) is false.
  bool serves_cluster_policies() override;

  // The namespace used for objects without one and for settle().
  const std::string& default_namespace() const { return namespace_; }
  // core::DiagnosticReader: GET .../events, and GET .../pods/NAME/log
  // (tailLines, container) of the pod or of each pod a labelSelector list
  // gives (real/api_cluster_diagnostics.cpp).
  std::string events_text(const std::string& ns) override;
  std::string pod_logs_text(const std::string& ns, const std::string& pod, const std::string& selector,
                            const std::string& container, int tail_lines) override;
  Client& client() { return *client_; }

  // A paged list (ListPager.List): calls `on_page` with each page's items,
  // parsed into an arena freed after the call (the callee may move or
  // modify them); `on_restart` when an expired continue token restarts the
  // list without a limit (the items of earlier pages are void). Sets
  // `resource_version` to the list's. Throws as Client::send_json, and
  // core::ClusterError for an answer that is not a List or a list without
  // end. Also what real::Reflector lists with.
  //
  // `read_page`, when given, is offered each page's body first: it returns
  // true when it read the page (its items, and the list's continue token
  // and resource version into its arguments, as the list reads them), and
  // false to have the page parsed and handed to `on_page` as above (its
  // partial results are then the callee's to drop).
  using PageReader = std::function<bool(const std::string& body, std::string& continue_token,
                                        std::optional<std::string>& resource_version)>;
  // `query`: parameters sent with every page (a fieldSelector), before
  // limit and continue.
  void list(const std::string& path, std::string* resource_version,
            const std::function<void(boost::json::array& items)>& on_page, const std::function<void()>& on_restart,
            const PageReader& read_page = {}, const std::vector<std::pair<std::string, std::string>>& query = {});
  // list(), each item handed to `on_item` as a core::Document (file "GET
  // <path>") that it decodes: an item that is not an object, or that
  // `on_item` refuses with core::InputError, is a core::ClusterError
  // "cannot read a <what> from the API server: ...".
  void list_items(const std::string& path, const std::string& what, std::string* resource_version,
                  const std::function<void(core::Document&)>& on_item, const std::function<void()>& on_restart,
                  const PageReader& read_page = {}, const std::vector<std::pair<std::string, std::string>>& query = {});

 private:
  Request write_request(boost::beast::http::verb method, const std::string& path) const;
  void patch_node(const std::string& node, const boost::json::object& patch, const std::string& content_type,
                  bool status = false);
  void send_write(const Request& r, const std::string& what);

  std::unique_ptr<Client> client_;
  ApiClusterOptions options_;
  std::string namespace_;
  std::string settle_namespace_;
  std::string last_pods_rv_;
};

// Why `state` has not settled; empty when it has. First, for each node whose
// Ready condition is True but which still carries a not-ready or unreachable
// taint (a new node, tainted by the NodeTaint admission plugin until the node
// lifecycle controller removes it): "Node <node>: taint <key>:<effect> while
// Ready is True". Then for each DaemonSet of the
// namespace, with core::should_run as the DaemonSet controller decides:
//  - a node that should run it and has no pod of it (not being deleted):
//    "DaemonSet <name>: no pod on node <node>";
//  - a pod of it (controller owner reference to the DaemonSet) on a node
//    where it should not continue running, or on a node that is gone:
//    "DaemonSet <name>: pod <pod> remains on node <node>";
//  - a Pending pod on a node that has not posted allocatable yet, or that
//    is neither refused by the scheduler (PodScheduled False) nor started by
//    its kubelet (no container statuses): "DaemonSet <name>: pod <pod> on
//    node <node> is Pending (node has no allocatable yet | not scheduled or
//    started yet)";
//  - a pod of it never bound (no spec.nodeName) whose node is gone is NOT
//    pending (it stays until the DaemonSet syncs for another reason);
//  - when status.desiredNumberScheduled equals the nodes that should run it,
//    status.numberReady not equal to those nodes with a Ready pod:
//    "DaemonSet <name>: status.numberReady is <n>, Ready pods on the nodes
//    that should run it: <m>";
//  (status.desiredNumberScheduled is not pending: the DaemonSet controller
//  leaves it stale on purpose after node changes that need no pod change,
//  e.g. a NoSchedule taint on a node whose pod runs, or a deleted node: v1.37
//  syncNodeUpdate, no node delete handler; it is only updated at the next
//  sync for another reason. It is reported in `stale_desired` instead,
//  "DaemonSet <name>: status.desiredNumberScheduled is <n>, nodes that
//  should run it: <m>": settle() waits kStaleDesiredGrace for it, since the
//  sync that deletes a pod writes the status after the delete, and a reader
//  fast enough sees the pod gone and the status not yet written);
//  - a pod that is not Running while the status is not up to date
//    (observedGeneration < generation, desiredNumberScheduled or
//    currentNumberScheduled not equal to the nodes that should run it, or
//    numberMisscheduled > 0): "DaemonSet <name>: pod <pod> on node <node> is
//    <phase>".
// Ordered by DaemonSet name; within one, node messages by node name, then
// the status message, then the not-Running pods.
std::vector<std::string> settle_pending(const core::ClusterState& state,
                                        std::vector<std::string>* stale_desired = nullptr);

// How long settle() waits, once nothing else is pending, for a
// desiredNumberScheduled that differs from the nodes that should run the
// DaemonSet (see settle_pending) before taking it as left stale on purpose.
inline constexpr std::chrono::milliseconds kStaleDesiredGrace{3000};

}  // namespace gpuops::real
