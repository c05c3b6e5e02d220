// simulator/store/object_store.h: the simulator's API-server storage.
//
// Holds namespaces, nodes and DaemonSets as core typed objects and pods as
// compact PodRecords (below; a core::Pod is built only when one is read), with
// what the API server adds on write: metadata.uid, metadata.resourceVersion
// (one cluster-wide counter, as etcd's revision), metadata.generation
// (DaemonSets: bumped on spec changes, as pkg/registry/apps/daemonset
// strategy.go PrepareForUpdate), metadata.creationTimestamp, the
// `deprecated.daemonset.template.generation` annotation (bumped on template
// changes), generateName, and graceful pod deletion (CheckGracefulDelete,
// pkg/registry/core/pod/strategy.go). Objects keep every field they were given
// (core model's `raw`); core::encode renders them as the API would.
//
// Changes are published three ways:
//  * StoreObserver (typed, by reference, synchronous): how the simulator's
//    controllers learn about writes. No copies.
//  * StoreSubscriber (synchronous, filtered): how an API front end feeds its
//    open watches. Each subscriber is asked first whether it wants writes of
//    that kind and namespace (StoreSubscriber::wants); only then is it given
//    the write (StoreWrite), and it copies what it keeps. A subscriber with
//    no watch open costs one call per write.
//  * events_since(): for a watch that starts at an older resourceVersion.
//    It reads the stored objects and the tombstones, not what subscribers
//    were given. events_since coalesces: for each object changed after
//    the given resourceVersion it returns one event carrying the object as it
//    is now (ADDED if created after that version, else MODIFIED), plus
//    DELETED tombstones, in resourceVersion order. A client that applies them
//    in order ends in the store's current state, and each event's
//    resourceVersion is the object's own, as in a watch. Tombstones are kept
//    for the last `tombstone_capacity` deletions; asking for an older version
//    throws ClusterError with http_status 410 (Gone, "too old resource
//    version"), as the API server's watch cache does.
//
// Time comes from the clock callback (the simulator's virtual clock); nothing
// here reads the wall clock. Not thread-safe: callers serialize access.
//
// The storage (maps, versions, publishing) is object_store.cpp; what the
// registry does to an object before it is stored (create, update,
// update_status: defaulting, PrepareForCreate/PrepareForUpdate, validation)
// is object_store_strategy.cpp.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include <boost/json/object.hpp>
#include <boost/unordered/unordered_flat_map.hpp>

#include "core/base/errors.h"
#include "core/model/model.h"
#include "simulator/store/pod_table.h"

