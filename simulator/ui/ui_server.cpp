// simulator/ui/ui_server.cpp: see ui_server.h.
#include "simulator/ui/ui_server.h"

#include <openssl/crypto.h>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>

#include <array>
#include <atomic>
#include <ctime>
#include <deque>
#include <list>
#include <mutex>
#include <optional>
#include <thread>

#include "core/analysis/placement_view.h"
#include "core/base/connection_budget.h"
#include "core/base/errors.h"
#include "core/diagnose/diagnose.h"
#include "core/diagnose/html_report.h"
#include "core/gpu_operator/operator_install.h"
#include "simulator/apiserver/api_pki.h"
#include "simulator/apiserver/listener.h"
#include "simulator/store/object_store.h"
#include "simulator/ui/label_writers.h"

namespace gpuops::simulator {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr size_t kHeaderLimit = 16 * 1024;
constexpr size_t kMaxConnections = 128;
constexpr size_t kMaxStreams = 64;
constexpr auto kReadTimeout = std::chrono::seconds(30);
constexpr auto kViewWriteTimeout = std::chrono::seconds(60);
// Only this origin's files; no inline script or style, no frames, no forms.
constexpr const char* kCsp =
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

std::string local_hms() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%H:%M:%S", &tm);
  return buf;
}

bool same_secret(const std::string& a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace

class UiStream;

struct UiServer::Impl {
  // The store's writes of the kinds the view shows: only a flag and a post.
  struct Watcher : StoreSubscriber {
    explicit Watcher(Impl& i) : impl(i) {}
    bool wants(Kind kind, const std::string&) const override {
      return kind == Kind::kNode || kind == Kind::kPod || kind == Kind::kDaemonSet;
    }
    void on_write(const StoreWrite& w) override {
      if (w.kind == Kind::kNode) impl.writers.record(w.type, *std::get<const core::Node*>(w.object), w.writer);
      if (!impl.dirty.exchange(true)) asio::post(impl.io, [this] { impl.schedule_refresh(); });
    }
    Impl& impl;
  };

  // What the view was built from, kept for /api/explain.
  struct Snapshot {
    core::ClusterState state;
    core::Catalog catalog;
    core::PlacementView view;
  };

  Impl(ApiServer& a, Options o) : api(a), opt(std::move(o)) {}

  ApiServer& api;
  Options opt;
  std::string secret = random_token(32);
  std::string host;  // "127.0.0.1:<port>"
  uint16_t port = 0;
  std::string base;    // "/gpuops-ui-<port>/"
  std::string cookie;  // "gpuops_ui_<port>"
  // Before io: sessions release their place when the io_context destroys them.
  core::ConnectionBudget budget{kMaxConnections};
  asio::io_context io{1};
  tcp::acceptor acceptor{io};
  asio::steady_timer refresh_timer{io};
  std::atomic<bool> dirty{false};
  bool refresh_scheduled = false;  // I/O thread
  Watcher watcher{*this};
  bool subscribed = false;
  std::thread thread;
  std::shared_ptr<const Snapshot> current;  // I/O thread
  std::deque<std::string> log;              // I/O thread
  LabelWriters writers;                     // who wrote the labels the log shows
  uint64_t seq = 0;
  boost::json::value checklist;                  // set_checklist's document (null: none)
  std::shared_ptr<const std::string> event;      // the last `view` event, framed
  std::list<std::shared_ptr<UiStream>> streams;  // open /events clients

  std::shared_ptr<const Snapshot> read_cluster() {
    auto s = std::make_shared<Snapshot>();
    api.with_cluster([&](FakeCluster& c) { s->state = c.state(opt.namespace_); });
    core::OperatorInstall install = core::detect_operator_install(s->state);
    s->catalog = core::load_catalog(core::default_catalog_name(install));
    s->catalog.operator_mode = install.detected;
    s->view = core::placement_view(s->state, s->catalog);
    return s;
  }

  boost::json::object document() const {
    boost::json::array lines;
    for (const auto& l : log) lines.emplace_back(l);
    boost::json::object doc{{"view", core::to_json(current->view)}, {"log", std::move(lines)}, {"seq", seq}};
    if (!checklist.is_null()) doc["checklist"] = checklist;
    return doc;
  }

  void rebuild(bool first) {
    auto next = read_cluster();
    if (!first) {
      auto changes = writers.attribute(core::view_changes(current->view, next->view));
      if (changes.empty()) return;
      std::string t = opt.clock_text ? opt.clock_text() : local_hms();
      for (auto& c : changes) log.push_back(t + " " + c);
      while (log.size() > opt.log_lines) log.pop_front();
    }
    current = std::move(next);
    publish();
  }

  // A new `view` event with the current document, to every stream.
  void publish() {
    ++seq;
    // Server-sent events framing (HTML Living Standard §9.2): the JSON has
    // no newline, so one data line.
    event = std::make_shared<const std::string>("event: view\ndata: " + boost::json::serialize(document()) + "\n\n");
    broadcast();
  }

  void schedule_refresh() {
    if (refresh_scheduled) return;
    refresh_scheduled = true;
    refresh_timer.expires_after(opt.coalesce);
    refresh_timer.async_wait([this](beast::error_code ec) {
      refresh_scheduled = false;
      if (ec) return;
      dirty = false;
      try {
        rebuild(false);
      } catch (const std::exception&) {
        // A state that cannot be read now is read again at the next write.
      }
    });
  }

  void broadcast();
  void accept();
};

// One /events client: the header, then each `view` event as a chunk.
class UiStream : public std::enable_shared_from_this<UiStream> {
 public:
  UiStream(UiServer::Impl& impl, beast::tcp_stream stream, core::ConnectionBudget::Id slot)
      : impl_(impl), stream_(std::move(stream)), slot_(slot) {}
  ~UiStream();

  void begin(unsigned version) {
    auto res = std::make_shared<http::response<http::empty_body>>(http::status::ok, version);
    res->set(http::field::content_type, "text/event-stream");
    res->set(http::field::cache_control, "no-store");
    res->set("X-Content-Type-Options", "nosniff");
    res->chunked(true);
    auto sr = std::make_shared<http::response_serializer<http::empty_body>>(*res);
    stream_.expires_never();
    http::async_write_header(stream_, *sr, [self = shared_from_this(), res, sr](beast::error_code ec, size_t) {
      if (ec) return self->close();
      self->started_ = true;
      self->write_next();
      self->watch_close();
    });
    if (impl_.event) push(impl_.event);
  }

  void push(std::shared_ptr<const std::string> ev) {
    // A newer view replaces the one still waiting: the client needs the
    // latest, whole. So a stream holds at most two views (the one being
    // written and the newest), shared with every other stream.
    queue_.clear();
    queue_.push_back(std::move(ev));
    write_next();
  }

  bool open() const { return !closed_; }
  void close() {
    if (closed_) return;
    closed_ = true;
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.close();
  }

 private:
  // The client sends nothing more; a read ends when it goes away.
  void watch_close() {
    stream_.socket().async_read_some(asio::buffer(sink_), [self = shared_from_this()](beast::error_code ec, size_t) {
      if (ec) return self->close();
      self->watch_close();
    });
  }

  void write_next() {
    if (!started_ || writing_ || closed_ || queue_.empty()) return;
    writing_ = true;
    auto ev = queue_.front();
    queue_.pop_front();
    // A client that does not take one view in kViewWriteTimeout is closed
    // (the expiry also ends watch_close's read).
    stream_.expires_after(kViewWriteTimeout);
    asio::async_write(stream_, http::make_chunk(asio::buffer(*ev)),
                      [self = shared_from_this(), ev](beast::error_code ec, size_t) {
                        self->writing_ = false;
                        if (ec) return self->close();
                        self->stream_.expires_never();
                        self->write_next();
                      });
  }

  UiServer::Impl& impl_;
  beast::tcp_stream stream_;
  std::deque<std::shared_ptr<const std::string>> queue_;  // at most one
  std::array<char, 512> sink_{};
  bool started_ = false, writing_ = false, closed_ = false;
  core::ConnectionBudget::Id slot_;
};

UiStream::~UiStream() { impl_.budget.release(slot_); }

void UiServer::Impl::broadcast() {
  streams.remove_if([](const std::shared_ptr<UiStream>& s) { return !s->open(); });
  for (auto& s : streams) s->push(event);
}

namespace {

// One connection: requests read one after another (keep-alive), each
// answered in full, until it asks for /events.
class UiSession : public std::enable_shared_from_this<UiSession> {
 public:
  UiSession(UiServer::Impl& impl, tcp::socket socket) : impl_(impl), stream_(std::move(socket)) {}
  ~UiSession() { impl_.budget.release(slot_); }

  void set_slot(core::ConnectionBudget::Id slot) { slot_ = slot; }
  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.socket().close(ignored);
  }

  void read() {
    impl_.budget.client_turn(slot_);
    parser_.emplace();
    parser_->header_limit(kHeaderLimit);
    parser_->body_limit(0);
    stream_.expires_after(kReadTimeout);
    http::async_read(stream_, buffer_, *parser_, [self = shared_from_this()](beast::error_code ec, size_t) {
      if (ec) {
        beast::error_code ignored;
        self->stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
        return;
      }
      self->impl_.budget.server_turn(self->slot_);  // answered within kReadTimeout
      self->on_request(self->parser_->release());
    });
  }

 private:
  using Request = http::request<http::string_body>;
  using Response = http::response<http::string_body>;

  void reply(Response res) {
    res.set("Content-Security-Policy", kCsp);
    res.set("X-Content-Type-Options", "nosniff");
    res.set("X-Frame-Options", "DENY");
    res.set("Referrer-Policy", "no-referrer");
    if (!res.count(http::field::cache_control)) res.set(http::field::cache_control, "no-store");
    res.prepare_payload();
    auto sp = std::make_shared<Response>(std::move(res));
    stream_.expires_after(kReadTimeout);
    http::async_write(stream_, *sp, [self = shared_from_this(), sp](beast::error_code ec, size_t) {
      if (ec) return;
      if (sp->keep_alive()) return self->read();
      beast::error_code ignored;
      self->stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    });
  }

  Response text(const Request& req, http::status st, std::string body, const char* type = "text/plain; charset=utf-8") {
    Response res(st, req.version());
    res.keep_alive(req.keep_alive());
    res.set(http::field::content_type, type);
    res.body() = std::move(body);
    return res;
  }

  bool host_ok(const Request& req) const {
    std::string_view h = req[http::field::host];
    std::string p = ":" + std::to_string(impl_.port);
    return h == impl_.host || h == "localhost" + p || h == "127.0.0.1" + p || h == "[::1]" + p;
  }

  bool has_cookie(const Request& req) const {
    auto it = req.find(http::field::cookie);
    if (it == req.end()) return false;
    // Cookie: a=b; c=d (RFC 6265 §4.2.1), read as Beast's parameter list.
    std::string list = ";" + std::string(it->value());
    for (const auto& p : http::param_list(list))
      if (p.first == impl_.cookie && same_secret(impl_.secret, p.second)) return true;
    return false;
  }

  void on_request(Request req) {
    try {
      handle(req);
    } catch (const std::exception& e) {
      reply(text(req, http::status::internal_server_error, std::string("internal error: ") + e.what() + "\n"));
    }
  }

  void handle(const Request& req) {
    if (!host_ok(req)) return reply(text(req, http::status::forbidden, "unknown Host\n"));
    if (req.method() != http::verb::get && req.method() != http::verb::head)
      return reply(text(req, http::status::method_not_allowed, "only GET\n"));
    auto url = boost::urls::parse_origin_form(req.target());
    if (!url) return reply(text(req, http::status::bad_request, "bad request target\n"));
    std::string path = url->path();
    auto param = [&](const char* k) -> std::string {
      auto it = url->params().find(k);
      return it == url->params().end() ? "" : std::string((*it).value);
    };
    auto redirect = [&](Response res) {
      res.set(http::field::location, impl_.base);
      return reply(std::move(res));
    };
    if (path == "/login") {
      if (!same_secret(impl_.api.token(), param("token")))
        return reply(text(req, http::status::forbidden, "wrong token: use the login link gpuops serve printed\n"));
      Response res = text(req, http::status::see_other, "");
      // Scoped to this server's path (see ui_server.h): not sent to the
      // other services of the host, nor to another serve --ui.
      res.set(http::field::set_cookie,
              impl_.cookie + "=" + impl_.secret + "; Path=" + impl_.base + "; HttpOnly; SameSite=Strict");
      return redirect(std::move(res));
    }
    if (path == "/") return redirect(text(req, http::status::see_other, ""));
    if (path.rfind(impl_.base, 0) != 0) return reply(text(req, http::status::not_found, "not found\n"));
    path = path.substr(impl_.base.size() - 1);  // "/", "/ui.js", "/api/view", ...
    if (!has_cookie(req))
      return reply(text(req, http::status::unauthorized, "not logged in: open the login link gpuops serve printed\n"));
    if (path == "/" || path == "/ui.js" || path == "/ui.css") {
      std::string name = path == "/" ? "ui.html" : path.substr(1);
      const char* type = path == "/"        ? "text/html; charset=utf-8"
                         : path == "/ui.js" ? "text/javascript; charset=utf-8"
                                            : "text/css; charset=utf-8";
      return reply(text(req, http::status::ok, core::html_asset(name), type));
    }
    if (path == "/api/view")
      return reply(text(req, http::status::ok, boost::json::serialize(impl_.document()), "application/json"));
    if (path == "/api/explain") {
      const auto& s = *impl_.current;
      try {
        auto e = core::explain(s.state, s.catalog, param("node"), param("operand"));
        return reply(text(req, http::status::ok, core::render_text(e)));
      } catch (const core::ClusterError& e) {
        return reply(text(req, http::status::not_found, std::string(e.what()) + "\n"));
      } catch (const core::InputError& e) {
        return reply(text(req, http::status::bad_request, std::string(e.what()) + "\n"));
      }
    }
    if (path == "/events") {
      impl_.streams.remove_if([](const std::shared_ptr<UiStream>& s) { return !s->open(); });
      if (impl_.streams.size() >= kMaxStreams)
        return reply(text(req, http::status::service_unavailable, "too many event streams\n"));
      auto s = std::make_shared<UiStream>(impl_, std::move(stream_), slot_);
      slot_ = 0;  // the stream holds the place now
      impl_.streams.push_back(s);
      s->begin(req.version());
      return;
    }
    reply(text(req, http::status::not_found, "not found\n"));
  }

  UiServer::Impl& impl_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  core::ConnectionBudget::Id slot_ = 0;
};

}  // namespace

