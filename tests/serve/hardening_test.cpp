// What a hostile or broken client cannot do to `gpuops serve`: make it read a
// body without the token, hold a connection open without speaking, grow its
// memory through a watch it does not read, kill it with one YAML body, or spin
// it when it runs out of descriptors.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/json.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include "real/client.h"
#include "real/kubeconfig.h"
#include "tests/serve/child.h"
#include "tests/serve/helpers.h"

namespace gpuops::serve_testing {
namespace {

namespace asio = boost::asio;
namespace ssl = asio::ssl;
namespace json = boost::json;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

int status_of(const std::string& response) {
  if (response.rfind("HTTP/1.1 ", 0) != 0) return 0;
  return std::stoi(response.substr(9, 3));
}

json::value body_of(const std::string& response) {
  size_t at = response.find("\r\n\r\n");
  return at == std::string::npos ? json::value() : json::parse(response.substr(at + 4));
}

simulator::ApiServer::Options quick_timeouts() {
  simulator::ApiServer::Options o;
  o.handshake_timeout = 300ms;
  o.read_header_timeout = 300ms;
  o.idle_timeout = 300ms;
  return o;
}

std::string post_header(const std::string& token, const std::string& length) {
  std::string h = "POST /api/v1/namespaces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n";
  if (!token.empty()) h += "Authorization: Bearer " + token + "\r\n";
  return h + "Content-Length: " + length + "\r\n\r\n";
}

// Opens a watch of nodes on `w` (TLS, the server's token); returns what came
// of the answer's status line (12 bytes, or less).
std::string open_node_watch(RawClient& w, Served& s) {
  w.handshake();
  w.write("GET /api/v1/nodes?watch=true HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + s.server->token() +
          "\r\n\r\n");
  return w.read(5s, 12);
}

// `count` nodes named <prefix><i>, each with a 64 KiB annotation: as many
// watch events of about 64 KiB, written at once.
void add_blob_nodes(Served& s, const std::string& prefix, size_t count) {
  s.server->with_cluster([&](simulator::FakeCluster& c) {
    for (size_t i = 0; i < count; ++i) {
      core::Node n;
      n.metadata.name = prefix + std::to_string(i);
      n.metadata.annotations["example.com/blob"] = std::string(64 * 1024, 'x');
      c.add_node(n);
    }
  });
}

// The token is checked on the header: a request without it is answered 401
// at once, without waiting for the 100 MB its header announces.
TEST(ServeHardening, NoTokenIsRefusedBeforeTheBodyIsRead) {
  Served s(true);
  RawClient c(s.server->port());
  c.handshake();
  c.write(post_header("", "104857600"));
  std::string res = c.read(10s);
  EXPECT_EQ(status_of(res), 401) << res.substr(0, 200) << c.last_error.message();
  EXPECT_TRUE(c.eof) << "the connection stays open after a refused header";
  EXPECT_EQ(body_of(res).at("reason").as_string(), "Unauthorized");
}

// handlers/rest.go limitedReadBody over config.go's MaxRequestBodyBytes
// (3 MiB): 413, reason RequestEntityTooLarge, "Request entity too large:
// limit is 3145728"; by the announced length and by a chunked body alike.
TEST(ServeHardening, BodyOverTheApiserversLimitIs413) {
  Served s(true);
  {
    RawClient c(s.server->port());
    c.handshake();
    c.write(post_header(s.server->token(), "3145729"));
    std::string res = c.read(10s);
    ASSERT_EQ(status_of(res), 413) << res.substr(0, 200);
    json::value st = body_of(res);
    EXPECT_EQ(st.at("reason").as_string(), "RequestEntityTooLarge");
    EXPECT_EQ(st.at("message").as_string(), "Request entity too large: limit is 3145728");
    EXPECT_EQ(st.at("code").as_int64(), 413);
  }
  {
    RawClient c(s.server->port());
    c.handshake();
    c.write("POST /api/v1/namespaces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer " +
            s.server->token() + "\r\nTransfer-Encoding: chunked\r\n\r\n");
    std::string chunk(1 << 20, ' ');
    char size[32];
    std::snprintf(size, sizeof size, "%zx\r\n", chunk.size());
    for (int i = 0; i < 4 && !c.write_error; ++i) c.write(size + chunk + "\r\n");
    std::string res = c.read(10s);
    EXPECT_EQ(status_of(res), 413) << res.substr(0, 200);
  }
  // At the limit is fine (a body of whitespace around an object).
  RawClient c(s.server->port());
  c.handshake();
  std::string body = R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"at-the-limit"}})";
  body += std::string(3145728 - body.size(), ' ');
  c.write(post_header(s.server->token(), std::to_string(body.size())) + body);
  EXPECT_EQ(status_of(c.read(10s, 12)), 201);
}