namespace gpuops::simulator {

enum class Kind { kNamespace, kNode, kDaemonSet, kPod, kControllerRevision, kClusterPolicy, kNVIDIADriver };
// "Namespace", "Node", "DaemonSet", "Pod", "ControllerRevision", "ClusterPolicy", "NVIDIADriver".
const char* kind_name(Kind kind);
// Namespace, Node and the GPU Operator's two custom resources.
bool cluster_scoped(Kind kind);
// The Kind of a core::Object.
Kind kind_of(const core::Object& obj);
// The metadata of a core::Object, whatever its kind.
const core::ObjectMeta& meta_of(const core::Object& obj);
core::ObjectMeta& meta_of(core::Object& obj);

// ValidateDaemonSetUpdate's selector check (pkg/apis/apps/validation/
// validation.go: ValidateImmutableField on spec.selector): a DaemonSet's
// selector cannot change in apps/v1. Throws InputError 422 on
// "spec.selector", message "field is immutable", when `updated`'s
// matchLabels or matchExpressions are not `old`'s. ObjectStore::update and
// FakeCluster::apply (which checks a whole batch before writing) use it.
void validate_daemonset_selector_update(const core::DaemonSet& updated, const core::DaemonSet& old);

enum class EventType { kAdded, kModified, kDeleted };
// "ADDED", "MODIFIED", "DELETED" (watch.EventType).
const char* event_type_name(EventType type);

struct WatchEvent {
  EventType type;
  Kind kind;
  uint64_t resource_version;  // the object's metadata.resourceVersion
  core::Object object;        // for DELETED: the object as it was last stored
};

// How the store keeps a pod: compact, with the parts many pods have in common
// shared. `base` holds everything but the per-pod fields below (its own copies
// of those are ignored); pods a DaemonSet controller creates from one template
// revision share one `base`, and pods with equal statuses may share `status`
// (both immutable once stored). pod() materialises the core::Pod the API
// serves, field for field what was written.
struct PodRecord {
  // The store's handle for this pod: unique for the store's life, never
  // reused (find_pod_by_id). Not part of the API object.
  uint64_t id = 0;
  // The resourceVersion it was created at (ADDED vs MODIFIED in
  // events_since). Not part of the API object.
  uint64_t created_rv = 0;
  std::shared_ptr<const core::Pod> base;
  std::string name;
  std::string uid;
  uint64_t resource_version = 0;
  std::optional<core::Time> creation_timestamp;
  std::optional<core::Time> deletion_timestamp;
  std::optional<int64_t> deletion_grace_period_seconds;
  std::string node_name;  // spec.nodeName
  // Non-empty: spec.affinity.nodeAffinity.required is the single term
  // `matchFields metadata.name In [pinned_node]` (the DaemonSet controller's
  // ReplaceDaemonSetPodNodeNameNodeAffinity), whatever `base` has. Empty: it
  // is base's.
  std::string pinned_node;
  std::shared_ptr<const core::PodStatus> status;

  const std::string& namespace_() const { return base->metadata.namespace_; }
  // metadata.labels, annotations, ownerReferences (from base).
  const core::ObjectMeta& shared_meta() const { return base->metadata; }
  // spec but nodeName and, when pinned, the node affinity (from base).
  const core::PodSpec& shared_spec() const { return base->spec; }
  // As core::Pod::target_node, condition, is_ready.
  std::string target_node() const;
  const core::PodCondition* condition(std::string_view type) const;
  bool is_ready() const;
  // core::node_affinity_matches(pod().spec, node), without materialising.
  bool affinity_matches(const core::Node& node) const;
  // The pod as the API serves it.
  core::Pod pod() const;
  // Splits `pod` into a record (its own base, its own status).
  static PodRecord from_pod(core::Pod pod);
};

// Synchronous, typed notifications of every write, for in-process
// controllers. For kDeleted the object is its final state. The reference is to
// the stored object: its address is stable from ADDED to DELETED (inclusive),
// so an observer may keep pointers to it until it sees DELETED. Observers must
// not write to the store from inside a callback.
class StoreObserver {
 public:
  virtual ~StoreObserver() = default;
  virtual void on_namespace(EventType, const core::Namespace&) {}
  virtual void on_node(EventType, const core::Node&) {}
  virtual void on_daemonset(EventType, const core::DaemonSet&) {}
  virtual void on_pod(EventType, const PodRecord&) {}
  virtual void on_cluster_policy(EventType, const core::ClusterPolicy&) {}
  virtual void on_nvidia_driver(EventType, const core::NVIDIADriver&) {}
  virtual void on_controller_revision(EventType, const core::ControllerRevision&) {}
};

// One write as a StoreSubscriber is given it, inside the write: the object
// as stored after the write (for kDeleted: as it was last stored, with the
// deletion's resourceVersion). The pointers are valid only during the call.
struct StoreWrite {
  EventType type;
  Kind kind;
  uint64_t resource_version;  // the object's metadata.resourceVersion
  // The stored object: a PodRecord for Kind::kPod (copy it, not pod(): its
  // template part and status are shared), else the typed object.
  std::variant<const core::Namespace*, const core::Node*, const core::DaemonSet*, const PodRecord*,
               const core::ControllerRevision*, const core::ClusterPolicy*, const core::NVIDIADriver*>
      object;
  // Who made the write (ObjectStore::writer(): the API request's field
  // manager, or the simulated controller's name), "" when unknown.
  std::string_view writer;

