// real/reflector.h: keeps a local copy of one kind of API object current by
// one list, then watches, as client-go's Reflector does
// (k8s.io/client-go/tools/cache/reflector.go, ListAndWatch):
//  - list: a paged list (ApiCluster::list, ListPager with FullListIfExpired);
//    the sink's store is replaced by its items (Replace), and the list's
//    resourceVersion is where the watch starts;
//  - watch: GET ...?watch=1&allowWatchBookmarks=true&resourceVersion=RV&
//    timeoutSeconds=T; ADDED/MODIFIED/DELETED go to the sink, each event's
//    metadata.resourceVersion (BOOKMARK's too) is the next watch's start; a
//    watch the server closes (timeoutSeconds) is reopened from there, without
//    a list;
//  - 410 Gone (an ERROR event whose Status code is 410, or a watch or list
//    answered 410 "Expired"): the resourceVersion is too old; list again
//    (isExpiredError / the "too old resource version" relist);
//  - any other failure (connection refused, a dropped watch, 5xx, a broken
//    event, an event over 16 MiB): list again.
//  Every list after the first waits a backoff, a 410's too (client-go's Run:
//  wait.BackoffUntil over ListAndWatch with NewExponentialBackoffManager(
//  800 ms, 30 s, 2 min, factor 2, jitter 1)): `initial_backoff` doubling to
//  `max_backoff`, each wait jittered to a random point in [d, 2d) (jitter
//  1.0), back to `initial_backoff` when the previous wait
//  began more than `backoff_reset` ago. So a server that answers 410 for
//  ever is listed at most about every max_backoff, not as fast as it answers;
//  - `optional` resources (the GPU Operator's CRDs): a list answered 404 or 403
//    counts as synced and empty (no CRD, or a role without it), retried after
//    `max_backoff`, as ApiCluster::state leaves them empty.
// No polling: between events nothing is sent.
//
// Threading: run() blocks on the calling thread (one Client of its own, as
// real/client.h requires); stop() may be called from any thread and makes
// run() return within `watch_timeout` plus a round trip (a watch waiting for
// its next event only sees the stop when an event or its end arrives).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>

#include "core/codec/documents.h"
#include "real/kubeconfig.h"

namespace gpuops::real {

// Where a reflector puts what it reads. Called from the reflector's thread
// only; an implementation shared by several reflectors locks its own data.
class ReflectorSink {
 public:
  virtual ~ReflectorSink() = default;
  // A list begins: add() follows for each item, then end_list(). Items added
  // since begin_list replace the whole store at end_list (DeltaFIFO Replace);
  // a list that fails midway leaves the store as it was (begin_list comes
  // again, without an end_list for the failed one).
  virtual void begin_list() = 0;
  virtual void end_list() = 0;
  // One object (a list item, or a watch event's ADDED/MODIFIED object):
  // inserted or replaced by its namespace/name. Throws core::InputError when
  // the object does not decode (the reflector then lists again after a
  // backoff).
  virtual void add(const core::Document& object) = 0;
  // A DELETED event's object (its last state).
  virtual void remove(const core::Document& object) = 0;
};

struct ReflectorOptions {
  std::chrono::milliseconds initial_backoff{800};   // client-go: 800 ms
  std::chrono::milliseconds max_backoff{30000};     // client-go: 30 s
  std::chrono::milliseconds backoff_reset{120000};  // client-go: 2 min
  bool jitter = true;                               // client-go: 1.0 (tests: off)
  // timeoutSeconds of each watch. client-go picks 5-10 min at random
  // (minWatchTimeout); the server ends the watch then and it is reopened.
  std::chrono::seconds watch_timeout{300};
  bool optional = false;  // 404/403 on the list: synced and empty (see above)
  int64_t page_size = 500;
};

// Counts, for metrics and tests; read from any thread.
struct ReflectorStats {
  std::atomic<uint64_t> lists{0};     // lists completed
  std::atomic<uint64_t> expired{0};   // 410 Gone seen (each led to a list)
  std::atomic<uint64_t> failures{0};  // failures that led to a backoff
  std::atomic<uint64_t> watches{0};   // watch requests opened
  std::atomic<uint64_t> events{0};    // ADDED/MODIFIED/DELETED applied
  std::atomic<bool> synced{false};    // a list has completed (HasSynced)
};

class Reflector {
 public:
  // `path` is the collection's API path ("/api/v1/nodes",
  // "/apis/apps/v1/namespaces/gpu-operator/daemonsets"). `sink` must outlive
  // the reflector. Nothing is sent before run().
  Reflector(RestConfig config, std::string path, ReflectorSink& sink, ReflectorOptions options = {});
  ~Reflector();
  Reflector(const Reflector&) = delete;
  Reflector& operator=(const Reflector&) = delete;

  // Lists and watches until stop(). Never throws: every failure is counted in
  // stats().failures, its message kept in last_error(), and retried.
  void run();
  void stop();

  const std::string& path() const { return path_; }
  const ReflectorStats& stats() const { return stats_; }
  // The message of the last failure ("" if none), for logs.
  std::string last_error() const;

 private:
  // Waits `d` or until stop(); false when stopped.
  bool sleep_for(std::chrono::milliseconds d);
  // The next backoff (ExponentialBackoffManager.Backoff): reset when the
  // last one began more than backoff_reset ago, else doubled, jittered.
  std::chrono::milliseconds next_backoff();
  // One list, then watches until a failure (thrown) or 410 (returns).
  void list_and_watch();

  RestConfig config_;
  std::string path_;
  ReflectorSink& sink_;
  ReflectorOptions options_;
  ReflectorStats stats_;
  std::atomic<bool> stopped_{false};
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::string last_error_;
  std::chrono::milliseconds backoff_{0};  // the un-jittered step (next_backoff)
  std::chrono::steady_clock::time_point last_backoff_start_{};
};

}  // namespace gpuops::real
