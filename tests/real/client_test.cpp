// real::Client against a loopback test server: TLS (CA, SNI, IP SANs,
// tls-server-name, insecure), client certificates, tokens, token files, exec
// plugins, and every error path with the server misbehaving on purpose.
#include "real/client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <sstream>

#include "core/base/errors.h"
#include "core/model/rfc3339.h"
#include "tests/real/client_helpers.h"
#include "tests/real/test_server.h"

namespace gpuops::real {
namespace {

using namespace testing;  // NOLINT
using http_verb = boost::beast::http::verb;
using std::chrono::milliseconds;
using ::testing::HasSubstr;
using ::testing::Not;

const char* kNodeList = R"({"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[]})";

Request get(const std::string& path) { return Request{http_verb::get, path, {}, "", ""}; }

std::string read_file(const std::string& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ClientTls, CaAndTokenOverIpWithoutSni) {
  TestServer s({}, [](const HttpRequest&, Exchange& ex) { ex.reply(200, kNodeList); });
  RestConfig c = config_for(s);
  c.token = "sekret-token";
  Client client(c, quiet());
  auto v = client.send_json(get("/api/v1/nodes"));
  EXPECT_EQ(v.at("kind"), "NodeList");
  auto seen = s.seen();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].authorization, "Bearer sekret-token");
  EXPECT_EQ(seen[0].sni, "");  // no SNI for an IP address
  EXPECT_EQ(seen[0].host, "127.0.0.1:" + std::to_string(s.port()));
  EXPECT_EQ(seen[0].target, "/api/v1/nodes");
}

TEST(ClientTls, PathPrefixAndQueryEncoding) {
  TestServer s({}, [](const HttpRequest&, Exchange& ex) { ex.reply(200, kNodeList); });
  RestConfig c;
  parse_server(s.url() + "/k8s/clusters/c-1", true, c);
  c.ca_data = Pki::get().ca.cert;
  Client client(c, quiet());
  Request r = get("/api/v1/pods");
  r.query = {{"labelSelector", "app in (a,b)"}, {"continue", "x+y/="}};
  client.send(r);
  EXPECT_EQ(s.seen().at(0).target,
            "/k8s/clusters/c-1/api/v1/pods?labelSelector=app%20in%20%28a%2Cb%29&continue=x%2By%2F%3D");
}

TEST(ClientTls, UnknownCaIsRefusedWithoutLeakingTheToken) {
  TestServer s({}, [](const HttpRequest&, Exchange& ex) { ex.reply(200, kNodeList); });
  RestConfig c = config_for(s);
  c.ca_data = Pki::get().other_ca.cert;
  c.token = "sekret-token";
  Client client(c, quiet());
  std::string m = cluster_error([&] { client.send(get("/api/v1/nodes")); });
  EXPECT_THAT(m, HasSubstr("TLS handshake failed: certificate verify failed"));
  EXPECT_THAT(m, HasSubstr(s.url()));
  EXPECT_THAT(m, Not(HasSubstr("sekret")));
  EXPECT_TRUE(s.seen().empty());
}

TEST(ClientTls, IpSanIsChecked) {
  // A certificate for "localhost" only does not cover 127.0.0.1.
  TestServer s({true, Pki::get().server_dns, ""}, [](const HttpRequest&, Exchange& ex) { ex.reply(200, kNodeList); });
  Client client(config_for(s), quiet());
  std::string m = cluster_error([&] { client.send(get("/api/v1/nodes")); });
  EXPECT_THAT(m, HasSubstr("IP address mismatch"));
  EXPECT_THAT(m, HasSubstr("not valid for 127.0.0.1"));
}

TEST(ClientTls, TlsServerNameSetsSniAndVerification) {
  TestServer s({true, Pki::get().server_dns, ""}, [](const HttpRequest&, Exchange& ex) { ex.reply(200, kNodeList); });
  RestConfig c = config_for(s);
  c.tls_server_name = "localhost";
  Client client(c, quiet());
  client.send(get("/api/v1/nodes"));
  EXPECT_EQ(s.seen().at(0).sni, "localhost");
  c.tls_server_name = "wrong.example";
  Client wrong(c, quiet());
  EXPECT_THAT(cluster_error([&] { wrong.send(get("/api/v1/nodes")); }), HasSubstr("hostname mismatch"));
}

