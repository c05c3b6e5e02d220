#include "cli/http_endpoint.h"

#include <sys/resource.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <charconv>
#include <thread>

#include "core/base/connection_budget.h"
#include "core/base/errors.h"

namespace gpuops::cli {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr size_t kHeaderLimit = 8 * 1024;
constexpr int kMaxConnections = 64;
constexpr auto kReadTimeout = std::chrono::seconds(10);
constexpr auto kWriteTimeout = std::chrono::seconds(30);

class Session : public std::enable_shared_from_this<Session> {
 public:
  // Shared: the io_context may destroy a session after the endpoint's other
  // members are gone.
  Session(tcp::socket socket, std::shared_ptr<const HttpEndpoint::Handler> handler,
          std::shared_ptr<core::ConnectionBudget> budget)
      : stream_(std::move(socket)), handler_(std::move(handler)), budget_(std::move(budget)) {}
  ~Session() { budget_->release(slot_); }

  void set_slot(core::ConnectionBudget::Id slot) { slot_ = slot; }
  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.socket().close(ignored);
  }

  void read() {
    budget_->client_turn(slot_);
    parser_.emplace();
    parser_->header_limit(kHeaderLimit);
    parser_->body_limit(0);
    stream_.expires_after(kReadTimeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) { self->on_read(ec); });
  }

 private:
  void on_read(beast::error_code ec) {
    if (ec == http::error::body_limit) return answer(413, "request body not accepted\n", false);
    if (ec) return;               // closed, timed out or not HTTP: nothing more to say
    budget_->server_turn(slot_);  // answered within kWriteTimeout
    const auto& req = parser_->get();
    bool keep = req.keep_alive();
    if (req.method() != http::verb::get && req.method() != http::verb::head)
      return answer(405, "only GET and HEAD\n", keep, true);
    std::string target(req.target());
    if (auto q = target.find('?'); q != std::string::npos) target.resize(q);
    HttpAnswer a;
    try {
      a = (*handler_)(target);
    } catch (const std::exception& e) {
      a = {500, "text/plain; charset=utf-8", std::string("internal error: ") + e.what() + "\n"};
    }
    head_ = req.method() == http::verb::head;
    res_ = {};
    res_.version(11);
    res_.result(a.status);
    res_.set(http::field::content_type, a.content_type);
    res_.body() = std::move(a.body);
    res_.keep_alive(keep);
    res_.prepare_payload();
    if (head_) res_.body().clear();  // Content-Length stays that of the body
    write();
  }

  void answer(int status, std::string body, bool keep, bool allow = false) {
    res_ = {};
    res_.version(11);
    res_.result(status);
    res_.set(http::field::content_type, "text/plain; charset=utf-8");
    if (allow) res_.set(http::field::allow, "GET, HEAD");
    res_.body() = std::move(body);
    res_.keep_alive(keep);
    res_.prepare_payload();
    write();
  }

  void write() {
    stream_.expires_after(kWriteTimeout);
    http::async_write(stream_, res_, [self = shared_from_this()](beast::error_code ec, size_t) {
      if (ec) return;
      if (!self->res_.keep_alive()) {
        beast::error_code ignored;
        self->stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
        return;
      }
      self->read();
    });
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::empty_body>> parser_;
  http::response<http::string_body> res_;
  bool head_ = false;
  std::shared_ptr<const HttpEndpoint::Handler> handler_;
  std::shared_ptr<core::ConnectionBudget> budget_;
  core::ConnectionBudget::Id slot_ = 0;
};

}  // namespace

struct HttpEndpoint::Impl {
  asio::io_context io;
  tcp::acceptor acceptor{io};
  std::shared_ptr<const Handler> handler;
  // Shared with the sessions, which may outlive the endpoint's members.
  std::shared_ptr<core::ConnectionBudget> budget = std::make_shared<core::ConnectionBudget>(kMaxConnections);
  std::thread thread;

  void accept() {
    acceptor.async_accept([this](beast::error_code ec, tcp::socket s) {
      if (ec == asio::error::operation_aborted) return;
      if (!ec) {
        // At the cap, the connection that has waited longest for its client
        // makes room (core::ConnectionBudget): idle clients cannot keep a
        // scrape or the liveness probe out.
        auto session = std::make_shared<Session>(std::move(s), handler, budget);
        std::weak_ptr<Session> weak = session;
        auto slot = budget->admit([weak] {
          if (auto p = weak.lock()) p->close();
        });
        if (slot == 0) return session->close(), accept();
        session->set_slot(slot);
        session->read();
      }
      accept();
    });
  }
};

HttpEndpoint::HttpEndpoint(const std::string& address, uint16_t port, Handler handler)
    : impl_(std::make_unique<Impl>()) {
  impl_->handler = std::make_shared<const Handler>(std::move(handler));
  beast::error_code ec;
  auto addr = asio::ip::make_address(address.empty() ? "0.0.0.0" : address, ec);
  if (ec) throw core::InputError("", 0, "--listen", "\"" + address + "\" is not an IP address");
  tcp::endpoint ep(addr, port);
  const std::string where =
      (addr.is_v6() ? "[" + addr.to_string() + "]" : addr.to_string()) + ":" + std::to_string(port);
  impl_->acceptor.open(ep.protocol(), ec);
  if (!ec) impl_->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl_->acceptor.bind(ep, ec);
  if (!ec) impl_->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw core::ClusterError("cannot listen on " + where + ": " + ec.message());
  impl_->accept();
  impl_->thread = std::thread([this] { impl_->io.run(); });
}

HttpEndpoint::~HttpEndpoint() {
  impl_->io.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

uint16_t HttpEndpoint::port() const { return impl_->acceptor.local_endpoint().port(); }

void raise_open_file_limit() {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur >= lim.rlim_max) return;
  lim.rlim_cur = lim.rlim_max;
  (void)::setrlimit(RLIMIT_NOFILE, &lim);
}

void split_listen_address(const std::string& flag, const std::string& value, std::string& host, uint16_t& port) {
  auto bad = [&] { return core::InputError("", 0, flag, "\"" + value + "\" is not HOST:PORT, [IPv6]:PORT or :PORT"); };
  auto colon = value.rfind(':');
  if (colon == std::string::npos) throw bad();
  host = value.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  std::string p = value.substr(colon + 1);
  unsigned v = 0;
  auto [ptr, err] = std::from_chars(p.data(), p.data() + p.size(), v);
  if (p.empty() || err != std::errc() || ptr != p.data() + p.size() || v > 65535) throw bad();
  port = static_cast<uint16_t>(v);
}

}  // namespace gpuops::cli
