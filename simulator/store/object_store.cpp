// ObjectStore (simulator/store/object_store.h), storage: the maps of stored
// objects and PodRecords, resourceVersions, uids and generated names,
// lookups and lists, the in-place writes the controllers make (mutate_*,
// bind_pod, set_pod_status) and deletion. The etcd3 store's part of the API
// server (k8s.io/apiserver pkg/storage/etcd3). The index by version, the
// tombstones, publishing and events_since (the watch cache) are in
// object_store_watch.cpp; what the API server's registry does to a
// request's object before it is stored (defaulting,
// PrepareForCreate/PrepareForUpdate, validation) is in
// object_store_strategy.cpp.
#include "simulator/store/object_store.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

#include "core/base/terminal.h"
#include "core/codec/encode.h"
#include "core/kube/placement.h"
#include "simulator/store/object_store_internal.h"

namespace gpuops::simulator {

using core::ClusterError;
using internal::not_found;
using internal::replace_record;

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::kNamespace: return "Namespace";
    case Kind::kNode: return "Node";
    case Kind::kDaemonSet: return "DaemonSet";
    case Kind::kPod: return "Pod";
    case Kind::kClusterPolicy: return "ClusterPolicy";
    case Kind::kNVIDIADriver: return "NVIDIADriver";
    case Kind::kControllerRevision: return "ControllerRevision";
  }
  return "";
}

bool cluster_scoped(Kind kind) {
  return kind == Kind::kNamespace || kind == Kind::kNode || kind == Kind::kClusterPolicy || kind == Kind::kNVIDIADriver;
}

Kind kind_of(const core::Object& obj) {
  if (std::holds_alternative<core::Namespace>(obj)) return Kind::kNamespace;
  if (std::holds_alternative<core::Node>(obj)) return Kind::kNode;
  if (std::holds_alternative<core::DaemonSet>(obj)) return Kind::kDaemonSet;
  if (std::holds_alternative<core::ClusterPolicy>(obj)) return Kind::kClusterPolicy;
  if (std::holds_alternative<core::NVIDIADriver>(obj)) return Kind::kNVIDIADriver;
  if (std::holds_alternative<core::ControllerRevision>(obj)) return Kind::kControllerRevision;
  return Kind::kPod;
}

const char* event_type_name(EventType type) {
  switch (type) {
    case EventType::kAdded: return "ADDED";
    case EventType::kModified: return "MODIFIED";
    case EventType::kDeleted: return "DELETED";
  }
  return "";
}

const core::ObjectMeta& meta_of(const core::Object& obj) {
  return std::visit([](const auto& x) -> const core::ObjectMeta& { return x.metadata; }, obj);
}
core::ObjectMeta& meta_of(core::Object& obj) {
  return std::visit([](auto& x) -> core::ObjectMeta& { return x.metadata; }, obj);
}

const char* internal::resource_name(Kind kind) {
  switch (kind) {
    case Kind::kNamespace: return "namespaces";
    case Kind::kNode: return "nodes";
    case Kind::kDaemonSet: return "daemonsets.apps";
    case Kind::kPod: return "pods";
    case Kind::kClusterPolicy: return "clusterpolicies.nvidia.com";
    case Kind::kNVIDIADriver: return "nvidiadrivers.nvidia.com";
    case Kind::kControllerRevision: return "controllerrevisions.apps";
  }
  return "";
}

void internal::not_found(Kind kind, const std::string& name) {
  throw ClusterError(std::string(resource_name(kind)) + " " + core::go_quote(name) + " not found", 404);
}

void internal::replace_record(PodRecord& rec, core::Pod pod) {
  PodRecord fresh = PodRecord::from_pod(std::move(pod));
  fresh.id = rec.id;
  fresh.created_rv = rec.created_rv;
  rec = std::move(fresh);
}

namespace {

// The required node affinity of a pod pinned to `node`.
std::vector<core::NodeSelectorTerm> pin_terms(const std::string& node) {
  core::NodeSelectorTerm term;
  term.match_fields.push_back(core::Requirement{"metadata.name", core::SelectorOperator::kIn, {node}, ""});
  return {std::move(term)};
}

}  // namespace

// ---------------------------------------------------------------- PodRecord

