// Ctrl-C (SIGINT) and SIGTERM in the middle of `gpuops run --backend real`,
// run as a child process against the simulator served over the Kubernetes
// API: the scenario stops, everything it created (its nodes, its namespace,
// its DaemonSets and their pods) is deleted, the reports say it was
// interrupted, the next scenario does not start, and gpuops exits 128 + the
// signal. With --skip-cleanup everything is left.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json.hpp>

#include <chrono>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli/backends.h"
#include "helpers.h"

namespace gpuops::serve_testing {
namespace {

namespace json = boost::json;

// Two labelled nodes, the lab's toolkit and DCGM exporter, a third node,
// then a step whose expectation never holds (no node gpu-z): the run sits
// in its 300 s poll until it is interrupted.
const char* const kWaits = R"(name: waits
cluster:
  nodes:
    - name: gpu-a
      labels: {nvidia.com/gpu.deploy.container-toolkit: "true", nvidia.com/gpu.deploy.dcgm-exporter: "true"}
    - name: gpu-b
      labels: {nvidia.com/gpu.deploy.container-toolkit: "true", nvidia.com/gpu.deploy.dcgm-exporter: "true"}
steps:
  - createNamespace: gpu-operator
  - apply: {operands: [container-toolkit, dcgm-exporter]}
  - addNode: {name: gpu-c, labels: {nvidia.com/gpu.deploy.dcgm-exporter: "true"}}
  - name: never
    timeout: 300s
    expect:
      running: {nvidia-dcgm-exporter: [gpu-z]}
)";
// Sorted after waits.yaml: it would run next.
const char* const kNext = R"(name: x-next
steps:
  - createNamespace: gpu-operator
)";

struct Seen {
  std::set<std::string> nodes, daemonsets;
  size_t pods = 0;
};

Seen seen(core::Cluster& cluster) {
  core::ClusterState s = cluster.state("gpu-operator");
  Seen out;
  for (const auto& n : s.nodes) out.nodes.insert(n.metadata.name);
  for (const auto& d : s.daemonsets) out.daemonsets.insert(d.metadata.name);
  out.pods = s.pods.size();
  return out;
}

// Waits up to `seconds` for `pid` to exit; its exit code, -1 when it did not
// exit normally, -2 when it still runs (then it is killed).
int wait_exit(pid_t pid, int seconds) {
  for (int i = 0; i < seconds * 20; ++i) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  return -2;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  if (lines.empty()) lines.emplace_back();
  return lines;
}

// Starts the run, waits until the scenario has made its third node, its
// DaemonSets and their pods (so it is in its last step's poll), sends
// `signal`, and checks what is left.
void interrupt_run(int signal, bool skip_cleanup) {
  simulator::ApiServer::Options opts;
  opts.clock = [] { return std::chrono::steady_clock::now(); };
  Served served(/*lab=*/false, opts);
  TempDir files;
  files.write("waits.yaml", kWaits);
  files.write("x-next.yaml", kNext);
  const std::string report = files.path + "/report.json", junit = files.path + "/junit.xml";
  const std::string out = files.path + "/out.txt", err = files.path + "/err.txt";
  std::vector<std::string> argv = {GPUOPS_BINARY,   "run",  "--backend", "real", "--kubeconfig", served.kubeconfig,
                                   "--report-json", report, "--junit",   junit,  files.path};
  if (skip_cleanup) argv.push_back("--skip-cleanup");
  std::unique_ptr<core::Cluster> cluster = cli::open_real(served.kubeconfig, "", "", nullptr);

  // Forked here, not with serve_testing::Child: its exit code is waited
  // for with a deadline.
  pid_t pid = -1;
  std::vector<std::string> all = argv;
  std::vector<char*> av;
  for (auto& a : all) av.push_back(a.data());
  av.push_back(nullptr);
  int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  pid = ::fork();
  if (pid == 0) {
    ::dup2(o, 1);
    ::dup2(e, 2);
    ::execv(av[0], av.data());
    ::_exit(127);
  }
  ::close(o);
  ::close(e);
  ASSERT_GT(pid, 0);

  const Seen made{{"gpu-a", "gpu-b", "gpu-c"}, {"nvidia-container-toolkit-daemonset", "nvidia-dcgm-exporter"}, 5};
  bool ready = false;
  for (int i = 0; i < 600 && !ready; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    try {
      Seen now = seen(*cluster);
      ready = now.nodes == made.nodes && now.daemonsets == made.daemonsets && now.pods == made.pods;
    } catch (const std::exception&) {
    }
  }
  ASSERT_TRUE(ready) << read_file(err);
  std::this_thread::sleep_for(std::chrono::milliseconds(700));  // into the last step's poll
  ::kill(pid, signal);
  int code = wait_exit(pid, 60);
  EXPECT_EQ(code, 128 + signal) << read_file(out) << read_file(err);

  Seen after = seen(*cluster);
  if (skip_cleanup) {
    EXPECT_EQ(after.nodes, made.nodes);
    EXPECT_EQ(after.daemonsets, made.daemonsets);
  } else {
    EXPECT_TRUE(after.nodes.empty()) << *after.nodes.begin();
    EXPECT_TRUE(after.daemonsets.empty()) << *after.daemonsets.begin();
    EXPECT_EQ(after.pods, 0u);
    Proc ns = served.kubectl({"get", "namespace", "gpu-operator"});
    EXPECT_NE(ns.code, 0) << ns.out;  // NotFound
  }
  const std::string name = signal == SIGINT ? "SIGINT" : "SIGTERM";
  EXPECT_EQ(lines_of(read_file(err)).back(), "gpuops run: interrupted by " + name + ": " +
                                                 (skip_cleanup ? "what the scenario created is left (--skip-cleanup)"
                                                               : "what the scenario created was deleted") +
                                                 "; the scenarios after it did not run");
  // The reports: only the interrupted scenario, failed as interrupted, its
  // last step stopped in its poll.
  json::value doc = json::parse(read_file(report));
  const json::array& scenarios = doc.at("scenarios").as_array();
  ASSERT_EQ(scenarios.size(), 1u);
  EXPECT_EQ(scenarios[0].at("name"), json::value("waits"));
  EXPECT_EQ(scenarios[0].at("status"), json::value("failed"));
  EXPECT_EQ(scenarios[0].at("interrupted"), json::value(true));
  EXPECT_FALSE(scenarios[0].as_object().contains("cleanupFailures"));
  const json::value& last = scenarios[0].at("steps").as_array().back();
  EXPECT_EQ(last.at("title"), json::value("never"));
  EXPECT_EQ(last.at("failures").as_array().back(), json::value("(interrupted while waiting; last state shown)"));
  EXPECT_NE(read_file(junit).find("<testcase name=\"waits\""), std::string::npos);
}

TEST(RunInterrupt, CtrlCDeletesTheScenariosNodesAndDaemonSets) { interrupt_run(SIGINT, false); }
TEST(RunInterrupt, SigtermDeletesThemToo) { interrupt_run(SIGTERM, false); }
TEST(RunInterrupt, SkipCleanupLeavesThem) { interrupt_run(SIGINT, true); }

}  // namespace
}  // namespace gpuops::serve_testing
