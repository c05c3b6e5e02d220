#include "simulator/api_server.h"

#include <sys/stat.h>
#include <cerrno>
#include <cstring>
#include <unistd.h>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <boost/url.hpp>
#include <yaml-cpp/yaml.h>

#include <atomic>
#include <deque>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <algorithm>
#include <memory>
#include <optional>
#include <set>
#include <thread>

#include "core/base64.h"
#include "core/decode.h"
#include "core/documents.h"
#include "core/encode.h"
#include "core/errors.h"
#include "simulator/api_patch.h"
#include "simulator/api_proto.h"
#include "simulator/api_pki.h"
#include "simulator/api_select.h"
#include "simulator/api_table.h"
#include "simulator/pod_json.h"

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
using Request = http::request<http::string_body>;

// ---- resources ----

struct Resource {
  Kind kind;
  const char* plural;
  const char* singular;
  const char* kind_name;
  const char* group;  // "" for core
  bool namespaced;
  const char* short_name;
  bool in_all;  // category "all"
};

const Resource kResources[] = {
    {Kind::kNamespace, "namespaces", "namespace", "Namespace", "", false, "ns", false},
    {Kind::kNode, "nodes", "node", "Node", "", false, "no", false},
    {Kind::kPod, "pods", "pod", "Pod", "", true, "po", true},
    {Kind::kDaemonSet, "daemonsets", "daemonset", "DaemonSet", "apps", true, "ds", true},
};

const Resource* find_resource(const std::string& group, const std::string& plural) {
  for (const auto& r : kResources)
    if (group == r.group && plural == r.plural) return &r;
  return nullptr;
}

std::string api_version(const Resource& r) { return std::string(r.group).empty() ? "v1" : std::string(r.group) + "/v1"; }

// "daemonsets.apps" / "pods", as errors name resources.
std::string qualified(const Resource& r) {
  return std::string(r.plural) + (std::string(r.group).empty() ? "" : "." + std::string(r.group));
}

// ---- errors as Status objects ----

struct ApiError {
  int code;
  std::string reason;
  std::string message;
  json::object details;
};

json::object status_object(int code, const std::string& reason, const std::string& message,
                           const json::object& details) {
  json::object s;
  s["kind"] = "Status";
  s["apiVersion"] = "v1";
  s["metadata"] = json::object();
  s["status"] = "Failure";
  s["message"] = message;
  if (!reason.empty()) s["reason"] = reason;
  if (!details.empty()) s["details"] = details;
  s["code"] = code;
  return s;
}

std::string reason_for(int code, const std::string& message) {
  switch (code) {
    case 400: return "BadRequest";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "NotFound";
    case 405: return "MethodNotAllowed";
    case 406: return "NotAcceptable";
    case 409: return message.find("already exists") != std::string::npos ? "AlreadyExists" : "Conflict";
    case 410: return "Expired";
    case 415: return "UnsupportedMediaType";
    case 422: return "Invalid";
    case 429: return "TooManyRequests";
    default: return "InternalError";
  }
}

[[noreturn]] void throw_api(int code, const std::string& message, json::object details = {}) {
  throw ApiError{code, reason_for(code, message), message, std::move(details)};
}

json::object details_for(const Resource* r, const std::string& name, bool kind_not_resource) {
  json::object d;
  if (!name.empty()) d["name"] = name;
  if (r) {
    if (!std::string(r->group).empty()) d["group"] = r->group;
    d["kind"] = kind_not_resource ? r->kind_name : r->plural;
  }
  return d;
}

// Turns core exceptions into API errors, as the API server's
// responsewriters.ErrorToAPIStatus would render them.
ApiError to_api_error(const core::InputError& e, const Resource* r, const std::string& name) {
  int code = e.http_status ? e.http_status : 400;
  std::string message = e.message();
  json::object details = details_for(r, name, code == 422);
  if (code == 422) {
    std::string detail = e.message();
    if (message.find(" is invalid: ") == std::string::npos && r) {
      std::string gk = std::string(r->kind_name) + (std::string(r->group).empty() ? "" : "." + std::string(r->group));
      message = gk + " \"" + name + "\" is invalid: " + (e.field().empty() ? "" : e.field() + ": ") + detail;
    } else if (!e.field().empty()) {
      size_t at = detail.find(e.field() + ": ");
      if (at != std::string::npos) detail = detail.substr(at + e.field().size() + 2);
    }
    json::array causes;
    if (!e.causes.empty()) {
      for (const auto& c : e.causes)
        causes.push_back(json::object{{"reason", c.reason}, {"message", c.message}, {"field", c.field}});
    } else {
      // The cause type of a field.Error from its ErrorBody's first words
      // (field.ErrorType.String()).
      const char* reason = "FieldValueInvalid";
      if (detail.rfind("Required value", 0) == 0) reason = "FieldValueRequired";
      else if (detail.rfind("Unsupported value", 0) == 0) reason = "FieldValueNotSupported";
      else if (detail.rfind("Duplicate value", 0) == 0) reason = "FieldValueDuplicate";
      else if (detail.rfind("Too long", 0) == 0) reason = "FieldValueTooLong";
      else if (detail.rfind("Forbidden", 0) == 0) reason = "FieldValueForbidden";
      causes.push_back(json::object{{"reason", reason}, {"message", detail}, {"field", e.field()}});
    }
    details["causes"] = std::move(causes);
  }
  if (code == 500) {
    // An error that is not a Status (mergepatch.ErrBadPatchType, a plain
    // fmt.Errorf): ErrorToAPIStatus, responsewriters/status.go, answers 500
    // with StatusReasonUnknown ("", left out) and no details.
    return ApiError{code, "", message, {}};
  }
  return ApiError{code, reason_for(code, message), message, details};
}

ApiError to_api_error(const core::ClusterError& e, const Resource* r, const std::string& name) {
  int code = e.http_status() ? e.http_status() : 500;
  std::string message = e.what();
  return ApiError{code, reason_for(code, message), message, details_for(r, name, false)};
}

// ---- object helpers ----

const core::ObjectMeta& meta_of(const core::Object& obj) {
  return std::visit([](const auto& x) -> const core::ObjectMeta& { return x.metadata; }, obj);
}
core::ObjectMeta& meta_of(core::Object& obj) {
  return std::visit([](auto& x) -> core::ObjectMeta& { return x.metadata; }, obj);
}

std::string object_key(const Resource& r, const std::string& ns, const std::string& name) {
  return std::string(r.plural) + "/" + (r.namespaced ? ns + "/" : "") + name;
}

core::Object decode_value(const json::value& v, const std::string& file = "request body") {
  core::Document doc;
  doc.value = v;
  doc.file = file;
  return core::decode_object(doc);
}

// Reads a request body (JSON or YAML, one object).
json::value read_body(const std::string& body) {
  size_t first = body.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && body[first] == '{') {
    error_code ec;
    json::value v = json::parse(body, ec);
    if (ec) throw_api(400, "the object provided is unrecognized: " + ec.message());
    return v;
  }
  std::vector<core::Document> docs;
  try {
    docs = core::read_documents(body, "request body");
  } catch (const core::InputError& e) {
    throw_api(400, "the object provided is unrecognized: " + e.message());
  }
  if (docs.size() != 1) throw_api(400, "the object provided is unrecognized: expected one object, got " + std::to_string(docs.size()));
  return docs[0].value;
}

json::value parse_json(const std::string& body) {
  error_code ec;
  json::value v = json::parse(body, ec);
  if (ec) throw_api(400, "error decoding patch: " + ec.message());
  return v;
}

