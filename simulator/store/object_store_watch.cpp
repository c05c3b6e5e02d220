// ObjectStore (simulator/store/object_store.h), its watch side: the index of live
// objects by resourceVersion, the tombstones of deletions, publishing a write
// to the observers (the controllers) and the subscribers (the API server's
// watches), and events_since, the replay a watch from an older
// resourceVersion starts with. The watch cache's part of the API server
// (k8s.io/apiserver pkg/storage/cacher, watch_cache.go); storage is in
// object_store.cpp.
#include <algorithm>
#include <type_traits>

#include "simulator/store/object_store.h"
#include "simulator/store/object_store_internal.h"

namespace gpuops::simulator {

using core::ClusterError;

void ObjectStore::index(Kind kind, const std::string& key, uint64_t old_rv, uint64_t new_rv) {
  if (!new_rv) return index(kind, nullptr, old_rv, 0);
  // The entry points at the stored object's own map key (stable while it lives).
  const std::string* stored = nullptr;
  switch (kind) {
    case Kind::kNamespace: stored = &namespaces_.find(key)->first; break;
    case Kind::kNode: stored = &nodes_.find(key)->first; break;
    case Kind::kDaemonSet: stored = &daemonsets_.find(key)->first; break;
    case Kind::kPod: stored = &pods_.find(key)->first; break;
    case Kind::kClusterPolicy: stored = &cluster_policies_.find(key)->first; break;
    case Kind::kNVIDIADriver: stored = &nvidia_drivers_.find(key)->first; break;
    case Kind::kControllerRevision: stored = &revisions_.find(key)->first; break;
  }
  index(kind, stored, old_rv, new_rv);
}

// by_rv_ is sorted and nearly dense (one entry per write but deletions, less
// what compaction dropped): guess the position from the versions at the ends,
// then search the few entries between the guess and the target.
std::vector<ObjectStore::RvEntry>::iterator ObjectStore::find_rv(uint64_t rv) {
  auto less = [](const RvEntry& e, uint64_t v) { return e.rv < v; };
  if (by_rv_.empty() || rv <= by_rv_.front().rv) return by_rv_.begin();
  if (rv > by_rv_.back().rv) return by_rv_.end();
  size_t n = by_rv_.size();
  uint64_t lo_rv = by_rv_.front().rv, hi_rv = by_rv_.back().rv;
  // A guess only (the search below corrects it): double is precise enough.
  size_t guess = static_cast<size_t>(static_cast<double>(rv - lo_rv) * static_cast<double>(n - 1) /
                                     static_cast<double>(hi_rv - lo_rv));
  if (guess >= n) guess = n - 1;
  // Gallop from the guess towards the target, then binary search the bracket.
  size_t lo, hi, step = 1;
  if (by_rv_[guess].rv < rv) {
    lo = guess;
    hi = guess + 1;
    while (hi < n && by_rv_[hi].rv < rv) {
      lo = hi;
      hi = std::min(n, hi + (step *= 2));
    }
  } else {
    hi = guess;
    lo = guess;
    while (lo > 0 && by_rv_[lo].rv >= rv) {
      hi = lo;
      lo = lo > step ? lo - step : 0;
      step *= 2;
    }
  }
  return std::lower_bound(by_rv_.begin() + static_cast<std::ptrdiff_t>(lo),
                          by_rv_.begin() + static_cast<std::ptrdiff_t>(hi), rv, less);
}

void ObjectStore::index(Kind kind, const std::string* stored_key, uint64_t old_rv, uint64_t new_rv) {
  if (old_rv) {
    auto it = find_rv(old_rv);
    if (it != by_rv_.end() && it->rv == old_rv && it->key) {
      it->key = nullptr;
      ++by_rv_dead_;
    }
  }
  // Versions only grow: the new entry goes at the end.
  if (new_rv) by_rv_.push_back(RvEntry{new_rv, kind, stored_key});
  if (by_rv_dead_ > 1024 && by_rv_dead_ * 2 > by_rv_.size()) {
    std::erase_if(by_rv_, [](const RvEntry& e) { return e.key == nullptr; });
    by_rv_dead_ = 0;
  }
}

void ObjectStore::tombstone(WatchEvent event) {
  uint64_t rv = event.resource_version;
  tombstones_.push_back(Tombstone{rv, std::move(event)});
  while (tombstones_.size() > options_.tombstone_capacity) {
    compacted_rv_ = tombstones_.front().rv;
    tombstones_.pop_front();
  }
}

// Nothing is built for a subscriber until it wants the write: a subscriber
// without a watch on that kind costs the wants() call.
template <class T>
void ObjectStore::publish(EventType type, Kind kind, const T& obj, const std::string& ns) {
  if (subscribers_.empty()) return;
  StoreWrite w{type, kind, rv_, &obj, writer_};
  for (StoreSubscriber* s : subscribers_)
    if (s->wants(kind, ns)) s->on_write(w);
}

void ObjectStore::emit(EventType type, const core::Namespace& obj) {
  for (auto* o : observers_) o->on_namespace(type, obj);
  publish(type, Kind::kNamespace, obj, obj.metadata.namespace_);
}
void ObjectStore::emit(EventType type, const core::Node& obj) {
  for (auto* o : observers_) o->on_node(type, obj);
  publish(type, Kind::kNode, obj, obj.metadata.namespace_);
}
void ObjectStore::emit(EventType type, const core::DaemonSet& obj) {
  for (auto* o : observers_) o->on_daemonset(type, obj);
  publish(type, Kind::kDaemonSet, obj, obj.metadata.namespace_);
}
void ObjectStore::emit(EventType type, const core::ControllerRevision& obj) {
  for (auto* o : observers_) o->on_controller_revision(type, obj);
  publish(type, Kind::kControllerRevision, obj, obj.metadata.namespace_);
}
void ObjectStore::emit(EventType type, const PodRecord& obj) {
  for (auto* o : observers_) o->on_pod(type, obj);
  publish(type, Kind::kPod, obj, obj.namespace_());
}

void ObjectStore::emit(EventType type, const core::ClusterPolicy& obj) {
  for (auto* o : observers_) o->on_cluster_policy(type, obj);
  publish(type, Kind::kClusterPolicy, obj, obj.metadata.namespace_);
}
void ObjectStore::emit(EventType type, const core::NVIDIADriver& obj) {
  for (auto* o : observers_) o->on_nvidia_driver(type, obj);
  publish(type, Kind::kNVIDIADriver, obj, obj.metadata.namespace_);
}

// ---------------------------------------------------------------- StoreWrite

const std::string& StoreWrite::namespace_() const {
  return std::visit(
      [](const auto* p) -> const std::string& {
        if constexpr (std::is_same_v<std::decay_t<decltype(*p)>, PodRecord>) {
          return p->namespace_();
        } else {
          return p->metadata.namespace_;
        }
      },
      object);
}

core::Object StoreWrite::materialise() const {
  return std::visit(
      [](const auto* p) -> core::Object {
        if constexpr (std::is_same_v<std::decay_t<decltype(*p)>, PodRecord>) {
          return core::Object(p->pod());
        } else {
          return core::Object(*p);
        }
      },
      object);
}

// ---------------------------------------------------------------- watch

std::vector<WatchEvent> ObjectStore::events_since(uint64_t since, std::optional<Kind> kind,
                                                  const std::string& ns) const {
  if (since < compacted_rv_)
    throw ClusterError(
        "too old resource version: " + std::to_string(since) + " (" + std::to_string(compacted_rv_) + ")", 410);
  std::vector<WatchEvent> out;
  auto namespace_ok = [&](const core::Object& obj) {
    if (ns.empty()) return true;
    if (cluster_scoped(kind_of(obj))) return true;
    return meta_of(obj).namespace_ == ns;
  };
  auto live =
      std::upper_bound(by_rv_.begin(), by_rv_.end(), since, [](uint64_t v, const RvEntry& e) { return v < e.rv; });
  auto dead = std::upper_bound(tombstones_.begin(), tombstones_.end(), since,
                               [](uint64_t v, const Tombstone& t) { return v < t.rv; });
  auto skip_dead = [&] {
    while (live != by_rv_.end() && !live->key) ++live;
  };
  skip_dead();
  while (live != by_rv_.end() || dead != tombstones_.end()) {
    bool take_live = dead == tombstones_.end() || (live != by_rv_.end() && live->rv < dead->rv);
    if (take_live) {
      const Kind k = live->kind;
      const std::string& key = *live->key;
      if (!kind || *kind == k) {
        std::string n = key, s;
        if (auto slash = key.find('/'); slash != std::string::npos) {
          s = key.substr(0, slash);
          n = key.substr(slash + 1);
        }
        auto obj = get(k, s, n);
        if (obj && namespace_ok(*obj)) {
          uint64_t created = 0;
          if (k == Kind::kPod) {
            created = pods_.find(key)->second.created_rv;
          } else if (auto c = created_rv_.find(&key); c != created_rv_.end()) {
            created = c->second;
          }
          EventType t = created > since ? EventType::kAdded : EventType::kModified;
          out.push_back(WatchEvent{t, k, live->rv, std::move(*obj)});
        }
      }
      ++live;
      skip_dead();
    } else {
      if ((!kind || *kind == dead->event.kind) && namespace_ok(dead->event.object)) out.push_back(dead->event);
      ++dead;
    }
  }
  return out;
}

void ObjectStore::add_subscriber(StoreSubscriber* subscriber) { subscribers_.push_back(subscriber); }

void ObjectStore::remove_subscriber(StoreSubscriber* subscriber) { std::erase(subscribers_, subscriber); }

}  // namespace gpuops::simulator