TEST(ClientTls, InsecureSkipsVerificationButSendsTheClientCertificate) {
  TestServer s({true, Pki::get().server_dns, Pki::get().ca.cert},
               [](const HttpRequest&, Exchange& ex) { ex.reply(200, kNodeList); });
  RestConfig c = config_for(s);
  c.ca_data.clear();
  c.insecure_skip_tls_verify = true;
  c.client_certificate_data = Pki::get().client.cert;
  c.client_key_data = Pki::get().client.key;
  Client client(c, quiet());
  client.send(get("/api/v1/nodes"));
  EXPECT_EQ(s.seen().at(0).client_cn, "gpuops-admin");
  EXPECT_EQ(s.seen().at(0).authorization, "");
}

TEST(ClientTls, BadClientKeyIsAnInputError) {
  RestConfig c;
  parse_server("https://127.0.0.1:1", true, c);
  c.client_certificate_data = Pki::get().client.cert;
  c.client_key_data = Pki::get().server.key;  // not the certificate's key
  EXPECT_THROW(Client(c, quiet()), core::InputError);
}

TEST(ClientTls, KeepAliveReusesOneConnection) {
  TestServer s({}, [](const HttpRequest&, Exchange& ex) { ex.reply(200, kNodeList); });
  Client client(config_for(s), quiet());
  for (int i = 0; i < 3; ++i) client.send(get("/api/v1/nodes"));
  EXPECT_EQ(s.connections(), 1);
  EXPECT_EQ(client.requests_sent(), 3);
}

TEST(ClientAuth, TokenFileIsReReadAfterAMinuteAndAfter401) {
  TempDir d;
  std::string tf = d.write("token", "one\n");
  std::atomic<int> calls{0};
  TestServer s({}, [&](const HttpRequest& req, Exchange& ex) {
    ++calls;
    if (req[boost::beast::http::field::authorization] == "Bearer stale")
      ex.reply(401, status_json(401, "Unauthorized", "Unauthorized"));
    else
      ex.reply(200, kNodeList);
  });
  RestConfig c = config_for(s);
  c.token_file = tf;
  auto now = std::chrono::system_clock::time_point(std::chrono::hours(1000000));
  ClientOptions o = quiet();
  o.now = [&now] { return now; };
  Client client(c, o);
  client.send(get("/a"));
  d.write("token", "two");
  client.send(get("/b"));  // cached: still "one"
  now += std::chrono::minutes(1);
  client.send(get("/c"));  // re-read
  d.write("token", "stale");
  now += std::chrono::minutes(1);
  d.write("token", "stale");
  EXPECT_THROW(client.send(get("/d")), ApiError);  // 401 twice: stale re-read after the 401 too
  auto seen = s.seen();
  ASSERT_EQ(seen.size(), 5u);
  EXPECT_EQ(seen[0].authorization, "Bearer one");
  EXPECT_EQ(seen[1].authorization, "Bearer one");
  EXPECT_EQ(seen[2].authorization, "Bearer two");
  EXPECT_EQ(seen[3].authorization, "Bearer stale");
  EXPECT_EQ(seen[4].authorization, "Bearer stale");
}

// An exec plugin: a shell script that counts its runs, records its
// environment, and prints token-<run>.
struct Plugin {
  TempDir dir;
  std::string path;
  explicit Plugin(const std::string& api_version, const std::string& expiry = "",
                  const std::string& extra_status = "") {
    std::string exp = expiry.empty() ? "" : ",\\\"expirationTimestamp\\\":\\\"" + expiry + "\\\"";
    path = dir.write("bin/plugin",
                     "#!/bin/sh\n"
                     "n=$(cat \"$(dirname \"$0\")/count\" 2>/dev/null || echo 0)\n"
                     "n=$((n+1))\n"
                     "echo $n > \"$(dirname \"$0\")/count\"\n"
                     "printf '%s' \"$KUBERNETES_EXEC_INFO\" > \"$(dirname \"$0\")/info\"\n"
                     "printf '%s' \"$PLUGIN_FLAVOUR $1\" > \"$(dirname \"$0\")/env\"\n"
                     "echo \"{\\\"apiVersion\\\":\\\"" +
                         api_version +
                         "\\\",\\\"kind\\\":\\\"ExecCredential\\\",\\\"status\\\":{\\\"token\\\":\\\"token-$n\\\"" +
                         exp + extra_status + "}}\"\n",
                     true);
  }
  int runs() const {
    std::string s = read_file(dir.path + "/bin/count");
    return s.empty() ? 0 : std::stoi(s);
  }
  std::string info() const { return read_file(dir.path + "/bin/info"); }
  std::string env() const { return read_file(dir.path + "/bin/env"); }
};