  // metadata.namespace ("" for cluster-scoped kinds).
  const std::string& namespace_() const;
  // The object as the API serves it (a pod materialised: PodRecord::pod()).
  core::Object materialise() const;
};

// A consumer of writes that keeps what it is given for later (an API front
// end's watches). Called inside the write: must not write to the store.
class StoreSubscriber {
 public:
  virtual ~StoreSubscriber() = default;
  // Whether writes of `kind` in namespace `ns` ("" for cluster-scoped kinds)
  // are wanted now. Asked on every write, before anything is built: keep it
  // cheap.
  virtual bool wants(Kind kind, const std::string& ns) const = 0;
  // A write that wants() accepted.
  virtual void on_write(const StoreWrite& write) = 0;
};

class ObjectStore {
 public:
  struct Options {
    uint64_t seed = 1;                 // uids and generated names are pseudo-random from this
    size_t tombstone_capacity = 4096;  // DELETED events kept for events_since
  };

  // `clock` returns the current (virtual) time; it is called on every write.
  ObjectStore(std::function<core::Time()> clock, Options options);
  ObjectStore(const ObjectStore&) = delete;
  ObjectStore& operator=(const ObjectStore&) = delete;

  // The cluster-wide resourceVersion counter: the version of the last write.
  uint64_t resource_version() const { return rv_; }

  // ---- generic API (what a REST front end serves) ----

