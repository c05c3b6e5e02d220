// ObjectStore (simulator/store/object_store.h), strategy: what the API server's
// registry does to a request's object before the store holds it. create
// (generateName, the namespace check, uid and creationTimestamp, each kind's
// PrepareForCreate and pod defaulting), update and update_status (the
// resourceVersion precondition, the system fields kept, each kind's
// PrepareForUpdate: status kept by a spec update and spec by a status
// update, DaemonSet generation and templateGeneration) and the DaemonSet
// update validation. Mirrors k8s.io/apiserver
// pkg/registry/generic/registry/store.go (Create, Update) with the
// strategies of pkg/registry/core/{namespace,node,pod}/strategy.go and
// pkg/registry/apps/daemonset/strategy.go.
#include "simulator/store/object_store.h"

#include <boost/json/serialize.hpp>

#include <algorithm>
#include <charconv>
#include <string_view>

#include "core/codec/encode.h"
#include "simulator/store/object_store_internal.h"

namespace gpuops::simulator {

namespace json = boost::json;
using core::ClusterError;
using core::InputError;
using internal::check_version;
using internal::keep_raw;
using internal::keep_system_meta;
using internal::not_found;
using internal::replace_record;
using internal::resource_name;

namespace {

std::string raw_generate_name(const core::Object& obj) {
  return std::visit(
      [](const auto& x) -> std::string {
        const json::value* m = x.raw.if_contains("metadata");
        if (!m || !m->is_object()) return "";
        const json::value* g = m->as_object().if_contains("generateName");
        return g && g->is_string() ? std::string(g->as_string()) : "";
      },
      obj);
}

std::string spec_json(const core::DaemonSet& ds) {
  json::object o = core::encode(ds);
  const json::value* spec = o.if_contains("spec");
  return spec ? json::serialize(*spec) : "";
}

std::string template_json(const core::DaemonSet& ds) {
  json::object o = core::encode(ds);
  const json::value* spec = o.if_contains("spec");
  if (!spec || !spec->is_object()) return "";
  const json::value* t = spec->as_object().if_contains("template");
  return t ? json::serialize(*t) : "";
}

[[noreturn]] void invalid(const std::string& field, const std::string& message) {
  throw InputError::with_status(422, "", 0, field, message);
}

constexpr const char* kTemplateGeneration = "deprecated.daemonset.template.generation";

// The stored templateGeneration plus one. apps/v1 keeps it in the annotation,
// which the API's conversion reads with strconv.ParseInt(value, 10, 64)
// (Convert_v1_DaemonSet_To_apps_DaemonSet, pkg/apis/apps/v1/conversion.go):
// a value that is no int64 fails the request there, and here (an imported
// object may carry one). int64 arithmetic wraps as Go's does.
int64_t next_template_generation(const std::string& stored) {
  std::string_view t(stored);
  if (t.size() > 1 && t[0] == '+' && t[1] != '-') t.remove_prefix(1);  // ParseInt takes one '+' sign
  int64_t n = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), n);
  if (t.empty() || ec != std::errc() || end != t.data() + t.size())
    invalid(std::string("metadata.annotations[") + kTemplateGeneration + "]",
            "Invalid value: \"" + stored + "\": strconv.ParseInt: parsing \"" + stored +
                "\": " + (ec == std::errc::result_out_of_range ? "value out of range" : "invalid syntax"));
  return static_cast<int64_t>(static_cast<uint64_t>(n) + 1);
}

// Pod defaulting and PrepareForCreate (pkg/registry/core/pod/strategy.go):
// status starts Pending, terminationGracePeriodSeconds defaults to 30.
void default_pod(core::Pod& pod) {
  if (!pod.spec.termination_grace_period_seconds) pod.spec.termination_grace_period_seconds = 30;
  if (pod.status.phase.empty()) pod.status.phase = "Pending";
}

const std::shared_ptr<const core::PodStatus>& pending_status() {
  static const auto kPending = [] {
    core::PodStatus s;
    s.phase = "Pending";
    return std::make_shared<const core::PodStatus>(std::move(s));
  }();
  return kPending;
}

}  // namespace

// ---------------------------------------------------------------- validation

void validate_daemonset_selector_update(const core::DaemonSet& updated, const core::DaemonSet& old) {
  // Requirement's == compares key, operator (unknown_op included) and values.
  if (updated.selector.match_labels != old.selector.match_labels ||
      updated.selector.match_expressions != old.selector.match_expressions)
    invalid("spec.selector", "field is immutable");
}

// ---------------------------------------------------------------- create

void ObjectStore::check_namespace(const std::string& ns) const {
  if (ns.empty()) invalid("metadata.namespace", "namespace is required");
  if (!namespaces_.count(ns)) not_found(Kind::kNamespace, ns);
}