std::string PodRecord::target_node() const {
  if (!node_name.empty()) return node_name;
  if (!pinned_node.empty()) return pinned_node;
  return base->target_node();  // base's spec.nodeName is empty
}

const core::PodCondition* PodRecord::condition(std::string_view type) const {
  for (const auto& c : status->conditions)
    if (c.type == type) return &c;
  return nullptr;
}

bool PodRecord::is_ready() const {
  const core::PodCondition* c = condition("Ready");
  return c && c->status == "True";
}

bool PodRecord::affinity_matches(const core::Node& node) const {
  if (pinned_node.empty()) {
    if (base->spec.node_name.empty()) return core::node_affinity_matches(base->spec, node);
    return core::node_affinity_matches(pod().spec, node);
  }
  // nodeSelector, then the single pinning term (node_affinity_matches).
  return core::node_selector_matches(base->spec.node_selector, node.metadata.labels) &&
         node.metadata.name == pinned_node;
}

core::Pod PodRecord::pod() const {
  core::Pod p = *base;
  p.metadata.name = name;
  p.metadata.uid = uid;
  p.metadata.resource_version = resource_version ? std::to_string(resource_version) : "";
  p.metadata.creation_timestamp = creation_timestamp;
  p.metadata.deletion_timestamp = deletion_timestamp;
  p.metadata.deletion_grace_period_seconds = deletion_grace_period_seconds;
  p.spec.node_name = node_name;
  if (!pinned_node.empty()) p.spec.required_node_affinity = pin_terms(pinned_node);
  p.status = *status;
  return p;
}

PodRecord PodRecord::from_pod(core::Pod pod) {
  PodRecord r;
  r.name = std::move(pod.metadata.name);
  r.uid = std::move(pod.metadata.uid);
  // The record's version is the store's: commit_new_pod and every update
  // stamp it. An imported pod's own is opaque (API conventions: clients must
  // not parse it; another store's may be no number), and is replaced as a
  // restored node's or DaemonSet's is: one that is no decimal number, or past
  // uint64, reads 0 here (from_chars leaves it), instead of throwing.
  const std::string& rv = pod.metadata.resource_version;
  r.resource_version = 0;
  std::from_chars(rv.data(), rv.data() + rv.size(), r.resource_version);
  r.creation_timestamp = pod.metadata.creation_timestamp;
  r.deletion_timestamp = pod.metadata.deletion_timestamp;
  r.deletion_grace_period_seconds = pod.metadata.deletion_grace_period_seconds;
  r.node_name = std::move(pod.spec.node_name);
  r.status = std::make_shared<const core::PodStatus>(std::move(pod.status));
  pod.metadata.name.clear();
  pod.metadata.uid.clear();
  pod.metadata.resource_version.clear();
  pod.metadata.creation_timestamp.reset();
  pod.metadata.deletion_timestamp.reset();
  pod.metadata.deletion_grace_period_seconds.reset();
  pod.spec.node_name.clear();
  pod.status = {};
  r.base = std::make_shared<const core::Pod>(std::move(pod));
  return r;
}

// ---------------------------------------------------------------- ObjectStore

ObjectStore::ObjectStore(std::function<core::Time()> clock, Options options)
    : clock_(std::move(clock)), options_(options), rng_(options.seed) {}