// The query parameters, decoded (space_as_plus: Go's url.ParseQuery).
std::map<std::string, std::string> query_of(const urls::url_view& u) {
  std::map<std::string, std::string> q;
  urls::encoding_opts opt;
  opt.space_as_plus = true;
  for (auto p : u.params(opt)) q[std::string(p.key)] = p.has_value ? std::string(p.value) : "";
  return q;
}

std::string param(const std::map<std::string, std::string>& q, const std::string& k) {
  auto it = q.find(k);
  return it == q.end() ? "" : it->second;
}

bool truthy(const std::string& v) { return v == "true" || v == "1"; }

// storage.EncodeContinue (apiserver pkg/storage/continue.go): base64 of
// {"v":"meta.k8s.io/v1","rv":N,"start":"<key>\0"}.
std::string encode_continue(uint64_t rv, const std::string& start) {
  json::object o;
  o["v"] = "meta.k8s.io/v1";
  o["rv"] = rv;
  o["start"] = start + std::string(1, '\0');
  return core::base64_encode(json::serialize(o));
}

std::string decode_continue(const std::string& token) {
  try {
    auto raw = core::base64_decode(token);
    if (!raw) throw std::invalid_argument("not base64");
    json::value v = json::parse(*raw);
    const json::object& o = v.as_object();
    if (o.at("v").as_string() != "meta.k8s.io/v1") throw std::invalid_argument("version");
    std::string start(o.at("start").as_string());
    if (!start.empty() && start.back() == '\0') start.pop_back();
    return start;
  } catch (const std::exception&) {
    throw_api(400, "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)");
  }
}

}  // namespace

// ---- sessions ----

class Session;

struct ApiServer::Impl {
  Impl(FakeCluster& c, Options o) : cluster(c), opt(std::move(o)) {}

  FakeCluster& cluster;
  Options opt;
  ServingPki pki;
  std::string token;
  std::string host;  // as in url()
  asio::io_context io{1};
  ssl::context ssl_ctx{ssl::context::tls_server};
  tcp::acceptor acceptor{io};
  asio::steady_timer ticker{io};
  asio::steady_timer accept_timer{io};
  std::chrono::milliseconds accept_delay{0};  // after failed accepts
  std::optional<asio::signal_set> signals;
  std::mutex mu;  // the cluster
  int subscription = 0;
  std::map<int, std::weak_ptr<Session>> watchers;
  int next_watcher = 1;
  uint64_t delivered_rv = 0;
  std::thread thread;
  std::atomic<bool> running{false};
  std::chrono::steady_clock::time_point last_tick;
  // Server-side apply: the last configuration each field manager applied,
  // per object ("<plural>/<ns>/<name>" + "\n" + manager).
  std::map<std::string, json::value> applied;
  // The objects of the last paged list that left a continue token, kept
  // while the store does not change (same resourceVersion), so each continue
  // page is served from one copy instead of a fresh copy of the whole kind.
  struct ListSnapshot {
    const void* res = nullptr;  // the Resource listed
    std::string ns;
    uint64_t rv = 0;
    std::vector<core::Object> objects;  // other kinds
    std::vector<PodRecord> pods;        // pods, as stored (not materialised)
    std::vector<std::string> keys;      // "ns/name" of each object, same order
    bool sorted = true;                 // keys ascending (always, for one namespace)
  };
  std::shared_ptr<const ListSnapshot> list_snapshot;
  // Pod JSON built once per shared template part and status (list pages).
  PodJsonEncoder pod_json;

  void accept();
  void schedule_tick();
  void on_event(const WatchEvent& ev);
  void serve_loop();
  // Handles one request. Returns false when the session took over the
  // connection (a watch).
  bool handle(const Request& req, const std::shared_ptr<Session>& s, http::response<http::string_body>& res);
  // The bearer token of a request's header is the server's
  // (authenticator/request/bearertoken).
  bool authenticated(const http::request_header<>& h) const;
  // The checks on a request whose header is read and body is not: 401
  // without the token, 413 for a Content-Length over max_request_body_bytes,
  // else 0, and then the parser's body limit is set (a chunked body is
  // checked as it comes).
  int check_header(http::request_parser<http::string_body>& p) const;
  // The answer to a request that is not a watch. A list page is built in
  // `sp` (the caller's arena for this answer); other answers may use the
  // default resource.
  json::value dispatch(const Request& req, const std::shared_ptr<Session>& s, int& status, bool& watching,
                       json::storage_ptr sp);
};

