// core/model/model.h: typed views of the Kubernetes objects placement needs.
//
// Each object keeps the API's shape: `raw` holds the whole object as it was
// read (every field, including those gpuops does not model), and the typed
// members hold the fields placement, the audit and the simulator need. When an
// object is written back (core/codec/encode.h encode), the typed members are laid
// over `raw`, so a manifest that round-trips comes out with every field it went
// in with. Objects the simulator makes itself start with an empty `raw`.
//
// Units: times are milliseconds since the Unix epoch on the caller's clock (the
// simulator's virtual clock, or the API server's timestamps); nothing here reads
// the wall clock. Resource amounts are core::Quantity (exact).
#pragma once

#include <boost/container/flat_map.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "core/model/quantity.h"

namespace gpuops::core {

using Duration = std::chrono::milliseconds;
using Time = std::chrono::sys_time<std::chrono::milliseconds>;

// A Kubernetes map[string]string (labels, annotations, a nodeSelector), in key
// order, as Go's encoders print it. A sorted flat array (Boost.Container's
// flat_map), not a tree: the DaemonSet controller and the scheduler read a
// node's labels once per DaemonSet, and contiguous pairs cost a cache line or
// two per lookup where std::map's nodes cost about ten (docs/PERFORMANCE-HISTORY.md,
// "Past upstream's 5,000-node limit"). As a sorted array, an insert shifts the
// pairs after it and invalidates iterators and references into the map: keys
// in order append in O(1); code that builds one from input in any order goes
// through LabelsBuilder, which sorts once.
using Labels = boost::container::flat_map<std::string, std::string>;

// Builds a Labels from pairs in any order in O(n log n): a key added more than
// once keeps its last value (as Go's map decoding and `kubectl label` do).
class LabelsBuilder {
 public:
  void add(std::string key, std::string value) { pairs_.emplace_back(std::move(key), std::move(value)); }
  bool empty() const { return pairs_.empty(); }
  // The map; the builder is left empty.
  Labels take();

 private:
  Labels::sequence_type pairs_;
};

struct OwnerReference {
  std::string api_version;  // "apps/v1"
  std::string kind;         // "DaemonSet"
  std::string name;
  std::string uid;
  bool controller = false;
};

struct ObjectMeta {
  std::string name;
  std::string namespace_;  // empty for cluster-scoped objects
  std::string uid;
  std::string resource_version;
  int64_t generation = 0;
  std::optional<Time> creation_timestamp;
  std::optional<Time> deletion_timestamp;
  std::optional<int64_t> deletion_grace_period_seconds;
  Labels labels;
  Labels annotations;
  std::vector<OwnerReference> owner_references;
  // metadata.finalizers ("foregroundDeletion", "orphan", ...): while any is
  // left, a deleted object stays with its deletionTimestamp.
  std::vector<std::string> finalizers;

  // The owner reference with controller=true, or nullptr.
  const OwnerReference* controller_ref() const;
};

// ---- selectors (apimachinery labels / core v1 NodeSelector) ----

// The operator of a selector requirement: k8s.io/api core/v1
// NodeSelectorOperator ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
// and metav1.LabelSelectorOperator (the first four). kUnknown is any other
// text a manifest gave (kept in Requirement::unknown_op); a requirement with
// it matches nothing (core::requirement_matches).
enum class SelectorOperator { kIn, kNotIn, kExists, kDoesNotExist, kGt, kLt, kUnknown };

// "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"; "" for kUnknown.
const char* selector_operator_name(SelectorOperator op);
// The operator spelled exactly `text` (case-sensitive, as the API), else
// kUnknown.
SelectorOperator parse_selector_operator(const std::string& text);

// One requirement of a NodeSelectorTerm, a LabelSelector or a
// `labelSelector=` query.
struct Requirement {
  std::string key;
  SelectorOperator op = SelectorOperator::kIn;
  std::vector<std::string> values;
  // The operator as written when op is kUnknown (encode writes it back,
  // validation errors quote it); empty otherwise.
  std::string unknown_op;