// splitmix64: deterministic, well-mixed, no state beyond one word.
static uint64_t splitmix(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::string ObjectStore::new_uid() {
  uint64_t a = splitmix(rng_), b = splitmix(rng_);
  a = (a & ~0xf000ULL) | 0x4000ULL;                          // version 4
  b = (b & ~0xc000000000000000ULL) | 0x8000000000000000ULL;  // variant 10
  // "%08x-%04x-%04x-%04x-%012x" of a's 64 and b's 64 bits, without printf:
  // the 32 hex digits, most significant first (a byte at a time), with '-'
  // after digits 8, 12, 16 and 20.
  static const char kHex[] = "0123456789abcdef";
  std::string out(36, '-');
  char* p = out.data();
  auto put = [&p](uint64_t word, int from_byte, int to_byte) {
    for (int i = from_byte; i < to_byte; ++i) {
      unsigned byte = static_cast<unsigned>(word >> (56 - 8 * i)) & 0xffu;
      *p++ = kHex[byte >> 4];
      *p++ = kHex[byte & 0xfu];
    }
  };
  put(a, 0, 4);
  ++p;
  put(a, 4, 6);
  ++p;
  put(a, 6, 8);
  ++p;
  put(b, 0, 2);
  ++p;
  put(b, 2, 8);
  return out;
}

// k8s.io/apimachinery/pkg/util/rand String: alphabet without vowels and
// look-alike characters.
std::string ObjectStore::random_suffix(int n) {
  static const char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
  std::string s(static_cast<size_t>(n), ' ');
  for (int i = 0; i < n; ++i) s[static_cast<size_t>(i)] = kAlphabet[splitmix(rng_) % (sizeof kAlphabet - 1)];
  return s;
}

uint64_t ObjectStore::next_rv() { return ++rv_; }

// metav1.Time has second precision on the wire.
core::Time ObjectStore::now_seconds() const {
  return core::Time(std::chrono::floor<std::chrono::seconds>(clock_().time_since_epoch()));
}

void ObjectStore::stamp_new(core::ObjectMeta& meta) {
  meta.uid = new_uid();
  meta.creation_timestamp = now_seconds();
  meta.deletion_timestamp.reset();
  meta.deletion_grace_period_seconds.reset();
}

// ---------------------------------------------------------------- lookups

const core::Namespace* ObjectStore::find_namespace(const std::string& name) const {
  auto it = namespaces_.find(name);
  return it == namespaces_.end() ? nullptr : &it->second;
}
const core::Node* ObjectStore::find_node(const std::string& name) const {
  auto it = node_index_.find(name);
  return it == node_index_.end() ? nullptr : it->second;
}
const core::DaemonSet* ObjectStore::find_daemonset(const std::string& ns, const std::string& name) const {
  auto it = daemonsets_.find(key(ns, name));
  return it == daemonsets_.end() ? nullptr : &it->second;
}
const PodRecord* ObjectStore::find_pod(const std::string& ns, const std::string& name) const {
  return find_pod(key(ns, name));
}
const PodRecord* ObjectStore::find_pod(const std::string& k) const {
  const PodEntry* e = pods_.find(k);
  return e ? &e->second : nullptr;
}
const PodRecord* ObjectStore::find_pod_by_id(uint64_t id) const {
  PodEntry* e = pod_entry(id);
  return e ? &e->second : nullptr;
}
const std::string* ObjectStore::pod_key(uint64_t id) const {
  PodEntry* e = pod_entry(id);
  return e ? &e->first : nullptr;
}

std::optional<core::Object> ObjectStore::get(Kind kind, const std::string& ns, const std::string& name) const {
  switch (kind) {
    case Kind::kNamespace:
      if (auto* p = find_namespace(name)) return core::Object(*p);
      break;
    case Kind::kNode:
      if (auto* p = find_node(name)) return core::Object(*p);
      break;
    case Kind::kDaemonSet:
      if (auto* p = find_daemonset(ns, name)) return core::Object(*p);
      break;
    case Kind::kPod:
      if (auto* p = find_pod(ns, name)) return core::Object(p->pod());
      break;
    case Kind::kClusterPolicy:
      if (auto it = cluster_policies_.find(name); it != cluster_policies_.end()) return core::Object(it->second);
      break;
    case Kind::kNVIDIADriver:
      if (auto it = nvidia_drivers_.find(name); it != nvidia_drivers_.end()) return core::Object(it->second);
      break;
    case Kind::kControllerRevision:
      if (auto it = revisions_.find(key(ns, name)); it != revisions_.end()) return core::Object(it->second);
      break;
  }
  return std::nullopt;
}

bool ObjectStore::contains(Kind kind, const std::string& ns, const std::string& name) const {
  switch (kind) {
    case Kind::kNamespace: return find_namespace(name) != nullptr;
    case Kind::kNode: return find_node(name) != nullptr;
    case Kind::kDaemonSet: return find_daemonset(ns, name) != nullptr;
    case Kind::kPod: return find_pod(ns, name) != nullptr;
    case Kind::kClusterPolicy: return cluster_policies_.count(name) > 0;
    case Kind::kNVIDIADriver: return nvidia_drivers_.count(name) > 0;
    case Kind::kControllerRevision: return revisions_.count(key(ns, name)) > 0;
  }
  return false;
}

std::vector<core::Object> ObjectStore::list(Kind kind, const std::string& ns) const {
  std::vector<core::Object> out;
  switch (kind) {
    case Kind::kNamespace:
      for (const auto& [k, v] : namespaces_) out.emplace_back(v);
      break;
    case Kind::kNode:
      for (const auto& [k, v] : nodes_) out.emplace_back(v);
      break;
    case Kind::kDaemonSet:
      for (const auto& [k, v] : daemonsets_)
        if (ns.empty() || v.metadata.namespace_ == ns) out.emplace_back(v);
      break;
    case Kind::kControllerRevision:
      for (const auto& [k, v] : revisions_)
        if (ns.empty() || v.metadata.namespace_ == ns) out.emplace_back(v);
      break;
    case Kind::kPod: {
      std::vector<const PodRecord*> ps = list_pods(ns);
      out.reserve(ps.size());
      for (auto* p : ps) out.emplace_back(p->pod());
      break;
    }
    case Kind::kClusterPolicy:
      for (const auto& [k, v] : cluster_policies_) out.emplace_back(v);
      break;
    case Kind::kNVIDIADriver:
      for (const auto& [k, v] : nvidia_drivers_) out.emplace_back(v);
      break;
  }
  return out;
}

namespace {

// list's order: namespace, then name.
bool pod_before(const PodRecord* a, const PodRecord* b) {
  if (int c = a->namespace_().compare(b->namespace_())) return c < 0;
  return a->name < b->name;
}

void sort_pods(std::vector<const PodRecord*>& ps) { std::sort(ps.begin(), ps.end(), pod_before); }

}  // namespace

void ObjectStore::merge_new_pods() const {
  if (new_pod_ids_.empty()) return;
  std::vector<const PodRecord*> fresh;
  fresh.reserve(new_pod_ids_.size());
  for (uint64_t id : new_pod_ids_)
    if (const PodEntry* e = pod_entry(id)) fresh.push_back(&e->second);
  new_pod_ids_.clear();
  if (!std::is_sorted(fresh.begin(), fresh.end(), pod_before)) sort_pods(fresh);
  std::vector<const PodRecord*> kept;
  kept.reserve(sorted_pod_ids_.size());
  for (uint64_t id : sorted_pod_ids_)
    if (const PodEntry* e = pod_entry(id)) kept.push_back(&e->second);
  std::vector<const PodRecord*> all(kept.size() + fresh.size());
  std::merge(kept.begin(), kept.end(), fresh.begin(), fresh.end(), all.begin(), pod_before);
  sorted_pod_ids_.clear();
  sorted_pod_ids_.reserve(all.size());
  for (const PodRecord* p : all) sorted_pod_ids_.push_back(p->id);
}

std::vector<const PodRecord*> ObjectStore::list_pods(const std::string& ns) const {
  merge_new_pods();
  std::vector<const PodRecord*> ps;
  ps.reserve(ns.empty() ? pods_.size() : 0);
  size_t dead = 0;
  for (uint64_t id : sorted_pod_ids_) {
    const PodEntry* e = pod_entry(id);
    if (!e) {
      ++dead;
      continue;
    }
    if (ns.empty() || e->second.namespace_() == ns) ps.push_back(&e->second);
  }
  // The deleted go once they are half the list.
  if (dead * 2 > sorted_pod_ids_.size())
    std::erase_if(sorted_pod_ids_, [this](uint64_t id) { return pod_entry(id) == nullptr; });
  return ps;
}

std::vector<const PodRecord*> ObjectStore::list_pods_on_node(const std::string& node, const std::string& ns) const {
  std::vector<const PodRecord*> ps;
  if (!index_node_names_ || node.empty()) {
    for (const auto& [k, e] : pods_)
      if (e->second.node_name == node && (ns.empty() || e->second.namespace_() == ns)) ps.push_back(&e->second);
  } else if (auto it = pods_by_node_.find(node); it != pods_by_node_.end()) {
    for (const PodRecord* p : it->second)
      if (ns.empty() || p->namespace_() == ns) ps.push_back(p);
  }
  sort_pods(ps);
  return ps;
}

void ObjectStore::index_pods_by_node_name() {
  if (index_node_names_) return;
  index_node_names_ = true;
  for (const auto& [k, e] : pods_) node_index_move(&e->second, "", e->second.node_name);
}

void ObjectStore::node_index_move(const PodRecord* rec, const std::string& from, const std::string& to) {
  if (!index_node_names_ || from == to) return;
  if (!from.empty()) {
    auto it = pods_by_node_.find(from);
    if (it != pods_by_node_.end()) {
      std::vector<const PodRecord*>& v = it->second;
      auto at = std::find(v.begin(), v.end(), rec);
      if (at != v.end()) {
        *at = v.back();
        v.pop_back();
      }
      if (v.empty()) pods_by_node_.erase(it);
    }
  }
  if (!to.empty()) pods_by_node_[to].push_back(rec);
}

boost::json::object ObjectStore::to_json(Kind kind, const std::string& ns, const std::string& name) const {
  auto obj = get(kind, ns, name);
  if (!obj) not_found(kind, name);
  return core::encode(*obj);
}

// ---------------------------------------------------------------- writes

const PodRecord& ObjectStore::create_pod(PodRecord rec) {
  std::string k = key(rec.namespace_(), rec.name);
  return create_pod(std::move(rec), std::move(k));
}

const PodRecord& ObjectStore::create_pod(PodRecord rec, std::string k) {
  auto [e, ok] = pods_.try_emplace(std::move(k), std::move(rec));
  (void)ok;
  return commit_new_pod(*e);
}

const PodRecord& ObjectStore::commit_new_pod(PodEntry& entry) {
  auto it = &entry;
  it->second.resource_version = next_rv();
  it->second.id = ++next_pod_id_;
  if (pods_by_id_.size() <= it->second.id) pods_by_id_.resize(it->second.id + 1, nullptr);
  pods_by_id_[it->second.id] = &*it;
  new_pod_ids_.push_back(it->second.id);
  it->second.created_rv = rv_;
  index(Kind::kPod, &it->first, 0, rv_);
  node_index_move(&it->second, "", it->second.node_name);
  emit(EventType::kAdded, it->second);
  return it->second;
}

void ObjectStore::mutate_node(const std::string& name, const std::function<void(core::Node&)>& fn) {
  auto it = nodes_.find(name);
  if (it == nodes_.end()) not_found(Kind::kNode, name);
  fn(it->second);
  uint64_t old = std::stoull(it->second.metadata.resource_version);
  it->second.metadata.resource_version = std::to_string(next_rv());
  index(Kind::kNode, name, old, rv_);
  emit(EventType::kModified, it->second);
}

template <class Fn>
void ObjectStore::write_pod(PodEntry& entry, Fn&& fn) {
  fn(entry.second);
  uint64_t old = entry.second.resource_version;
  entry.second.resource_version = next_rv();
  index(Kind::kPod, &entry.first, old, rv_);
  emit(EventType::kModified, entry.second);
}

template <class Fn>
void ObjectStore::write_pod(const std::string& k, Fn&& fn) {
  PodEntry* e = pods_.find(k);
  if (!e) not_found(Kind::kPod, k.substr(k.find('/') + 1));
  write_pod(*e, std::forward<Fn>(fn));
}

void ObjectStore::mutate_pod(const std::string& k, const std::function<void(core::Pod&)>& fn) {
  write_pod(k, [&](PodRecord& rec) {
    core::Pod p = rec.pod();
    fn(p);
    std::string old_node = rec.node_name;
    replace_record(rec, std::move(p));
    node_index_move(&rec, old_node, rec.node_name);
  });
}

void ObjectStore::bind_pod(uint64_t id, const std::string& node, std::shared_ptr<const core::PodStatus> status) {
  PodEntry* e = pod_entry(id);
  if (!e) not_found(Kind::kPod, "#" + std::to_string(id));
  write_pod(*e, [&](PodRecord& rec) {
    node_index_move(&rec, rec.node_name, node);
    rec.node_name = node;
    rec.status = std::move(status);
  });
}

void ObjectStore::set_pod_status(uint64_t id, std::shared_ptr<const core::PodStatus> status) {
  PodEntry* e = pod_entry(id);
  if (!e) not_found(Kind::kPod, "#" + std::to_string(id));
  write_pod(*e, [&](PodRecord& rec) { rec.status = std::move(status); });
}

void ObjectStore::bind_pod(const std::string& k, const std::string& node,
                           std::shared_ptr<const core::PodStatus> status) {
  write_pod(k, [&](PodRecord& rec) {
    node_index_move(&rec, rec.node_name, node);
    rec.node_name = node;
    rec.status = std::move(status);
  });
}

void ObjectStore::set_pod_status(const std::string& k, std::shared_ptr<const core::PodStatus> status) {
  write_pod(k, [&](PodRecord& rec) { rec.status = std::move(status); });
}

void ObjectStore::mutate_daemonset_status(const std::string& k, const core::DaemonSetStatus& status) {
  auto it = daemonsets_.find(k);
  if (it == daemonsets_.end()) not_found(Kind::kDaemonSet, k.substr(k.find('/') + 1));
  it->second.status = status;
  uint64_t old = std::stoull(it->second.metadata.resource_version);
  it->second.metadata.resource_version = std::to_string(next_rv());
  index(Kind::kDaemonSet, k, old, rv_);
  emit(EventType::kModified, it->second);
}

void ObjectStore::erase_pod(const std::string& k) {
  PodEntry* it = pods_.find(k);
  if (!it) return;
  uint64_t old = it->second.resource_version;
  it->second.resource_version = next_rv();
  index(Kind::kPod, k, old, 0);
  // Observers see the stored object (same address as in ADDED/MODIFIED)
  // before it goes.
  emit(EventType::kDeleted, it->second);
  core::Pod pod = it->second.pod();
  node_index_move(&it->second, it->second.node_name, "");
  pods_by_id_[it->second.id] = nullptr;
  pods_.erase(it);
  tombstone(WatchEvent{EventType::kDeleted, Kind::kPod, rv_, core::Object(std::move(pod))});
}

void ObjectStore::force_remove_pod(const std::string& k) { erase_pod(k); }

void ObjectStore::erase_daemonset(const std::string& k) {
  auto it = daemonsets_.find(k);
  core::DaemonSet ds = std::move(it->second);
  created_rv_.erase(&it->first);
  daemonsets_.erase(it);
  uint64_t old = std::stoull(ds.metadata.resource_version);
  ds.metadata.resource_version = std::to_string(next_rv());
  index(Kind::kDaemonSet, k, old, 0);
  emit(EventType::kDeleted, ds);
  tombstone(WatchEvent{EventType::kDeleted, Kind::kDaemonSet, rv_, core::Object(std::move(ds))});
}

void ObjectStore::remove_finalizer(const std::string& ns, const std::string& name, const std::string& finalizer) {
  std::string k = key(ns, name);
  auto it = daemonsets_.find(k);
  if (it == daemonsets_.end()) return;
  auto& fs = it->second.metadata.finalizers;
  auto f = std::find(fs.begin(), fs.end(), finalizer);
  if (f == fs.end()) return;
  fs.erase(f);
  uint64_t old = std::stoull(it->second.metadata.resource_version);
  it->second.metadata.resource_version = std::to_string(next_rv());
  index(Kind::kDaemonSet, k, old, rv_);
  emit(EventType::kModified, it->second);
  // The registry deletes an object being deleted once its last finalizer goes.
  if (fs.empty() && it->second.metadata.deletion_timestamp) erase_daemonset(k);
}

void ObjectStore::remove(Kind kind, const std::string& ns, const std::string& name,
                         std::optional<int64_t> grace_seconds, const std::string& propagation) {
  if (!propagation.empty() && propagation != "Background" && propagation != "Foreground" && propagation != "Orphan")
    throw core::InputError::with_status(
        400, "", 0, "propagationPolicy",
        "Unsupported value: \"" + propagation + "\": supported values: \"Foreground\", \"Background\", \"Orphan\"");
  switch (kind) {
    case Kind::kPod: {
      std::string k = key(ns, name);
      const PodEntry* it = pods_.find(k);
      if (!it) not_found(kind, name);
      const PodRecord& pod = it->second;
      // CheckGracefulDelete, pkg/registry/core/pod/strategy.go.
      int64_t grace = grace_seconds ? *grace_seconds : pod.shared_spec().termination_grace_period_seconds.value_or(30);
      if (pod.node_name.empty() || pod.status->phase == "Failed" || pod.status->phase == "Succeeded") grace = 0;
      if (grace <= 0) {
        erase_pod(k);
        return;
      }
      // Saturated at the last second metav1.Time can write (RFC 3339 ends
      // at year 9999): now + grace in milliseconds overflowed int64 for a
      // grace past 9.2e15 s, which the API takes (an int64). Go's own
      // time.Second * grace overflows too, so there is no value to mirror.
      const core::Time now = now_seconds();
      constexpr std::chrono::seconds kLast{253402300799};  // 9999-12-31T23:59:59Z
      const auto left = std::chrono::duration_cast<std::chrono::seconds>(core::Time(kLast) - now);
      core::Time deadline = grace >= left.count() ? core::Time(kLast) : now + std::chrono::seconds(grace);
      // A second delete may only shorten the grace period.
      if (pod.deletion_timestamp && *pod.deletion_timestamp <= deadline) return;
      write_pod(k, [&](PodRecord& p) {
        p.deletion_timestamp = deadline;
        p.deletion_grace_period_seconds = grace;
      });
      return;
    }
    case Kind::kNode: {
      auto it = nodes_.find(name);
      if (it == nodes_.end()) not_found(kind, name);
      node_index_.erase(std::string_view(it->first));
      commit_remove(kind, nodes_, it);
      return;
    }
    case Kind::kDaemonSet: {
      std::string k = key(ns, name);
      auto it = daemonsets_.find(k);
      if (it == daemonsets_.end()) not_found(kind, name);
      core::ObjectMeta& m = it->second.metadata;
      if (m.deletion_timestamp) return;  // being deleted already
      // updateForGracefulDeletionAndFinalizers: the policy's finalizer, then
      // an object with finalizers waits for the garbage collector.
      const char* finalizer = propagation == "Foreground" ? "foregroundDeletion"
                              : propagation == "Orphan"   ? "orphan"
                                                          : nullptr;
      if (finalizer && std::find(m.finalizers.begin(), m.finalizers.end(), finalizer) == m.finalizers.end())
        m.finalizers.push_back(finalizer);
      if (m.finalizers.empty()) {
        erase_daemonset(k);
        return;
      }
      m.deletion_timestamp = now_seconds();
      m.deletion_grace_period_seconds = 0;
      uint64_t old = std::stoull(m.resource_version);
      m.resource_version = std::to_string(next_rv());
      index(kind, k, old, rv_);
      emit(EventType::kModified, it->second);
      return;
    }
    case Kind::kControllerRevision: {
      std::string k = key(ns, name);
      auto it = revisions_.find(k);
      if (it == revisions_.end()) not_found(kind, name);
      commit_remove(kind, revisions_, it);
      return;
    }
    case Kind::kNamespace: {
      auto it = namespaces_.find(name);
      if (it == namespaces_.end()) not_found(kind, name);
      // The namespace controller empties the namespace before it goes.
      std::vector<std::string> dss, pods;
      for (const auto& [k, d] : daemonsets_)
        if (d.metadata.namespace_ == name) dss.push_back(d.metadata.name);
      for (const auto& d : dss) erase_daemonset(key(name, d));
      std::vector<std::string> revs;
      for (const auto& [k, r] : revisions_)
        if (r.metadata.namespace_ == name) revs.push_back(r.metadata.name);
      for (const auto& r : revs) remove(Kind::kControllerRevision, name, r);
      for (const auto& [k, e] : pods_)
        if (e->second.namespace_() == name) pods.push_back(e->first);
      for (const auto& k : pods) erase_pod(k);
      commit_remove(kind, namespaces_, namespaces_.find(name));
      return;
    }
    case Kind::kClusterPolicy:
    case Kind::kNVIDIADriver: remove_custom(kind, name); return;
  }
}

}  // namespace gpuops::simulator