namespace {

struct WatchSpec {
  const Resource* res = nullptr;
  std::string ns;
  LabelQuery labels;
  FieldQuery fields;
  bool table = false;
  std::string include_object;
  bool bookmarks = false;
};

}  // namespace

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket sock, ApiServer::Impl& srv)
      : stream_(beast::tcp_stream(std::move(sock)), srv.ssl_ctx),
        srv_(srv),
        bookmark_timer_(srv.io),
        timeout_timer_(srv.io) {}

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
    for (auto& [type, obj] : initial) send_event(type, obj);
    initial_bytes_ = backlog_bytes_;
    last_progress_ = std::chrono::steady_clock::now();
    id_ = srv_.next_watcher++;
    srv_.watchers[id_] = weak_from_this();
    // Detects a client that goes away.
    stream_.async_read_some(asio::buffer(sink_), [self = shared_from_this()](error_code, size_t) { self->abort(); });
    timeout_timer_.expires_after(timeout);
    timeout_timer_.async_wait([self = shared_from_this()](error_code ec) {
      if (!ec) self->end_watch();
    });
    if (watch_->bookmarks) schedule_bookmark();
  }

  // A store event (I/O thread). `obj` is the object's API JSON.
  void on_event(const WatchEvent& ev, const json::object& obj) {
    if (!watch_ || closed_ || ending_) return;
    if (ev.resource_version <= last_rv_) return;
    if (ev.kind != watch_->res->kind) return;
    last_rv_ = ev.resource_version;
    const core::ObjectMeta& m = meta_of(ev.object);
    if (watch_->res->namespaced && !watch_->ns.empty() && m.namespace_ != watch_->ns) return;
    std::string key = m.namespace_ + "/" + m.name;
    bool match = watch_->labels.matches(m.labels) && watch_->fields.matches(obj);
    bool seen = visible_.count(key) > 0;
    if (ev.type == EventType::kDeleted) {
      if (seen || match) send_event("DELETED", obj);
      visible_.erase(key);
    } else if (match) {
      send_event(seen ? "MODIFIED" : "ADDED", obj);
      visible_.insert(key);
    } else if (seen) {
      // mirrors the cacher's filtering: an object that stops matching is
      // DELETED for this watcher.
      send_event("DELETED", obj);
      visible_.erase(key);
    }
  }

  void send_event(const std::string& type, const json::object& obj) {
    json::object ev;
    ev["type"] = type;
    if (watch_->table && type != "BOOKMARK" && type != "ERROR") {
      ev["object"] = table_for_watch(obj);
    } else {
      ev["object"] = obj;
    }
    queue(json::serialize(ev) + "\n");
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
    bookmark_timer_.cancel();
    timeout_timer_.cancel();
    error_code ec;
    tcp_().socket().shutdown(tcp::socket::shutdown_both, ec);
    tcp_().close();
  }

  uint64_t last_rv() const { return last_rv_; }

 private:
  friend struct ApiServer::Impl;

  json::object table_for_watch(const json::object& obj) {
    json::object t;
    t["kind"] = "Table";
    t["apiVersion"] = "meta.k8s.io/v1";
    json::object md;
    md["resourceVersion"] = std::to_string(last_rv_);
    t["metadata"] = md;
    t["columnDefinitions"] = table_columns(watch_->res->kind_name);
    json::object row;
    row["cells"] = table_cells(watch_->res->kind_name, obj, srv_.cluster.now());
    if (watch_->include_object == "Object") {
      row["object"] = obj;
    } else if (watch_->include_object != "None") {
      json::object partial;
      partial["kind"] = "PartialObjectMetadata";
      partial["apiVersion"] = "meta.k8s.io/v1";
      const json::value* m = obj.if_contains("metadata");
      partial["metadata"] = m ? *m : json::object();
      row["object"] = partial;
    }
    t["rows"] = json::array{row};
    return t;
  }

  void schedule_bookmark() {
    bookmark_timer_.expires_after(srv_.opt.bookmark_interval);
    bookmark_timer_.async_wait([self = shared_from_this()](error_code ec) {
      if (ec || self->closed_ || self->ending_) return;
      uint64_t rv = std::max(self->last_rv_, self->srv_.delivered_rv);
      self->last_rv_ = rv;
      json::object obj;
      obj["kind"] = self->watch_->res->kind_name;
      obj["apiVersion"] = api_version(*self->watch_->res);
      json::object md;
      md["resourceVersion"] = std::to_string(rv);
      obj["metadata"] = md;
      self->send_event("BOOKMARK", obj);
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
    if (fell_behind()) {
      std::cerr << "gpuops serve: closing a watch of " << watch_->res->plural << " whose client does not read ("
                << backlog_bytes_ << " bytes of events unsent)\n";
      abort();
    }
  }

  // The backlog bound of Options (watch_backlog_bytes and the rest), over
  // the events queued after the initial state.
  bool fell_behind() const {
    size_t live = backlog_bytes_ > initial_bytes_ ? backlog_bytes_ - initial_bytes_ : 0;
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
      asio::async_write(stream_, http::make_chunk_last(), [self = shared_from_this()](error_code, size_t) {
        self->abort();
      });
      return;
    }
    asio::async_write(stream_, http::make_chunk(asio::buffer(*out_.front())),
                      [self = shared_from_this()](error_code ec, size_t) {
                        if (ec) return self->abort();
                        size_t n = self->out_.front()->size();
                        self->backlog_bytes_ -= n;
                        self->initial_bytes_ -= std::min(self->initial_bytes_, n);
                        self->last_progress_ = std::chrono::steady_clock::now();
                        self->out_.pop_front();
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
    auto res = std::make_shared<http::response<http::string_body>>(static_cast<http::status>(code),
                                                                   parser_->get().version());
    res->set(http::field::content_type, "application/json");
    res->set(http::field::cache_control, "no-cache, private");
    res->body() = json::serialize(status_object(code, reason, message, {}));
    res->keep_alive(false);
    res->prepare_payload();
    tcp_().expires_after(srv_.opt.request_timeout);
    http::async_write(stream_, *res, [self = shared_from_this(), res](error_code, size_t) { self->abort(); });
  }

  void on_request() {
    Request req = parser_->release();
    served_ = true;
    tcp_().expires_never();  // handling is not the client's time
    auto res = std::make_shared<http::response<http::string_body>>();
    bool keep = req.keep_alive();
    if (!srv_.handle(req, shared_from_this(), *res)) return;  // watching
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
  std::optional<WatchSpec> watch_;
  uint64_t last_rv_ = 0;
  std::set<std::string> visible_;
  std::unique_ptr<http::response<http::empty_body>> header_;
  std::unique_ptr<http::response_serializer<http::empty_body>> serializer_;
  std::deque<std::optional<std::string>> out_;
  size_t backlog_bytes_ = 0;  // of the chunks in out_
  size_t initial_bytes_ = 0;  // of those, the initial state's, still unsent
  std::chrono::steady_clock::time_point last_progress_;
  bool served_ = false;  // a request was answered on this connection
  bool writing_ = false;
  bool ending_ = false;
  bool closed_ = false;
  int id_ = 0;
  std::array<char, 512> sink_{};
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
      std::make_shared<Session>(std::move(sock), *this)->start();
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

void ApiServer::Impl::on_event(const WatchEvent& ev) {
  delivered_rv = std::max(delivered_rv, ev.resource_version);
  if (watchers.empty()) return;
  std::lock_guard<std::mutex> lock(mu);  // table cells read the cluster's clock
  json::object obj = core::encode(ev.object);
  std::vector<std::shared_ptr<Session>> live;
  for (auto it = watchers.begin(); it != watchers.end();) {
    if (auto s = it->second.lock()) {
      live.push_back(s);
      ++it;
    } else {
      it = watchers.erase(it);
    }
  }
  for (auto& s : live) s->on_event(ev, obj);
}

namespace {

json::object discovery_resource(const Resource& r, bool status) {
  json::object o;
  o["name"] = status ? std::string(r.plural) + "/status" : std::string(r.plural);
  o["singularName"] = status ? "" : r.singular;
  o["namespaced"] = r.namespaced;
  o["kind"] = r.kind_name;
  json::array verbs;
  if (status) {
    verbs = {"get", "patch", "update"};
  } else {
    verbs = {"create", "delete", "get", "list", "patch", "update", "watch"};
    o["shortNames"] = json::array{r.short_name};
    if (r.in_all) o["categories"] = json::array{"all"};
  }
  o["verbs"] = verbs;
  return o;
}

json::object resource_list(const std::string& group) {
  json::object o;
  o["kind"] = "APIResourceList";
  o["apiVersion"] = "v1";
  o["groupVersion"] = group.empty() ? "v1" : group + "/v1";
  json::array rs;
  for (const auto& r : kResources) {
    if (group != r.group) continue;
    rs.push_back(discovery_resource(r, false));
    if (r.kind != Kind::kNamespace || true) rs.push_back(discovery_resource(r, true));
  }
  o["resources"] = rs;
  return o;
}

json::object apps_group() {
  json::object gv;
  gv["groupVersion"] = "apps/v1";
  gv["version"] = "v1";
  json::object g;
  g["name"] = "apps";
  g["versions"] = json::array{gv};
  g["preferredVersion"] = gv;
  return g;
}

// Minimal OpenAPI v3 documents: for each resource, the item path's PATCH
// operation with its group-version-kind extension and the fieldValidation
// query parameter, which is what kubectl's QueryParamVerifierV3
// (cli-runtime pkg/resource/query_param_verifier_v3.go) looks for before it
// leaves validation to the server (fieldValidation=Strict) instead of
// downloading schemas. No component schemas: kubectl then builds strategic
// merge patches from its compiled-in types.
json::object openapi_v3_index() {
  json::object paths;
  paths["api/v1"] = json::object{{"serverRelativeURL", "/openapi/v3/api/v1?hash=gpuops"}};
  paths["apis/apps/v1"] = json::object{{"serverRelativeURL", "/openapi/v3/apis/apps/v1?hash=gpuops"}};
  return json::object{{"paths", paths}};
}

json::object openapi_v3_doc(const std::string& group) {
  json::object paths;
  for (const auto& r : kResources) {
    if (group != r.group) continue;
    std::string prefix = group.empty() ? "/api/v1" : "/apis/" + group + "/v1";
    std::string item = prefix + (r.namespaced ? "/namespaces/{namespace}/" : "/") + r.plural + "/{name}";
    json::object gvk{{"group", r.group}, {"version", "v1"}, {"kind", r.kind_name}};
    json::array params;
    for (const char* p : {"dryRun", "fieldManager", "fieldValidation", "force"})
      params.push_back(json::object{{"name", p}, {"in", "query"}, {"schema", json::object{{"type", "string"}}}});
    json::object patch{{"operationId", std::string("patch") + r.kind_name},
                       {"parameters", params},
                       {"x-kubernetes-action", "patch"},
                       {"x-kubernetes-group-version-kind", gvk},
                       {"responses", json::object{{"200", json::object{{"description", "OK"}}}}}};
    paths[item] = json::object{{"patch", patch}};
  }
  json::object doc;
  doc["openapi"] = "3.0.0";
  doc["info"] = json::object{{"title", "Kubernetes"}, {"version", "v1.32.0"}};
  doc["paths"] = paths;
  doc["components"] = json::object{{"schemas", json::object()}};
  return doc;
}

// The parsed path of a resource request.
struct Route {
  const Resource* res = nullptr;
  std::string ns;
  std::string name;
  bool status = false;
};

bool parse_route(const std::vector<std::string>& segs, Route& r) {
  // /api/v1/... or /apis/apps/v1/...
  size_t i = 0;
  std::string group;
  if (segs.size() >= 2 && segs[0] == "api" && segs[1] == "v1") {
    i = 2;
  } else if (segs.size() >= 3 && segs[0] == "apis" && segs[1] == "apps" && segs[2] == "v1") {
    group = "apps";
    i = 3;
  } else {
    return false;
  }
  std::vector<std::string> rest(segs.begin() + static_cast<std::ptrdiff_t>(i), segs.end());
  if (rest.empty()) return false;
  if (rest.size() >= 3 && rest[0] == "namespaces") {
    const Resource* res = find_resource(group, rest[2]);
    if (!res || !res->namespaced) return false;
    r.res = res;
    r.ns = rest[1];
    if (rest.size() >= 4) r.name = rest[3];
    if (rest.size() == 5 && rest[4] == "status") r.status = true;
    else if (rest.size() > 4) return false;
    return true;
  }
  const Resource* res = find_resource(group, rest[0]);
  if (!res) return false;
  r.res = res;
  if (rest.size() >= 2) {
    if (res->namespaced) return false;  // /api/v1/pods/x is not a path
    r.name = rest[1];
  }
  if (rest.size() == 3 && rest[2] == "status") r.status = true;
  else if (rest.size() > 2) return false;
  return true;
}

bool wants_table(const Request& req) {
  auto it = req.find(http::field::accept);
  if (it == req.end()) return false;
  std::string a(it->value());
  return a.find("as=Table") != std::string::npos;
}

json::object row_for(const Resource& r, const json::object& obj, core::Time now, const std::string& include) {
  json::object row;
  row["cells"] = table_cells(r.kind_name, obj, now);
  if (include == "Object") {
    row["object"] = obj;
  } else if (include != "None") {
    json::object partial;
    partial["kind"] = "PartialObjectMetadata";
    partial["apiVersion"] = "meta.k8s.io/v1";
    const json::value* m = obj.if_contains("metadata");
    partial["metadata"] = m ? *m : json::object();
    row["object"] = partial;
  }
  return row;
}

json::object make_table(const Resource& r, const std::vector<json::object>& objs, core::Time now,
                        const std::string& include, json::object metadata) {
  json::object t;
  t["kind"] = "Table";
  t["apiVersion"] = "meta.k8s.io/v1";
  t["metadata"] = std::move(metadata);
  t["columnDefinitions"] = table_columns(r.kind_name);
  json::array rows;
  for (const auto& o : objs) rows.push_back(row_for(r, o, now, include));
  t["rows"] = rows;
  return t;
}

// Fields the server-side apply of `prev` set that `next` no longer sets,
// as a patch that removes them (null for map keys, $patch: delete for items
// of merge-keyed lists).
json::value removals(const json::value& prev, const json::value& next, const std::string& path) {
  const json::object* p = prev.if_object();
  const json::object* n = next.if_object();
  if (!p || !n) return nullptr;
  json::object out;
  for (const auto& kv : *p) {
    std::string key(kv.key());
    std::string cp = path.empty() ? key : path + "." + key;
    const json::value* nv = n->if_contains(key);
    if (!nv) {
      out[key] = nullptr;
      continue;
    }
    if (kv.value().is_object() && nv->is_object()) {
      json::value sub = removals(kv.value(), *nv, cp);
      if (sub.is_object() && !sub.as_object().empty()) out[key] = sub;
    } else if (kv.value().is_array() && nv->is_array()) {
      std::string mk = patch_merge_key(cp);
      if (mk.empty()) continue;
      json::array dels;
      for (const auto& item : kv.value().as_array()) {
        const json::value* k = item.is_object() ? item.as_object().if_contains(mk) : nullptr;
        if (!k) continue;
        bool kept = false;
        for (const auto& ni : nv->as_array())
          if (ni.is_object() && ni.as_object().if_contains(mk) && *ni.as_object().if_contains(mk) == *k) kept = true;
        if (!kept) dels.push_back(json::object{{"$patch", "delete"}, {mk, *k}});
      }
      if (!dels.empty()) out[key] = dels;
    }
  }
  return out;
}

// Lays a removals patch under the applied configuration: the list items to
// delete are appended to the applied lists.
json::value combine(const json::value& applied, const json::value& rm) {
  if (!rm.is_object()) return applied;
  json::object out = applied.is_object() ? applied.as_object() : json::object();
  for (const auto& kv : rm.as_object()) {
    json::value* cur = out.if_contains(kv.key());
    if (!cur) {
      out[kv.key()] = kv.value();
    } else if (cur->is_object() && kv.value().is_object()) {
      *cur = combine(*cur, kv.value());
    } else if (cur->is_array() && kv.value().is_array()) {
      for (const auto& d : kv.value().as_array()) cur->as_array().push_back(d);
    }
  }
  return out;
}

}  // namespace

json::value ApiServer::Impl::dispatch(const Request& req, const std::shared_ptr<Session>& s, int& status,
                                      bool& watching, json::storage_ptr sp) {
  urls::result<urls::url_view> parsed = urls::parse_origin_form(req.target());
  if (!parsed) throw_api(400, "invalid request target");
  urls::url_view u = *parsed;
  std::vector<std::string> segs;
  for (auto seg : u.segments()) segs.push_back(std::string(seg));
  while (!segs.empty() && segs.back().empty()) segs.pop_back();
  auto q = query_of(u);
  http::verb method = req.method();
  status = 200;

  // ---- discovery and health ----
  auto get_only = [&] {
    if (method != http::verb::get) throw_api(405, "the server does not allow this method on the requested resource");
  };
  if (segs.size() == 1 && segs[0] == "version") {
    get_only();
    json::object v;
    v["major"] = "1";
    v["minor"] = "32";
    v["gitVersion"] = opt.git_version;
    v["gitCommit"] = "";
    v["gitTreeState"] = "clean";
    v["buildDate"] = "1970-01-01T00:00:00Z";
    v["goVersion"] = "";
    v["compiler"] = "gc";
    v["platform"] = "linux/amd64";
    return v;
  }
  if (segs.size() == 1 && segs[0] == "api") {
    get_only();
    json::object cidr;
    cidr["clientCIDR"] = "0.0.0.0/0";
    cidr["serverAddress"] = host;
    return json::object{{"kind", "APIVersions"},
                        {"versions", json::array{"v1"}},
                        {"serverAddressByClientCIDRs", json::array{cidr}}};
  }
  if (segs.size() == 1 && segs[0] == "apis") {
    get_only();
    return json::object{{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", json::array{apps_group()}}};
  }
  if (segs.size() == 2 && segs[0] == "apis" && segs[1] == "apps") {
    get_only();
    json::object g = apps_group();
    g["kind"] = "APIGroup";
    g["apiVersion"] = "v1";
    return g;
  }
  if (segs.size() == 2 && segs[0] == "api" && segs[1] == "v1") {
    get_only();
    return resource_list("");
  }
  if (segs.size() == 3 && segs[0] == "apis" && segs[1] == "apps" && segs[2] == "v1") {
    get_only();
    return resource_list("apps");
  }

  if (segs.size() == 2 && segs[0] == "openapi" && segs[1] == "v3") {
    get_only();
    return openapi_v3_index();
  }
  if (segs.size() == 4 && segs[0] == "openapi" && segs[1] == "v3" && segs[2] == "api" && segs[3] == "v1") {
    get_only();
    return openapi_v3_doc("");
  }
  if (segs.size() == 5 && segs[0] == "openapi" && segs[1] == "v3" && segs[2] == "apis" && segs[3] == "apps" &&
      segs[4] == "v1") {
    get_only();
    return openapi_v3_doc("apps");
  }

  Route route;
  if (!parse_route(segs, route)) throw_api(404, "the server could not find the requested resource");
  const Resource& res = *route.res;
  ObjectStore& store = cluster.store();
  bool dry_run = param(q, "dryRun") == "All";
  if (!param(q, "dryRun").empty() && !dry_run)
    throw_api(400, "Invalid dry run value: unsupported dry run value \"" + param(q, "dryRun") + "\"");

  auto not_found = [&](const std::string& name) {
    throw_api(404, qualified(res) + " \"" + name + "\" not found", details_for(&res, name, false));
  };

  // ---- collection ----
  if (route.name.empty()) {
    if (method == http::verb::get) {
      LabelQuery labels = LabelQuery::parse(param(q, "labelSelector"));
      FieldQuery fields = FieldQuery::parse(param(q, "fieldSelector"));
      fields.check_supported(res.kind_name);
      bool table = wants_table(req);
      std::string include = param(q, "includeObject");
      if (truthy(param(q, "watch"))) {
        // Streaming lists (sendInitialEvents) are not served: refused as an
        // API server with the WatchList feature gate off refuses them
        // (ValidateListOptions, k8s.io/apimachinery/pkg/apis/meta/
        // internalversion/validation), so that client-go's reflector (its
        // WatchListClient is on by default since 1.35) falls back to
        // list + watch.
        if (!param(q, "sendInitialEvents").empty()) {
          std::string detail = "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled";
          throw_api(422, "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: " + detail,
                    json::object{{"group", "meta.k8s.io"},
                                 {"kind", "ListOptions"},
                                 {"causes", json::array{json::object{{"reason", "FieldValueForbidden"},
                                                                     {"message", "Forbidden: " + detail},
                                                                     {"field", "sendInitialEvents"}}}}});
        }
        WatchSpec spec;
        spec.res = &res;
        spec.ns = route.ns;
        spec.labels = labels;
        spec.fields = fields;
        spec.table = table;
        spec.include_object = include;
        spec.bookmarks = truthy(param(q, "allowWatchBookmarks"));
        std::string rv_text = param(q, "resourceVersion");
        std::vector<std::pair<std::string, json::object>> initial;
        std::set<std::string> visible;
        uint64_t start_rv = store.resource_version();
        std::chrono::seconds timeout(1800);
        if (!param(q, "timeoutSeconds").empty()) {
          try {
            timeout = std::chrono::seconds(std::stoll(param(q, "timeoutSeconds")));
          } catch (const std::exception&) {
            throw_api(400, "invalid timeoutSeconds");
          }
        }
        auto matches = [&](const core::Object& o, const json::object& j) {
          return labels.matches(meta_of(o).labels) && fields.matches(j);
        };
        if (rv_text.empty() || rv_text == "0") {
          // "Get State and Start at Most Recent": synthetic ADDED events.
          for (const auto& o : store.list(res.kind, route.ns)) {
            json::object j = core::encode(o);
            if (!matches(o, j)) continue;
            initial.emplace_back("ADDED", j);
            visible.insert(meta_of(o).namespace_ + "/" + meta_of(o).name);
          }
        } else {
          uint64_t rv = 0;
          try {
            rv = std::stoull(rv_text);
          } catch (const std::exception&) {
            throw_api(400, "resourceVersion: Invalid value: \"" + rv_text + "\": must be a valid resource version");
          }
          std::vector<WatchEvent> events;
          try {
            events = store.events_since(rv, res.kind, route.ns);
          } catch (const core::ClusterError& e) {
            // The cacher answers an expired version in-stream (newErrWatcher).
            initial.emplace_back("ERROR", status_object(410, "Expired", e.what(), {}));
          }
          std::set<std::string> changed;
          for (const auto& ev : events) changed.insert(meta_of(ev.object).namespace_ + "/" + meta_of(ev.object).name);
          for (const auto& o : store.list(res.kind, route.ns)) {
            std::string key = meta_of(o).namespace_ + "/" + meta_of(o).name;
            if (changed.count(key)) continue;
            if (matches(o, core::encode(o))) visible.insert(key);
          }
          for (const auto& ev : events) {
            json::object j = core::encode(ev.object);
            std::string key = meta_of(ev.object).namespace_ + "/" + meta_of(ev.object).name;
            bool m = matches(ev.object, j);
            if (ev.type == EventType::kDeleted) {
              if (m) initial.emplace_back("DELETED", j);
            } else if (m) {
              initial.emplace_back(ev.type == EventType::kAdded ? "ADDED" : "MODIFIED", j);
              visible.insert(key);
            }
          }
        }
        watching = true;
        if (!s) return nullptr;  // handle_raw_request_for_fuzzing: no connection to stream to
        bool expired = !initial.empty() && initial.back().first == "ERROR";
        s->begin_watch(std::move(spec), std::move(initial), start_rv, std::move(visible), timeout, req);
        if (expired) s->end_watch();
        return nullptr;
      }
      // list
      std::string cont = param(q, "continue");
      std::string start = cont.empty() ? "" : decode_continue(cont);
      int64_t limit = 0;
      if (!param(q, "limit").empty()) {
        try {
          limit = std::stoll(param(q, "limit"));
        } catch (const std::exception&) {
          throw_api(400, "invalid limit");
        }
      }
      // A page costs the page: the snapshot of the kind is taken once per
      // paged list (at its first page, or when the store changed since), the
      // walk starts after the continue key, and only the page's items are
      // encoded (plus, with a field selector, the objects it tests).
      std::shared_ptr<const ListSnapshot> snap = list_snapshot;
      if (!snap || snap->res != &res || snap->ns != route.ns || snap->rv != store.resource_version()) {
        auto fresh = std::make_shared<ListSnapshot>();
        fresh->res = &res;
        fresh->ns = route.ns;
        fresh->rv = store.resource_version();
        if (res.kind == Kind::kPod) {
          std::vector<const PodRecord*> recs = store.list_pods(route.ns);
          fresh->pods.reserve(recs.size());
          fresh->keys.reserve(recs.size());
          for (const PodRecord* r : recs) {
            fresh->pods.push_back(*r);
            fresh->keys.push_back(r->namespace_() + "/" + r->name);
          }
        } else {
          fresh->objects = store.list(res.kind, route.ns);
          fresh->keys.reserve(fresh->objects.size());
          for (const auto& o : fresh->objects) {
            const core::ObjectMeta& m = meta_of(o);
            fresh->keys.push_back(m.namespace_ + "/" + m.name);
          }
        }
        fresh->sorted = std::is_sorted(fresh->keys.begin(), fresh->keys.end());
        snap = std::move(fresh);
        // Prototypes of pods no longer listed would only hold memory.
        if (pod_json.size() > 1024) pod_json.clear();
      }
      const std::vector<std::string>& keys = snap->keys;
      size_t first = 0;
      if (!start.empty() && snap->sorted)
        first = static_cast<size_t>(std::upper_bound(keys.begin(), keys.end(), start) - keys.begin());
      bool selecting = !labels.empty() || !fields.empty();
      const bool pods = res.kind == Kind::kPod;
      auto encode_item = [&](size_t i) {
        return pods ? pod_json.encode(snap->pods[i], sp) : json::object(core::encode(snap->objects[i]), sp);
      };
      auto item_labels = [&](size_t i) -> const core::Labels& {
        return pods ? snap->pods[i].shared_meta().labels : meta_of(snap->objects[i]).labels;
      };
      std::vector<json::object> items;
      std::string last_key;
      bool more = false;
      int64_t remaining = 0;
      for (size_t i = first; i < keys.size(); ++i) {
        const std::string& key = keys[i];
        if (!start.empty() && key <= start) continue;  // only when the keys are not sorted
        std::optional<json::object> j;
        if (selecting) {
          if (!labels.matches(item_labels(i))) continue;
          if (!fields.empty()) {
            j = encode_item(i);
            if (!fields.matches(*j)) continue;
          }
        }
        if (limit > 0 && static_cast<int64_t>(items.size()) >= limit) {
          more = true;
          if (selecting) break;  // remainingItemCount is only sent without selectors
          if (snap->sorted) {
            remaining = static_cast<int64_t>(keys.size() - i);
            break;
          }
          ++remaining;
          continue;
        }
        items.push_back(j ? std::move(*j) : encode_item(i));
        last_key = key;
      }
      list_snapshot = more ? snap : nullptr;
      json::object md;
      md["resourceVersion"] = std::to_string(store.resource_version());
      if (more) {
        md["continue"] = encode_continue(store.resource_version(), last_key);
        if (labels.empty() && fields.empty()) md["remainingItemCount"] = remaining;
      }
      if (table) return make_table(res, items, cluster.now(), include, md);
      json::object list(sp);
      list["kind"] = std::string(res.kind_name) + "List";
      list["apiVersion"] = api_version(res);
      list["metadata"] = std::move(md);
      json::array arr(sp);
      arr.reserve(items.size());
      for (auto& i : items) arr.push_back(std::move(i));
      list["items"] = std::move(arr);
      return list;
    }
    if (method == http::verb::post) {
      if (route.status) throw_api(405, "the server does not allow this method on the requested resource");
      std::string ctype;
      if (auto it = req.find(http::field::content_type); it != req.end()) ctype = std::string(it->value());
      json::value body;
      if (ctype.rfind("application/vnd.kubernetes.protobuf", 0) == 0) {
        try {
          body = decode_protobuf_object(req.body());
        } catch (const core::InputError& e) {
          throw_api(e.http_status, e.message());
        }
      } else {
        body = read_body(req.body());
      }
      core::Object obj;
      try {
        obj = decode_value(body);
      } catch (const core::InputError& e) {
        std::string name;
        if (auto* m = body.is_object() ? body.as_object().if_contains("metadata") : nullptr)
          if (m->is_object() && m->as_object().if_contains("name") && m->as_object().at("name").is_string())
            name = std::string(m->as_object().at("name").as_string());
        throw to_api_error(e, &res, name);
      }
      if (kind_of(obj) != res.kind)
        throw_api(400, "the API version in the data (" + std::string(body.as_object().at("apiVersion").as_string()) +
                           ") does not match the expected API version (" + api_version(res) + ")");
      core::ObjectMeta& m = meta_of(obj);
      if (res.namespaced) {
        if (m.namespace_.empty()) m.namespace_ = route.ns;
        if (m.namespace_ != route.ns)
          throw_api(400, "the namespace of the provided object does not match the namespace sent on the request");
      }
      if (res.kind == Kind::kNamespace) {
        // PrepareForCreate, pkg/registry/core/namespace: phase Active and
        // the kubernetes finalizer.
        auto& ns = std::get<core::Namespace>(obj);
        ns.raw["status"] = json::object{{"phase", "Active"}};
        ns.raw["spec"] = json::object{{"finalizers", json::array{"kubernetes"}}};
      }
      m.resource_version.clear();
      if (dry_run) {
        if (store.get(res.kind, m.namespace_, m.name))
          throw_api(409, qualified(res) + " \"" + m.name + "\" already exists", details_for(&res, m.name, false));
        status = 201;
        return core::encode(obj);
      }
      core::Object stored;
      try {
        stored = store.create(obj);
      } catch (const core::ClusterError& e) {
        throw to_api_error(e, e.http_status() == 404 ? &kResources[0] : &res,
                           e.http_status() == 404 ? route.ns : m.name);
      } catch (const core::InputError& e) {
        throw to_api_error(e, &res, m.name);
      }
      json::object out = core::encode(stored);
      status = 201;
      return out;
    }
    throw_api(405, "the server does not allow this method on the requested resource");
  }

  // ---- one object ----
  std::string ns = res.namespaced ? route.ns : "";
  std::optional<core::Object> current = store.get(res.kind, ns, route.name);
  if (method == http::verb::get) {
    if (!current) not_found(route.name);
    json::object j = core::encode(*current);
    if (wants_table(req)) {
      json::object md;
      md["resourceVersion"] = std::to_string(store.resource_version());
      return make_table(res, {j}, cluster.now(), param(q, "includeObject"), md);
    }
    return j;
  }

  // Decodes `v` as the new state of this object and stores it.
  // `patched`: `v` is a patch's result (no UID precondition), else a PUT body.
  auto store_update = [&](json::value v, bool patched) -> json::value {
    json::object& o = v.as_object();
    o["apiVersion"] = api_version(res);
    o["kind"] = res.kind_name;
    core::Object obj;
    try {
      obj = decode_value(v);
    } catch (const core::InputError& e) {
      throw to_api_error(e, &res, route.name);
    }
    core::ObjectMeta& m = meta_of(obj);
    if (m.name != route.name)
      throw_api(400, "the name of the object (" + m.name + ") does not match the name on the URL (" + route.name + ")");
    if (res.namespaced) {
      if (m.namespace_.empty()) m.namespace_ = route.ns;
      if (m.namespace_ != route.ns)
        throw_api(400, "the namespace of the provided object does not match the namespace sent on the request");
    }
    if (current && !m.uid.empty() && m.uid != meta_of(*current).uid) {
      const std::string& old_uid = meta_of(*current).uid;
      if (!patched) {
        // A PUT body's uid is a precondition (defaultUpdatedObjectInfo.Preconditions,
        // apiserver/pkg/registry/rest/update.go), checked by storage.Preconditions.Check
        // in the etcd3 store's GuaranteedUpdate as a StorageError (invalid object,
        // code 4, the etcd key, ResourceVersion 0), which InterpretUpdateError
        // (apiserver/pkg/storage/errors/storage.go) makes a 409 Conflict.
        std::string key = res.kind == Kind::kNode ? "/registry/minions/" + route.name
                          : res.namespaced       ? "/registry/" + std::string(res.plural) + "/" + ns + "/" + route.name
                                                 : "/registry/" + std::string(res.plural) + "/" + route.name;
        throw_api(409, "Operation cannot be fulfilled on " + qualified(res) + " \"" + route.name +
                           "\": StorageError: invalid object, Code: 4, Key: " + key +
                           ", ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: " +
                           m.uid + ", UID in object meta: " + old_uid,
                  details_for(&res, route.name, false));
      }
      // A patch has no precondition (DefaultUpdatedObjectInfo(nil, ...) in
      // handlers/patch.go): the patched uid reaches rest.BeforeUpdate, whose
      // validateCommonFields and the kind's ValidateUpdate (ValidateNodeUpdate,
      // ValidatePodUpdate, ValidateDaemonSetUpdate, ValidateNamespaceUpdate) each
      // run ValidateObjectMetaUpdate -> ValidateImmutableField(uid): the same
      // error twice in the causes, once in the (deduplicated) message.
      std::string body = "Invalid value: \"" + m.uid + "\": field is immutable";
      json::object cause{{"reason", "FieldValueInvalid"}, {"message", body}, {"field", "metadata.uid"}};
      json::object details = details_for(&res, route.name, true);
      details["causes"] = json::array{cause, cause};
      std::string gk = std::string(res.kind_name) + (std::string(res.group).empty() ? "" : "." + std::string(res.group));
      throw_api(422, gk + " \"" + route.name + "\" is invalid: metadata.uid: " + body, std::move(details));
    }
    if (dry_run) {
      if (!current) not_found(route.name);
      if (!m.resource_version.empty() && m.resource_version != meta_of(*current).resource_version)
        throw_api(409, "Operation cannot be fulfilled on " + qualified(res) + " \"" + route.name +
                           "\": the object has been modified; please apply your changes to the latest version and try again",
                  details_for(&res, route.name, false));
      return core::encode(obj);
    }
    try {
      core::Object stored = route.status ? store.update_status(obj) : store.update(obj);
      return core::encode(stored);
    } catch (const core::ClusterError& e) {
      throw to_api_error(e, &res, route.name);
    } catch (const core::InputError& e) {
      throw to_api_error(e, &res, route.name);
    }
  };

  if (method == http::verb::put) {
    if (!current) not_found(route.name);
    json::value body = read_body(req.body());
    if (!body.is_object()) throw_api(400, "the object provided is unrecognized");
    return store_update(body, false);
  }

  if (method == http::verb::patch) {
    std::string ctype;
    if (auto it = req.find(http::field::content_type); it != req.end()) ctype = std::string(it->value());
    ctype = ctype.substr(0, ctype.find(';'));
    if (ctype == "application/apply-patch+yaml") {
      // Server-side apply, simplified (docs/SERVE.md): no managedFields and
      // no conflicts; each field manager's last applied configuration is
      // kept, and fields it applied before and leaves out now are removed.
      std::string manager = param(q, "fieldManager");
      if (manager.empty()) throw_api(400, "PATCH " + std::string(u.path()) + ": fieldManager is required for apply requests");
      json::value applied_cfg = read_body(req.body());
      if (!applied_cfg.is_object()) throw_api(400, "the object provided is unrecognized");
      json::object& ao = applied_cfg.as_object();
      ao.erase("status");
      std::string akey = object_key(res, ns, route.name) + "\n" + manager;
      if (!current) {
        if (route.status) not_found(route.name);
        core::Object obj;
        json::value v = applied_cfg;
        v.as_object()["apiVersion"] = api_version(res);
        v.as_object()["kind"] = res.kind_name;
        try {
          obj = decode_value(v);
        } catch (const core::InputError& e) {
          throw to_api_error(e, &res, route.name);
        }
        core::ObjectMeta& m = meta_of(obj);
        if (m.name != route.name)
          throw_api(400, "the name of the object (" + m.name + ") does not match the name on the URL (" + route.name + ")");
        if (res.namespaced) {
          if (m.namespace_.empty()) m.namespace_ = route.ns;
          if (m.namespace_ != route.ns)
            throw_api(400, "the namespace of the provided object does not match the namespace sent on the request");
        }
        if (dry_run) {
          status = 201;
          return core::encode(obj);
        }
        core::Object stored;
        try {
          stored = store.create(obj);
        } catch (const core::ClusterError& e) {
          throw to_api_error(e, e.http_status() == 404 ? &kResources[0] : &res,
                             e.http_status() == 404 ? route.ns : route.name);
        } catch (const core::InputError& e) {
          throw to_api_error(e, &res, route.name);
        }
        applied[akey] = applied_cfg;
        status = 201;
        return core::encode(stored);
      }
      json::value patch = applied_cfg;
      if (auto it = applied.find(akey); it != applied.end()) patch = combine(applied_cfg, removals(it->second, applied_cfg, ""));
      if (auto* md = patch.as_object().if_contains("metadata"); md && md->is_object())
        md->as_object().erase("resourceVersion");
      json::value next;
      try {
        next = strategic_merge_patch(core::encode(*current), patch);
      } catch (const core::InputError& e) {
        throw to_api_error(e, &res, route.name);
      }
      json::value out = store_update(next, true);
      if (!dry_run) applied[akey] = applied_cfg;
      return out;
    }
    if (!current) not_found(route.name);
    json::value patch = parse_json(req.body());
    json::value cur = core::encode(*current);
    json::value next;
    try {
      if (ctype == "application/merge-patch+json") {
        next = merge_patch(cur, patch);
      } else if (ctype == "application/strategic-merge-patch+json") {
        next = strategic_merge_patch(cur, patch);
      } else if (ctype == "application/json-patch+json") {
        next = json_patch(cur, patch);
      } else {
        throw_api(415, "the body of the request was in an unknown format - accepted media types include: "
                       "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, "
                       "application/strategic-merge-patch+json");
      }
    } catch (const core::InputError& e) {
      throw to_api_error(e, &res, route.name);
    }
    if (!next.is_object()) throw_api(422, "the patch does not produce an object");
    return store_update(next, true);
  }

  if (method == http::verb::delete_) {
    if (route.status) throw_api(405, "the server does not allow this method on the requested resource");
    if (!current) not_found(route.name);
    std::optional<int64_t> grace;
    json::value opts;
    if (!req.body().empty()) opts = parse_json(req.body());
    if (auto* o = opts.if_object()) {
      if (auto* g = o->if_contains("gracePeriodSeconds"); g && g->is_int64()) grace = g->as_int64();
      if (auto* pre = o->if_contains("preconditions"); pre && pre->is_object()) {
        const core::ObjectMeta& m = meta_of(*current);
        if (auto* uid = pre->as_object().if_contains("uid"); uid && uid->is_string() && uid->as_string() != m.uid)
          throw_api(409, "Precondition failed: UID in precondition: " + std::string(uid->as_string()) +
                             ", UID in object meta: " + m.uid, details_for(&res, route.name, false));
        if (auto* rv = pre->as_object().if_contains("resourceVersion");
            rv && rv->is_string() && rv->as_string() != m.resource_version)
          throw_api(409, "Precondition failed: ResourceVersion in precondition: " + std::string(rv->as_string()) +
                             ", ResourceVersion in object meta: " + m.resource_version,
                    details_for(&res, route.name, false));
      }
    }
    if (!param(q, "gracePeriodSeconds").empty()) {
      try {
        grace = std::stoll(param(q, "gracePeriodSeconds"));
      } catch (const std::exception&) {
        throw_api(400, "invalid gracePeriodSeconds");
      }
    }
    std::string uid = meta_of(*current).uid;
    if (dry_run) return core::encode(*current);
    try {
      store.remove(res.kind, ns, route.name, grace);
    } catch (const core::ClusterError& e) {
      throw to_api_error(e, &res, route.name);
    }
    // Forget applied configurations of the deleted object.
    std::string prefix = object_key(res, ns, route.name) + "\n";
    for (auto it = applied.lower_bound(prefix); it != applied.end() && it->first.rfind(prefix, 0) == 0;)
      it = applied.erase(it);
    if (auto after = store.get(res.kind, ns, route.name)) return core::encode(*after);  // graceful
    json::object st;
    st["kind"] = "Status";
    st["apiVersion"] = "v1";
    st["metadata"] = json::object();
    st["status"] = "Success";
    json::object d = details_for(&res, route.name, false);
    d["uid"] = uid;
    st["details"] = d;
    return st;
  }
  throw_api(405, "the server does not allow this method on the requested resource");
}

bool ApiServer::Impl::authenticated(const http::request_header<>& h) const {
  auto it = h.find(http::field::authorization);
  return it != h.end() && it->value() == "Bearer " + token;
}

int ApiServer::Impl::check_header(http::request_parser<http::string_body>& p) const {
  if (!authenticated(p.get())) return 401;
  if (auto n = p.content_length(); n && *n > opt.max_request_body_bytes) return 413;
  p.body_limit(opt.max_request_body_bytes);
  return 0;
}

bool ApiServer::Impl::handle(const Request& req, const std::shared_ptr<Session>& s,
                             http::response<http::string_body>& res) {
  res.version(req.version());
  res.set(http::field::content_type, "application/json");
  res.set(http::field::cache_control, "no-cache, private");
  auto reply_status = [&](const ApiError& e) {
    res.result(static_cast<http::status>(e.code));
    res.body() = json::serialize(status_object(e.code, e.reason, e.message, e.details));
  };
  // Authenticated already, on the header (Session::on_header).
  std::string target(req.target());
  if (target == "/healthz" || target == "/readyz" || target == "/livez") {
    res.set(http::field::content_type, "text/plain; charset=utf-8");
    res.body() = "ok";
    return true;
  }
  bool mutating = req.method() != http::verb::get;
  std::unique_lock<std::mutex> lock(mu);
  try {
    int status = 200;
    bool watching = false;
    // The answer's memory, freed at once after it is written: a
    // monotonic_resource by plain pointer, so the values are not walked
    // on destruction either.
    json::monotonic_resource arena;
    json::value body = dispatch(req, s, status, watching, json::storage_ptr(&arena));
    if (watching) return false;
    if (mutating && status < 300) {
      try {
        cluster.run();
      } catch (const std::exception& e) {
        std::cerr << "gpuops serve: controllers: " << e.what() << "\n";
      }
    }
    res.result(static_cast<http::status>(status));
    res.body() = json::serialize(body);
  } catch (const ApiError& e) {
    reply_status(e);
  } catch (const core::InputError& e) {
    reply_status(to_api_error(e, nullptr, ""));
  } catch (const core::ClusterError& e) {
    reply_status(to_api_error(e, nullptr, ""));
  } catch (const std::exception& e) {
    reply_status(ApiError{500, "InternalError", std::string("Internal error occurred: ") + e.what(), {}});
  }
  return true;
}

// ---- public ----

ApiServer::ApiServer(FakeCluster& cluster) : ApiServer(cluster, Options()) {}

ApiServer::ApiServer(FakeCluster& cluster, Options options) : impl_(std::make_unique<Impl>(cluster, std::move(options))) {
  Impl& m = *impl_;
  error_code ec;
  asio::ip::address addr = asio::ip::make_address(m.opt.address, ec);
  if (ec) throw core::InputError("", 0, "--address", "\"" + m.opt.address + "\" is not an IP address");
  if (!addr.is_loopback() && !m.opt.allow_non_loopback)
    throw core::InputError("", 0, "--address",
                           m.opt.address + " is not a loopback address; serving beyond this machine needs "
                                           "--allow-non-loopback");
  // The certificate covers the address the kubeconfig names (::1, 127.0.0.2,
  // ...), besides 127.0.0.1 and localhost.
  m.pki = ServingPki::generate(addr.to_string());
  m.token = m.opt.token.empty() ? random_token(32) : m.opt.token;
  m.ssl_ctx.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                        ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  m.ssl_ctx.use_certificate_chain(asio::buffer(m.pki.server.cert));
  m.ssl_ctx.use_private_key(asio::buffer(m.pki.server.key), ssl::context::pem);
  tcp::endpoint ep(addr, m.opt.port);
  m.acceptor.open(ep.protocol(), ec);
  if (!ec) m.acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) m.acceptor.bind(ep, ec);
  if (!ec) m.acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw core::ClusterError("serve: cannot listen on " + m.opt.address + ":" + std::to_string(m.opt.port) + ": " + ec.message());
  // Installed now, so a signal that comes right after the caller announces
  // the server is not lost.
  if (m.opt.stop_on_signals) m.signals.emplace(m.io, SIGINT, SIGTERM);
  uint16_t port = m.acceptor.local_endpoint().port();
  m.host = (addr.is_v6() ? "[" + addr.to_string() + "]" : addr.to_string()) + ":" + std::to_string(port);
  {
    std::lock_guard<std::mutex> lock(m.mu);
    m.delivered_rv = cluster.store().resource_version();
    Impl* impl = impl_.get();
    m.subscription = cluster.store().subscribe([impl](const WatchEvent& ev) {
      asio::post(impl->io, [impl, ev] { impl->on_event(ev); });
    });
  }
}

ApiServer::~ApiServer() {
  stop();
  if (impl_->thread.joinable()) impl_->thread.join();
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->cluster.store().unsubscribe(impl_->subscription);
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

std::string ApiServer::kubeconfig(const std::string& ns) const {
  const std::string name = "gpuops-serve";
  YAML::Emitter e;
  e << YAML::BeginMap;
  e << YAML::Key << "apiVersion" << YAML::Value << "v1";
  e << YAML::Key << "kind" << YAML::Value << "Config";
  e << YAML::Key << "clusters" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  e << YAML::Key << "name" << YAML::Value << name;
  e << YAML::Key << "cluster" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "server" << YAML::Value << url();
  e << YAML::Key << "certificate-authority-data" << YAML::Value << core::base64_encode(ca_pem());
  e << YAML::EndMap << YAML::EndMap << YAML::EndSeq;
  e << YAML::Key << "users" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  e << YAML::Key << "name" << YAML::Value << name;
  e << YAML::Key << "user" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "token" << YAML::Value << token();
  e << YAML::EndMap << YAML::EndMap << YAML::EndSeq;
  e << YAML::Key << "contexts" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  e << YAML::Key << "name" << YAML::Value << name;
  e << YAML::Key << "context" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "cluster" << YAML::Value << name;
  e << YAML::Key << "user" << YAML::Value << name;
  if (!ns.empty()) e << YAML::Key << "namespace" << YAML::Value << ns;
  e << YAML::EndMap << YAML::EndMap << YAML::EndSeq;
  e << YAML::Key << "current-context" << YAML::Value << name;
  e << YAML::Key << "preferences" << YAML::Value << YAML::BeginMap << YAML::EndMap;
  e << YAML::EndMap;
  return std::string(e.c_str()) + "\n";
}

void ApiServer::write_kubeconfig(const std::string& path, const std::string& ns) const {
  std::string text = kubeconfig(ns);
  // Created 0600 from the start (the token is in it), under a new name
  // beside `path`, then renamed over it: never a moment with the umask's
  // mode, never written through a link at `path`.
  std::string tmp = path + ".tmp-XXXXXX";
  int fd = ::mkstemp(tmp.data());  // 0600, O_EXCL
  if (fd < 0) throw core::InputError(path, 0, "", std::string("cannot write the kubeconfig: ") + std::strerror(errno));
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  bool ok = done == text.size() && ::fsync(fd) == 0;
  ok = ::close(fd) == 0 && ok;
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw core::InputError(path, 0, "", std::string("cannot write the kubeconfig: ") + std::strerror(err));
  }
}

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

void add_lab_nodes(FakeCluster& cluster) {
  for (int i = 0; i < 3; ++i) {
    core::Node n;
    n.metadata.name = "lab-node-" + std::to_string(i);
    n.metadata.labels["kubernetes.io/hostname"] = n.metadata.name;
    cluster.add_node(n);
  }
  cluster.settle();
}

}  // namespace gpuops::simulator
