// The API server (simulator/apiserver/api_server.h): the accept loop, TLS sessions
// (Session: reading requests within their timeouts and limits, streaming
// watches), the virtual-time tick, start/stop, and the drain of the watches'
// feed. handle() and the router dispatch() are api_handle.cpp's. What each request does is
// in the handlers' files, listed in simulator/apiserver/api_server_impl.h with the
// rest (api_watch_feed.cpp, api_kubeconfig.cpp).
#include "simulator/apiserver/api_server.h"

#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <boost/url.hpp>

#include <algorithm>
#include <array>
#include <deque>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <set>
#include <string_view>
#include <thread>

#include "core/base/errors.h"
#include "core/codec/decode.h"
#include "core/codec/documents.h"
#include "core/codec/encode.h"
#include "simulator/apiserver/api_server_impl.h"
#include "simulator/apiserver/api_table.h"
#include "simulator/apiserver/listener.h"

namespace gpuops::simulator {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
namespace json = boost::json;
namespace urls = boost::urls;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using internal::api_version;
using internal::ApiError;
using internal::Request;
using internal::status_object;
using internal::throw_api;
using internal::to_api_error;
using internal::WatchSpec;

}  // namespace

// ---- sessions ----

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket sock, ApiServer::Impl& srv)
      : stream_(beast::tcp_stream(std::move(sock)), srv.ssl_ctx),
        srv_(srv),
        bookmark_timer_(srv.io),
        timeout_timer_(srv.io),
        stall_timer_(srv.io),
        fresh_timer_(srv.io) {}
  ~Session() { srv_.budget.release(slot_); }

  // Its place in srv_.budget (admitted in the client's turn).
  void set_slot(core::ConnectionBudget::Id slot) { slot_ = slot; }

  void start() {
    tcp_().expires_after(srv_.opt.handshake_timeout);
    stream_.async_handshake(ssl::stream_base::server, [self = shared_from_this()](error_code ec) {
      if (ec) return self->abort();
      self->read();
    });
  }

  // ---- watch ----
  // Called with the cluster lock held, on the I/O thread.
  void begin_watch(WatchSpec spec, std::vector<std::pair<std::string, json::object>> initial, uint64_t rv,
                   std::set<std::string> visible, std::chrono::seconds timeout, const Request& req) {
    watch_ = std::move(spec);
    last_rv_ = rv;
    visible_ = std::move(visible);
    header_ = std::make_unique<http::response<http::empty_body>>(http::status::ok, req.version());
    header_->set(http::field::content_type, "application/json");
    header_->set(http::field::cache_control, "no-cache, private");
    header_->chunked(true);
    header_->keep_alive(false);
    serializer_ = std::make_unique<http::response_serializer<http::empty_body>>(*header_);
    // A watch lasts as long as its timeoutSeconds; a client that stops
    // reading is caught by the backlog bound (queue()), not by a deadline.
    tcp_().expires_never();
    writing_ = true;
    http::async_write_header(stream_, *serializer_, [self = shared_from_this()](error_code ec, size_t) {
      if (ec) return self->abort();
      self->pump();
    });
    core::Time now = srv_.cluster.now();
    for (auto& [type, obj] : initial) send_event(type, obj, now);
    initial_bytes_ = backlog_bytes_;
    last_progress_ = std::chrono::steady_clock::now();
    id_ = srv_.next_watcher++;
    srv_.watchers[id_] = weak_from_this();
    // From now on the store keeps this kind's writes for the watches (under
    // the cluster mutex: no write can come between the state above and it).
    interest_ns_ = watch_->res->namespaced ? watch_->ns : "";
    srv_.interest.add(watch_->res->kind, interest_ns_);
    interested_ = true;
    // Detects a client that goes away.
    stream_.async_read_some(asio::buffer(sink_), [self = shared_from_this()](error_code, size_t) { self->abort(); });
    timeout_timer_.expires_after(timeout);
    timeout_timer_.async_wait([self = shared_from_this()](error_code ec) {
      if (!ec) self->end_watch();
    });
    if (watch_->bookmarks) schedule_bookmark();
  }

  // Whether on_event would look at an event of `kind` in namespace `ns`.
  bool watches(Kind kind, const std::string& ns) const {
    if (!watch_ || closed_ || ending_ || kind != watch_->res->kind) return false;
    return !watch_->res->namespaced || watch_->ns.empty() || ns == watch_->ns;
  }

  // A store write (I/O thread). `obj` is the object's API JSON, `now` the
  // virtual time (Table ages).
  void on_event(const internal::FeedEvent& ev, const json::object& obj, core::Time now) {
    if (!watch_ || closed_ || ending_) return;
    if (ev.rv <= last_rv_) return;
    if (ev.kind != watch_->res->kind) return;
    last_rv_ = ev.rv;
    const std::string& ns = ev.namespace_();
    if (watch_->res->namespaced && !watch_->ns.empty() && ns != watch_->ns) return;
    std::string key = ns + "/" + ev.name();
    bool match = watch_->labels.matches(ev.labels()) && watch_->fields.matches(obj);
    bool seen = visible_.count(key) > 0;
    if (ev.type == EventType::kDeleted) {
      if (seen || match) send_event("DELETED", obj, now);
      visible_.erase(key);
    } else if (match) {
      send_event(seen ? "MODIFIED" : "ADDED", obj, now);
      visible_.insert(key);
    } else if (seen) {
      // mirrors the cacher's filtering: an object that stops matching is
      // DELETED for this watcher.
      send_event("DELETED", obj, now);
      visible_.erase(key);
    }
  }

  // One event line: the serialisation of {"type": type, "object": obj or
  // its one-row Table}, written out piece by piece (the pieces serialised
  // as they would be inside it) instead of copying `obj` into a new value
  // to serialise that.
  void send_event(const std::string& type, const json::object& obj, core::Time now) {
    std::string line = "{\"type\":" + json::serialize(json::string_view(type)) + ",\"object\":";
    if (watch_->table && type != "BOOKMARK" && type != "ERROR") {
      append_table_for_watch(line, obj, now);
    } else {
      line += json::serialize(obj);
    }
    line += "}\n";
    queue(std::move(line));
  }

  // Ends the stream cleanly (last chunk), then closes.
  void end_watch() {
    if (ending_ || closed_) return;
    ending_ = true;
    out_.push_back(std::nullopt);
    if (!writing_) pump();
  }

  void abort() {
    if (closed_) return;
    closed_ = true;
    srv_.watchers.erase(id_);
    if (interested_) {
      interested_ = false;
      srv_.interest.remove(watch_->res->kind, interest_ns_);
    }
    srv_.resume_drain();  // if the feed waited for this watch
    bookmark_timer_.cancel();
    timeout_timer_.cancel();
    stall_timer_.cancel();
    fresh_timer_.cancel();
    error_code ec;
    tcp_().socket().shutdown(tcp::socket::shutdown_both, ec);
    tcp_().close();
  }

  uint64_t last_rv() const { return last_rv_; }

 private:
  friend struct ApiServer::Impl;

  // The one-row Table of `obj`, serialised, appended to `out`: kind,
  // apiVersion, metadata.resourceVersion (this watch's version), the kind's
  // columnDefinitions (serialised once per watch), rows [{cells, object}]
  // with the object whole (includeObject=Object), none (None), or else its
  // PartialObjectMetadata, as the list's Table rows are (api_handlers_read.cpp).
  void append_table_for_watch(std::string& out, const json::object& obj, core::Time now) {
    if (columns_json_.empty()) columns_json_ = json::serialize(table_columns(watch_->res->kind_name));
    out += "{\"kind\":\"Table\",\"apiVersion\":\"meta.k8s.io/v1\",\"metadata\":{\"resourceVersion\":";
    out += json::serialize(json::string_view(std::to_string(last_rv_)));
    out += "},\"columnDefinitions\":";
    out += columns_json_;
    out += ",\"rows\":[{\"cells\":";
    out += json::serialize(table_cells(watch_->res->kind_name, obj, now));
    if (watch_->include_object == "Object") {
      out += ",\"object\":";
      out += json::serialize(obj);
    } else if (watch_->include_object != "None") {
      out += ",\"object\":{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":\"meta.k8s.io/v1\",\"metadata\":";
      const json::value* m = obj.if_contains("metadata");
      out += m ? json::serialize(*m) : std::string("{}");
      out += "}";
    }
    out += "}]}";
  }

  void schedule_bookmark() {
    bookmark_timer_.expires_after(srv_.opt.bookmark_interval);
    bookmark_timer_.async_wait([self = shared_from_this()](error_code ec) {
      if (ec || self->closed_ || self->ending_) return;
      uint64_t rv = std::max(self->last_rv_, self->srv_.delivered_rv());
      self->last_rv_ = rv;
      json::object obj;
      obj["kind"] = self->watch_->res->kind_name;
      obj["apiVersion"] = api_version(*self->watch_->res);
      json::object md;
      md["resourceVersion"] = std::to_string(rv);
      obj["metadata"] = md;
      self->send_event("BOOKMARK", obj, core::Time());
      self->schedule_bookmark();
    });
  }

  void queue(std::string chunk) {
    if (closed_ || ending_) return;
    backlog_bytes_ += chunk.size();
    out_.push_back(std::move(chunk));
    if (!writing_) {
      last_progress_ = std::chrono::steady_clock::now();
      pump();
      return;
    }
    if (fell_behind()) return close_behind();
    // Past the soft bound: checked again when watch_stall has passed, so a
    // client that stopped reading is closed then, not when (if ever) the
    // next event of its kind comes.
    if (live_backlog() > srv_.opt.watch_backlog_bytes && !stall_armed_) arm_stall_check();
  }

  void close_behind() {
    std::cerr << "gpuops serve: closing a watch of " << watch_->res->plural << " whose client does not read ("
              << backlog_bytes_ << " bytes of events unsent)\n";
    abort();
  }

  void arm_stall_check() {
    stall_armed_ = true;
    auto due = last_progress_ + srv_.opt.watch_stall + std::chrono::milliseconds(1);
    stall_timer_.expires_at(due);
    stall_timer_.async_wait([self = shared_from_this()](error_code ec) {
      self->stall_armed_ = false;
      if (ec || self->closed_ || self->ending_) return;
      if (self->fell_behind()) return self->close_behind();
      if (self->live_backlog() > self->srv_.opt.watch_backlog_bytes) self->arm_stall_check();
    });
  }

  // Bytes of events queued after the initial state, not yet written.
  size_t live_backlog() const { return backlog_bytes_ > initial_bytes_ ? backlog_bytes_ - initial_bytes_ : 0; }

  // Whether the feed should wait for this watch before it delivers more
  // (ApiServer::Impl::drain): it is open, more than kWatchBuffer of its
  // events wait unsent, and it has not been let go (`keeps_up_`).
  bool holds_back_feed() const {
    return watch_ && !closed_ && !ending_ && keeps_up_ && live_backlog() > ApiServer::Impl::kWatchBuffer;
  }
  // The feed waited for this watch too long: deliver to it without waiting
  // (its backlog then grows under the bounds of fell_behind) until it has
  // caught up.
  void let_go() { keeps_up_ = false; }

  // The backlog bound of Options (watch_backlog_bytes and the rest), over
  // the events queued after the initial state.
  bool fell_behind() const {
    size_t live = live_backlog();
    if (live > srv_.opt.watch_backlog_hard_bytes) return true;
    return live > srv_.opt.watch_backlog_bytes &&
           std::chrono::steady_clock::now() - last_progress_ > srv_.opt.watch_stall;
  }

  void pump() {
    if (closed_) return;
    if (out_.empty()) {
      writing_ = false;
      return;
    }
    writing_ = true;
    if (!out_.front()) {
      asio::async_write(stream_, http::make_chunk_last(),
                        [self = shared_from_this()](error_code, size_t) { self->abort(); });
      return;
    }
    // Every event queued (up to kWriteBytes) goes out in one write, each
    // still its own HTTP chunk: the bytes of one http::make_chunk per event
    // ("<hex size>\r\n<event>\r\n"), in fewer TLS records and system calls,
    // so a client that reads keeps up with a burst of events.
    wire_.clear();
    size_t events = 0, payload = 0;
    for (auto it = out_.begin(); it != out_.end() && *it && (events == 0 || wire_.size() < kWriteBytes); ++it) {
      char size[2 * sizeof(size_t) + 1];
      int len = std::snprintf(size, sizeof size, "%zx", (*it)->size());
      wire_.append(size, static_cast<size_t>(len)).append("\r\n").append(**it).append("\r\n");
      payload += (*it)->size();
      ++events;
    }
    asio::async_write(stream_, asio::buffer(wire_),
                      [self = shared_from_this(), events, payload](error_code ec, size_t) {
                        if (ec) return self->abort();
                        self->backlog_bytes_ -= payload;
                        self->initial_bytes_ -= std::min(self->initial_bytes_, payload);
                        self->last_progress_ = std::chrono::steady_clock::now();
                        for (size_t i = 0; i < events; ++i) self->out_.pop_front();
                        if (self->live_backlog() <= ApiServer::Impl::kWatchBuffer) {
                          self->keeps_up_ = true;
                          self->srv_.resume_drain();
                        }
                        self->pump();
                      });
  }

  // ---- plain requests ----
  // The header first (within read_header_timeout, or idle_timeout between
  // requests), the token checked on it, then the body (request_timeout).
  void read() {
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(srv_.opt.max_header_bytes));
    // No limit while the header is read: the parser would refuse a large
    // Content-Length before the token is checked (on_header checks both).
    parser_->body_limit(boost::none);
    tcp_().expires_after(served_ ? srv_.opt.idle_timeout : srv_.opt.read_header_timeout);
    srv_.budget.client_turn(slot_);
    http::async_read_header(stream_, buffer_, *parser_, [self = shared_from_this()](error_code ec, size_t) {
      if (ec) return self->abort();
      self->on_header();
    });
  }

  void on_header() {
    if (int code = srv_.check_header(*parser_)) {
      if (code == 401) return refuse(401, "Unauthorized", "Unauthorized");
      return refuse_too_large();
    }
    // An authenticated request: its body and answer are bounded by
    // request_timeout, and a watch by its backlog; it keeps its place.
    srv_.budget.server_turn(slot_);
    tcp_().expires_after(srv_.opt.request_timeout);
    http::async_read(stream_, buffer_, *parser_, [self = shared_from_this()](error_code ec, size_t) {
      if (ec == http::error::body_limit) return self->refuse_too_large();
      if (ec) return self->abort();
      self->on_request();
    });
  }

  void refuse_too_large() {
    refuse(413, "RequestEntityTooLarge",
           "Request entity too large: limit is " + std::to_string(srv_.opt.max_request_body_bytes));
  }

  // Answers a request whose body was not read with a Status, then closes
  // the connection (what is left of the body cannot be told from a next
  // request).
  void refuse(int code, const std::string& reason, const std::string& message) {
    auto res =
        std::make_shared<http::response<http::string_body>>(static_cast<http::status>(code), parser_->get().version());
    res->set(http::field::content_type, "application/json");
    res->set(http::field::cache_control, "no-cache, private");
    res->body() = json::serialize(status_object(code, reason, message, {}));
    res->keep_alive(false);
    res->prepare_payload();
    tcp_().expires_after(srv_.opt.request_timeout);
    http::async_write(stream_, *res, [self = shared_from_this(), res](error_code, size_t) { self->abort(); });
  }

  void on_request() {
    auto req = std::make_shared<Request>(parser_->release());
    served_ = true;
    tcp_().expires_never();  // handling is not the client's time
    if (!internal::decode_elsewhere(*req)) return answer(req, nullptr, nullptr);
    // A large YAML body: decoded on the decode pool while the I/O thread
    // serves the other clients, then handled here as any other.
    asio::post(srv_.decode_pool, [self = shared_from_this(), req] {
      auto decoded = std::make_shared<std::optional<json::value>>();
      auto early = std::make_shared<std::optional<ApiError>>();
      try {
        *decoded = internal::read_body(req->body());
      } catch (const ApiError& e) {
        *early = e;
      } catch (const std::exception& e) {
        *early = ApiError{500, "InternalError", std::string("Internal error occurred: ") + e.what(), {}};
      }
      asio::post(self->srv_.io, [self, req, decoded, early] {
        if (self->closed_) return;
        self->answer(req, *decoded ? &**decoded : nullptr, *early ? &**early : nullptr);
      });
    });
  }

  using Response = http::response<http::string_body>;

  void answer(const std::shared_ptr<Request>& req, const json::value* decoded, const ApiError* early) {
    auto res = std::make_shared<Response>();
    if (!srv_.handle(*req, shared_from_this(), *res, decoded, early)) return;  // watching
    if (!decoded && !early && too_large_version(*res))
      return wait_fresh(req, res, std::chrono::steady_clock::now() + kFreshWait);
    send(req->keep_alive(), res);
  }

  // A read at a resourceVersion the store has not reached (504
  // ResourceVersionTooLarge): mirrors the watch cache's
  // waitUntilFreshAndBlock (k8s.io/apiserver pkg/storage/cacher,
  // blockTimeout 3 s). The request waits; each time the store's version has
  // moved it is handled again, and answered as soon as it is not a 504, or
  // with the 504 once 3 s have passed. The connection is the client's to
  // close meanwhile.
  static constexpr std::chrono::seconds kFreshWait{3};
  static bool too_large_version(const Response& res) {
    return res.result_int() == 504 && res.body().find("\"ResourceVersionTooLarge\"") != std::string::npos;
  }
  uint64_t store_version() {
    std::lock_guard<std::mutex> lock(srv_.mu);
    return srv_.cluster.store().resource_version();
  }
  void wait_fresh(std::shared_ptr<Request> req, std::shared_ptr<Response> res,
                  std::chrono::steady_clock::time_point deadline) {
    const uint64_t seen = store_version();
    fresh_timer_.expires_after(std::chrono::milliseconds(100));
    fresh_timer_.async_wait([self = shared_from_this(), req, res, deadline, seen](error_code ec) mutable {
      if (ec || self->closed_) return;
      if (self->store_version() != seen) {
        auto again = std::make_shared<Response>();
        if (!self->srv_.handle(*req, self, *again)) return;  // a watch from there
        if (!too_large_version(*again)) return self->send(req->keep_alive(), again);
        res = again;
      }
      if (std::chrono::steady_clock::now() >= deadline) return self->send(req->keep_alive(), res);
      self->wait_fresh(req, res, deadline);
    });
  }

  void send(bool keep, const std::shared_ptr<Response>& res) {
    res->keep_alive(keep);
    res->prepare_payload();
    tcp_().expires_after(srv_.opt.request_timeout);
    http::async_write(stream_, *res, [self = shared_from_this(), res, keep](error_code ec, size_t) {
      if (ec || !keep) return self->abort();
      self->read();
    });
  }

  beast::tcp_stream& tcp_() { return beast::get_lowest_layer(stream_); }

  ssl::stream<beast::tcp_stream> stream_;
  ApiServer::Impl& srv_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  asio::steady_timer bookmark_timer_;
  asio::steady_timer timeout_timer_;
  asio::steady_timer stall_timer_;  // watch_stall after the backlog passed its soft bound
  asio::steady_timer fresh_timer_;  // wait_fresh
  bool stall_armed_ = false;
  std::optional<WatchSpec> watch_;
  uint64_t last_rv_ = 0;
  std::set<std::string> visible_;
  std::unique_ptr<http::response<http::empty_body>> header_;
  std::unique_ptr<http::response_serializer<http::empty_body>> serializer_;
  std::deque<std::optional<std::string>> out_;
  static constexpr size_t kWriteBytes = 256 * 1024;
  std::string wire_;          // the chunks of the write in progress
  std::string columns_json_;  // the Table's columnDefinitions, serialised
  size_t backlog_bytes_ = 0;  // of the chunks in out_
  size_t initial_bytes_ = 0;  // of those, the initial state's, still unsent
  std::chrono::steady_clock::time_point last_progress_;
  bool served_ = false;  // a request was answered on this connection
  bool writing_ = false;
  bool ending_ = false;
  bool closed_ = false;
  int id_ = 0;
  bool keeps_up_ = true;     // the feed waits for it (holds_back_feed)
  bool interested_ = false;  // counted in srv_.interest
  std::string interest_ns_;  // as counted
  std::array<char, 512> sink_{};
  core::ConnectionBudget::Id slot_ = 0;
};

