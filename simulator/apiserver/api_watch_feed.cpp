// The watches' feed, the store's side (simulator/apiserver/api_server_impl.h): which
// kinds and namespaces open watches want (WatchInterest, read by the store
// before it builds anything for a write), and Feed::on_write, which queues a
// wanted write for the I/O thread and posts one drain for a batch. The drain
// itself, which encodes once and hands each event to the watching sessions,
// is in api_server.cpp beside the sessions.
#include <boost/asio.hpp>

#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "simulator/apiserver/api_server_impl.h"

namespace gpuops::simulator {

namespace asio = boost::asio;

void internal::WatchInterest::add(Kind kind, const std::string& ns) {
  size_t k = static_cast<size_t>(kind);
  if (ns.empty()) {
    ++all_[k];
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  ++namespaces_[{kind, ns}];
  ++some_[k];
}

void internal::WatchInterest::remove(Kind kind, const std::string& ns) {
  size_t k = static_cast<size_t>(kind);
  if (ns.empty()) {
    --all_[k];
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto it = namespaces_.find({kind, ns});
  if (it == namespaces_.end()) return;
  if (--it->second == 0) namespaces_.erase(it);
  --some_[k];
}

bool internal::WatchInterest::wants(Kind kind, const std::string& ns) const {
  size_t k = static_cast<size_t>(kind);
  if (all_[k] > 0) return true;
  if (some_[k] == 0 || ns.empty()) return false;
  std::lock_guard<std::mutex> lock(mu_);
  return namespaces_.count({kind, ns}) > 0;
}

void internal::FeedEvent::set_pod(const PodRecord& r) {
  // Every field of PodRecord but name and uid; the size check stops a field
  // added to PodRecord from being missed here.
  static_assert(sizeof(PodRecord) == 232, "PodRecord changed: copy its new fields in FeedEvent::set_pod");
  pod.id = r.id;
  pod.created_rv = r.created_rv;
  pod.base = r.base;
  pod.resource_version = r.resource_version;
  pod.creation_timestamp = r.creation_timestamp;
  pod.deletion_timestamp = r.deletion_timestamp;
  pod.deletion_grace_period_seconds = r.deletion_grace_period_seconds;
  pod.node_name = r.node_name;
  pod.pinned_node = r.pinned_node;
  pod.status = r.status;
  if (r.name.size() + r.uid.size() <= kIds) {
    std::memcpy(ids.data(), r.name.data(), r.name.size());
    std::memcpy(ids.data() + r.name.size(), r.uid.data(), r.uid.size());
    name_size = static_cast<uint16_t>(r.name.size());
    uid_size = static_cast<uint16_t>(r.uid.size());
    ids_pending = true;
  } else {
    pod.name = r.name;
    pod.uid = r.uid;
    ids_pending = false;
  }
}

void ApiServer::Impl::Feed::on_write(const StoreWrite& w) {
  // Filled in place, without allocating for a pod (set_pod; a slot reused
  // keeps its strings' buffers).
  internal::FeedEvent& e = impl.pending.back_slot();
  e.type = w.type;
  e.kind = w.kind;
  e.rv = w.resource_version;
  if (auto* pod = std::get_if<const PodRecord*>(&w.object)) {
    e.object.reset();
    e.set_pod(**pod);
  } else {
    e.object = std::make_unique<const core::Object>(w.materialise());
    e.ids_pending = false;  // nothing of `pod` is read for this event
  }
  impl.pending.commit();
  if (!impl.drain_posted) {
    asio::post(impl.io, [i = &impl] { i->drain(); });
    impl.drain_posted = true;  // after: a post that throws leaves the next write to post
  }
}

}  // namespace gpuops::simulator
