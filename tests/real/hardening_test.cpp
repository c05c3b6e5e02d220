// What a broken or hostile API server, kubeconfig or credential plugin cannot
// do to the real client: pass a malformed list off as an empty cluster, keep
// it paging or waiting for ever, or put a header of its own on the wire.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <atomic>
#include <chrono>
#include <sstream>

#include "core/base/errors.h"
#include "real/api_cluster.h"
#include "real/client.h"
#include "real/kubeconfig.h"
#include "tests/real/client_helpers.h"
#include "tests/real/test_server.h"

namespace gpuops::real {
namespace {

using namespace testing;  // NOLINT
using http_verb = boost::beast::http::verb;
using std::chrono::milliseconds;
using ::testing::HasSubstr;
using ::testing::Not;

// config_for, with a token.
RestConfig with_token(const TestServer& s) {
  RestConfig c = config_for(s);
  c.token = "t";
  return c;
}

// Node lists as `body_for` says; the other two lists empty.
TestServer lists(std::function<std::string(const std::string& target)> body_for) {
  return TestServer({}, [body_for](const HttpRequest& req, Exchange& ex) {
    std::string target(req.target());
    if (target.rfind("/api/v1/nodes", 0) == 0) return ex.reply(200, body_for(target));
    ex.reply(200, R"({"kind":"List","apiVersion":"v1","metadata":{},"items":[]})");
  });
}

// Go decodes a List whose items are an object as an error, not as none.
TEST(RealHardening, ItemsThatAreNotAnArrayAreAClusterError) {
  auto s = lists([](const std::string&) { return R"({"kind":"NodeList","apiVersion":"v1","items":{}})"; });
  ApiCluster c(with_token(s), {}, quiet());
  EXPECT_THAT(cluster_error([&] { c.state("gpu-operator"); }), HasSubstr("items is not an array"));
  auto s2 = lists([](const std::string&) { return R"({"kind":"NodeList","apiVersion":"v1","items":[3]})"; });
  ApiCluster c2(with_token(s2), {}, quiet());
  EXPECT_THAT(cluster_error([&] { c2.state("gpu-operator"); }), HasSubstr("an item of the list is not an object"));
  // null and absent items are an empty list, as Go decodes them.
  auto s3 = lists([](const std::string&) { return R"({"kind":"NodeList","apiVersion":"v1","items":null})"; });
  ApiCluster c3(with_token(s3), {}, quiet());
  EXPECT_TRUE(c3.state("gpu-operator").nodes.empty());
}

TEST(RealHardening, ARepeatedContinueTokenEndsTheList) {
  std::atomic<int> pages{0};
  auto s = lists([&](const std::string&) {
    ++pages;
    return R"({"kind":"NodeList","apiVersion":"v1","metadata":{"continue":"again"},"items":[]})";
  });
  ApiCluster c(with_token(s), {}, quiet());
  EXPECT_THAT(cluster_error([&] { c.state("gpu-operator"); }), HasSubstr("the same continue token twice"));
  EXPECT_EQ(pages.load(), 2);
  // Ever new tokens: bounded by max_list_pages.
  std::atomic<int> n{0};
  auto s2 = lists([&](const std::string&) {
    return R"({"kind":"NodeList","apiVersion":"v1","metadata":{"continue":"t)" + std::to_string(n++) +
           R"("},"items":[]})";
  });
  ClientOptions o = quiet();
  o.max_list_pages = 5;
  ApiCluster c2(with_token(s2), {}, o);
  EXPECT_THAT(cluster_error([&] { c2.state("gpu-operator"); }), HasSubstr("more than 5 pages"));
  EXPECT_EQ(n.load(), 5);
}

TEST(RealHardening, RetryAfterIsCapped) {
  std::atomic<int> n{0};
  const char* waits[] = {"3600", "99999999999999999999999", "0004"};
  TestServer s({}, [&](const HttpRequest&, Exchange& ex) {
    int k = n++;
    if (k < 3) return ex.reply(429, status_json(429, "TooManyRequests", "slow down"), {{"Retry-After", waits[k]}});
    ex.reply(200, R"({"kind":"NodeList","apiVersion":"v1","items":[]})");
  });
  std::vector<milliseconds> sleeps;
  Client client(with_token(s), quiet(&sleeps));
  EXPECT_EQ(client.send(Request{http_verb::get, "/api/v1/nodes", {}, "", ""}).status, 200);
  EXPECT_EQ(sleeps, (std::vector<milliseconds>{milliseconds(10000), milliseconds(10000), milliseconds(4000)}));
}

