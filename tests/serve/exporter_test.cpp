// `gpuops exporter` against `gpuops serve --lab` (children, wall clock), then
// a real Prometheus (Debian's /usr/bin/prometheus) scraping it every second
// with deploy/prometheusrule.yaml's rules evaluated every second: the LAB.md
// step 7 break (the container-toolkit deploy label lowered under a running
// device plugin) makes GpuopsDevicePluginWithoutToolkit active for that node,
// and the repair clears it.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <boost/json.hpp>

#include <fcntl.h>
#include <chrono>
#include <sstream>
#include <thread>

#include "tests/serve/child.h"
#include "tests/serve/helpers.h"

namespace gpuops::serve_testing {
namespace {

namespace json = boost::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

int free_port() {
  int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(s);
  return ntohs(a.sin_port);
}

// Calls `f` every 100 ms until it returns true or `limit` passes.
bool eventually(const std::function<bool()>& f, milliseconds limit = seconds(30)) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (f()) return true;
    std::this_thread::sleep_for(milliseconds(100));
  }
  return f();
}

class ExporterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kubeconfig = dir.path + "/kubeconfig";
    serve = std::make_unique<Child>(
        std::vector<std::string>{GPUOPS_BINARY, "serve", "--lab", "--kubeconfig-out", kubeconfig},
        dir.path + "/serve.out", dir.path + "/serve.err");
    ASSERT_TRUE(eventually([&] { return read_file(dir.path + "/serve.out").find("serving on") != std::string::npos; }))
        << read_file(dir.path + "/serve.err");
    ASSERT_EQ(kubectl({"apply", "-f", manifest("namespace.yaml")}).code, 0);
    Proc p = kubectl({"apply", "-f", std::string(GPUOPS_SOURCE_DIR) + "/manifests"});
    ASSERT_EQ(p.code, 0) << p.err;
    p = kubectl({"label", "node", "lab-node-0", "nvidia.com/gpu.deploy.driver=true",
                 "nvidia.com/gpu.deploy.container-toolkit=true", "nvidia.com/gpu.deploy.device-plugin=true"});
    ASSERT_EQ(p.code, 0) << p.err;
    exporter = std::make_unique<Child>(
        std::vector<std::string>{GPUOPS_BINARY, "exporter", "--kubeconfig", kubeconfig, "--listen", "127.0.0.1:0",
                                 "--min-interval", "50", "--watch-timeout", "5"},
        dir.path + "/exporter.out", dir.path + "/exporter.err");
    ASSERT_TRUE(eventually([&] {
      std::string log = read_file(dir.path + "/exporter.err");
      auto at = log.find("serving on port ");
      if (at == std::string::npos) return false;
      port = std::stoi(log.substr(at + 16));
      return true;
    })) << read_file(dir.path + "/exporter.err");
  }
  Proc kubectl(const std::vector<std::string>& args) {
    std::string cmd = "kubectl --kubeconfig " + quote(kubeconfig);
    for (const auto& a : args) cmd += " " + quote(a);
    return sh(cmd, dir.path);
  }
  // curl: the status code on the last line, after the body.
  std::pair<int, std::string> get(const std::string& url, const std::string& method = "GET") {
    Proc p = sh("curl -s -m 5 -X " + method + " -w '\\n%{http_code}' " + quote(url), dir.path);
    auto nl = p.out.rfind('\n');
    if (nl == std::string::npos) return {0, p.out};
    return {std::atoi(p.out.c_str() + nl + 1), p.out.substr(0, nl)};
  }
  std::string exporter_url(const std::string& path) { return "http://127.0.0.1:" + std::to_string(port) + path; }
  bool metrics_have(const std::string& line) {
    auto [code, body] = get(exporter_url("/metrics"));
    return code == 200 && ("\n" + body).find("\n" + line + "\n") != std::string::npos;
  }

  TempDir dir;
  std::string kubeconfig;
  std::unique_ptr<Child> serve, exporter;
  int port = 0;
};