void UiServer::Impl::accept() {
  acceptor.async_accept([this](beast::error_code ec, tcp::socket socket) {
    if (!acceptor.is_open()) return;
    if (!ec) {
      auto session = std::make_shared<UiSession>(*this, std::move(socket));
      std::weak_ptr<UiSession> weak = session;
      auto slot = budget.admit([weak] {
        if (auto s = weak.lock()) s->close();
      });
      if (slot == 0) {
        session->close();  // every place busy answering or streaming
      } else {
        session->set_slot(slot);
        session->read();
      }
    }
    accept();
  });
}

UiServer::UiServer(ApiServer& api, Options options) : impl_(std::make_unique<Impl>(api, std::move(options))) {
  Impl& m = *impl_;
  beast::error_code ec;
  asio::ip::address addr = asio::ip::make_address(m.opt.address, ec);
  if (ec) throw core::InputError("", 0, "--ui-address", "\"" + m.opt.address + "\" is not an IP address");
  if (!addr.is_loopback()) throw core::InputError("", 0, "--ui-address", m.opt.address + " is not a loopback address");
  m.host = listen_on(m.acceptor, addr, m.opt.port, "serve --ui", m.opt.address);
  m.port = m.acceptor.local_endpoint().port();
  m.base = "/gpuops-ui-" + std::to_string(m.port) + "/";
  m.cookie = "gpuops_ui_" + std::to_string(m.port);
  api.with_cluster([&](FakeCluster& c) {
    m.writers.seed(c.store().nodes());
    c.store().add_subscriber(&m.watcher);
  });
  m.subscribed = true;
  m.rebuild(true);
}