ExecConfig exec_of(const Plugin& p, const std::string& api_version) {
  ExecConfig x;
  x.command = p.path;
  x.args = {"--flag"};
  x.env = {{"PLUGIN_FLAVOUR", "vanilla"}};
  x.api_version = api_version;
  x.interactive_mode = "Never";
  x.provide_cluster_info = true;
  x.cluster_config = boost::json::object{{"audience", "gpuops"}};
  return x;
}

TEST(ClientAuth, ExecPluginV1IsCachedAndRefreshedOn401) {
  const std::string v1 = "client.authentication.k8s.io/v1";
  Plugin p(v1);
  // token-1 is refused (as if revoked); the request is resent with token-2.
  TestServer s({}, [](const HttpRequest& req, Exchange& ex) {
    if (req[boost::beast::http::field::authorization] == "Bearer token-1")
      ex.reply(401, status_json(401, "Unauthorized", "Unauthorized"));
    else
      ex.reply(200, kNodeList);
  });
  RestConfig c = config_for(s);
  c.exec = exec_of(p, v1);
  Client client(c, quiet());
  client.send(get("/api/v1/nodes"));
  client.send(get("/api/v1/nodes"));
  EXPECT_EQ(p.runs(), 2);
  auto seen = s.seen();
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].authorization, "Bearer token-1");
  EXPECT_EQ(seen[1].authorization, "Bearer token-2");
  EXPECT_EQ(seen[2].authorization, "Bearer token-2");
  EXPECT_EQ(p.env(), "vanilla --flag");
  auto info = boost::json::parse(p.info());
  EXPECT_EQ(std::string(info.at("apiVersion").as_string()), v1);
  EXPECT_EQ(info.at("kind"), "ExecCredential");
  EXPECT_EQ(info.at("spec").at("interactive"), false);
  EXPECT_EQ(std::string(info.at("spec").at("cluster").at("server").as_string()), s.url());
  EXPECT_EQ(info.at("spec").at("cluster").at("config").at("audience"), "gpuops");
  EXPECT_TRUE(info.at("spec").at("cluster").at("certificate-authority-data").is_string());
}

TEST(ClientAuth, ExecPluginV1beta1CachedUntilExpiry) {
  const std::string v1b = "client.authentication.k8s.io/v1beta1";
  Plugin p(v1b, "2030-01-01T00:00:00Z");
  TestServer s({}, [](const HttpRequest&, Exchange& ex) { ex.reply(200, kNodeList); });
  RestConfig c = config_for(s);
  c.exec = exec_of(p, v1b);
  c.exec->provide_cluster_info = false;
  ClientOptions o = quiet();
  auto now = std::chrono::system_clock::time_point(core::parse_time("2029-12-31T23:59:00Z").time_since_epoch());
  o.now = [&now] { return now; };
  Client client(c, o);
  client.send(get("/a"));
  client.send(get("/b"));
  EXPECT_EQ(p.runs(), 1);
  now = std::chrono::system_clock::time_point(core::parse_time("2030-01-01T00:00:00Z").time_since_epoch());
  client.send(get("/c"));
  EXPECT_EQ(p.runs(), 2);
  EXPECT_EQ(s.seen().at(2).authorization, "Bearer token-2");
  EXPECT_FALSE(boost::json::parse(p.info()).at("spec").as_object().contains("cluster"));
}

TEST(ClientAuth, ExecPluginErrorsNeverEchoTheCredential) {
  const std::string v1 = "client.authentication.k8s.io/v1";
  TestServer s({}, [](const HttpRequest&, Exchange& ex) { ex.reply(200, kNodeList); });
  {
    Plugin p("client.authentication.k8s.io/v1beta1");  // answers with the wrong apiVersion
    RestConfig c = config_for(s);
    c.exec = exec_of(p, v1);
    Client client(c, quiet());
    std::string m = cluster_error([&] { client.send(get("/a")); });
    EXPECT_THAT(m, HasSubstr("does not match the configured \"client.authentication.k8s.io/v1\""));
    EXPECT_THAT(m, Not(HasSubstr("token-1")));
  }
  {
    Plugin p(v1, "", ",\\\"clientCertificateData\\\":\\\"x\\\"");  // certificate without key
    RestConfig c = config_for(s);
    c.exec = exec_of(p, v1);
    Client client(c, quiet());
    EXPECT_THAT(cluster_error([&] { client.send(get("/a")); }), HasSubstr("must both be present"));
  }
  {
    RestConfig c = config_for(s);
    ExecConfig x;
    x.command = "/nonexistent/kubelogin";
    x.api_version = v1;
    x.interactive_mode = "Never";
    x.install_hint = "install kubelogin from its releases page";
    c.exec = x;
    Client client(c, quiet());
    std::string m = cluster_error([&] { client.send(get("/a")); });
    EXPECT_THAT(m, HasSubstr("cannot run \"/nonexistent/kubelogin\""));
    EXPECT_THAT(m, HasSubstr("install kubelogin from its releases page"));
  }
  {
    RestConfig c = config_for(s);
    ExecConfig x;
    x.command = "/bin/true";
    x.api_version = v1;
    x.interactive_mode = "Always";  // stdin of the test is not a terminal
    c.exec = x;
    ClientOptions o = quiet();
    TempDir d;
    std::string f = d.write("stdin", "");
    int fd = ::open(f.c_str(), O_RDONLY);
    o.stdin_fd = fd;
    Client client(c, o);
    EXPECT_THAT(cluster_error([&] { client.send(get("/a")); }), HasSubstr("standard input is not a terminal"));
    ::close(fd);
  }
}