TEST_F(ExporterTest, ServesTheAnalysesAndFollowsTheWatch) {
  ASSERT_TRUE(eventually([&] { return get(exporter_url("/readyz")).first == 200; }))
      << get(exporter_url("/readyz")).second << read_file(dir.path + "/exporter.err");
  EXPECT_EQ(get(exporter_url("/healthz")), std::make_pair(200, std::string("ok\n")));
  EXPECT_EQ(get(exporter_url("/nothing")).first, 404);
  EXPECT_EQ(get(exporter_url("/metrics"), "POST").first, 405);
  // LAB.md: lab-node-0 asks for driver, toolkit and device plugin; they run.
  ASSERT_TRUE(eventually(
      [&] { return metrics_have("gpuops_operand_ready{node=\"lab-node-0\",operand=\"device-plugin\"} 1"); }));
  EXPECT_TRUE(metrics_have("gpuops_operand_expected{node=\"lab-node-0\",operand=\"device-plugin\"} 1"));
  EXPECT_TRUE(metrics_have("gpuops_operand_expected{node=\"lab-node-1\",operand=\"device-plugin\"} 0"));
  EXPECT_TRUE(metrics_have("gpuops_operand_ready{node=\"lab-node-1\",operand=\"device-plugin\"} 0"));
  EXPECT_TRUE(metrics_have("gpuops_audit_nodes 3"));
  EXPECT_TRUE(metrics_have("gpuops_audit_nodes_with_gaps 0"));
  EXPECT_TRUE(metrics_have("gpuops_exporter_synced 1"));
  EXPECT_TRUE(metrics_have("gpuops_exporter_lists_total{resource=\"nodes\"} 1"));
  EXPECT_TRUE(metrics_have("# TYPE gpuops_exporter_lists_total counter"));
  // No relist for a change: the watch brings it (the node event, then the
  // toolkit pod's deletion).
  ASSERT_EQ(
      kubectl({"label", "node", "lab-node-0", "nvidia.com/gpu.deploy.container-toolkit=false", "--overwrite"}).code, 0);
  EXPECT_TRUE(eventually([&] {
    return metrics_have(
        "gpuops_diagnose_finding{code=\"device-plugin-without-toolkit\",node=\"lab-node-0\","
        "operand=\"device-plugin\",severity=\"error\"} 1");
  }));
  EXPECT_TRUE(eventually(
      [&] { return metrics_have("gpuops_operand_ready{node=\"lab-node-0\",operand=\"container-toolkit\"} 0"); }));
  EXPECT_TRUE(metrics_have("gpuops_operand_expected{node=\"lab-node-0\",operand=\"container-toolkit\"} 0"));
  EXPECT_TRUE(metrics_have("gpuops_exporter_lists_total{resource=\"nodes\"} 1"));
  EXPECT_EQ(exporter->terminate(), 0);
}

// --cluster: every series of a second exporter on the same cluster, the
// exporter's own included, carries the cluster label; the first (no flag)
// has none.
TEST_F(ExporterTest, ClusterFlagLabelsEverySeries) {
  Child labelled({GPUOPS_BINARY, "exporter", "--kubeconfig", kubeconfig, "--listen", "127.0.0.1:0", "--min-interval",
                  "50", "--cluster", "lab one"},
                 dir.path + "/labelled.out", dir.path + "/labelled.err");
  int lport = 0;
  ASSERT_TRUE(eventually([&] {
    std::string log = read_file(dir.path + "/labelled.err");
    auto at = log.find("serving on port ");
    if (at == std::string::npos) return false;
    lport = std::stoi(log.substr(at + 16));
    return true;
  })) << read_file(dir.path + "/labelled.err");
  std::string url = "http://127.0.0.1:" + std::to_string(lport);
  ASSERT_TRUE(eventually([&] { return get(url + "/readyz").first == 200; })) << read_file(dir.path + "/labelled.err");
  ASSERT_TRUE(eventually([&] { return get(exporter_url("/readyz")).first == 200; }));
  auto samples = [&](const std::string& body) {
    std::vector<std::string> lines;
    std::istringstream in(body);
    for (std::string line; std::getline(in, line);)
      if (line.rfind("gpuops_", 0) == 0) lines.push_back(line);
    return lines;
  };
  auto [code, body] = get(url + "/metrics");
  ASSERT_EQ(code, 200);
  auto labelled_lines = samples(body);
  ASSERT_FALSE(labelled_lines.empty());
  for (const auto& line : labelled_lines) {
    const std::string first = "{cluster=\"lab one\"";
    auto brace = line.find('{');
    EXPECT_TRUE(brace != std::string::npos && line.compare(brace, first.size(), first) == 0) << line;
  }
  EXPECT_NE(body.find("\ngpuops_exporter_synced{cluster=\"lab one\"} 1\n"), std::string::npos) << body;
  EXPECT_NE(body.find("\ngpuops_audit_nodes{cluster=\"lab one\"} 3\n"), std::string::npos) << body;
  EXPECT_NE(body.find("\ngpuops_exporter_lists_total{cluster=\"lab one\",resource=\"nodes\"} 1\n"), std::string::npos)
      << body;
  auto plain = get(exporter_url("/metrics"));
  EXPECT_EQ(plain.second.find("cluster="), std::string::npos) << plain.second;
  EXPECT_EQ(samples(plain.second).size(), labelled_lines.size());
  EXPECT_EQ(labelled.terminate(), 0);
}