  // The object, or nullopt. `ns` is ignored for cluster-scoped kinds.
  std::optional<core::Object> get(Kind kind, const std::string& ns, const std::string& name) const;
  // Whether get would find it, without the copy.
  bool contains(Kind kind, const std::string& ns, const std::string& name) const;
  // Every object of `kind`, in namespace `ns` (all namespaces when empty),
  // sorted by namespace then name.
  std::vector<core::Object> list(Kind kind, const std::string& ns = "") const;
  // The stored pods of namespace `ns` (all when empty), in list's order, not
  // materialised. The pointers are valid until the next write.
  std::vector<const PodRecord*> list_pods(const std::string& ns = "") const;
  // The stored pods whose spec.nodeName is `node`, of namespace `ns` (all
  // when empty), in list_pods' order: what list_pods(ns) filtered by
  // node_name == node returns. With the index on (index_pods_by_node_name)
  // and `node` not empty it costs the pods on that node, else it scans
  // every pod. The pointers are valid until the next write.
  std::vector<const PodRecord*> list_pods_on_node(const std::string& node, const std::string& ns = "") const;
  // Keeps an index of the pods by spec.nodeName from now on (built now from
  // the stored pods), for list_pods_on_node. Pods without a nodeName are
  // not indexed. Idempotent. The API front end turns it on: the simulator's
  // controllers do not need it.
  // mirrors the pod registry's spec.nodeName index that the watch cache
  // lists from (NodeNameIndexFunc and Indexers, pkg/registry/core/pod/
  // strategy.go; storage.FieldIndex; k8s.io/apiserver pkg/storage/cacher
  // watch_cache.go).
  void index_pods_by_node_name();
  // Creates `obj`, returning it as stored. An empty name with
  // metadata.generateName in raw gets a name from it (generate_name()). Throws
  // ClusterError 409 (AlreadyExists) when the name is taken, 404 when a
  // namespaced object's namespace does not exist; InputError 422 when the
  // name is missing.
  core::Object create(core::Object obj);
  // A name for a `kind` object in `ns` from its metadata.generateName
  // `base`, free at the moment: mirrors names.SimpleNameGenerator (k8s.io/
  // apiserver pkg/storage/names): `base` cut to maxGeneratedNameLength (58
  // bytes) and 5 characters of utilrand's alphabet; a name already taken is
  // drawn again, as the registry retries a generated name that exists. Every
  // generated name of the store (create, create_generated_pod) is this one.
  std::string generate_name(Kind kind, const std::string& ns, const std::string& base);
  // Stores `obj` as a real cluster holds it (the import of `gpuops plan`,
  // simulator/import.h): as create, but its uid, creationTimestamp,
  // deletionTimestamp, generation and status are kept (a uid or
  // creationTimestamp missing is stamped), and a DaemonSet keeps its
  // template generation annotation (1 when it has none). Same errors as
  // create; a ClusterPolicy or NVIDIADriver is validated as on create.
  // Nothing is returned: an import does not read its objects back (a copy
  // of each of 120,000 pods was a tenth of the import).
  void restore(core::Object obj);
  // Replaces an object's spec and metadata (labels, annotations, ...); status
  // is kept from the stored object, as the kinds' strategies PrepareForUpdate
  // do (except for Namespaces, whose status is replaced too). A non-empty
  // metadata.resourceVersion that differs from the stored one throws
  // ClusterError 409 (Conflict). Throws ClusterError 404 if absent, InputError
  // 422 when a DaemonSet's selector changes (immutable in apps/v1).
  core::Object update(core::Object obj);
  // The /status subresource: replaces the status; the spec is kept from the
  // stored object. For a Node the metadata is the request's too
  // (nodeStatusStrategy.PrepareForUpdate keeps only the spec). Same errors.
  core::Object update_status(core::Object obj);
  // Deletes an object. Pods are deleted gracefully as the API server does
  // (CheckGracefulDelete): grace = `grace_seconds`, else
  // spec.terminationGracePeriodSeconds (30 when unset); 0 when the pod is not
  // bound (no spec.nodeName) or is Failed/Succeeded. Grace 0 removes the
  // object; otherwise it gets deletionTimestamp = now + grace and stays until
  // a kubelet (or a grace-0 delete) removes it. Other kinds go at once.
  // Deleting a namespace deletes its DaemonSets and pods first. Throws
  // ClusterError 404 if absent.
  //
  // `propagation` (DeleteOptions.propagationPolicy: "Background", "" the
  // same, "Foreground", "Orphan"), for DaemonSets, mirrors
  // updateForGracefulDeletionAndFinalizers (k8s.io/apiserver
  // pkg/registry/generic/registry/store.go): Foreground adds the
  // `foregroundDeletion` finalizer, Orphan the `orphan` finalizer; an object
  // with finalizers gets deletionTimestamp = now (grace 0) and stays (a
  // MODIFIED write) until the garbage collector removes the last one
  // (remove_finalizer). A second delete of an object being deleted changes
  // nothing. Anything else is InputError 400.
  void remove(Kind kind, const std::string& ns, const std::string& name,
              std::optional<int64_t> grace_seconds = std::nullopt, const std::string& propagation = "");
  // Drops `finalizer` from the DaemonSet "ns/name" (a MODIFIED write); when
  // it was the last one of an object with a deletionTimestamp, the object is
  // deleted. No-op when absent or without that finalizer.
  void remove_finalizer(const std::string& ns, const std::string& name, const std::string& finalizer);

  // See the file comment. `kind` and `ns` filter (empty ns: all). Throws
  // ClusterError 410 when `resource_version` is older than the oldest
  // tombstone still kept.
  std::vector<WatchEvent> events_since(uint64_t resource_version, std::optional<Kind> kind = std::nullopt,
                                       const std::string& ns = "") const;
  // Gives `subscriber` every write it wants (StoreSubscriber), in write
  // order, until remove_subscriber. The subscriber must outlive its
  // subscription.
  void add_subscriber(StoreSubscriber* subscriber);
  void remove_subscriber(StoreSubscriber* subscriber);
  // Who makes the writes from now on, as StoreWrite::writer tells the
  // subscribers: the field manager an API request names (managedFields'
  // `manager`), or a simulated controller's name ("gpu-operator"). "" when
  // unknown. Returns the previous writer; WriterScope sets and restores it.
  std::string set_writer(std::string writer) {
    writer_.swap(writer);
    return writer;
  }
  const std::string& writer() const { return writer_; }