// ---- error paths ----

TEST(ClientErrors, ServerDown) {
  int port;
  {
    TestServer s({}, [](const HttpRequest&, Exchange& ex) { ex.reply(200, kNodeList); });
    port = s.port();
  }
  RestConfig c;
  parse_server("https://127.0.0.1:" + std::to_string(port), true, c);
  c.ca_data = Pki::get().ca.cert;
  c.token = "sekret";
  c.context = "kind-gpu";
  std::vector<milliseconds> sleeps;
  Client client(c, quiet(&sleeps));
  std::string m = cluster_error([&] { client.send(get("/api/v1/nodes")); });
  EXPECT_EQ(m, "cannot reach the API server https://127.0.0.1:" + std::to_string(port) +
                   " (context \"kind-gpu\"): connect failed: Connection refused");
  EXPECT_TRUE(sleeps.empty());  // refused is not retried
}

struct StatusCase {
  int code;
  const char* reason;
  const char* message;
  const char* expected;
};

class ClientStatus : public ::testing::TestWithParam<StatusCase> {};

TEST_P(ClientStatus, OneClearLineAndNoRetry) {
  const auto& p = GetParam();
  TestServer s({},
               [&](const HttpRequest&, Exchange& ex) { ex.reply(p.code, status_json(p.code, p.reason, p.message)); });
  RestConfig c = config_for(s);
  c.token = "sekret";
  std::vector<milliseconds> sleeps;
  Client client(c, quiet(&sleeps));
  Request r{http_verb::patch, "/api/v1/nodes/n1", {}, "{}", "application/merge-patch+json"};
  try {
    client.send(r);
    FAIL();
  } catch (const ApiError& e) {
    EXPECT_EQ(std::string(e.what()), p.expected);
    EXPECT_EQ(e.http_status(), p.code);
    EXPECT_EQ(e.reason(), p.reason);
  }
  EXPECT_EQ(s.seen().size(), 1u);
  EXPECT_TRUE(sleeps.empty());
}

INSTANTIATE_TEST_SUITE_P(
    Codes, ClientStatus,
    ::testing::Values(
        StatusCase{401, "Unauthorized", "Unauthorized",
                   "PATCH /api/v1/nodes/n1: 401 Unauthorized: Unauthorized (the credentials of context \"test\" were "
                   "refused)"},
        StatusCase{403, "Forbidden",
                   "nodes \"n1\" is forbidden: User \"dev\" cannot patch resource \"nodes\" in API group \"\" at the "
                   "cluster scope",
                   "PATCH /api/v1/nodes/n1: 403 Forbidden: nodes \"n1\" is forbidden: User \"dev\" cannot patch "
                   "resource \"nodes\" in API group \"\" at the cluster scope"},
        StatusCase{404, "NotFound", "nodes \"n1\" not found",
                   "PATCH /api/v1/nodes/n1: 404 NotFound: nodes \"n1\" not found"},
        StatusCase{409, "Conflict",
                   "Operation cannot be fulfilled on nodes \"n1\": the object has been modified; please apply your "
                   "changes to the latest version and try again",
                   "PATCH /api/v1/nodes/n1: 409 Conflict: Operation cannot be fulfilled on nodes \"n1\": the object "
                   "has been modified; please apply your changes to the latest version and try again"},
        StatusCase{500, "InternalError", "etcdserver: request timed out",
                   "PATCH /api/v1/nodes/n1: 500 InternalError: etcdserver: request timed out"}));

