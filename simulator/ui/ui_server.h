// simulator/ui/ui_server.h: the live placement view of `gpuops serve --ui`
// (docs/UI.md): a web page on loopback, plain HTTP, next to the API server,
// showing core::placement_view of the served cluster and following the
// store's writes.
//
// Routes (GET only; anything else 405). The page lives under its own path,
// B = base_path() = "/gpuops-ui-<port>/", and its cookie is scoped to it:
// browsers send a cookie to every port of a host (RFC 6265 §8.5), so with
// Path=/ any other service on 127.0.0.1 would receive it, and a second
// `serve --ui` would replace the first's.
//   /login?token=T  T is the API server's bearer token: 303 to B with the
//                   cookie gpuops_ui_<port>=<session secret> (HttpOnly,
//                   SameSite=Strict, Path=B); another T: 403.
//   /               303 to B (no cookie needed, nothing served)
//   B               the page (data/html/ui.html); B + ui.js, B + ui.css
//   B + api/view    {"view": core::to_json(PlacementView), "log": [lines], "seq": n,
//                    "checklist": the last set_checklist document, when one was set}
//   B + api/explain?node=N&operand=O
//                   core::render_text(core::explain(...)) as text/plain;
//                   404 for an unknown node, 400 for an unknown operand
//   B + events      server-sent events (text/event-stream, chunked): one
//                   `view` event with api/view's document at once, then one
//                   after each batch of store writes (Node, DaemonSet, Pod)
//                   and after each set_checklist
// Every route under B needs the cookie (else 401). Every request's Host
// header must name the listening address or localhost with its port (else
// 403: a page of another site resolved to 127.0.0.1 is not served, DNS
// rebinding). Every answer carries a Content-Security-Policy that allows
// only this origin's script, style and connections, nothing inline. The
// session secret is the UI's own (32 random bytes), not the API token.
//
// Limits: request header 16 KiB, no body, 30 s to read a request or write
// an answer; at most 128 connections open (core::ConnectionBudget: at the
// cap, the one waiting longest for its client makes room), of which at most
// 64 event streams. A stream holds at most the view being written and the
// newest one (an older one waiting is replaced), so a slow reader costs no
// more than two views, whatever their size; one view not written within 60 s
// closes the stream (EventSource reconnects).
//
// Threading: its own I/O thread. The cluster is read through
// ApiServer::with_cluster (the API server's mutex); the store's writes are
// noticed by a StoreSubscriber that only sets a flag and posts a refresh,
// which runs after Options::coalesce so a burst of writes gives one event.
#pragma once

#include <boost/json/value.hpp>

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
  // "/gpuops-ui-<port>/": where the page and its API live (the cookie's Path).
  std::string base_path() const;
  // url() + "/login?token=<the API token>": print it once, do not log it.
  std::string login_url() const;

  // The checklist shown beside the grid (`serve --lab --ui --grade-dir`,
  // cli/lab_watch.h watch_document): any JSON document, sent as is in
  // api/view's "checklist" and a new `view` event to every open page.
  // Thread-safe (posted to the I/O thread); the page renders every string
  // in it as text. Adds nothing to the change log.
  void set_checklist(boost::json::value checklist);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuops::simulator
