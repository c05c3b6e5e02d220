// simulator/apiserver/api_server.h: the simulator's API front end. Serves a
// FakeCluster's ObjectStore over the Kubernetes REST API (HTTPS, HTTP/1.1,
// bearer token), so stock kubectl, the lab's scripts and real/ can drive it.
//
// Surface (docs/SERVE.md has the full list and what is simplified):
//  * /version, /api, /apis, /apis/apps, /api/v1, /apis/apps/v1 (legacy
//    discovery; the aggregated-discovery Accept types are answered with the
//    legacy documents, which kubectl accepts), /healthz, /readyz, /livez;
//    minimal /openapi/v3 documents (PATCH operations with the fieldValidation
//    parameter, no schemas: what kubectl checks before validating on the
//    server); /openapi/v2 is 404.
//  * request bodies in JSON or YAML; protobuf only for a Namespace
//    (`kubectl create namespace`, simulator/apiserver/api_proto.h).
//  * namespaces, nodes, pods (core/v1), daemonsets (apps/v1) and their
//    /status: get, list (labelSelector, fieldSelector, limit/continue), watch
//    (resourceVersion, allowWatchBookmarks, timeoutSeconds; chunked),
//    create, replace, delete (pods gracefully), patch (merge, strategic
//    merge, JSON patch, server-side apply), dryRun=All.
//  * `Accept: application/json;as=Table;g=meta.k8s.io;v=v1` gets a
//    meta.k8s.io/v1 Table with the columns upstream's printers use
//    (pkg/printers/internalversion/printers.go), so `kubectl get` prints as
//    against a real API server.
//  * Errors are Status objects with upstream's code, reason and message.
//
// Threading: one I/O thread (start() or run()) serves every connection; every
// access to the FakeCluster (requests, the virtual-time ticker, with_cluster)
// holds one mutex, since the simulator is not thread-safe. After each write
// the server calls FakeCluster::run() so the controllers react at once.
//
// Watches: the server subscribes to the store (StoreSubscriber) and wants
// only the writes of kinds and namespaces some watch is open on, so a
// simulator served without watches costs what it costs alone. Those writes
// are kept as written, turned into JSON on the I/O thread outside the mutex,
// and sent in slices; while a watch has more than 1 MiB unsent the server
// waits for its client (at most 1 s, then the backlog bounds of Options
// apply), so a client that reads gets a burst whole. Pods are indexed by
// spec.nodeName (ObjectStore::index_pods_by_node_name) for field-selected
// lists and watches by node.
//
// Time: the cluster's virtual time moves only when Options::clock is set:
// every Options::tick the server advances the cluster by how far that clock
// moved (the CLI passes the steady clock, so virtual time follows the wall
// clock while serving). Network timeouts (watch timeoutSeconds, bookmarks)
// are wall-clock, as on any server.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "core/model/model.h"
#include "simulator/fake_cluster.h"

namespace gpuops::simulator {

class ApiServer {
 public:
  struct Options {
    // Listening address. Anything but a loopback address (127.0.0.0/8, ::1)
    // needs allow_non_loopback, else the constructor throws InputError.
    std::string address = "127.0.0.1";
    uint16_t port = 0;  // 0: a free port chosen by the kernel
    bool allow_non_loopback = false;
    // See the file comment. Empty: virtual time does not move by itself.
    std::function<std::chrono::steady_clock::time_point()> clock;
    std::chrono::milliseconds tick{100};
    // How often a watch with allowWatchBookmarks=true gets a BOOKMARK event.
    std::chrono::milliseconds bookmark_interval{std::chrono::seconds(5)};
    // Bearer token clients must send; empty: 32 random bytes, hex.
    std::string token;
    // gitVersion served at /version.
    std::string git_version = "v1.32.0-gpuops";
    // run() also stops on SIGINT/SIGTERM (asio::signal_set).
    bool stop_on_signals = false;