// ---- the server ----

void ApiServer::Impl::accept() {
  acceptor.async_accept([this](error_code ec, tcp::socket sock) {
    if (ec) {
      if (ec == asio::error::operation_aborted) return;
      // Out of descriptors (EMFILE, ENFILE) or another failed accept: wait
      // before the next one instead of spinning on the same error, 5 ms
      // doubling to 1 s (mirrors the tempDelay of net/http Server.Serve).
      accept_delay = accept_delay.count() ? std::min(accept_delay * 2, std::chrono::milliseconds(1000))
                                          : std::chrono::milliseconds(5);
      std::cerr << "gpuops serve: accept: " << ec.message() << "; retrying in " << accept_delay.count() << "ms\n";
      accept_timer.expires_after(accept_delay);
      accept_timer.async_wait([this](error_code wec) {
        if (!wec) accept();
      });
      return;
    } else {
      accept_delay = std::chrono::milliseconds(0);
      // A response goes out as several TLS records; with Nagle's algorithm
      // the last small one waits for the client's delayed ACK (about 40 ms
      // per response on Linux). The API server's Go net/http sets
      // TCP_NODELAY on every connection (Go's default).
      error_code ignored;
      sock.set_option(tcp::no_delay(true), ignored);
      auto session = std::make_shared<Session>(std::move(sock), *this);
      std::weak_ptr<Session> weak = session;
      auto slot = budget.admit([weak] {
        if (auto s = weak.lock()) s->abort();
      });
      if (slot == 0) {
        session->abort();  // every place busy with a request or a watch
      } else {
        session->set_slot(slot);
        session->start();
      }
    }
    accept();
  });
}