UiServer::~UiServer() {
  stop();
  if (impl_->subscribed) impl_->api.with_cluster([&](FakeCluster& c) { c.store().remove_subscriber(&impl_->watcher); });
}

void UiServer::start() {
  Impl& m = *impl_;
  m.accept();
  m.thread = std::thread([&m] { m.io.run(); });
}

void UiServer::stop() {
  Impl& m = *impl_;
  asio::post(m.io, [&m] {
    beast::error_code ec;
    m.acceptor.close(ec);
    m.refresh_timer.cancel();
    for (auto& s : m.streams) s->close();
    m.streams.clear();
  });
  if (m.thread.joinable()) {
    // Sessions waiting on a read end when the io_context stops.
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    m.io.stop();
    m.thread.join();
  }
}

uint16_t UiServer::port() const { return impl_->port; }
std::string UiServer::url() const { return "http://" + impl_->host; }
std::string UiServer::base_path() const { return impl_->base; }
void UiServer::set_checklist(boost::json::value checklist) {
  asio::post(impl_->io, [&m = *impl_, doc = std::move(checklist)]() mutable {
    m.checklist = std::move(doc);
    m.publish();
  });
}

std::string UiServer::login_url() const { return url() + "/login?token=" + impl_->api.token(); }

}  // namespace gpuops::simulator
