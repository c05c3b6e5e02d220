// `gpuops run --backend real --pause-on-failure` on a terminal (a pseudo-
// terminal here), against gpuops serve's API: after the failed step it says
// what failed and how to look, waits with the cluster kept as the step left
// it, and goes on (then cleans up) on Enter. Without a terminal it refuses
// with exit 4 before running anything.
#include <gtest/gtest.h>

#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cli/backends.h"
#include "helpers.h"

namespace gpuops::serve_testing {
namespace {

const std::string kFails = std::string(GPUOPS_SOURCE_DIR) + "/tests/data/e2e/fails-on-purpose.yaml";

std::set<std::string> node_names(core::Cluster& cluster) {
  std::set<std::string> names;
  for (const auto& node : cluster.state("gpu-operator").nodes) names.insert(node.metadata.name);
  return names;
}

// Reads the terminal's output into `seen` until it holds `want`, or `seconds` pass.
bool read_until(int fd, std::string& seen, const std::string& want, int seconds) {
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (seen.find(want) == std::string::npos && std::chrono::steady_clock::now() < until) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    char buf[4096];
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    seen.append(buf, static_cast<size_t>(n));
  }
  return seen.find(want) != std::string::npos;
}

TEST(RunPause, WaitsOnATerminalWithTheClusterKeptThenGoesOnAtEnter) {
  simulator::ApiServer::Options opts;
  opts.clock = [] { return std::chrono::steady_clock::now(); };
  Served served(/*lab=*/false, opts);
  std::vector<std::string> argv = {GPUOPS_BINARY,     "run",  "--backend",         "real", "--kubeconfig",
                                   served.kubeconfig, kFails, "--pause-on-failure"};
  std::vector<char*> av;
  for (auto& a : argv) av.push_back(a.data());
  av.push_back(nullptr);
  int master = -1;
  pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
  if (pid == 0) {
    ::execv(av[0], av.data());
    ::_exit(127);
  }
  ASSERT_GT(pid, 0);
  auto cluster = cli::open_real(served.kubeconfig, "", "", nullptr);

  std::string seen;
  const bool paused = read_until(master, seen, "press Enter to go on", 60);
  EXPECT_TRUE(paused) << seen;
  EXPECT_NE(seen.find("gpuops run: paused: step 2 \"dcgm-exporter on both nodes\" of fails-on-purpose failed:"),
            std::string::npos)
      << seen;
  EXPECT_NE(
      seen.find("    kubectl --kubeconfig " + served.kubeconfig + " get nodes,daemonsets,pods -n gpu-operator -o wide"),
      std::string::npos)
      << seen;
  // Waiting: alive, and the scenario's nodes are still there.
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  int status = 0;
  EXPECT_EQ(::waitpid(pid, &status, WNOHANG), 0);
  EXPECT_EQ(node_names(*cluster), (std::set<std::string>{"gpu-a", "gpu-b"}));
  // Enter: the run goes on, fails (exit 1) and cleans up.
  ASSERT_EQ(::write(master, "\n", 1), 1);
  read_until(master, seen, "0 passed, 1 failed", 60);
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << status << seen;
  EXPECT_TRUE(node_names(*cluster).empty());
  ::close(master);
}

TEST(RunPause, RefusedWithoutATerminalBeforeAnythingRuns) {
  simulator::ApiServer::Options opts;
  Served served(/*lab=*/false, opts);
  TempDir dir;
  Proc r = sh(quote(GPUOPS_BINARY) + " run --backend real --kubeconfig " + quote(served.kubeconfig) +
                  " --pause-on-failure " + quote(kFails) + " </dev/null",
              dir.path);
  EXPECT_EQ(r.code, 4);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "gpuops run: --pause-on-failure waits for Enter on a terminal, and stdin is not one (run it in a terminal, "
            "or leave the flag out); nothing was run\n");
  EXPECT_TRUE(node_names(*cli::open_real(served.kubeconfig, "", "", nullptr)).empty());
}

}  // namespace
}  // namespace gpuops::serve_testing