  // The operator as the API spells it: selector_operator_name(op), or
  // unknown_op for kUnknown.
  std::string op_text() const;
  bool operator==(const Requirement&) const = default;
};

// metav1.LabelSelector.
struct LabelSelector {
  Labels match_labels;
  std::vector<Requirement> match_expressions;
  bool empty() const { return match_labels.empty() && match_expressions.empty(); }
};

// core/v1 NodeSelectorTerm: expressions on labels, fields on metadata.name.
struct NodeSelectorTerm {
  std::vector<Requirement> match_expressions;
  std::vector<Requirement> match_fields;
};

// ---- taints and tolerations (core/v1) ----

struct Taint {
  std::string key;
  std::string value;
  std::string effect;  // "NoSchedule", "PreferNoSchedule", "NoExecute"
  std::optional<Time> time_added;
  bool operator==(const Taint& o) const { return key == o.key && value == o.value && effect == o.effect; }
};

struct Toleration {
  std::string key;
  std::string op;  // "", "Equal", "Exists"
  std::string value;
  std::string effect;  // "" means every effect
  std::optional<int64_t> toleration_seconds;
  bool operator==(const Toleration& o) const {
    return key == o.key && op == o.op && value == o.value && effect == o.effect &&
           toleration_seconds == o.toleration_seconds;
  }
};

// ---- Node ----

struct NodeCondition {
  std::string type;    // "Ready", "MemoryPressure", ...
  std::string status;  // "True", "False", "Unknown"
  std::string reason;
  std::string message;
};

// One entry of metadata.managedFields, as the analyses read it
// (ManagedFieldsEntry, k8s.io/apimachinery pkg/apis/meta/v1): who wrote
// (`manager`), the time of its last change, and the label keys it owns (its
// fieldsV1's f:metadata.f:labels). Decoded by core/kube/managed_fields.h.
struct LabelWrite {
  std::string manager;
  Time time;
  std::vector<std::string> labels;
};

struct Node {
  ObjectMeta metadata;
  // metadata.managedFields with a time, in order; empty when the input has
  // none (kubectl hides them unless --show-managed-fields).
  std::vector<LabelWrite> label_writes;
  bool unschedulable = false;
  std::vector<Taint> taints;
  std::map<std::string, Quantity> allocatable;  // "cpu", "memory", "pods", ...
  std::vector<NodeCondition> conditions;
  boost::json::object raw;

  // Status of the Ready condition: "True", "False", "Unknown", or "" if absent.
  std::string ready_status() const;
};

// ---- Pod template and Pod ----

struct Container {
  std::string name;
  std::string image;
  std::map<std::string, Quantity> requests;  // resources.requests
  std::map<std::string, Quantity> limits;    // resources.limits
};

struct PodSpec {
  std::string node_name;  // spec.nodeName, empty while unbound
  Labels node_selector;
  // requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms. nullopt
  // when the pod has no required node affinity at all (which matches every
  // node), an empty vector when it has one with no terms (matches none).
  std::optional<std::vector<NodeSelectorTerm>> required_node_affinity;
  std::vector<Toleration> tolerations;
  std::vector<Container> init_containers;
  std::vector<Container> containers;
  bool host_network = false;
  std::optional<int64_t> termination_grace_period_seconds;
  // spec.runtimeClassName: the RuntimeClass whose handler the container
  // runtime starts the pod's sandbox with ("nvidia" for most GPU Operator
  // operands); empty for the runtime's default handler.
  std::string runtime_class_name;
};

struct ContainerStatus {
  std::string name;
  bool ready = false;
  int32_t restart_count = 0;
  // Exactly one of these describes the state: "waiting", "running", "terminated".
  std::string state;
  std::string reason;  // waiting/terminated reason, e.g. "CrashLoopBackOff"
  std::string message;
  std::optional<int32_t> exit_code;
  // state.running.startedAt: when the running container started (absent for
  // the other states, or when the API gave none).
  std::optional<Time> started_at = std::nullopt;
  // lastState.terminated: how the previous run of the container ended (what
  // `kubectl logs --previous` shows the log of). Absent when it never ended.
  struct Termination {
    std::optional<int32_t> exit_code;
    std::string reason;   // "Error", "OOMKilled", "Completed"
    std::string message;  // the termination message, often the log's last line
  };
  std::optional<Termination> last_terminated = std::nullopt;
};

struct PodCondition {
  std::string type;  // "PodScheduled", "Initialized", "ContainersReady", "Ready"
  std::string status;
  std::string reason;
  std::string message;
  std::optional<Time> last_transition_time;
};

struct PodStatus {
  std::string phase;  // "Pending", "Running", "Succeeded", "Failed", "Unknown"
  std::string reason;
  std::string message;
  std::vector<PodCondition> conditions;
  std::vector<ContainerStatus> init_container_statuses;
  std::vector<ContainerStatus> container_statuses;
  std::optional<Time> start_time;
  // status.podIP: set by the kubelet once the pod's sandbox runs (for a
  // hostNetwork pod, the node's IP); empty while no sandbox has started.
  std::string pod_ip;
};

struct Pod {
  ObjectMeta metadata;
  PodSpec spec;
  PodStatus status;
  boost::json::object raw;