  // API JSON of one object (core::encode), or throws ClusterError 404.
  boost::json::object to_json(Kind kind, const std::string& ns, const std::string& name) const;

  // ---- the GPU Operator's CRDs ----
  // ClusterPolicy (nvidia.com/v1) and NVIDIADriver (nvidia.com/v1alpha1) are
  // stored only once their CRDs are installed, as on a cluster where the
  // operator's Helm chart put them: before that, create/update/get of either
  // throws ClusterError 404 (the API server has no such resource) and an API
  // front end leaves group nvidia.com out of discovery. Custom resources
  // follow apiextensions-apiserver's registry (pkg/registry/customresource
  // strategy.go): metadata.generation 1 on create, bumped when the spec
  // changes; the main resource keeps the stored status and /status keeps the
  // stored spec (the CRDs have the status subresource). Once installed they
  // stay (Helm does not delete CRDs on uninstall).
  void install_gpu_operator_crds() { gpu_operator_crds_ = true; }
  bool gpu_operator_crds() const { return gpu_operator_crds_; }

  // ---- typed API (the simulator's controllers) ----

  void add_observer(StoreObserver* observer) { observers_.push_back(observer); }

  const core::Namespace* find_namespace(const std::string& name) const;
  const core::Node* find_node(const std::string& name) const;
  const core::DaemonSet* find_daemonset(const std::string& ns, const std::string& name) const;
  const PodRecord* find_pod(const std::string& ns, const std::string& name) const;
  const PodRecord* find_pod(const std::string& key) const;  // key "ns/name"
  // By PodRecord::id; nullptr once the pod is gone.
  const PodRecord* find_pod_by_id(uint64_t id) const;
  // The key "ns/name" of the pod with that id, or nullptr once it is gone.
  const std::string* pod_key(uint64_t id) const;
  const std::map<std::string, core::Node>& nodes() const { return nodes_; }
  const std::map<std::string, core::DaemonSet>& daemonsets() const { return daemonsets_; }  // key "ns/name"
  // ControllerRevisions by key "ns/name".
  const std::map<std::string, core::ControllerRevision>& controller_revisions() const { return revisions_; }
  size_t pod_count() const { return pods_.size(); }
  // The id (PodRecord::id) of the last pod created, 0 before the first.
  uint64_t last_pod_id() const { return next_pod_id_; }
  const std::map<std::string, core::ClusterPolicy>& cluster_policies() const { return cluster_policies_; }
  const std::map<std::string, core::NVIDIADriver>& nvidia_drivers() const { return nvidia_drivers_; }
  // Writes a ClusterPolicy's status.state and conditions (the operator's
  // status update; a MODIFIED write). Throws ClusterError 404 if absent.
  void mutate_cluster_policy_status(const std::string& name, const std::string& state,
                                    const std::vector<core::Condition>& conditions);

  // Creates a pod named from `generate_name` (generate_name()). Returns its
  // key "ns/name".
  std::string create_generated_pod(core::Pod pod, const std::string& generate_name);
  // The same for a pod whose template part `base` is shared with other pods
  // (PodRecord): the pod stored is *base with a generated name, uid and
  // creationTimestamp, no nodeName, status `status` (phase Pending when
  // null), and, when `pinned_node` is not empty, the required node affinity
  // `matchFields metadata.name In [pinned_node]`. REQUIRES:
  // base->spec.terminationGracePeriodSeconds set (create defaults it).
  // Returns the stored key "ns/name" (valid while the pod exists).
  const std::string& create_generated_pod(std::shared_ptr<const core::Pod> base, const std::string& generate_name,
                                          const std::string& pinned_node);
  // Applies `fn` to the stored node/pod/DaemonSet in place and records a
  // MODIFIED write (no copy). Throws ClusterError 404 if absent. `fn` must
  // not change the name or namespace.
  void mutate_node(const std::string& name, const std::function<void(core::Node&)>& fn);
  void mutate_pod(const std::string& key, const std::function<void(core::Pod&)>& fn);
  // Cheaper pod writes that touch only per-pod fields (a MODIFIED write each,
  // as mutate_pod): the binding (spec.nodeName and the new status) and a
  // status write. `status` must not be null; it may be shared with other
  // pods. Throw ClusterError 404 if absent.
  void bind_pod(const std::string& key, const std::string& node, std::shared_ptr<const core::PodStatus> status);
  void set_pod_status(const std::string& key, std::shared_ptr<const core::PodStatus> status);
  // The same by PodRecord::id.
  void bind_pod(uint64_t id, const std::string& node, std::shared_ptr<const core::PodStatus> status);
  void set_pod_status(uint64_t id, std::shared_ptr<const core::PodStatus> status);
  void mutate_daemonset_status(const std::string& key, const core::DaemonSetStatus& status);
  // Removes a pod now, whatever its grace (grace 0 delete, as the kubelet and
  // pod GC do). No-op if absent.
  void force_remove_pod(const std::string& key);

