// serve --ui over HTTP (simulator/ui/ui_server.h): login and cookie, the Host
// check, the page's headers, the view and its log after kubectl writes, the
// event stream, and explain. The browser's side is tests/browser/.
#include <gtest/gtest.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include "core/diagnose/diagnose.h"
#include "core/gpu_operator/operands.h"
#include "simulator/ui/ui_server.h"
#include "tests/serve/helpers.h"

namespace gpuops {
namespace {

namespace http = boost::beast::http;
using serve_testing::Proc;
using serve_testing::Served;

struct Reply {
  unsigned status = 0;
  std::string body;
  http::response<http::string_body> res;
};

Reply get(uint16_t port, const std::string& target, const std::string& cookie = "", std::string host = "") {
  boost::asio::io_context io;
  boost::beast::tcp_stream s(io);
  s.connect(boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port));
  http::request<http::empty_body> req(http::verb::get, target, 11);
  req.set(http::field::host, host.empty() ? "127.0.0.1:" + std::to_string(port) : host);
  if (!cookie.empty()) req.set(http::field::cookie, cookie);
  http::write(s, req);
  boost::beast::flat_buffer b;
  Reply r;
  http::read(s, b, r.res);
  r.status = r.res.result_int();
  r.body = r.res.body();
  return r;
}

class UiTest : public ::testing::Test {
 protected:
  UiTest() {
    simulator::UiServer::Options o;
    o.clock_text = [] { return std::string("10:42:07"); };
    ui = std::make_unique<simulator::UiServer>(*s.server, o);
    ui->start();
  }
  // Logs in and returns the cookie ("gpuops_ui=...").
  std::string login() {
    Reply r = get(ui->port(), "/login?token=" + s.server->token());
    EXPECT_EQ(r.status, 303u);
    std::string c(r.res[http::field::set_cookie]);
    return c.substr(0, c.find(';'));
  }
  // The page's own path (base_path(), "/gpuops-ui-<port>/") + `rel`.
  std::string at(const std::string& rel) const { return ui->base_path() + rel; }
  boost::json::object view(const std::string& cookie) {
    return boost::json::parse(get(ui->port(), at("api/view"), cookie).body).as_object();
  }
  // Waits (at most 10 s, on a loaded machine) for the view's log to end with
  // `last`.
  boost::json::object view_with_log(const std::string& cookie, const std::string& last) {
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    boost::json::object v;
    do {
      v = view(cookie);
      const auto& log = v["log"].as_array();
      if (!log.empty() && log.back() == boost::json::value(last)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    } while (std::chrono::steady_clock::now() < until);
    return v;
  }
  Served s;
  std::unique_ptr<simulator::UiServer> ui;
};

TEST_F(UiTest, TheLoginLinkSetsAnHttpOnlyStrictCookieAndRedirects) {
  EXPECT_EQ(ui->login_url(), "http://127.0.0.1:" + std::to_string(ui->port()) + "/login?token=" + s.server->token());
  Reply r = get(ui->port(), "/login?token=" + s.server->token());
  EXPECT_EQ(r.status, 303u);
  const std::string port = std::to_string(ui->port());
  EXPECT_EQ(ui->base_path(), "/gpuops-ui-" + port + "/");
  EXPECT_EQ(r.res[http::field::location], ui->base_path());
  std::string c(r.res[http::field::set_cookie]);
  // Named and scoped per server: browsers send a cookie to every port of a
  // host (RFC 6265 §8.5), so Path=/ would reach every other local service.
  EXPECT_EQ(c.rfind("gpuops_ui_" + port + "=", 0), 0u) << c;
  EXPECT_NE(c.find("; Path=/gpuops-ui-" + port + "/;"), std::string::npos) << c;
  EXPECT_NE(c.find("; HttpOnly"), std::string::npos) << c;
  EXPECT_NE(c.find("; SameSite=Strict"), std::string::npos) << c;
  // The cookie is a session secret of its own, not the API token.
  EXPECT_EQ(c.find(s.server->token()), std::string::npos);
}

TEST_F(UiTest, AWrongTokenOrNoCookieIsRefused) {
  Reply bad = get(ui->port(), "/login?token=" + std::string(64, 'a'));
  EXPECT_EQ(bad.status, 403u);
  EXPECT_EQ(bad.res.count(http::field::set_cookie), 0u);
  EXPECT_EQ(get(ui->port(), "/login").status, 403u);
  const std::string name = "gpuops_ui_" + std::to_string(ui->port());
  for (const char* t : {"", "ui.js", "api/view", "events", "api/explain?node=lab-node-0&operand=driver"}) {
    EXPECT_EQ(get(ui->port(), at(t)).status, 401u) << t;
    EXPECT_EQ(get(ui->port(), at(t), name + "=" + std::string(64, '0')).status, 401u) << t;
  }
  // The root only points at the page; the old paths serve nothing.
  Reply root = get(ui->port(), "/");
  EXPECT_EQ(root.status, 303u);
  EXPECT_EQ(root.res[http::field::location], ui->base_path());
  EXPECT_EQ(get(ui->port(), "/api/view").status, 404u);
}

// Two servers on one host: each has its own cookie, and one's does not open
// the other.
TEST_F(UiTest, AnotherServersCookieDoesNotOpenThisOne) {
  simulator::UiServer other(*s.server, simulator::UiServer::Options{});
  other.start();
  Reply r = get(other.port(), "/login?token=" + s.server->token());
  std::string c(r.res[http::field::set_cookie]);
  std::string other_cookie = c.substr(0, c.find(';'));
  std::string mine = login();
  EXPECT_NE(other_cookie.substr(0, other_cookie.find('=')), mine.substr(0, mine.find('=')));
  EXPECT_EQ(get(ui->port(), at("api/view"), other_cookie).status, 401u);
  EXPECT_EQ(get(ui->port(), at("api/view"), mine).status, 200u);
  EXPECT_EQ(get(other.port(), other.base_path() + "api/view", other_cookie).status, 200u);
  other.stop();
}

TEST_F(UiTest, AnotherHostIsRefusedEvenWithTheCookie) {
  std::string cookie = login();
  EXPECT_EQ(get(ui->port(), at(""), cookie).status, 200u);
  EXPECT_EQ(get(ui->port(), at(""), cookie, "localhost:" + std::to_string(ui->port())).status, 200u);
  EXPECT_EQ(get(ui->port(), at(""), cookie, "evil.example:" + std::to_string(ui->port())).status, 403u);
  EXPECT_EQ(get(ui->port(), at(""), cookie, "127.0.0.1:1").status, 403u);
}

TEST_F(UiTest, ThePageIsServedWithAContentSecurityPolicyAndNoInlineScript) {
  std::string cookie = login();
  Reply page = get(ui->port(), at(""), cookie);
  ASSERT_EQ(page.status, 200u);
  EXPECT_EQ(page.res[http::field::content_type], "text/html; charset=utf-8");
  EXPECT_EQ(page.res["Content-Security-Policy"],
            "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
            "base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
  EXPECT_EQ(page.res["X-Content-Type-Options"], "nosniff");
  // Relative: resolved under the page's own path.
  EXPECT_NE(page.body.find("<script src=\"ui.js\" defer></script>"), std::string::npos);
  EXPECT_EQ(page.body.find("<script>"), std::string::npos);
  Reply js = get(ui->port(), at("ui.js"), cookie);
  EXPECT_EQ(js.status, 200u);
  EXPECT_EQ(js.res[http::field::content_type], "text/javascript; charset=utf-8");
  // Cluster strings reach the page only as text.
  EXPECT_EQ(js.body.find("innerHTML"), std::string::npos);
  EXPECT_EQ(get(ui->port(), at("ui.css"), cookie).status, 200u);
  EXPECT_EQ(get(ui->port(), at("nothing"), cookie).status, 404u);
  EXPECT_EQ(get(ui->port(), "/nothing", cookie).status, 404u);
}

TEST_F(UiTest, TheViewFollowsKubectlAndLogsWhy) {
  std::string cookie = login();
  boost::json::object v = view(cookie);
  EXPECT_EQ(
      v["view"].at("operands"),
      boost::json::parse(R"(["driver","container-toolkit","device-plugin","gpu-feature-discovery","dcgm-exporter"])"));
  ASSERT_EQ(v["view"].at("nodes").as_array().size(), 3u);
  EXPECT_EQ(v["view"].at("nodes").at(1).at("name"), "lab-node-1");
  ASSERT_EQ(s.kubectl({"apply", "-f", serve_testing::manifest("namespace.yaml")}).code, 0);
  ASSERT_EQ(s.kubectl({"label", "node", "lab-node-1", "nvidia.com/gpu.deploy.dcgm-exporter=true"}).code, 0);
  // The label's refresh first: writes within Options::coalesce of each other
  // give one refresh, whose lines go node by node (a loaded machine can
  // delay the timer past the next kubectl).
  ASSERT_EQ(view_with_log(
                cookie,
                "10:42:07 lab-node-1 label nvidia.com/gpu.deploy.dcgm-exporter=\"true\" (was absent) by kubectl-label")
                .at("log")
                .as_array()
                .size(),
            1u);
  Proc a = s.kubectl({"apply", "-f", serve_testing::manifest("dcgm-ds.yaml")});
  ASSERT_EQ(a.code, 0) << a.err;
  v = view_with_log(cookie,
                    "10:42:07 lab-node-2 dcgm-exporter DaemonSet created, does not want the node: "
                    "nodeSelector nvidia.com/gpu.deploy.dcgm-exporter=true: node has no label "
                    "nvidia.com/gpu.deploy.dcgm-exporter");
  auto log = v["log"].as_array();
  ASSERT_EQ(log.size(), 4u) << boost::json::serialize(log);
  EXPECT_EQ(log[0],
            "10:42:07 lab-node-1 label nvidia.com/gpu.deploy.dcgm-exporter=\"true\" (was absent) by kubectl-label");
  EXPECT_EQ(log[1],
            "10:42:07 lab-node-0 dcgm-exporter DaemonSet created, does not want the node: "
            "nodeSelector nvidia.com/gpu.deploy.dcgm-exporter=true: node has no label "
            "nvidia.com/gpu.deploy.dcgm-exporter");
  EXPECT_EQ(log[2], "10:42:07 lab-node-1 dcgm-exporter pod created, Running");
  // dcgm-exporter is the fifth operand; lab-node-1 the second node. KWOK:
  // Running at once.
  EXPECT_EQ(v["view"].at("cells").at(4).at(1), boost::json::parse(R"({"w":true,"d":true,"p":"Running"})"));
  EXPECT_EQ(v["view"].at("cells").at(4).at(0), boost::json::parse(R"({"w":false,"d":true,"p":"absent"})"));
  ASSERT_EQ(s.kubectl({"label", "node", "lab-node-1", "--overwrite", "nvidia.com/gpu.deploy.dcgm-exporter=false"}).code,
            0);
  v = view_with_log(cookie,
                    "10:42:07 lab-node-1 dcgm-exporter pod deleted: nodeSelector "
                    "nvidia.com/gpu.deploy.dcgm-exporter=true: node has \"false\"");
  log = v["log"].as_array();
  ASSERT_EQ(log.size(), 6u) << boost::json::serialize(log);
  EXPECT_EQ(log[log.size() - 2],
            "10:42:07 lab-node-1 label nvidia.com/gpu.deploy.dcgm-exporter=\"false\" (was \"true\") by kubectl-label");
  // The reason is NodeShouldRunDaemonPod's: the nodeSelector does not match.
  EXPECT_EQ(log[log.size() - 1],
            "10:42:07 lab-node-1 dcgm-exporter pod deleted: nodeSelector nvidia.com/gpu.deploy.dcgm-exporter=true: "
            "node has \"false\"");
  EXPECT_EQ(v["view"].at("cells").at(4).at(1), boost::json::parse(R"({"w":false,"d":true,"p":"absent"})"));
  EXPECT_EQ(v["view"].at("nodes").at(1).at("labels"),
            boost::json::parse(R"({"nvidia.com/gpu.deploy.dcgm-exporter":"false"})"));
}

TEST_F(UiTest, TheEventStreamSendsTheViewThenEachChange) {
  std::string cookie = login();
  boost::asio::io_context io;
  boost::beast::tcp_stream st(io);
  st.connect(boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), ui->port()));
  http::request<http::empty_body> req(http::verb::get, at("events"), 11);
  req.set(http::field::host, "127.0.0.1:" + std::to_string(ui->port()));
  req.set(http::field::cookie, cookie);
  http::write(st, req);
  boost::beast::flat_buffer b;
  http::response_parser<http::empty_body> hp;
  http::read_header(st, b, hp);
  EXPECT_EQ(hp.get().result_int(), 200u);
  EXPECT_EQ(hp.get()[http::field::content_type], "text/event-stream");
  EXPECT_TRUE(hp.get().chunked());
  // The raw bytes: chunk framing around "event: view\ndata: {...}\n\n".
  std::string raw(static_cast<const char*>(b.data().data()), b.size());
  auto until =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);  // a loaded machine: kubectl may take seconds
  auto read_more = [&](const std::string& want) {
    while (raw.find(want) == std::string::npos && std::chrono::steady_clock::now() < until) {
      char buf[65536];
      boost::system::error_code ec;
      size_t n = 0;
      st.socket().async_read_some(boost::asio::buffer(buf), [&](boost::system::error_code e, size_t k) {
        ec = e;
        n = k;
      });
      io.restart();
      io.run_until(until);
      if (!io.stopped()) {  // the deadline: cancel the read
        st.socket().cancel();
        io.restart();
        io.run();
      }
      raw.append(buf, n);
      if (ec) break;
    }
    return raw.find(want) != std::string::npos;
  };
  ASSERT_TRUE(read_more("\"seq\":1}\n\n")) << raw;
  EXPECT_NE(raw.find("event: view\ndata: {\"view\":"), std::string::npos);
  ASSERT_EQ(s.kubectl({"label", "node", "lab-node-2", "nvidia.com/gpu.deploy.driver=true"}).code, 0);
  ASSERT_TRUE(read_more("\"seq\":2}\n\n")) << raw;
  EXPECT_NE(raw.find("lab-node-2 label nvidia.com/gpu.deploy.driver=\\\"true\\\" (was absent)"), std::string::npos)
      << raw;
}