// A client that connects and says nothing, or finishes the handshake and
// sends no request, is disconnected after the timeouts.
TEST(ServeHardening, SilentConnectionsAreClosed) {
  Served s(true, quick_timeouts());
  RawClient no_handshake(s.server->port());
  no_handshake.read(5s, SIZE_MAX, false);
  EXPECT_TRUE(no_handshake.eof) << "open without a TLS handshake";

  RawClient no_request(s.server->port());
  no_request.handshake();
  no_request.read(5s);
  EXPECT_TRUE(no_request.eof) << "open without a request";

  // Half a header, then nothing.
  RawClient half(s.server->port());
  half.handshake();
  half.write("GET /version HTTP/1.1\r\nHost: x\r\n");
  half.read(5s);
  EXPECT_TRUE(half.eof) << "open with half a header";
}

// A watcher that does not read is closed once its backlog passes the
// bound; the server goes on serving.
TEST(ServeHardening, WatchWhoseClientDoesNotReadIsClosed) {
  simulator::ApiServer::Options o;
  o.watch_backlog_hard_bytes = 1 << 20;
  Served s(true, o);
  RawClient w(s.server->port());
  std::string head = open_node_watch(w, s);
  ASSERT_EQ(status_of(head), 200) << head;
  // 600 node events of 64 KiB each (39 MB): more than the kernel's socket
  // buffers on loopback hold, so most of it would wait in the server.
  const size_t kEvents = 600;
  add_blob_nodes(s, "big-", kEvents);
  std::string rest = w.read(20s);
  EXPECT_TRUE(w.eof) << "the watch is still open after " << rest.size() << " bytes";
  EXPECT_LT(rest.size(), kEvents * 64 * 1024);
  EXPECT_EQ(rest.find("\r\n0\r\n\r\n"), std::string::npos) << "closed as a slow client, not ended cleanly";

  real::LoadOptions lo;
  lo.kubeconfig = s.kubeconfig;
  lo.getenv = [](const std::string&) { return std::optional<std::string>(); };
  real::Client client(real::load_rest_config(lo));
  real::Request r;
  r.path = "/version";
  EXPECT_NO_THROW(client.send_json(r));
}

// A watcher that stops reading after a burst, with no event after it, used to
// stay open (and keep its backlog) until the next event of its kind: the
// soft bound is checked again once watch_stall has passed.
TEST(ServeHardening, AStalledWatchIsClosedWithoutAnotherEvent) {
  simulator::ApiServer::Options o;
  o.watch_backlog_bytes = 1 << 20;
  // Longer than the feed's own wait for a slow watch (1 s, after which the
  // rest of the burst is queued): every event is queued before the stall
  // has passed, so no event finds the watch stalled.
  o.watch_stall = std::chrono::milliseconds(2000);
  Served s(true, o);
  RawClient w(s.server->port());
  std::string head = open_node_watch(w, s);
  ASSERT_EQ(status_of(head), 200) << head;
  // One burst of 200 events of 64 KiB (13 MB), then nothing more.
  add_blob_nodes(s, "burst-", 200);
  // The client reads nothing for 5 s: the server must have given up by then.
  std::this_thread::sleep_for(5s);
  std::string rest = w.read(10s);
  EXPECT_TRUE(w.eof) << "the watch is still open after " << rest.size() << " bytes";
  EXPECT_LT(rest.size(), 200u * 64 * 1024);
}