  // A random-looking, deterministic RFC 4122 v4 uid.
  std::string new_uid();
  // `n` characters of utilrand's alphabet "bcdfghjklmnpqrstvwxz2456789".
  std::string random_suffix(int n);

  static std::string key(const std::string& ns, const std::string& name) { return ns + "/" + name; }

 private:
  struct Tombstone {
    uint64_t rv;
    WatchEvent event;
  };

  uint64_t next_rv();
  core::Time now_seconds() const;
  void stamp_new(core::ObjectMeta& meta);
  bool restoring_ = false;  // inside restore(): create keeps what the object says
  void emit(EventType type, const core::Namespace& obj);
  void emit(EventType type, const core::Node& obj);
  void emit(EventType type, const core::DaemonSet& obj);
  void emit(EventType type, const PodRecord& obj);
  void emit(EventType type, const core::ClusterPolicy& obj);
  void emit(EventType type, const core::NVIDIADriver& obj);
  // The custom resources' registry (object_store_custom.cpp).
  void check_custom(Kind kind) const;
  template <class T>
  std::map<std::string, T>& custom_table();
  template <class T>
  core::Object create_custom(T obj);
  template <class T>
  core::Object update_custom(T obj, bool status);
  void remove_custom(Kind kind, const std::string& name);
  void emit(EventType type, const core::ControllerRevision& obj);
  // The tail of an update of a kind stored by value (Namespace, Node,
  // DaemonSet, ControllerRevision), once the strategy has prepared `given`:
  // the next resourceVersion, the index moved, `stored` replaced, the
  // MODIFIED event. Returns the stored object.
  template <class T>
  const T& commit_update(Kind kind, const std::string& key, T& given, T& stored);
  // The tail of a removal of a kind stored by value (Namespace, Node,
  // ControllerRevision, ClusterPolicy, NVIDIADriver): the entry `it` of
  // `table` erased, the next resourceVersion on the object, the index, the
  // DELETED event and its tombstone.
  template <class Map>
  void commit_remove(Kind kind, Map& table, typename Map::iterator it);
  void erase_daemonset(const std::string& key);
  template <class T>
  void publish(EventType type, Kind kind, const T& obj, const std::string& ns);
  // The node-name index (index_pods_by_node_name): moves `rec` from the
  // bucket of `from` to that of `to` (an empty name: none). No-op while the
  // index is off or when from == to.
  void node_index_move(const PodRecord* rec, const std::string& from, const std::string& to);
  void index(Kind kind, const std::string& key, uint64_t old_rv, uint64_t new_rv);
  void index(Kind kind, const std::string* stored_key, uint64_t old_rv, uint64_t new_rv);
  void tombstone(WatchEvent event);
  void check_namespace(const std::string& ns) const;
  const PodRecord& create_pod(PodRecord rec);
  const PodRecord& create_pod(PodRecord rec, std::string key);
  using PodEntry = PodTable::Entry;
  // What create_pod does once the entry is in pods_ (resourceVersion, id,
  // indexes, the ADDED event).
  const PodRecord& commit_new_pod(PodEntry& entry);
  template <class Fn>
  void write_pod(const std::string& key, Fn&& fn);
  template <class Fn>
  void write_pod(PodEntry& entry, Fn&& fn);
  void erase_pod(const std::string& key);