TEST(ClientErrors, StatusCausesInOneLine) {
  boost::json::array causes{
      boost::json::object{{"reason", "FieldValueInvalid"},
                          {"message", "Invalid value: \"a b\": must be a valid label value"},
                          {"field", "metadata.labels"}},
      boost::json::object{{"reason", "FieldValueRequired"}, {"message", "Required value"}, {"field", "spec.selector"}}};
  std::string body = status_json(422, "Invalid", "DaemonSet.apps \"x\" is invalid", causes);
  EXPECT_EQ(describe_status(422, boost::json::parse(body), body),
            "422 Invalid: DaemonSet.apps \"x\" is invalid [causes: metadata.labels: Invalid value: \"a b\": must be a "
            "valid label value; spec.selector: Required value]");
  EXPECT_EQ(describe_status(503, nullptr, "<html>\n<b>upstream connect error</b></html>"),
            "503 Service Unavailable: <html> <b>upstream connect error</b></html>");
}

TEST(ClientErrors, TooManyRequestsWaitsRetryAfter) {
  std::atomic<int> n{0};
  TestServer s({}, [&](const HttpRequest&, Exchange& ex) {
    if (n++ < 2)
      ex.reply(429, status_json(429, "TooManyRequests", "too many requests, please try again later"),
               {{"Retry-After", n == 1 ? "1" : "3"}});
    else
      ex.reply(200, kNodeList);
  });
  std::vector<milliseconds> sleeps;
  Client client(config_for(s), quiet(&sleeps));
  Request r{http_verb::patch, "/api/v1/nodes/n1", {}, "{}", "application/merge-patch+json"};
  EXPECT_EQ(client.send(r).status, 200);
  EXPECT_EQ(sleeps, (std::vector<milliseconds>{milliseconds(1000), milliseconds(3000)}));
  EXPECT_EQ(s.seen().size(), 3u);
}

TEST(ClientErrors, RetryAfterGivesUpAfterMaxRetries) {
  TestServer s({}, [&](const HttpRequest&, Exchange& ex) {
    ex.reply(429, status_json(429, "TooManyRequests", "slow down"), {{"Retry-After", "2"}});
  });
  std::vector<milliseconds> sleeps;
  Client client(config_for(s), quiet(&sleeps));
  Request r{http_verb::post, "/api/v1/namespaces", {}, "{}", "application/json"};
  EXPECT_THROW(client.send(r), ApiError);
  EXPECT_EQ(sleeps.size(), 10u);  // client-go maxRetries
  EXPECT_EQ(s.seen().size(), 11u);
}

TEST(ClientErrors, ServerErrorRetriesGetsWithBackoffOnly) {
  TestServer s({}, [&](const HttpRequest&, Exchange& ex) { ex.reply(500, status_json(500, "InternalError", "boom")); });
  std::vector<milliseconds> sleeps;
  Client client(config_for(s), quiet(&sleeps));
  EXPECT_THROW(client.send(get("/api/v1/nodes")), ApiError);
  EXPECT_EQ(sleeps,
            (std::vector<milliseconds>{milliseconds(200), milliseconds(400), milliseconds(800), milliseconds(1600)}));
  sleeps.clear();
  Request w{http_verb::delete_, "/api/v1/nodes/n1", {}, "", ""};
  EXPECT_THROW(client.send(w), ApiError);  // a write is not retried without Retry-After
  EXPECT_TRUE(sleeps.empty());
  EXPECT_EQ(s.seen().size(), 6u);
}

TEST(ClientErrors, GetRetriedOnConnectionReset) {
  std::atomic<int> n{0};
  TestServer s({}, [&](const HttpRequest&, Exchange& ex) {
    if (n++ == 0)
      ex.drop();
    else
      ex.reply(200, kNodeList);
  });
  std::vector<milliseconds> sleeps;
  Client client(config_for(s), quiet(&sleeps));
  EXPECT_EQ(client.send(get("/api/v1/nodes")).status, 200);
  EXPECT_EQ(sleeps, (std::vector<milliseconds>{milliseconds(1000)}));
  EXPECT_EQ(s.connections(), 2);
}

TEST(ClientErrors, WriteNotRetriedOnConnectionReset) {
  TestServer s({}, [&](const HttpRequest&, Exchange& ex) { ex.drop(); });
  std::vector<milliseconds> sleeps;
  Client client(config_for(s), quiet(&sleeps));
  Request w{http_verb::post, "/api/v1/namespaces", {}, "{}", "application/json"};
  EXPECT_THAT(cluster_error([&] { client.send(w); }), HasSubstr("receive failed"));
  EXPECT_EQ(s.seen().size(), 1u);
}