ExecConfig plugin(const TempDir& d, const std::string& body) {
  ExecConfig x;
  x.command = d.write("bin/plugin", "#!/bin/sh\n" + body + "\n", true);
  x.api_version = "client.authentication.k8s.io/v1";
  x.interactive_mode = "Never";
  return x;
}

TEST(RealHardening, ExecPluginHasATimeAndAnOutputLimit) {
  TestServer s({}, [](const HttpRequest&, Exchange& ex) { ex.reply(200, "{}"); });
  TempDir d;
  {
    RestConfig c = with_token(s);
    c.token.clear();
    c.exec = plugin(d, "exec sleep 30");
    ClientOptions o = quiet();
    o.exec_timeout = milliseconds(300);
    Client client(c, o);
    auto t0 = std::chrono::steady_clock::now();
    EXPECT_THAT(cluster_error([&] {
                  client.send(Request{http_verb::get, "/version", {}, "", ""});
                }),
                HasSubstr("did not finish within 300 ms (killed)"));
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
  }
  {
    RestConfig c = with_token(s);
    c.token.clear();
    c.exec = plugin(d, "exec yes");
    Client client(c, quiet());
    EXPECT_THAT(cluster_error([&] {
                  client.send(Request{http_verb::get, "/version", {}, "", ""});
                }),
                HasSubstr("wrote more than 1048576 bytes (killed)"));
  }
  EXPECT_TRUE(s.seen().empty());
}

// net/http refuses a header value with a control character; so does the
// client, wherever the credential came from, before anything is sent.
TEST(RealHardening, ControlCharactersNeverReachAHeader) {
  TestServer s({}, [](const HttpRequest&, Exchange& ex) { ex.reply(200, "{}"); });
  TempDir d;
  std::string kc = d.write("kc", "clusters:\n- name: c\n  cluster:\n    server: " + s.url() +
                                     "\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user:\n"
                                     "    token: \"secret\\r\\nX-Injected: 1\"\ncontexts:\n- name: x\n"
                                     "  context: {cluster: c, user: u}\ncurrent-context: x\n");
  LoadOptions lo;
  lo.kubeconfig = kc;
  lo.getenv = [](const std::string&) { return std::optional<std::string>(); };
  try {
    load_rest_config(lo);
    FAIL() << "accepted";
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.field(), "users[u].user.token");
    EXPECT_EQ(e.line(), 9);
    EXPECT_THAT(e.what(), Not(HasSubstr("secret")));
  }
  std::string kc2 = d.write("kc2",
                            "clusters:\n- name: c\n  cluster:\n    server: \"https://127.0.0.1:1/a\\nb\"\n"
                            "users:\n- name: u\n  user: {token: t}\ncontexts:\n- name: x\n"
                            "  context: {cluster: c, user: u}\ncurrent-context: x\n");
  lo.kubeconfig = kc2;
  try {
    load_rest_config(lo);
    FAIL() << "accepted";
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.field(), "clusters[c].cluster.server");
    EXPECT_THAT(e.what(), HasSubstr("invalid control character in URL"));
  }
  // A token file (trimmed, as fileTokenSource does, but a newline inside
  // stays) and an exec plugin's token.
  RestConfig c = with_token(s);
  c.token.clear();
  c.token_file = d.write("token", "secret\nX-Injected: 1\n");
  Client from_file(c, quiet());
  EXPECT_THAT(cluster_error([&] {
                from_file.send(Request{http_verb::get, "/version", {}, "", ""});
              }),
              HasSubstr("invalid header field value for \"Authorization\""));
  c.token_file.clear();
  c.exec = plugin(
      d,
      R"(printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"a\\r\\nX-Injected: 1"}}')");
  Client from_exec(c, quiet());
  std::string m = cluster_error([&] { from_exec.send(Request{http_verb::get, "/version", {}, "", ""}); });
  EXPECT_THAT(m, HasSubstr("invalid header field value for \"Authorization\""));
  EXPECT_THAT(m, Not(HasSubstr("X-Injected")));
  EXPECT_TRUE(s.seen().empty());
}

}  // namespace
}  // namespace gpuops::real