void ApiServer::Impl::schedule_tick() {
  if (!opt.clock) return;
  ticker.expires_after(opt.tick);
  ticker.async_wait([this](error_code ec) {
    if (ec) return;
    auto now = opt.clock();
    auto elapsed = std::chrono::duration_cast<core::Duration>(now - last_tick);
    if (elapsed.count() > 0) {
      last_tick += elapsed;
      std::lock_guard<std::mutex> lock(mu);
      try {
        cluster.advance(elapsed);
      } catch (const std::exception& e) {
        std::cerr << "gpuops serve: advancing virtual time: " << e.what() << "\n";
      }
    }
    schedule_tick();
  });
}

// ---- the watches' feed (the store's side: api_watch_feed.cpp) ----

void ApiServer::Impl::drain() {
  if (drain_waiting) return;  // resume_drain() posts it again
  core::Time now;
  {
    std::lock_guard<std::mutex> lock(mu);  // pending, and the cluster's clock (Table ages)
    drain_posted = false;
    inflight.take_from(pending);
    now = cluster.now();
  }
  std::vector<std::shared_ptr<Session>> live;
  for (auto it = watchers.begin(); it != watchers.end();) {
    if (auto s = it->second.lock()) {
      live.push_back(s);
      ++it;
    } else {
      it = watchers.erase(it);
    }
  }
  // Prototypes of pods no longer written would only hold memory.
  if (pod_json.size() > 1024) pod_json.clear();
  for (size_t n = 0; n < kDrainSlice && !inflight.empty(); ++n) {
    internal::FeedEvent& ev = inflight.front();
    bool wanted = false;
    for (auto& s : live) wanted = wanted || s->watches(ev.kind, ev.namespace_());
    if (wanted) {
      ev.take_ids();
      // The same JSON as core::encode(ev.object) (for a pod: PodJsonEncoder,
      // equal to core::encode(pod.pod())).
      json::object obj = ev.object ? core::encode(*ev.object) : pod_json.encode(ev.pod);
      for (auto& s : live) s->on_event(ev, obj, now);
    }
    ev.release();
    inflight.pop_front();
    if (!wanted) continue;
    // Flow control: wait while a watch that keeps up has more than
    // kWatchBuffer unsent (its writes resume the feed), at most
    // kDrainWait; then deliver on and let the watches still behind go.
    bool held = false;
    for (auto& s : live) held = held || s->holds_back_feed();
    if (held) {
      drain_waiting = true;
      drain_timer.expires_after(kDrainWait);
      drain_timer.async_wait([this](error_code ec) {
        if (ec || !drain_waiting) return;
        for (auto& [id, w] : watchers)
          if (auto s = w.lock(); s && s->holds_back_feed()) s->let_go();
        resume_drain();
      });
      return;
    }
  }
  if (!inflight.empty()) asio::post(io, [this] { drain(); });
}