TEST_F(UiTest, ExplainIsCoreExplainOfTheShownState) {
  std::string cookie = login();
  ASSERT_EQ(s.kubectl({"label", "node", "lab-node-0", "nvidia.com/gpu.deploy.driver=false"}).code, 0);
  view_with_log(cookie,
                "10:42:07 lab-node-0 label nvidia.com/gpu.deploy.driver=\"false\" (was absent) by kubectl-label");
  Reply r = get(ui->port(), at("api/explain?node=lab-node-0&operand=driver"), cookie);
  ASSERT_EQ(r.status, 200u);
  core::ClusterState state;
  s.server->with_cluster([&](simulator::FakeCluster& c) { state = c.state("gpu-operator"); });
  EXPECT_EQ(r.body, core::render_text(core::explain(state, core::load_catalog("lab"), "lab-node-0", "driver")));
  EXPECT_EQ(r.body.rfind("lab-node-0 driver: daemonset nvidia-driver-daemonset absent; label "
                         "nvidia.com/gpu.deploy.driver=false\n",
                         0),
            0u)
      << r.body;
  EXPECT_EQ(get(ui->port(), at("api/explain?node=nope&operand=driver"), cookie).status, 404u);
  EXPECT_EQ(get(ui->port(), at("api/explain?node=lab-node-0&operand=nope"), cookie).status, 400u);
}

// set_checklist (serve --lab --ui --grade-dir): the document comes back as
// is in api/view's "checklist", with a new seq, and the log is untouched.
TEST_F(UiTest, AChecklistIsServedAsSetWithoutALogLine) {
  std::string cookie = login();
  boost::json::object before = view(cookie);
  EXPECT_FALSE(before.contains("checklist"));
  boost::json::value doc = boost::json::object{
      {"dir", "lab"}, {"steps", boost::json::array{boost::json::object{{"step", 3}, {"state", "failed"}}}}};
  ui->set_checklist(doc);
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  boost::json::object v;
  do {
    v = view(cookie);
    if (v.contains("checklist")) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } while (std::chrono::steady_clock::now() < until);
  ASSERT_TRUE(v.contains("checklist"));
  EXPECT_EQ(v["checklist"], doc);
  EXPECT_EQ(v["seq"].as_int64(), before["seq"].as_int64() + 1);
  EXPECT_EQ(v["log"], before["log"]);
}

}  // namespace
}  // namespace gpuops
