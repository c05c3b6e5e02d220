// `gpuops serve --lab --operator [VERSION]` and `gpuops serve --scenario` of
// an operator scenario (issue 47): the simulated GPU Operator runs behind the
// API, and stock kubectl's writes (a PATCH each) meet its labeller. The
// expected labels are the operator's rules (gpu-operator
// controllers/state_manager.go, v25.3): labelGPUNodes gives a node with NFD's
// GPU label nvidia.com/gpu.present=true and gpuStateLabels["container"], the
// eight deploy labels below, each "true" where the key is absent;
// nvidia.com/gpu.deploy.operands=false makes removeAllGPUStateLabels delete
// every one of them (deleted, not set to "false"); removing the key again
// puts them all back as "true" (addGPUStateLabels).
#include <gtest/gtest.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "cli/backends.h"
#include "core/gpu_operator/operands.h"
#include "core/gpu_operator/operator_install.h"
#include "core/lab/lab.h"
#include "core/lab/lab_operator.h"
#include "simulator/ui/ui_server.h"
#include "tests/serve/child.h"
#include "tests/serve/helpers.h"

namespace gpuops::serve_testing {
namespace {

namespace json = boost::json;
namespace http = boost::beast::http;
using Labels = std::map<std::string, std::string>;

// gpuStateLabels[gpuWorkloadConfigContainer], v25.3 state_manager.go.
const Labels kContainerStateLabels = {
    {"nvidia.com/gpu.deploy.driver", "true"},
    {"nvidia.com/gpu.deploy.gpu-feature-discovery", "true"},
    {"nvidia.com/gpu.deploy.container-toolkit", "true"},
    {"nvidia.com/gpu.deploy.device-plugin", "true"},
    {"nvidia.com/gpu.deploy.dcgm", "true"},
    {"nvidia.com/gpu.deploy.dcgm-exporter", "true"},
    {"nvidia.com/gpu.deploy.node-status-exporter", "true"},
    {"nvidia.com/gpu.deploy.operator-validator", "true"},
};

// A `gpuops serve` child process and kubectl against it.
class ServedProcess {
 public:
  explicit ServedProcess(std::vector<std::string> args) {
    std::vector<std::string> argv = {GPUOPS_BINARY, "serve"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--kubeconfig-out", kubeconfig});
    child = std::make_unique<Child>(argv);
    first_line = child->first_line();
  }
  Proc kubectl(const std::vector<std::string>& args) {
    std::string cmd = "kubectl --kubeconfig " + quote(kubeconfig);
    for (const auto& a : args) cmd += " " + quote(a);
    return sh(cmd, dir.path);
  }
  json::value get_json(const std::vector<std::string>& args) {
    std::vector<std::string> all = args;
    all.insert(all.end(), {"-o", "json"});
    Proc p = kubectl(all);
    EXPECT_EQ(p.code, 0) << p.err;
    return p.code == 0 ? json::parse(p.out) : json::value();
  }
  // The node's labels whose key starts with `prefix`.
  Labels labels(const std::string& node, const std::string& prefix) {
    Labels out;
    json::value n = get_json({"get", "node", node});
    if (!n.is_object()) return out;
    for (const auto& [k, v] : n.at("metadata").at("labels").as_object())
      if (std::string(k).rfind(prefix, 0) == 0) out[std::string(k)] = std::string(v.as_string());
    return out;
  }
  // The DaemonSets (by owner) with a pod on `node` in gpu-operator that is
  // not being deleted.
  std::set<std::string> daemonsets_on(const std::string& node) {
    std::set<std::string> out;
    json::value l = get_json({"get", "pods", "-n", "gpu-operator", "--field-selector", "spec.nodeName=" + node});
    if (!l.is_object()) return out;
    for (const auto& p : l.at("items").as_array()) {
      const auto& meta = p.at("metadata").as_object();
      if (meta.contains("deletionTimestamp")) continue;
      if (meta.contains("ownerReferences"))
        for (const auto& o : meta.at("ownerReferences").as_array())
          if (o.at("kind") == "DaemonSet") out.insert(std::string(o.at("name").as_string()));
    }
    return out;
  }
  // Polls `read` (the controllers act on each write, and the wall clock
  // drives the rest) until it returns `want`, for at most 20 s; returns the
  // last value read.
  template <class T>
  T until(const std::function<T()>& read, const T& want) {
    T got = read();
    for (int i = 0; i < 200 && got != want; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      got = read();
    }
    return got;
  }

  TempDir dir;
  std::string kubeconfig = dir.path + "/kubeconfig";
  std::unique_ptr<Child> child;
  std::string first_line;
};

TEST(ServeLabOperator, OperandsFalseRemovesTheStateLabelsAndThePodsThenTheyComeBack) {
  ServedProcess s({"--lab", "--operator", "v25.3"});
  ASSERT_EQ(s.first_line.rfind("serving on https://127.0.0.1:", 0), 0u) << s.first_line;
  // The operator runs with its ClusterPolicy at the defaults.
  json::value cps = s.get_json({"get", "clusterpolicies"});
  ASSERT_TRUE(cps.is_object());
  ASSERT_EQ(cps.at("items").as_array().size(), 1u);
  EXPECT_EQ(cps.at("items").at(0).at("metadata").at("name"), "cluster-policy");
  // No NFD GPU label yet: the operator labels no lab node.
  EXPECT_EQ(s.labels("lab-node-0", "nvidia.com/"), Labels{});

  // LAB.md step 1's GPU label meets the labeller.
  ASSERT_EQ(s.kubectl({"label", "node", "lab-node-0", "feature.node.kubernetes.io/pci-10de.present=true"}).code, 0);
  Labels gpu_node = kContainerStateLabels;
  gpu_node["nvidia.com/gpu.present"] = "true";
  std::function<Labels()> read = [&] { return s.labels("lab-node-0", "nvidia.com/gpu."); };
  EXPECT_EQ(s.until(read, gpu_node), gpu_node);
  std::function<std::set<std::string>()> pods = [&] { return s.daemonsets_on("lab-node-0"); };
  std::set<std::string> running = pods();
  EXPECT_TRUE(running.count("nvidia-driver-daemonset")) << running.size();
  EXPECT_TRUE(running.count("nvidia-container-toolkit-daemonset"));
  EXPECT_TRUE(running.count("nvidia-device-plugin-daemonset"));
  // No GPU label on lab-node-1: no operand there.
  EXPECT_EQ(s.daemonsets_on("lab-node-1"), std::set<std::string>{});

  // operands=false: every state label deleted, every operand pod gone.
  ASSERT_EQ(s.kubectl({"label", "node", "lab-node-0", "nvidia.com/gpu.deploy.operands=false"}).code, 0);
  Labels opted_out = {{"nvidia.com/gpu.present", "true"}, {"nvidia.com/gpu.deploy.operands", "false"}};
  EXPECT_EQ(s.until(read, opted_out), opted_out);
  EXPECT_EQ(s.until(pods, std::set<std::string>{}), std::set<std::string>{});

  // The key removed: the eight back as "true", and the same operands.
  ASSERT_EQ(s.kubectl({"label", "node", "lab-node-0", "nvidia.com/gpu.deploy.operands-"}).code, 0);
  EXPECT_EQ(s.until(read, gpu_node), gpu_node);
  EXPECT_EQ(s.until(pods, running), running);
  EXPECT_EQ(s.child->terminate(), 0);
}

// Without VERSION: the newest catalogued release, whose operator keeps the
// same rule for operands=false (removeAllGPUStateLabels, v26.7
// nodelabeling_controller.go updateGPUStateLabels).
TEST(ServeLabOperator, DefaultReleaseIsTheNewestAndAnswersOperandsFalse) {
  ServedProcess s({"--lab", "--operator"});
  ASSERT_EQ(s.first_line.rfind("serving on https://127.0.0.1:", 0), 0u) << s.first_line;
  ASSERT_EQ(s.kubectl({"label", "node", "lab-node-1", "feature.node.kubernetes.io/pci-10de.present=true"}).code, 0);
  std::function<Labels()> read = [&] { return s.labels("lab-node-1", "nvidia.com/gpu.deploy."); };
  Labels before = read();
  for (int i = 0; i < 200 && before.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    before = read();
  }
  ASSERT_FALSE(before.empty());
  for (const auto& [k, v] : before) EXPECT_EQ(v, "true") << k;
  ASSERT_EQ(s.kubectl({"label", "node", "lab-node-1", "nvidia.com/gpu.deploy.operands=false"}).code, 0);
  Labels opted_out = {{"nvidia.com/gpu.deploy.operands", "false"}};
  EXPECT_EQ(s.until(read, opted_out), opted_out);
  std::function<std::set<std::string>()> pods = [&] { return s.daemonsets_on("lab-node-1"); };
  EXPECT_EQ(s.until(pods, std::set<std::string>{}), std::set<std::string>{});
  ASSERT_EQ(s.kubectl({"label", "node", "lab-node-1", "nvidia.com/gpu.deploy.operands-"}).code, 0);
  EXPECT_EQ(s.until(read, before), before);
  // The newest catalogued release is v26.7: the same labels as --operator v26.7.
  ASSERT_EQ(core::catalogued_releases().back(), "v26.7");
  ServedProcess named({"--lab", "--operator=v26.7"});
  ASSERT_EQ(named.kubectl({"label", "node", "lab-node-1", "feature.node.kubernetes.io/pci-10de.present=true"}).code, 0);
  std::function<Labels()> named_read = [&] { return named.labels("lab-node-1", "nvidia.com/gpu.deploy."); };
  EXPECT_EQ(named.until(named_read, before), before);
}

TEST(ServeLabOperator, UsageErrors) {
  TempDir dir;
  const std::string bin = std::string(GPUOPS_BINARY) + " serve --kubeconfig-out " + quote(dir.path + "/k");
  Proc unknown = sh(bin + " --lab --operator v1.0", dir.path);
  EXPECT_EQ(unknown.code, 2);
  EXPECT_EQ(
      unknown.err,
      "gpuops serve: --operator: \"v1.0\": supported values: v23.9, v24.3, v24.6, v24.9, v25.3, v25.10, v26.3, v26.7\n"
      "Run 'gpuops serve --help' for usage.\n");
  Proc no_lab = sh(bin + " --operator v25.3", dir.path);
  EXPECT_EQ(no_lab.code, 2);
  EXPECT_EQ(no_lab.err,
            "gpuops serve: --operator needs --lab (a scenario installs its operator with its operator: key)\n"
            "Run 'gpuops serve --help' for usage.\n");
  EXPECT_FALSE(std::filesystem::exists(dir.path + "/k"));
}

// serve --scenario: the scenario's top-level operator: runs (v25.3, its
// ClusterPolicy at the defaults) and labels its GPU nodes, not its CPU node.
TEST(ServeScenarioOperator, InstallMixedNodesServesTheClusterPolicyAndTheOperatorActs) {
  ServedProcess s({"--scenario", std::string(GPUOPS_SOURCE_DIR) + "/scenarios/operator/install-mixed-nodes.yaml"});
  ASSERT_EQ(s.first_line.rfind("serving on https://127.0.0.1:", 0), 0u) << s.first_line;
  // GET /apis/nvidia.com/v1/clusterpolicies: 200 (kubectl exits 0) with it.
  Proc raw = s.kubectl({"get", "--raw", "/apis/nvidia.com/v1/clusterpolicies"});
  ASSERT_EQ(raw.code, 0) << raw.err;
  json::value list = json::parse(raw.out);
  EXPECT_EQ(list.at("kind"), "ClusterPolicyList");
  ASSERT_EQ(list.at("items").as_array().size(), 1u);
  const json::value& cp = list.at("items").at(0);
  EXPECT_EQ(cp.at("metadata").at("name"), "cluster-policy");
  EXPECT_TRUE(cp.at("spec").as_object().contains("driver"));  // a required field, {} by default
  Labels gpu_node = kContainerStateLabels;
  gpu_node["nvidia.com/gpu.present"] = "true";
  EXPECT_EQ(s.labels("gpu-node-1", "nvidia.com/gpu."), gpu_node);
  EXPECT_EQ(s.labels("cpu-node-1", "nvidia.com/"), Labels{});
  // kubectl patch --type merge is acted on: a component disabled, its
  // DaemonSet deleted (isStateEnabled false: the state's objects go).
  ASSERT_EQ(s.kubectl({"get", "ds", "-n", "gpu-operator", "nvidia-dcgm-exporter"}).code, 0);
  Proc patch = s.kubectl({"patch", "clusterpolicy", "cluster-policy", "--type", "merge", "-p",
                          R"({"spec":{"dcgmExporter":{"enabled":false}}})"});
  ASSERT_EQ(patch.code, 0) << patch.err;
  std::function<int()> ds = [&] { return s.kubectl({"get", "ds", "-n", "gpu-operator", "nvidia-dcgm-exporter"}).code; };
  EXPECT_EQ(s.until(ds, 1), 1);
}

// GET `target` of the placement view's server, with `cookie`.
http::response<http::string_body> ui_get(uint16_t port, const std::string& target, const std::string& cookie) {
  boost::asio::io_context io;
  boost::beast::tcp_stream st(io);
  st.connect(boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port));
  http::request<http::empty_body> req(http::verb::get, target, 11);
  req.set(http::field::host, "127.0.0.1:" + std::to_string(port));
  if (!cookie.empty()) req.set(http::field::cookie, cookie);
  http::write(st, req);
  boost::beast::flat_buffer b;
  http::response<http::string_body> res;
  http::read(st, b, res);
  return res;
}

// Logs in with the API token: the cookie "gpuops_ui_<port>=...".
std::string ui_login(simulator::UiServer& ui, const std::string& token) {
  auto res = ui_get(ui.port(), "/login?token=" + token, "");
  std::string c(res[http::field::set_cookie]);
  return c.substr(0, c.find(';'));
}

// Whether the view's log has `line`, polled for at most 10 s (the page
// rebuilds the view 50 ms after a burst of writes).
bool ui_log_has(simulator::UiServer& ui, const std::string& cookie, const std::string& line) {
  for (int i = 0; i < 500; ++i) {
    json::value v = json::parse(ui_get(ui.port(), ui.base_path() + "api/view", cookie).body());
    for (const auto& l : v.at("log").as_array())
      if (l == json::value(line)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// serve --scenario with host facts and the kubelet profile: gpu-node-2's
// host has a driver (host: {driver: pre-installed}), so the driver pod's
// k8s-driver-manager finds it (isHostDriver) and labels the node
// nvidia.com/gpu.deploy.driver=pre-installed (disableContainerizedDriver,
// k8s-driver-manager cmd/driver-manager/main.go); gpu-node-1 has none and
// keeps "true". Only the kubelet profile runs init containers.
TEST(ServeScenarioOperator, HostFactsAndTheKubeletProfileAreServed) {
  ServedProcess s({"--scenario", std::string(GPUOPS_SOURCE_DIR) + "/scenarios/operator/driver-pre-installed.yaml"});
  ASSERT_EQ(s.first_line.rfind("serving on https://127.0.0.1:", 0), 0u) << s.first_line;
  const std::string key = "nvidia.com/gpu.deploy.driver";
  std::function<Labels()> node2 = [&] { return s.labels("gpu-node-2", key); };
  EXPECT_EQ(s.until(node2, Labels{{key, "pre-installed"}}), (Labels{{key, "pre-installed"}}));
  EXPECT_EQ(s.labels("gpu-node-1", key), (Labels{{key, "true"}}));
}

// The placement view's log says who wrote each label: kubectl's field
// manager for the learner's, gpu-operator for the operator's answer.
TEST(ServeLabOperator, TheUiLogsTheOperatorsLabelWritesWithTheirWriter) {
  Served s(true, {}, [](simulator::FakeCluster& c) {
    core::Catalog catalog = core::load_catalog(core::operator_catalog_name("v25.3"));
    catalog.operator_mode = true;
    std::vector<std::string> nodes;
    for (const auto& n : core::lab_nodes()) nodes.push_back(n.metadata.name);
    core::start_lab_operator(c, *cli::simulation_controls(c), catalog, "gpu-operator", nodes);
  });
  simulator::UiServer::Options o;
  o.clock_text = [] { return std::string("10:42:07"); };
  simulator::UiServer ui(*s.server, o);
  ui.start();
  const std::string cookie = ui_login(ui, s.server->token());
  ASSERT_EQ(s.kubectl({"label", "node", "lab-node-0", "feature.node.kubernetes.io/pci-10de.present=true"}).code, 0);
  const std::string added_by_operator =
      "10:42:07 lab-node-0 label nvidia.com/gpu.deploy.driver=\"true\" (was absent) by gpu-operator";
  EXPECT_TRUE(ui_log_has(ui, cookie, added_by_operator));
  EXPECT_TRUE(
      ui_log_has(ui, cookie, "10:42:07 lab-node-0 label nvidia.com/gpu.present=\"true\" (was absent) by gpu-operator"));
  ASSERT_EQ(s.kubectl({"label", "node", "lab-node-0", "nvidia.com/gpu.deploy.operands=false"}).code, 0);
  EXPECT_TRUE(ui_log_has(
      ui, cookie, "10:42:07 lab-node-0 label nvidia.com/gpu.deploy.operands=\"false\" (was absent) by kubectl-label"));
  EXPECT_TRUE(ui_log_has(
      ui, cookie, "10:42:07 lab-node-0 label nvidia.com/gpu.deploy.driver removed (was \"true\") by gpu-operator"));
  ui.stop();
}

}  // namespace
}  // namespace gpuops::serve_testing