    // Limits on what one client may hold, as kube-apiserver sets them
    // (k8s.io/apiserver pkg/server/secure_serving.go and config.go) where it
    // has one. A request's token is checked on its header alone: a body is
    // read only for an authenticated request.
    // A request body larger than this is answered 413 RequestEntityTooLarge
    // ("Request entity too large: limit is N", config.go MaxRequestBodyBytes,
    // handlers/rest.go limitedReadBody) and the connection closed.
    std::size_t max_request_body_bytes = 3 * 1024 * 1024;
    // Request line and header fields (http.Server.MaxHeaderBytes); beyond it
    // the connection is closed.
    std::size_t max_header_bytes = 1 << 20;
    // The TLS handshake must finish within this (the client side's
    // TLSHandshakeTimeout of Go's http.DefaultTransport).
    std::chrono::milliseconds handshake_timeout{std::chrono::seconds(10)};
    // A connection's first request header must arrive within this
    // (ReadHeaderTimeout); a kept-alive connection waits this long for the
    // next one (IdleTimeout). Then it is closed.
    std::chrono::milliseconds read_header_timeout{std::chrono::seconds(32)};
    std::chrono::milliseconds idle_timeout{std::chrono::seconds(90)};
    // Reading an authenticated request's body, and writing any answer but a
    // watch, must finish within this (the apiserver's default
    // --request-timeout).
    std::chrono::milliseconds request_timeout{std::chrono::seconds(60)};
    // A watch whose client does not read falls behind: once more than
    // watch_backlog_bytes of events wait unsent and none was written for
    // watch_stall (checked when an event is queued, and when watch_stall has
    // passed since the backlog crossed the bound), or more than
    // watch_backlog_hard_bytes wait at all, the watch is closed (the watch
    // cache's cacheWatcher is closed when its buffer stays full;
    // storage/cacher). The events of the initial state are not counted:
    // they are bounded by what the store holds. Before that, the server
    // waits up to 1 s for a watch with more than 1 MiB unsent (see the file
    // comment).
    std::size_t watch_backlog_bytes = 16 * 1024 * 1024;
    std::size_t watch_backlog_hard_bytes = 256 * 1024 * 1024;
    std::chrono::milliseconds watch_stall{std::chrono::seconds(10)};
    // Connections open at once (>= 1). At the cap, a new one takes the
    // place of the connection that has waited longest for its client (a
    // handshake, a request header, an idle keep-alive); when every one is
    // busy (a request handled, a watch), the new one is closed
    // (core::ConnectionBudget). kube-apiserver bounds a connection's time,
    // not their number; this bound keeps idle and slow clients, however
    // many, from taking every place.
    std::size_t max_connections = 512;
  };

  // Generates the CA, server certificate and token, and binds the listening
  // socket (so port() is known before start()). The cluster must outlive the
  // server. Throws core::InputError for a non-loopback address without
  // allow_non_loopback or an unparsable address, core::ClusterError when the
  // address cannot be bound.
  ApiServer(FakeCluster& cluster, Options options);
  ApiServer(FakeCluster& cluster);
  ApiServer(const ApiServer&) = delete;
  ApiServer& operator=(const ApiServer&) = delete;
  // Stops serving and joins the I/O thread.
  ~ApiServer();

  // Serves on a background thread; returns at once. REQUIRES: not running.
  void start();
  // Serves on the calling thread until stop() (or a signal, see Options).
  void run();
  // Stops serving (from any thread; idempotent). Open watches are cut.
  void stop();

  uint16_t port() const;
  // "https://127.0.0.1:<port>" (the address as given, IPv6 bracketed).
  std::string url() const;
  const std::string& token() const;
  // PEM of the CA that signed the server certificate.
  const std::string& ca_pem() const;

  // A kubeconfig (yaml-cpp emitter) with one cluster/user/context named
  // "gpuops-serve": server url(), certificate-authority-data (base64 of
  // ca_pem()), the token; the context's namespace when `ns` is not empty.
  std::string kubeconfig(const std::string& ns = "") const;
  // Writes kubeconfig() to `path` (mode 0600). Throws core::InputError when
  // the file cannot be written.
  void write_kubeconfig(const std::string& path, const std::string& ns = "") const;

  // Runs `fn` with exclusive access to the cluster (the same mutex requests
  // hold), then FakeCluster::run() so controllers react to what fn wrote.
  // Watches see fn's writes like any other. Exceptions from fn propagate.
  void with_cluster(const std::function<void(FakeCluster&)>& fn);

  // Fuzzing only (fuzz/fuzz_api_server.cpp): `bytes` as one connection's
  // first request, without TLS or a socket. Parsed by the same Beast parser
  // and limits as a connection (header limit, the token checked on the
  // header, the body limit), then handled as Session::on_request does; a
  // request that would start a watch is parsed and checked but not
  // streamed (there is no connection). Returns the status code and body
  // ("401 {...}"), or "" when the bytes are not a complete HTTP request.
  // Not for serving: call it while the server is not running.
  std::string handle_raw_request_for_fuzzing(const std::string& bytes);

  struct Impl;  // internal (simulator/apiserver/api_server_impl.h)

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuops::simulator