// One YAML body with a self-referential alias used to kill the server.
TEST(ServeHardening, YamlAliasLoopIs400AndTheServerLives) {
  Served s(true);
  real::LoadOptions lo;
  lo.kubeconfig = s.kubeconfig;
  lo.getenv = [](const std::string&) { return std::optional<std::string>(); };
  real::Client client(real::load_rest_config(lo));
  real::Request r;
  r.method = boost::beast::http::verb::post;
  r.path = "/api/v1/namespaces";
  r.content_type = "application/yaml";
  r.body = "apiVersion: v1\nkind: Namespace\nmetadata: &m\n  name: x\n  labels: *m\n";
  try {
    client.send(r);
    FAIL() << "accepted";
  } catch (const real::ApiError& e) {
    EXPECT_EQ(e.http_status(), 400);
    EXPECT_NE(std::string(e.what()).find("anchor 'm' value contains itself"), std::string::npos) << e.what();
  }
  r.body = "kind: Namespace\napiVersion: v1\nx: &a [l,l,l,l,l,l,l,l,l,l]\n";
  std::string prev = "a";
  for (char c = 'b'; c <= 'i'; ++c) {
    std::string list;
    for (int i = 0; i < 10; ++i) list += (i ? ",*" : "*") + prev;
    r.body += std::string(1, c) + ": &" + c + " [" + list + "]\n";
    prev = std::string(1, c);
  }
  try {
    client.send(r);
    FAIL() << "accepted";
  } catch (const real::ApiError& e) {
    EXPECT_EQ(e.http_status(), 400);
    EXPECT_NE(std::string(e.what()).find("document contains excessive aliasing"), std::string::npos) << e.what();
  }
  real::Request v;
  v.path = "/version";
  EXPECT_NO_THROW(client.send_json(v));
}

