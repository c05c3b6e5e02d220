// Connection caps under load, on loopback, bounded in count and time: a
// crowd of hostile clients holds every place of serve's API port, serve
// --ui's port and the exporter's endpoint (half of them idle, half sending
// a request header one byte at a time, each reconnecting when it is closed),
// and a legitimate client is still answered, every time, on each port.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "cli/http_endpoint.h"
#include "simulator/ui/ui_server.h"
#include "tests/serve/helpers.h"

namespace gpuops::serve_testing {
namespace {

using namespace std::chrono_literals;
namespace http = boost::beast::http;

int connect_to(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// `size` connections to `port`, held open until the crowd is destroyed: the
// idle half sends nothing, the slow half a request line and then one header
// byte every 500 ms. A connection the server closes is opened again after
// 100 ms, so the crowd keeps the places it can get.
class Crowd {
 public:
  // `slow`: half the crowd sends a plain-HTTP header slowly (a TLS port
  // closes those at once: there, idle connections are the slow handshakes).
  Crowd(uint16_t port, int size, bool slow = true) : port_(port) {
    for (int i = 0; i < size; ++i) conns_.push_back({-1, slow && i % 2 == 1, {}});
    thread_ = std::thread([this] { run(); });
  }
  ~Crowd() {
    stop_ = true;
    thread_.join();
    for (auto& c : conns_)
      if (c.fd >= 0) ::close(c.fd);
  }
  // Connections the server closed, once at least `n` were (or 2 s passed).
  int closed_by_server(int n) const {
    auto until = std::chrono::steady_clock::now() + 2s;
    while (closed_ < n && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(10ms);
    return closed_;
  }
  int open() const { return open_; }

 private:
  struct Conn {
    int fd;
    bool slow;
    std::chrono::steady_clock::time_point next;  // reconnect or next byte
  };

  void run() {
    while (!stop_) {
      auto now = std::chrono::steady_clock::now();
      int open = 0;
      for (auto& c : conns_) {
        if (c.fd < 0 && now >= c.next) {
          c.fd = connect_to(port_);
          if (c.fd >= 0 && c.slow) (void)!::write(c.fd, "GET /version HTTP/1.1\r\n", 23);
          c.next = now + 500ms;
        }
        if (c.fd < 0) continue;
        pollfd p{c.fd, POLLIN, 0};
        char buf[4096];
        if (::poll(&p, 1, 0) > 0 && ::read(c.fd, buf, sizeof buf) <= 0) {
          ::close(c.fd);
          c.fd = -1;
          c.next = now + 100ms;
          ++closed_;
          continue;
        }
        if (c.slow && now >= c.next) {
          (void)!::write(c.fd, "X", 1);
          c.next = now + 500ms;
        }
        ++open;
      }
      open_ = open;
      std::this_thread::sleep_for(5ms);
    }
  }

  uint16_t port_;
  std::vector<Conn> conns_;
  std::atomic<bool> stop_{false};
  std::atomic<int> closed_{0}, open_{0};
  std::thread thread_;
};

// A plain-HTTP GET as a browser or Prometheus sends it; the status, or 0
// when the connection was closed first.
unsigned plain_get(uint16_t port, const std::string& target, const std::string& cookie = "") {
  try {
    boost::asio::io_context io;
    boost::beast::tcp_stream s(io);
    s.connect(boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port));
    s.expires_after(5s);
    http::request<http::empty_body> req(http::verb::get, target, 11);
    req.set(http::field::host, "127.0.0.1:" + std::to_string(port));
    if (!cookie.empty()) req.set(http::field::cookie, cookie);
    http::write(s, req);
    boost::beast::flat_buffer b;
    http::response<http::string_body> res;
    http::read(s, b, res);
    return res.result_int();
  } catch (const std::exception&) {
    return 0;
  }
}

// Waits until the crowd holds `places` connections (the server's cap) and
// the newest is older than the budget's grace (1 s): before each legitimate
// request, so that each one finds every place taken.
void wait_for_crowd(const Crowd& crowd, int places) {
  auto until = std::chrono::steady_clock::now() + 10s;
  while (crowd.open() < places && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(20ms);
  ASSERT_GE(crowd.open(), places);
  std::this_thread::sleep_for(1100ms);
}

TEST(ConnectionCaps, TheApiPortAnswersWhileACrowdHoldsEveryPlace) {
  simulator::ApiServer::Options o;
  o.max_connections = 32;
  Served s(true, o);
  // Eight clients finish the TLS handshake and send half a header (held
  // until read_header_timeout; reopened before each request when the
  // server closed them); 24 connect and never start the handshake.
  std::vector<std::unique_ptr<RawClient>> half(8);
  int closed_half = 0;
  auto refill = [&] {
    for (auto& h : half) {
      if (h) {
        h->read(10ms);
        if (!h->eof) continue;
        ++closed_half;
      }
      h = std::make_unique<RawClient>(s.server->port());
      h->handshake();
      h->write("GET /version HTTP/1.1\r\nHost: x\r\n");
    }
  };
  Crowd crowd(s.server->port(), 24, false);
  for (int i = 0; i < 5; ++i) {
    refill();
    wait_for_crowd(crowd, 24);
    RawClient c(s.server->port());
    c.handshake();
    c.write("GET /version HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + s.server->token() + "\r\n\r\n");
    std::string head = c.read(5s, 12);
    EXPECT_EQ(head.substr(0, 12), "HTTP/1.1 200") << "request " << i << ": " << head;
  }
  // The places were full: each answer took the place of the connection
  // waiting longest, a half header or the crowd's.
  refill();
  EXPECT_GE(closed_half + crowd.closed_by_server(5 - closed_half), 5);
}

TEST(ConnectionCaps, ThePlacementViewAnswersWhileACrowdHoldsEveryPlace) {
  Served s(true);
  simulator::UiServer ui(*s.server, simulator::UiServer::Options{});
  ui.start();
  Crowd crowd(ui.port(), 128);
  for (int i = 0; i < 5; ++i) {
    wait_for_crowd(crowd, 128);
    EXPECT_EQ(plain_get(ui.port(), "/login?token=" + s.server->token()), 303u) << "request " << i;
  }
  EXPECT_GE(crowd.closed_by_server(5), 5);
  ui.stop();
}

TEST(ConnectionCaps, TheExporterAnswersScrapesAndProbesWhileACrowdHoldsEveryPlace) {
  cli::HttpEndpoint ep("127.0.0.1", 0, [](const std::string& target) {
    return cli::HttpAnswer{target == "/healthz" ? 200 : 404, "text/plain; charset=utf-8", "ok\n"};
  });
  Crowd crowd(ep.port(), 64);
  for (int i = 0; i < 5; ++i) {
    wait_for_crowd(crowd, 64);
    EXPECT_EQ(plain_get(ep.port(), "/healthz"), 200u) << "request " << i;
  }
  EXPECT_GE(crowd.closed_by_server(5), 5);
}

}  // namespace
}  // namespace gpuops::serve_testing