TEST(ClientErrors, WarningHeadersPrintedOnce) {
  TestServer s({}, [&](const HttpRequest&, Exchange& ex) {
    ex.reply(200, kNodeList, {{"Warning", "299 - \"apps/v1beta2 DaemonSet is deprecated\""}});
  });
  std::ostringstream out;
  ClientOptions o = quiet();
  o.warnings = &out;
  Client client(config_for(s), o);
  client.send(get("/a"));
  client.send(get("/b"));
  EXPECT_EQ(out.str(), "Warning: apps/v1beta2 DaemonSet is deprecated\n");
}

// ---- watch ----

TEST(ClientWatch, EventsSplitAcrossChunks) {
  std::string e1 = R"({"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"8"}}})";
  std::string e2 = R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}})";
  std::string e3 = R"({"type":"DELETED","object":{"metadata":{"name":"a","resourceVersion":"10"}}})";
  TestServer s({}, [&](const HttpRequest&, Exchange& ex) {
    ex.begin_stream(200);
    std::string all = e1 + "\n" + e2 + "\n" + e3 + "\n";
    // chunks that cut through events: 7 bytes, then the rest in two pieces
    ex.chunk(all.substr(0, 7));
    ex.chunk(all.substr(7, e1.size()));
    ex.chunk(all.substr(7 + e1.size()));
    ex.end_stream();
  });
  Client client(config_for(s), quiet());
  std::vector<std::string> types;
  auto end = client.watch(
      Request{http_verb::get, "/api/v1/pods", {{"watch", "1"}}, "", ""},
      [&](const boost::json::object& ev) {
        types.push_back(std::string(ev.at("type").as_string()));
        return true;
      },
      milliseconds(5000));
  EXPECT_EQ(end, Client::WatchEnd::kClosed);
  EXPECT_EQ(types, (std::vector<std::string>{"ADDED", "BOOKMARK", "DELETED"}));
}

TEST(ClientWatch, DroppedMidStream) {
  TestServer s({}, [&](const HttpRequest&, Exchange& ex) {
    ex.begin_stream(200);
    ex.chunk(R"({"type":"ADDED","object":{}})"
             "\n"
             R"({"type":"MODI)");
    ex.drop();
  });
  Client client(config_for(s), quiet());
  int events = 0;
  std::string m = cluster_error([&] {
    client.watch(
        Request{http_verb::get, "/api/v1/pods", {{"watch", "1"}}, "", ""},
        [&](const boost::json::object&) {
          ++events;
          return true;
        },
        milliseconds(5000));
  });
  EXPECT_THAT(m, HasSubstr("watch /api/v1/pods dropped mid-stream"));
  EXPECT_EQ(events, 1);
}

TEST(ClientWatch, StopsWhenTheCallbackSaysSoAndTimesOut) {
  TestServer s({}, [&](const HttpRequest&, Exchange& ex) {
    ex.begin_stream(200);
    ex.chunk(R"({"type":"ADDED","object":{}})"
             "\n");
    // then silence: the stream stays open
    std::this_thread::sleep_for(milliseconds(300));
  });
  Client client(config_for(s), quiet());
  auto r = Request{http_verb::get, "/api/v1/pods", {{"watch", "1"}}, "", ""};
  EXPECT_EQ(client.watch(
                r, [](const boost::json::object&) { return false; }, milliseconds(5000)),
            Client::WatchEnd::kStopped);
  EXPECT_EQ(client.watch(
                r, [](const boost::json::object&) { return true; }, milliseconds(100)),
            Client::WatchEnd::kTimedOut);
}

TEST(ClientWatch, GoneBeforeTheStreamIsAnApiError) {
  TestServer s({}, [&](const HttpRequest&, Exchange& ex) {
    ex.reply(410, status_json(410, "Expired", "too old resource version: 5 (90)"));
  });
  Client client(config_for(s), quiet());
  try {
    client.watch(
        Request{http_verb::get, "/api/v1/pods", {{"watch", "1"}}, "", ""},
        [](const boost::json::object&) { return true; }, milliseconds(5000));
    FAIL();
  } catch (const ApiError& e) {
    EXPECT_EQ(e.http_status(), 410);
    EXPECT_EQ(e.reason(), "Expired");
  }
}

}  // namespace
}  // namespace gpuops::real