// deploy/prometheusrule.yaml's spec is a Prometheus rule file.
std::string rule_file_from_deploy() {
  YAML::Node pr = YAML::LoadFile(std::string(GPUOPS_SOURCE_DIR) + "/deploy/prometheusrule.yaml");
  YAML::Emitter e;
  e << pr["spec"];
  return e.c_str();
}

TEST_F(ExporterTest, RealPrometheusFiresAndClearsTheToolkitAlert) {
  const std::string prom = "/usr/bin/prometheus";
  ASSERT_EQ(::access(prom.c_str(), X_OK), 0) << "scripts/setup.sh installs Debian's prometheus";
  std::string rules = dir.write("rules.yml", rule_file_from_deploy());
  YAML::Emitter cfg;
  cfg << YAML::BeginMap << YAML::Key << "global" << YAML::Value << YAML::BeginMap << YAML::Key << "scrape_interval"
      << YAML::Value << "1s" << YAML::Key << "evaluation_interval" << YAML::Value << "1s" << YAML::EndMap << YAML::Key
      << "rule_files" << YAML::Value << YAML::BeginSeq << rules << YAML::EndSeq << YAML::Key << "scrape_configs"
      << YAML::Value << YAML::BeginSeq << YAML::BeginMap << YAML::Key << "job_name" << YAML::Value << "gpuops"
      << YAML::Key << "static_configs" << YAML::Value << YAML::BeginSeq << YAML::BeginMap << YAML::Key << "targets"
      << YAML::Value << YAML::BeginSeq << ("127.0.0.1:" + std::to_string(port)) << YAML::EndSeq << YAML::EndMap
      << YAML::EndSeq << YAML::EndMap << YAML::EndSeq << YAML::EndMap;
  std::string config = dir.write("prometheus.yml", cfg.c_str());
  int pport = free_port();
  std::string api = "http://127.0.0.1:" + std::to_string(pport) + "/api/v1/";
  Child prometheus({prom, "--config.file=" + config, "--storage.tsdb.path=" + dir.path + "/tsdb",
                    "--web.listen-address=127.0.0.1:" + std::to_string(pport)},
                   dir.path + "/prom.out", dir.path + "/prom.err");
  auto query = [&](const std::string& path) -> json::value {
    auto [code, body] = get(api + path);
    if (code != 200) return nullptr;
    boost::system::error_code ec;
    json::value v = json::parse(body, ec);
    return ec ? json::value(nullptr) : v.at("data");
  };
  // The five rules loaded and evaluated without error.
  ASSERT_TRUE(eventually([&] {
    json::value d = query("rules");
    if (!d.is_object() || d.at("groups").as_array().empty()) return false;
    const auto& rs = d.at("groups").at(0).at("rules").as_array();
    if (rs.size() != 5) return false;
    for (const auto& r : rs)
      if (r.at("health") != "ok") return false;
    return true;
  })) << read_file(dir.path + "/prom.err");
  // Scraped: the exporter's series are in Prometheus.
  ASSERT_TRUE(eventually([&] {
    json::value d =
        query("query?query=gpuops_operand_ready%7Bnode%3D%22lab-node-0%22%2Coperand%3D%22device-plugin%22%7D");
    return d.is_object() && d.at("result").as_array().size() == 1 && d.at("result").at(0).at("value").at(1) == "1";
  })) << read_file(dir.path + "/prom.err");
  auto toolkit_alerts = [&](std::string* state) {
    json::value d = query("alerts");
    std::vector<std::string> nodes;
    if (!d.is_object()) return nodes;
    for (const auto& a : d.at("alerts").as_array()) {
      if (a.at("labels").at("alertname") != "GpuopsDevicePluginWithoutToolkit") continue;
      nodes.emplace_back(a.at("labels").at("node").as_string());
      if (state) *state = std::string(a.at("state").as_string());
    }
    return nodes;
  };
  EXPECT_TRUE(toolkit_alerts(nullptr).empty());
  ASSERT_EQ(
      kubectl({"label", "node", "lab-node-0", "nvidia.com/gpu.deploy.container-toolkit=false", "--overwrite"}).code, 0);
  std::string state;
  // Active: "pending" during the rule's `for` (2m), then "firing".
  EXPECT_TRUE(eventually([&] { return toolkit_alerts(&state) == std::vector<std::string>{"lab-node-0"}; }));
  EXPECT_TRUE(state == "pending" || state == "firing") << state;
  // The repair: the toolkit back under the device plugin.
  ASSERT_EQ(
      kubectl({"label", "node", "lab-node-0", "nvidia.com/gpu.deploy.container-toolkit=true", "--overwrite"}).code, 0);
  EXPECT_TRUE(eventually([&] { return toolkit_alerts(nullptr).empty(); }));
  EXPECT_EQ(prometheus.terminate(), 0);
}

}  // namespace
}  // namespace gpuops::serve_testing
