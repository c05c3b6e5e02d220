// The gpuops binary's `serve --ui` in headless Chromium, as a teacher starts
// it (issue 47): with `--lab --operator`, a learner's `kubectl label` and the
// simulated operator's answering label writes, each with its writer, in the
// page within 2 s; with `--lab --grade-dir DIR`, the checklist beside the
// grid turning step 3 from failed to passed when out/driver.txt is fixed.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "tests/browser/cdp.h"
#include "tests/common/cli_run.h"
#include "tests/common/spawned.h"
#include "tests/common/temp_dir.h"
#include "tests/serve/helpers.h"

namespace gpuops {
namespace {

using namespace std::chrono_literals;
using browser_testing::Chromium;
using browser_testing::start_chromium;
using testing::Spawned;

std::string artifact(const std::string& name) { return std::string(GPUOPS_ARTIFACTS_DIR) + "/" + name; }

// `gpuops serve ARGS --ui --kubeconfig-out DIR/kc`, started and its login
// link read.
struct ServedUi {
  explicit ServedUi(std::vector<std::string> args) {
    kubeconfig = tmp.path + "/kc";
    args.insert(args.begin(), {GPUOPS_BINARY, "serve"});
    for (const char* a : {"--ui", "--kubeconfig-out"}) args.push_back(a);
    args.push_back(kubeconfig);
    proc = std::make_unique<Spawned>(args);
    if (!proc->read_until_contains("serving on", 60s)) return;
    const std::string mark = "placement view: open ";
    size_t at = proc->out.find(mark);
    if (at == std::string::npos) return;
    size_t end = proc->out.find('\n', at);
    login = proc->out.substr(at + mark.size(), end - at - mark.size());
  }
  ~ServedUi() {
    if (proc) {
      EXPECT_EQ(proc->signal_and_wait(SIGINT, 10s), 0) << proc->err;
    }
  }
  serve_testing::Proc kubectl(const std::vector<std::string>& args) {
    std::string cmd = "kubectl --kubeconfig " + serve_testing::quote(kubeconfig);
    for (const auto& a : args) cmd += " " + serve_testing::quote(a);
    return serve_testing::sh(cmd, tmp.path);
  }