  std::function<core::Time()> clock_;
  Options options_;
  uint64_t rv_ = 0;
  uint64_t rng_;
  std::map<std::string, core::Namespace> namespaces_;
  std::map<std::string, core::Node> nodes_;
  // nodes_ by name, for O(1) find_node: open addressing, the keys viewing
  // nodes_' own (stable while the node lives).
  boost::unordered_flat_map<std::string_view, const core::Node*> node_index_;
  std::map<std::string, core::DaemonSet> daemonsets_;
  std::map<std::string, core::ControllerRevision> revisions_;
  PodTable pods_;
  bool gpu_operator_crds_ = false;
  std::map<std::string, core::ClusterPolicy> cluster_policies_;
  std::map<std::string, core::NVIDIADriver> nvidia_drivers_;
  // Entries of pods_ (stable addresses) by PodRecord::id; null once the pod
  // is gone. Ids are dense (one per pod ever created), so this is a vector:
  // 8 bytes per pod the store has ever held.
  std::vector<PodEntry*> pods_by_id_;
  PodEntry* pod_entry(uint64_t id) const { return id < pods_by_id_.size() ? pods_by_id_[id] : nullptr; }
  uint64_t next_pod_id_ = 0;
  // list_pods' order, kept between lists instead of sorted anew by each
  // (at 120,000 pods the sort was 0.3 s of every whole-state read): the ids
  // in (namespace, name) order as of the last list, some of them deleted
  // since, and the ids created since, in creation order (a dump's import
  // creates them in its own, already sorted, order). list_pods drops the
  // deleted and merges the new in.
  mutable std::vector<uint64_t> sorted_pod_ids_;
  mutable std::vector<uint64_t> new_pod_ids_;
  void merge_new_pods() const;
  // resourceVersion at creation, per live namespace, node and DaemonSet (by
  // the address of its key in its map above, stable while it lives): ADDED
  // vs MODIFIED. Pods keep theirs in PodRecord::created_rv.
  std::unordered_map<const std::string*, uint64_t> created_rv_;
  // Live objects by their current resourceVersion: (version, kind, the key of
  // the stored object in its map above), in version order. Versions only
  // grow, so a write appends; the entry of the version it replaces is marked
  // dead (key null) and dead entries are compacted away once they outnumber
  // the live ones. (A flat vector instead of a tree node per write.)
  struct RvEntry {
    uint64_t rv;
    Kind kind;
    const std::string* key;
  };
  std::vector<RvEntry> by_rv_;
  size_t by_rv_dead_ = 0;
  // The first entry of by_rv_ whose version is >= rv (lower_bound).
  std::vector<RvEntry>::iterator find_rv(uint64_t rv);
  std::deque<Tombstone> tombstones_;
  uint64_t compacted_rv_ = 0;  // versions <= this may have lost tombstones
  std::vector<StoreObserver*> observers_;
  std::vector<StoreSubscriber*> subscribers_;
  std::string writer_;
  // Pods by spec.nodeName (not empty), unordered within a node; only while
  // index_node_names_.
  bool index_node_names_ = false;
  std::unordered_map<std::string, std::vector<const PodRecord*>> pods_by_node_;
};

// Sets the store's writer (ObjectStore::set_writer) for its lifetime and
// restores the one before.
class WriterScope {
 public:
  WriterScope(ObjectStore& store, std::string writer) : store_(store), before_(store.set_writer(std::move(writer))) {}
  ~WriterScope() { store_.set_writer(std::move(before_)); }
  WriterScope(const WriterScope&) = delete;
  WriterScope& operator=(const WriterScope&) = delete;

 private:
  ObjectStore& store_;
  std::string before_;
};

}  // namespace gpuops::simulator
