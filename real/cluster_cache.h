// real/cluster_cache.h: what core::ClusterReader::state() reads (nodes, the
// namespace's DaemonSets and pods, ClusterPolicies, NVIDIADrivers), kept
// current by one real::Reflector per resource instead of listed again: the
// informer pattern of client-go (tools/cache shared_informer.go) for the
// resources ApiCluster::state lists, with the same paths and decoders
// (core::decode_*_typed, decode_cluster_policy, decode_nvidia_driver).
//
// The two GPU Operator resources are optional reflectors (404/403: empty).
// Objects are keyed by namespace/name and kept typed (no `raw`), so memory is
// that of one ClusterState plus the map keys.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/model/model.h"
#include "real/kubeconfig.h"
#include "real/reflector.h"

namespace gpuops::real {

class ClusterCache {
 public:
  // `ns` is the namespace of the DaemonSets and pods. Nothing is sent before
  // start().
  ClusterCache(RestConfig config, std::string ns, ReflectorOptions options = {});
  ~ClusterCache();  // stops and joins (see Reflector::stop for how long)
  ClusterCache(const ClusterCache&) = delete;
  ClusterCache& operator=(const ClusterCache&) = delete;

  // Starts one thread per reflector.
  void start();
  void stop();

  // Every reflector has listed once (client-go HasSynced).
  bool synced() const;
  // A copy of the current objects, each kind sorted by namespace/name.
  core::ClusterState state() const;
  // Calls `fn` with the current objects (as state() orders them) without
  // copying them: they are moved into the ClusterState and back, under the
  // cache's lock, so the reflectors wait until `fn` returns. What `fn` throws
  // is rethrown after the objects are back.
  void with_state(const std::function<void(const core::ClusterState&)>& fn);
  // Incremented by every change to the store (a list, an event).
  uint64_t version() const;
  // Waits until version() differs from `seen` or `timeout` passes; returns
  // version().
  uint64_t wait_change(uint64_t seen, std::chrono::milliseconds timeout) const;

  const std::vector<std::unique_ptr<Reflector>>& reflectors() const { return reflectors_; }

  struct Store;  // one kind's objects (cluster_cache.cpp)

 private:
  void changed();

  std::string namespace_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  uint64_t version_ = 0;
  std::vector<std::unique_ptr<Store>> stores_;
  std::vector<std::unique_ptr<Reflector>> reflectors_;
  std::vector<std::thread> threads_;
};

}  // namespace gpuops::real