void ApiServer::Impl::resume_drain() {
  if (!drain_waiting) return;
  drain_waiting = false;
  drain_timer.cancel();
  asio::post(io, [this] { drain(); });
}

uint64_t ApiServer::Impl::delivered_rv() {
  if (!inflight.empty()) return inflight.front().rv - 1;
  std::lock_guard<std::mutex> lock(mu);
  return pending.empty() ? cluster.store().resource_version() : pending.front().rv - 1;
}

void ApiServer::Impl::start_watch(const std::shared_ptr<Session>& s, internal::WatchSpec spec,
                                  std::vector<std::pair<std::string, json::object>> initial, uint64_t rv,
                                  std::set<std::string> visible, std::chrono::seconds timeout, const Request& req) {
  bool expired = !initial.empty() && initial.back().first == "ERROR";
  s->begin_watch(std::move(spec), std::move(initial), rv, std::move(visible), timeout, req);
  if (expired) s->end_watch();
}

// ---- public ----

ApiServer::ApiServer(FakeCluster& cluster) : ApiServer(cluster, Options()) {}

ApiServer::ApiServer(FakeCluster& cluster, Options options)
    : impl_(std::make_unique<Impl>(cluster, std::move(options))) {
  Impl& m = *impl_;
  error_code ec;
  asio::ip::address addr = asio::ip::make_address(m.opt.address, ec);
  if (ec) throw core::InputError("", 0, "--address", "\"" + m.opt.address + "\" is not an IP address");
  if (!addr.is_loopback() && !m.opt.allow_non_loopback)
    throw core::InputError("", 0, "--address",
                           m.opt.address +
                               " is not a loopback address; serving beyond this machine needs "
                               "--allow-non-loopback");
  // The certificate covers the address the kubeconfig names (::1, 127.0.0.2,
  // ...), besides 127.0.0.1 and localhost.
  m.pki = ServingPki::generate(addr.to_string());
  m.token = m.opt.token.empty() ? random_token(32) : m.opt.token;
  m.ssl_ctx.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                        ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  m.ssl_ctx.use_certificate_chain(asio::buffer(m.pki.server.cert));
  m.ssl_ctx.use_private_key(asio::buffer(m.pki.server.key), ssl::context::pem);
  m.host = listen_on(m.acceptor, addr, m.opt.port, "serve", m.opt.address);
  // Installed now, so a signal that comes right after the caller announces
  // the server is not lost.
  if (m.opt.stop_on_signals) m.signals.emplace(m.io, SIGINT, SIGTERM);
  {
    std::lock_guard<std::mutex> lock(m.mu);
    cluster.store().add_subscriber(&m.feed);
    // Field-selected pod lists and watches by node (kubectl per node) read
    // the pods of one node, as the watch cache's spec.nodeName index serves
    // them.
    cluster.store().index_pods_by_node_name();
  }
}

