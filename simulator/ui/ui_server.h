// simulator/ui/ui_server.h: the live placement view of `gpuops serve --ui`
// (docs/UI.md): a web page on loopback, plain HTTP, next to the API server,
// showing core::placement_view of the served cluster and following the
// store's writes.
//
// Routes (GET only; anything else 405):
//   /login?token=T  T is the API server's bearer token: 303 to / with the
//                   cookie gpuops_ui=<session secret> (HttpOnly,
//                   SameSite=Strict, Path=/); another T: 403.
//   /               the page (data/html/ui.html), /ui.js, /ui.css
//   /api/view       {"view": core::to_json(PlacementView), "log": [lines], "seq": n}
//   /api/explain?node=N&operand=O
//                   core::render_text(core::explain(...)) as text/plain;
//                   404 for an unknown node, 400 for an unknown operand
//   /events         server-sent events (text/event-stream, chunked): one
//                   `view` event with /api/view's document at once, then one
//                   after each batch of store writes (Node, DaemonSet, Pod)
// Every route but /login needs the cookie (else 401). Every request's Host
// header must name the listening address or localhost with its port (else
// 403: a page of another site resolved to 127.0.0.1 is not served, DNS
// rebinding). Every answer carries a Content-Security-Policy that allows
// only this origin's script, style and connections, nothing inline.
//
// Limits: request header 16 KiB, no body, 30 s to read a request; at most
// 64 event streams; a stream more than 16 MiB behind is closed.
//
// Threading: its own I/O thread. The cluster is read through
// ApiServer::with_cluster (the API server's mutex); the store's writes are
// noticed by a StoreSubscriber that only sets a flag and posts a refresh,
// which runs after Options::coalesce so a burst of writes gives one event.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "simulator/apiserver/api_server.h"
#include "simulator/fake_cluster.h"

namespace gpuops::simulator {

class UiServer {
 public:
  struct Options {
    // Loopback only (127.0.0.0/8, ::1): anything else throws InputError.
    std::string address = "127.0.0.1";
    uint16_t port = 0;  // 0: a free port
    // The operands' namespace whose DaemonSets and pods are shown.
    std::string namespace_ = "gpu-operator";
    // Time after the first of a burst of writes before the view is rebuilt.
    std::chrono::milliseconds coalesce{50};
    // Lines of change log kept (newest last).
    size_t log_lines = 200;
    // "HH:MM:SS" prefixed to each log line; default: local wall-clock time.
    std::function<std::string()> clock_text;
  };

  // Binds the socket and subscribes to the cluster's store (through
  // api.with_cluster). Both must outlive the UiServer. Throws
  // core::InputError for a non-loopback or unparsable address,
  // core::ClusterError when it cannot be bound.
  UiServer(ApiServer& api, Options options);
  UiServer(const UiServer&) = delete;
  UiServer& operator=(const UiServer&) = delete;
  // Stops, joins the thread and unsubscribes.
  ~UiServer();

  void start();  // serves on a background thread
  void stop();   // idempotent

  uint16_t port() const;
  // "http://127.0.0.1:<port>"
  std::string url() const;
  // url() + "/login?token=<the API token>": print it once, do not log it.
  std::string login_url() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuops::simulator