core::Object ObjectStore::create(core::Object obj) {
  Kind kind = kind_of(obj);
  core::ObjectMeta& m = meta_of(obj);
  if (m.name.empty()) {
    std::string gen = raw_generate_name(obj);
    if (gen.empty()) invalid("metadata.name", "name or generateName is required");
    m.name = generate_name(kind, cluster_scoped(kind) ? "" : m.namespace_, gen);
  }
  if (kind == Kind::kClusterPolicy || kind == Kind::kNVIDIADriver) check_custom(kind);
  if (cluster_scoped(kind)) {
    m.namespace_.clear();
  } else {
    check_namespace(m.namespace_);
  }
  if (contains(kind, m.namespace_, m.name))
    throw ClusterError(std::string(resource_name(kind)) + " \"" + m.name + "\" already exists", 409);
  if (!restoring_) {
    stamp_new(m);
    m.generation = 0;
  } else {
    if (m.uid.empty()) m.uid = new_uid();
    if (!m.creation_timestamp) m.creation_timestamp = now_seconds();
  }
  switch (kind) {
    case Kind::kNamespace: {
      auto& ns = std::get<core::Namespace>(obj);
      ns.metadata.resource_version = std::to_string(next_rv());
      auto [slot, fresh] = namespaces_.try_emplace(ns.metadata.name);
      (void)fresh;
      created_rv_[&slot->first] = rv_;
      auto& stored = slot->second = ns;
      index(kind, ns.metadata.name, 0, rv_);
      emit(EventType::kAdded, stored);
      return core::Object(stored);
    }
    case Kind::kNode: {
      auto& n = std::get<core::Node>(obj);
      n.metadata.resource_version = std::to_string(next_rv());
      auto [slot, fresh] = nodes_.try_emplace(n.metadata.name);
      (void)fresh;
      created_rv_[&slot->first] = rv_;
      auto& stored = slot->second = std::move(n);
      index(kind, stored.metadata.name, 0, rv_);
      node_index_[std::string_view(slot->first)] = &stored;
      emit(EventType::kAdded, stored);
      return restoring_ ? core::Object() : core::Object(stored);
    }
    case Kind::kDaemonSet: {
      // PrepareForCreate, pkg/registry/apps/daemonset/strategy.go: status
      // cleared, generation 1, templateGeneration 1 (served as the
      // deprecated.daemonset.template.generation annotation).
      auto& ds = std::get<core::DaemonSet>(obj);
      if (!restoring_) {
        ds.status = {};
        ds.metadata.generation = 1;
        ds.metadata.annotations[kTemplateGeneration] = "1";
      } else {
        if (ds.metadata.generation < 1) ds.metadata.generation = 1;
        ds.metadata.annotations.emplace(kTemplateGeneration, "1");
      }
      ds.metadata.resource_version = std::to_string(next_rv());
      std::string k = key(ds.metadata.namespace_, ds.metadata.name);
      auto [slot, fresh] = daemonsets_.try_emplace(k);
      (void)fresh;
      created_rv_[&slot->first] = rv_;
      auto& stored = slot->second = std::move(ds);
      index(kind, k, 0, rv_);
      emit(EventType::kAdded, stored);
      return restoring_ ? core::Object() : core::Object(stored);
    }
    case Kind::kPod: {
      auto& pod = std::get<core::Pod>(obj);
      default_pod(pod);
      const PodRecord& stored = create_pod(PodRecord::from_pod(std::move(pod)));
      return restoring_ ? core::Object() : core::Object(stored.pod());
    }
    case Kind::kClusterPolicy: return create_custom(std::move(std::get<core::ClusterPolicy>(obj)));
    case Kind::kNVIDIADriver: return create_custom(std::move(std::get<core::NVIDIADriver>(obj)));
    case Kind::kControllerRevision: {
      auto& r = std::get<core::ControllerRevision>(obj);
      r.metadata.resource_version = std::to_string(next_rv());
      std::string k = key(r.metadata.namespace_, r.metadata.name);
      auto [slot, fresh] = revisions_.try_emplace(k);
      (void)fresh;
      created_rv_[&slot->first] = rv_;
      auto& stored = slot->second = r;
      index(kind, k, 0, rv_);
      emit(EventType::kAdded, stored);
      return core::Object(stored);
    }
  }
  return obj;
}

std::string ObjectStore::generate_name(Kind kind, const std::string& ns, const std::string& base) {
  constexpr size_t kMaxGeneratedNameLength = 63 - 5;
  const std::string prefix = base.substr(0, kMaxGeneratedNameLength);
  std::string name;
  do {
    name = prefix + random_suffix(5);
  } while (contains(kind, ns, name));
  return name;
}