ApiServer::~ApiServer() {
  stop();
  if (impl_->thread.joinable()) impl_->thread.join();
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->cluster.store().remove_subscriber(&impl_->feed);
}

void ApiServer::Impl::serve_loop() {
  accept();
  if (opt.clock) {
    last_tick = opt.clock();
    schedule_tick();
  }
  if (signals) {
    signals->async_wait([this](error_code ec, int) {
      if (!ec) io.stop();
    });
  }
  io.run();
}

void ApiServer::start() {
  impl_->running = true;
  impl_->thread = std::thread([this] { impl_->serve_loop(); });
}

void ApiServer::run() {
  impl_->running = true;
  impl_->serve_loop();
}

void ApiServer::stop() { impl_->io.stop(); }

uint16_t ApiServer::port() const { return impl_->acceptor.local_endpoint().port(); }
std::string ApiServer::url() const { return "https://" + impl_->host; }
const std::string& ApiServer::token() const { return impl_->token; }
const std::string& ApiServer::ca_pem() const { return impl_->pki.ca.cert; }

void ApiServer::with_cluster(const std::function<void(FakeCluster&)>& fn) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  fn(impl_->cluster);
  impl_->cluster.run();
}

std::string ApiServer::handle_raw_request_for_fuzzing(const std::string& bytes) {
  Impl& m = *impl_;
  http::request_parser<http::string_body> parser;
  parser.header_limit(static_cast<std::uint32_t>(m.opt.max_header_bytes));
  parser.body_limit(boost::none);
  asio::const_buffer in(bytes.data(), bytes.size());
  error_code ec;
  auto status_of = [](int code, const std::string& body) { return std::to_string(code) + " " + body; };
  bool checked = false;  // Session::on_header's checks done
  for (;;) {
    if (parser.is_header_done() && !checked) {
      checked = true;
      if (int code = m.check_header(parser)) return status_of(code, code == 401 ? "Unauthorized" : "");
    }
    if (parser.is_done()) break;
    if (in.size() == 0) {
      if (!parser.got_some()) return "";
      // Nothing more will come: the client closed (a body read to EOF ends
      // here; anything else is a truncated request).
      parser.put_eof(ec);
      if (ec || !parser.is_done()) return "";
      continue;
    }
    std::size_t used = parser.put(in, ec);
    in += used;
    if (ec == http::error::need_more) {
      ec = {};
      if (used == 0) in = asio::const_buffer();  // what is left needs bytes that will not come
      continue;
    }
    if (ec == http::error::body_limit) return status_of(413, "");
    if (ec) return "";
  }
  Request req = parser.release();
  http::response<http::string_body> res;
  m.handle(req, nullptr, res);
  return status_of(res.result_int(), res.body());
}

}  // namespace gpuops::simulator