// A large YAML body (2.9 MiB: a DaemonSet with 80,000 env entries) takes
// yaml-cpp about half a second to decode (a second on a loaded machine). It is decoded off the I/O thread: a
// request sent while it decodes is answered first, and both are answered.
TEST(ServeHardening, ALargeYamlBodyDoesNotHoldTheOtherClients) {
  Served s(true);
  std::string env;
  for (int i = 0; i < 80000; ++i) env += "        - {name: E" + std::to_string(i) + ", value: v}\n";
  std::string body =
      "apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: big\nspec:\n  selector:\n    matchLabels: {app: "
      "big}\n  template:\n    metadata:\n      labels: {app: big}\n    spec:\n      containers:\n      - name: c\n"
      "        image: busybox\n        env:\n" +
      env;
  ASSERT_GT(body.size(), 2u << 20);
  ASSERT_LT(body.size(), 3u << 20);
  RawClient big(s.server->port());
  big.handshake();
  big.write(
      "POST /apis/apps/v1/namespaces/default/daemonsets HTTP/1.1\r\nHost: x\r\nContent-Type: "
      "application/yaml\r\nAuthorization: Bearer " +
      s.server->token() + "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body);
  ASSERT_FALSE(big.write_error) << big.write_error.message();
  // The server has the body by now (it reads it in milliseconds) and decodes it.
  std::this_thread::sleep_for(100ms);
  RawClient other(s.server->port());
  other.handshake();
  other.write("GET /version HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + s.server->token() + "\r\n\r\n");
  EXPECT_EQ(status_of(other.read(5s, 12)), 200);
  // The large one is still being decoded: nothing of its answer yet.
  EXPECT_EQ(big.read(1ms, 12), "") << "the large body was answered before the small request";
  std::string answer = big.read(60s, 12);
  EXPECT_NE(status_of(answer), 0) << answer;
}

// An object past etcd's 1.5 MiB request limit is not stored, as kube-apiserver
// v1.37.2 answered (measured: a Node of 20,000 labels, 1.78 MB of JSON: 500
// "etcdserver: request is too large", no reason; 16,000 labels, 1.42 MB:
// created). Without the bound, patches could grow one object for ever.
TEST(ServeHardening, AnObjectPastEtcdsLimitIsNotStored) {
  Served s(true);
  auto node = [](int labels, const std::string& name) {
    boost::json::object l;
    for (int i = 0; i < labels; ++i) {
      char key[32];
      std::snprintf(key, sizeof key, "example.com/l%05d", i);
      l[key] = std::string(63, 'v');
    }
    return boost::json::serialize(boost::json::object{
        {"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", boost::json::object{{"name", name}, {"labels", l}}}});
  };
  auto post = [&](const std::string& body) {
    RawClient c(s.server->port());
    c.handshake();
    c.write(
        "POST /api/v1/nodes HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n"
        "Authorization: Bearer " +
        s.server->token() + "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body);
    return c.read(20s);
  };
  std::string big = post(node(20000, "big"));
  EXPECT_EQ(status_of(big), 500) << big.substr(0, 300);
  boost::json::value st = body_of(big);
  EXPECT_EQ(st.at("message"), "etcdserver: request is too large");
  EXPECT_EQ(st.as_object().count("reason"), 0u);
  EXPECT_EQ(status_of(post(node(16000, "fits"))), 201);
}

// Out of descriptors, the accept loop backs off (5 ms doubling to 1 s)
// instead of retrying at once: over 2 s that is a handful of retries, each
// said on stderr. `gpuops serve` runs with a descriptor limit of 16.
TEST(ServeHardening, AcceptBacksOffWhenOutOfDescriptors) {
  TempDir dir;
  std::string kc = dir.path + "/kc", errf = dir.path + "/err";
  auto server = std::make_unique<Child>(std::vector<std::string>{"/usr/bin/prlimit", "--nofile=16:16", GPUOPS_BINARY,
                                                                 "serve", "--lab", "--kubeconfig-out", kc},
                                        "/dev/null", errf);
  for (int i = 0; i < 100 && !std::filesystem::exists(kc); ++i) std::this_thread::sleep_for(50ms);
  ASSERT_TRUE(std::filesystem::exists(kc));
  std::this_thread::sleep_for(200ms);
  std::string text = read_file(kc);
  size_t at = text.find("https://127.0.0.1:");
  ASSERT_NE(at, std::string::npos);
  uint16_t port = static_cast<uint16_t>(std::stoi(text.substr(at + 18)));
  asio::io_context io;
  std::vector<std::unique_ptr<tcp::socket>> socks;
  for (int i = 0; i < 24; ++i) {
    auto s = std::make_unique<tcp::socket>(io);
    boost::system::error_code ec;
    s->connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), ec);
    if (!ec) socks.push_back(std::move(s));
  }
  std::this_thread::sleep_for(2s);
  server.reset();  // SIGKILL, reaped
  std::string err = read_file(errf);
  size_t retries = 0;
  for (size_t p = err.find("retrying in"); p != std::string::npos; p = err.find("retrying in", p + 1)) ++retries;
  EXPECT_GE(retries, 1u) << err;
  EXPECT_LE(retries, 15u) << err.substr(0, 500);
  EXPECT_NE(err.find("Too many open files"), std::string::npos) << err.substr(0, 500);
}

// The certificate covers whatever loopback address is served, so the
// kubeconfig written for it verifies (it covered 127.0.0.1 and localhost only).
TEST(ServeHardening, CertificateCoversTheServedAddress) {
  for (std::string address : {"127.0.0.2", "::1"}) {
    simulator::FakeCluster cluster;
    simulator::ApiServer::Options o;
    o.address = address;
    std::unique_ptr<simulator::ApiServer> server;
    try {
      server = std::make_unique<simulator::ApiServer>(cluster, o);
    } catch (const core::ClusterError& e) {
      if (address == "::1") continue;  // no IPv6 loopback on this machine
      throw;
    }
    TempDir dir;
    server->write_kubeconfig(dir.path + "/kc");
    server->start();
    real::LoadOptions lo;
    lo.kubeconfig = dir.path + "/kc";
    lo.getenv = [](const std::string&) { return std::optional<std::string>(); };
    real::Client client(real::load_rest_config(lo));
    real::Request r;
    r.path = "/version";
    EXPECT_NO_THROW(client.send_json(r)) << address;
  }
}

// The kubeconfig (it holds the token) is 0600 from its first byte, whatever
// the umask, replaces a file of another mode, and is not written through a
// symbolic link at its path.
TEST(ServeHardening, KubeconfigIsCreatedPrivate) {
  Served s(true);
  TempDir dir;
  mode_t old = ::umask(0);
  std::string p = dir.path + "/kc";
  s.server->write_kubeconfig(p);
  struct stat st {};
  ASSERT_EQ(::stat(p.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ::chmod(p.c_str(), 0644);
  s.server->write_kubeconfig(p);
  ASSERT_EQ(::stat(p.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  std::string target = dir.write("elsewhere", "keep");
  std::string link = dir.path + "/link";
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  s.server->write_kubeconfig(link);
  ::umask(old);
  EXPECT_EQ(read_file(target), "keep");
  ASSERT_EQ(::lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_NE(read_file(link).find("token:"), std::string::npos);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path), {}), 3);  // no temporary left
}

}  // namespace
}  // namespace gpuops::serve_testing