void ObjectStore::restore(core::Object obj) {
  restoring_ = true;
  struct Reset {
    bool& flag;
    ~Reset() { flag = false; }
  } reset{restoring_};
  create(std::move(obj));
}

std::string ObjectStore::create_generated_pod(core::Pod pod, const std::string& generate_name) {
  check_namespace(pod.metadata.namespace_);
  pod.metadata.name = this->generate_name(Kind::kPod, pod.metadata.namespace_, generate_name);
  stamp_new(pod.metadata);
  std::string k = key(pod.metadata.namespace_, pod.metadata.name);
  default_pod(pod);
  create_pod(PodRecord::from_pod(std::move(pod)));
  return k;
}

const std::string& ObjectStore::create_generated_pod(std::shared_ptr<const core::Pod> base,
                                                     const std::string& generate_name, const std::string& pinned_node) {
  const std::string& ns = base->metadata.namespace_;
  check_namespace(ns);
  if (!base->spec.termination_grace_period_seconds) {  // default_pod, on a copy
    auto copy = std::make_shared<core::Pod>(*base);
    copy->spec.termination_grace_period_seconds = 30;
    base = std::move(copy);
  }
  // The key "ns/name" is built in place: ns, '/', generateName, 5 random
  // characters; the entry is made by the lookup that finds the name free
  // (try_emplace leaves the key as it is when the name is taken).
  std::string k;
  const size_t kept = std::min<size_t>(generate_name.size(), 63 - 5);  // as generate_name()
  k.reserve(ns.size() + 1 + kept + 5);
  k.append(ns).append(1, '/').append(generate_name, 0, kept);
  const size_t prefix = k.size();
  PodEntry* entry = nullptr;
  while (!entry) {
    k.resize(prefix);
    k += random_suffix(5);
    auto [e, fresh] = pods_.try_emplace(std::move(k));
    if (fresh) entry = e;
  }
  PodRecord& rec = entry->second;
  rec.name.assign(entry->first, ns.size() + 1);
  // stamp_new
  rec.uid = new_uid();
  rec.creation_timestamp = now_seconds();
  rec.pinned_node = pinned_node;
  rec.base = std::move(base);
  rec.status = pending_status();
  commit_new_pod(*entry);
  return entry->first;
}

namespace {

// The node's status as stored (typed fields and the raw JSON's "status"),
// over whatever status `given` carries.
void keep_node_status(core::Node& given, const core::Node& stored) {
  given.allocatable = stored.allocatable;
  given.conditions = stored.conditions;
  keep_raw(given.raw, stored.raw, "status");
}

}  // namespace

template <class T>
const T& ObjectStore::commit_update(Kind kind, const std::string& key, T& given, T& stored) {
  uint64_t old = std::stoull(stored.metadata.resource_version);
  given.metadata.resource_version = std::to_string(next_rv());
  index(kind, key, old, rv_);
  stored = std::move(given);
  emit(EventType::kModified, stored);
  return stored;
}