  // The node this pod is on, as upstream's getNodesToDaemonPods sees it:
  // spec.nodeName if set, else the single value of a required node affinity
  // term `matchFields metadata.name In [node]` (util.GetTargetNodeName,
  // pkg/controller/daemon/util). Empty when neither is present.
  std::string target_node() const;
  // Condition of the given type, or nullptr.
  const PodCondition* condition(const std::string& type) const;
  // Ready condition is True (podutil.IsPodReady).
  bool is_ready() const;
};

// ---- DaemonSet ----

struct PodTemplate {
  Labels labels;
  Labels annotations;
  PodSpec spec;
};

struct DaemonSetStatus {
  int32_t current_number_scheduled = 0;
  int32_t number_misscheduled = 0;
  int32_t desired_number_scheduled = 0;
  int32_t number_ready = 0;
  int64_t observed_generation = 0;
  int32_t updated_number_scheduled = 0;
  int32_t number_available = 0;
  int32_t number_unavailable = 0;
  bool operator==(const DaemonSetStatus&) const = default;
};

// intstr.IntOrString as a rolling update's maxUnavailable and maxSurge hold
// it: a count, or a percentage ("10%") of the desired number of pods.
struct IntOrPercent {
  int32_t value = 0;
  bool percent = false;
  bool operator==(const IntOrPercent&) const = default;
};

// mirrors intstr.GetScaledValueFromIntOrPercent (apimachinery
// pkg/util/intstr): the count itself, or `percent` of `total`, rounded up
// when `round_up` (ceil), else down.
int scaled_value(const IntOrPercent& v, int total, bool round_up);

struct DaemonSet {
  ObjectMeta metadata;
  LabelSelector selector;
  PodTemplate template_;
  std::string update_strategy = "RollingUpdate";  // or "OnDelete"
  // spec.updateStrategy.rollingUpdate, with apps/v1's defaults
  // (SetDefaults_DaemonSet: maxUnavailable 1, maxSurge 0).
  IntOrPercent max_unavailable{1, false};
  IntOrPercent max_surge{0, false};
  int32_t min_ready_seconds = 0;
  int32_t revision_history_limit = 10;  // spec.revisionHistoryLimit, default 10
  DaemonSetStatus status;
  boost::json::object raw;
};

struct Namespace {
  ObjectMeta metadata;
  boost::json::object raw;
};

// ControllerRevision (apps/v1, namespaced): one revision of a DaemonSet's
// pod template, kept by the DaemonSet controller (constructHistory). `data`
// is what getPatch records: {"spec":{"template":{...,"$patch":"replace"}}},
// the strategic merge patch `kubectl rollout undo` sends back.
struct ControllerRevision {
  ObjectMeta metadata;
  boost::json::value data;
  int64_t revision = 0;
  boost::json::object raw;
};

// ---- the GPU Operator's custom resources (group nvidia.com) ----

// metav1.Condition, as the operator's resources report them.
struct Condition {
  std::string type;    // "Ready", "Error"
  std::string status;  // "True", "False", "Unknown"
  std::string reason;
  std::string message;
  std::optional<Time> last_transition_time;
};

// ClusterPolicy (nvidia.com/v1, cluster-scoped): the operator's singleton.
// The spec stays JSON in `raw` (core/gpu_operator/cluster_policy.h reads the fields the
// rules need, with the operator's defaults); the status is typed.
struct ClusterPolicy {
  ObjectMeta metadata;
  std::string state;  // status.state: "ready", "notReady", "ignored", "" when unset
  std::vector<Condition> conditions;
  boost::json::object raw;
};

// NVIDIADriver (nvidia.com/v1alpha1, cluster-scoped): one driver
// configuration for the nodes its spec.nodeSelector selects.
struct NVIDIADriver {
  ObjectMeta metadata;
  std::string driver_type;  // spec.driverType: "gpu" (default), "vgpu", "vgpu-host-manager"
  Labels node_selector;     // spec.nodeSelector
  std::string state;        // status.state
  std::vector<Condition> conditions;
  boost::json::object raw;
};

// A decoded object of one of the kinds gpuops handles (core/codec/decode.h
// decode_object and decode_manifest, core/cluster/cluster.h Cluster::apply): the
// four built-in kinds, the GPU Operator's two custom resources, and
// ControllerRevisions (made by the simulator's DaemonSet controller and
// served; manifests do not carry them).
using Object = std::variant<Namespace, Node, DaemonSet, Pod, ClusterPolicy, NVIDIADriver, ControllerRevision>;

// What the analyses read: every node of the cluster, and the DaemonSets and
// pods of one namespace. Snapshots, the simulator and the real backend all
// produce this shape. The operator's cluster-scoped resources are there when
// the input has them (a dump that lists them, a live cluster with their
// CRDs); empty otherwise.
struct ClusterState {
  std::string namespace_;
  std::vector<Node> nodes;
  std::vector<DaemonSet> daemonsets;
  std::vector<Pod> pods;
  std::vector<ClusterPolicy> cluster_policies;
  std::vector<NVIDIADriver> nvidia_drivers;
  // When the state was read, for durations ("k8s-driver-manager running for
  // 2h13m"): the clock of the reader for a live cluster, the virtual clock for
  // the simulator, the newest timestamp in the files for a dump
  // (core::newest_timestamp, so a duration is a lower bound). Absent when
  // nothing tells; the analyses then give no durations.
  std::optional<Time> observed_at;
  // Pods of other namespaces that hold GPUs (core::holds_gpu: a container
  // asking for nvidia.com/gpu or a nvidia.com/mig-* resource), not
  // terminal: the GPU workloads a driver needs gone before it can unload.
  // nullopt when the reader did not see other namespaces (a dump of one
  // namespace, a must-gather, a live read whose role may not list pods
  // across namespaces: 403): the analyses then say they could not see them.
  // A live read (real::ApiCluster::gpu_workloads) and the simulator see
  // every namespace.
  std::optional<std::vector<Pod>> gpu_workloads;
};

// Whether `pod` belongs to the part of a state for `nodes`: its target node
// (Pod::target_node: the node it is bound to, or pinned to by the DaemonSet
// controller's node affinity) is one of them, or it has none.
bool in_state_part(const Pod& pod, const std::set<std::string>& nodes);
// The part of `state` for `nodes`: those of its nodes, the pods
// in_state_part, and all of its DaemonSets, ClusterPolicies and
// NVIDIADrivers, with its namespace and observed_at; in `state`'s order.
// What a node's pods, labels, matrix row and findings are read from
// (gpuops plan compares only the parts a change touched, core/plan/plan.h).
ClusterState state_part(const ClusterState& state, const std::set<std::string>& nodes);

}  // namespace gpuops::core