  testing::TempDir tmp;
  std::string kubeconfig, login;
  std::unique_ptr<Spawned> proc;
};

const std::string kLog = "document.getElementById('log').innerText";

std::string log_has(const std::string& line) {
  return kLog + ".includes(" + boost::json::serialize(boost::json::value(line)) + ")";
}

// The GPU Operator's labeller (state_manager.go): a node with NFD's NVIDIA
// PCI label gets nvidia.com/gpu.present=true and its operands' deploy labels
// "true"; nvidia.com/gpu.deploy.operands=false removes every deploy label
// (removeAllGPUStateLabels). The writer of each is the operator's field
// manager, gpu-operator; the learner's is kubectl label's, kubectl-label.
TEST(ServedUiBrowser, ALearnersKubectlLabelShowsWithTheOperatorsAnswer) {
  ServedUi s({"--lab", "--operator", "v25.3"});
  ASSERT_FALSE(s.login.empty()) << s.proc->out << s.proc->err;
  auto c = start_chromium();
  ASSERT_TRUE(c);
  c->open(s.login);
  ASSERT_GE(c->wait_for("document.querySelectorAll('thead th.node').length === 3", 10s), 0)
      << c->eval("document.body.innerText");

  auto l = s.kubectl({"label", "node", "lab-node-0", "feature.node.kubernetes.io/pci-10de.present=true"});
  ASSERT_EQ(l.code, 0) << l.err;
  // The labels show as chips on the node (the log's newest 30 lines are
  // then the operator's DaemonSets and pods, which come right after).
  auto chip = [](const std::string& node, const std::string& label) {
    return "document.querySelector('th[data-node=\"" + node + "\"] .chip[title=\"" + label + "\"]') !== null";
  };
  double ms = c->wait_for(chip("lab-node-0", "nvidia.com/gpu.present=true") + " && " +
                              chip("lab-node-0", "nvidia.com/gpu.deploy.driver=true") + " && " +
                              chip("lab-node-0", "nvidia.com/gpu.deploy.device-plugin=true"),
                          2s);
  ASSERT_GE(ms, 0) << "the operator's labels did not show within 2 s: "
                   << c->eval("document.querySelector('th[data-node=\"lab-node-0\"]').innerText");
  // lab-node-1 has no NFD label: the operator labels it not.
  EXPECT_EQ(c->eval("document.querySelectorAll('th[data-node=\"lab-node-1\"] .chip').length"), 0);

  l = s.kubectl({"label", "node", "lab-node-0", "nvidia.com/gpu.deploy.operands=false"});
  ASSERT_EQ(l.code, 0) << l.err;
  ms = c->wait_for(
      log_has("lab-node-0 label nvidia.com/gpu.deploy.operands=\"false\" (was absent) by kubectl-label") + " && " +
          log_has("lab-node-0 label nvidia.com/gpu.deploy.driver removed (was \"true\") by gpu-operator") + " && " +
          log_has("lab-node-0 label nvidia.com/gpu.deploy.container-toolkit removed (was \"true\") by gpu-operator"),
      2s);
  ASSERT_GE(ms, 0) << "the label and the operator's answer did not show within 2 s: " << c->eval(kLog);
  c->screenshot(artifact("served-operator.png"));
  std::cout << "kubectl label to the operator's answer in the page (serve binary): " << ms << " ms\n";
}

const std::string kStep3 = "document.querySelector('#checklist li[data-step=\"3\"]')";

TEST(ServedUiBrowser, AWatchedGradeTurnsAStepFromFailedToPassed) {
  testing::TempDir work;
  const std::string dir = work.path + "/lab";
  std::filesystem::create_directories(dir);
  ServedUi s({"--lab", "--grade-dir", dir});
  ASSERT_FALSE(s.login.empty()) << s.proc->out << s.proc->err;
  auto c = start_chromium();
  ASSERT_TRUE(c);
  c->open(s.login);
  // An empty directory: eight steps, pending, then failed.
  ASSERT_GE(c->wait_for("document.querySelectorAll('#checklist li').length === 8", 10s), 0)
      << c->eval("document.body.innerText");
  ASSERT_GE(c->wait_for(kStep3 + ".dataset.state === 'failed'", 30s), 0) << c->eval("document.body.innerText");
  EXPECT_NE(
      boost::json::value_to<std::string>(c->eval(kStep3 + ".innerText")).find("out/driver.txt is missing or empty"),
      std::string::npos);

  // The learner does the lab on the served cluster.
  auto run = testing::run_gpuops({"lab", "run", "--dir", dir, "--kubeconfig", s.kubeconfig, "--quiet"});
  ASSERT_EQ(run.code, 0) << run.err;
  ASSERT_GE(
      c->wait_for("[...document.querySelectorAll('#checklist li')].every(li => li.dataset.state === 'passed')", 60s), 0)
      << c->eval("document.getElementById('grade').innerText");

  // LAB.md step 3: DESIRED=1 (lab-node-0 only), SKIPPED=lab-node-1. A wrong
  // count fails the step, with the diff in the page.
  std::ofstream(dir + "/out/driver.txt") << "DESIRED=2\nSKIPPED=lab-node-1\n";
  ASSERT_GE(c->wait_for(kStep3 + ".dataset.state === 'failed'", 30s), 0)
      << c->eval("document.getElementById('grade').innerText");
  std::string reason = boost::json::value_to<std::string>(c->eval(kStep3 + ".querySelector('pre.reason').innerText"));
  EXPECT_NE(reason.find("-DESIRED=1\n+DESIRED=2"), std::string::npos) << reason;
  EXPECT_EQ(c->eval("document.querySelectorAll('#checklist li.passed').length"), 7);
  c->screenshot(artifact("grade-failed.png"));

  std::ofstream(dir + "/out/driver.txt") << "DESIRED=1\nSKIPPED=lab-node-1\n";
  double ms = c->wait_for(kStep3 + ".dataset.state === 'passed'", 30s);
  ASSERT_GE(ms, 0) << c->eval("document.getElementById('grade').innerText");
  EXPECT_EQ(c->eval(kStep3 + ".querySelector('pre.reason')"), boost::json::value());
  EXPECT_NE(boost::json::value_to<std::string>(c->eval("document.getElementById('grade-status').innerText"))
                .find("8 of 8 steps passed"),
            std::string::npos);
  // The grade ran on a copy: the learner's cluster has its three nodes only.
  auto nodes = s.kubectl({"get", "nodes", "-o", "name"});
  EXPECT_EQ(nodes.out, "node/lab-node-0\nnode/lab-node-1\nnode/lab-node-2\n");
  c->screenshot(artifact("grade-passed.png"));
  std::cout << "file fixed to step passed in the page: " << ms << " ms\n";
}

}  // namespace
}  // namespace gpuops