core::Object ObjectStore::update(core::Object obj) {
  Kind kind = kind_of(obj);
  const core::ObjectMeta& m = meta_of(obj);
  if (kind == Kind::kClusterPolicy || kind == Kind::kNVIDIADriver) check_custom(kind);
  std::string ns = cluster_scoped(kind) ? "" : m.namespace_;
  if (!get(kind, ns, m.name)) not_found(kind, m.name);
  switch (kind) {
    case Kind::kNamespace: {
      auto& given = std::get<core::Namespace>(obj);
      auto& stored = namespaces_.at(given.metadata.name);
      check_version(given, stored, kind);
      keep_system_meta(given, stored);
      return core::Object(commit_update(kind, given.metadata.name, given, stored));
    }
    case Kind::kNode: {
      auto& given = std::get<core::Node>(obj);
      auto& stored = nodes_.at(given.metadata.name);
      check_version(given, stored, kind);
      keep_system_meta(given, stored);
      // mirrors nodeStrategy.PrepareForUpdate, pkg/registry/core/node/strategy.go:
      // newNode.Status = oldNode.Status (the main resource does not write status).
      keep_node_status(given, stored);
      return core::Object(commit_update(kind, given.metadata.name, given, stored));
    }
    case Kind::kDaemonSet: {
      auto& given = std::get<core::DaemonSet>(obj);
      std::string k = key(ns, given.metadata.name);
      auto& stored = daemonsets_.at(k);
      check_version(given, stored, kind);
      validate_daemonset_selector_update(given, stored);
      keep_system_meta(given, stored);
      // PrepareForUpdate: status is not changed by a spec update; generation
      // is bumped when the spec changes, templateGeneration when the template
      // does.
      given.status = stored.status;
      std::string old_gen = stored.metadata.annotations.count(kTemplateGeneration)
                                ? stored.metadata.annotations.at(kTemplateGeneration)
                                : "1";
      given.metadata.annotations[kTemplateGeneration] = old_gen;
      if (spec_json(given) != spec_json(stored)) given.metadata.generation = stored.metadata.generation + 1;
      if (template_json(given) != template_json(stored))
        given.metadata.annotations[kTemplateGeneration] = std::to_string(next_template_generation(old_gen));
      core::Object out(commit_update(kind, k, given, stored));
      // An update that removes the last finalizer of an object being
      // deleted deletes it (the registry's Update, store.go).
      if (stored.metadata.deletion_timestamp && stored.metadata.finalizers.empty()) erase_daemonset(k);
      return out;
    }
    case Kind::kPod: {
      auto& given = std::get<core::Pod>(obj);
      std::string k = key(ns, given.metadata.name);
      PodRecord& rec = pods_.find(k)->second;
      core::Pod stored = rec.pod();
      check_version(given, stored, kind);
      keep_system_meta(given, stored);
      given.status = std::move(stored.status);
      uint64_t old = rec.resource_version;
      given.metadata.resource_version = std::to_string(next_rv());
      index(kind, k, old, rv_);
      core::Object out(given);
      std::string old_node = rec.node_name;
      replace_record(rec, std::move(given));
      node_index_move(&rec, old_node, rec.node_name);
      emit(EventType::kModified, rec);
      return out;
    }
    case Kind::kClusterPolicy: return update_custom(std::move(std::get<core::ClusterPolicy>(obj)), false);
    case Kind::kNVIDIADriver: return update_custom(std::move(std::get<core::NVIDIADriver>(obj)), false);
    case Kind::kControllerRevision: {
      auto& given = std::get<core::ControllerRevision>(obj);
      std::string k = key(ns, given.metadata.name);
      auto& stored = revisions_.at(k);
      check_version(given, stored, kind);
      keep_system_meta(given, stored);
      return core::Object(commit_update(kind, k, given, stored));
    }
  }
  return obj;
}

core::Object ObjectStore::update_status(core::Object obj) {
  Kind kind = kind_of(obj);
  const core::ObjectMeta& m = meta_of(obj);
  if (kind == Kind::kClusterPolicy || kind == Kind::kNVIDIADriver) check_custom(kind);
  std::string ns = cluster_scoped(kind) ? "" : m.namespace_;
  auto cur = get(kind, ns, m.name);
  if (!cur) not_found(kind, m.name);
  switch (kind) {
    case Kind::kNode: {
      // mirrors nodeStatusStrategy.PrepareForUpdate, pkg/registry/core/node/strategy.go:
      // newNode.Spec = oldNode.Spec; the status and the metadata (labels,
      // annotations; not the system fields BeforeUpdate keeps) are the request's.
      auto& given = std::get<core::Node>(obj);
      const core::Node& stored = nodes_.at(m.name);
      check_version(given, stored, kind);
      keep_system_meta(given, stored);
      given.unschedulable = stored.unschedulable;
      given.taints = stored.taints;
      keep_raw(given.raw, stored.raw, "spec");
      const std::string name = m.name;  // `m` is given's, moved below
      mutate_node(name, [&](core::Node& n) {
        std::string rv = n.metadata.resource_version;
        n = std::move(given);
        n.metadata.resource_version = rv;  // mutate_node sets the next one
      });
      return core::Object(nodes_.at(name));
    }
    case Kind::kDaemonSet: {
      auto& given = std::get<core::DaemonSet>(obj);
      std::string k = key(ns, m.name);
      check_version(given, daemonsets_.at(k), kind);
      mutate_daemonset_status(k, given.status);
      return core::Object(daemonsets_.at(k));
    }
    case Kind::kPod: {
      auto& given = std::get<core::Pod>(obj);
      std::string k = key(ns, m.name);
      if (!given.metadata.resource_version.empty() &&
          given.metadata.resource_version != std::to_string(pods_.find(k)->second.resource_version))
        check_version(given, pods_.find(k)->second.pod(), kind);  // throws the 409
      set_pod_status(k, std::make_shared<const core::PodStatus>(std::move(given.status)));
      return core::Object(pods_.find(k)->second.pod());
    }
    case Kind::kNamespace:
    case Kind::kControllerRevision:  // no status subresource; not served
      return update(std::move(obj));
    case Kind::kClusterPolicy: return update_custom(std::move(std::get<core::ClusterPolicy>(obj)), true);
    case Kind::kNVIDIADriver: return update_custom(std::move(std::get<core::NVIDIADriver>(obj)), true);
  }
  return obj;
}

}  // namespace gpuops::simulator
