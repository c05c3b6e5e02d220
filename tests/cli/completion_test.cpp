// gpuops completion bash|zsh and the hidden __complete the scripts call
// (cobra's protocol: the words so far, the last one partial; one candidate a
// line), then bash itself completing through the script.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <utility>

#include "../common/cli_run.h"

namespace {

using gpuops::testing::run_gpuops;

// What `cmd` prints on stdout under /bin/sh, and its wait status.
std::pair<std::string, int> shell(const std::string& cmd) {
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return {"", -1};
  std::string out;
  char buf[4096];
  size_t k;
  while ((k = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, k);
  return {out, ::pclose(p)};
}

const std::string kDump = std::string(GPUOPS_CASES_DIR) + "/lab-final-state/cluster.json";

TEST(Completion, CommandsThenNodesThenOperands) {
  auto c = run_gpuops({"__complete", "ex"});
  EXPECT_EQ(c.out, "explain\nexporter\n");
  EXPECT_EQ(c.code, 0);
  // Every command of `gpuops help`, and not the hidden one.
  auto all = run_gpuops({"__complete", ""});
  EXPECT_NE(all.out.find("audit\n"), std::string::npos);
  EXPECT_NE(all.out.find("completion\n"), std::string::npos);
  EXPECT_EQ(all.out.find("__complete"), std::string::npos);
  auto help = run_gpuops({"help"});
  EXPECT_EQ(help.out.find("__complete"), std::string::npos);
  // The dump's nodes (lab-node-0..2), as kubectl completes node names.
  auto n = run_gpuops({"__complete", "order-check", "--snapshot", kDump, "lab-node-"});
  EXPECT_EQ(n.out, "lab-node-0\nlab-node-1\nlab-node-2\n");
  auto n1 = run_gpuops({"__complete", "explain", "--snapshot=" + kDump, "lab-node-1"});
  EXPECT_EQ(n1.out, "lab-node-1\n");
  // explain's second argument: the lab catalog's operands (docs/LAB.md step 1).
  auto o = run_gpuops({"__complete", "explain", "--snapshot", kDump, "lab-node-1", "d"});
  EXPECT_EQ(o.out, "driver\ndevice-plugin\ndcgm-exporter\n");
  // A flag's value, a third argument, an unreadable cluster: nothing.
  EXPECT_EQ(run_gpuops({"__complete", "order-check", "--snapshot", ""}).out, "");
  EXPECT_EQ(run_gpuops({"__complete", "order-check", "--snapshot", kDump, "lab-node-0", ""}).out, "");
  EXPECT_EQ(run_gpuops({"__complete", "diagnose", "--snapshot", "/nonexistent.json", ""}).out, "");
  EXPECT_EQ(run_gpuops({"completion", "fish"}).code, 2);
}

TEST(Completion, BashCompletesThroughTheScript) {
  auto script = run_gpuops({"completion", "bash"});
  ASSERT_EQ(script.code, 0);
  std::string path = ::testing::TempDir() + "/gpuops-completion.bash";
  std::ofstream(path) << script.out;
  // What bash's programmable completion does on `gpuops order-check --snapshot DUMP lab-node-<TAB>`.
  std::string cmd = "bash -c 'source " + path + "; COMP_WORDS=(" GPUOPS_BINARY " order-check --snapshot " + kDump +
                    " lab-node-); COMP_CWORD=4; _gpuops; printf \"%s\\n\" \"${COMPREPLY[@]}\"'";
  auto [out, status] = shell(cmd);
  EXPECT_EQ(status, 0);
  EXPECT_EQ(out, "lab-node-0\nlab-node-1\nlab-node-2\n");
  auto zsh = run_gpuops({"completion", "zsh"});
  EXPECT_EQ(zsh.out.rfind("#compdef gpuops kubectl-gpuops\n", 0), 0u);
}

// The script takes the candidates as they are: whatever a program on the
// first word's path prints, bash runs none of it (compgen -W would expand
// `$(...)` in its word list). Here the "program" prints such a candidate.
TEST(Completion, BashRunsNothingACandidateSays) {
  auto script = run_gpuops({"completion", "bash"});
  ASSERT_EQ(script.code, 0);
  const std::string dir = ::testing::TempDir();
  const std::string path = dir + "/gpuops-completion-2.bash";
  std::ofstream(path) << script.out;
  const std::string fake = dir + "/fake-gpuops";
  const std::string marker = dir + "/gpuops-completion-ran";
  std::remove(marker.c_str());
  std::ofstream(fake) << "#!/bin/sh\nprintf '%s\\n' 'x$(touch " + marker + ")'\n";
  ::chmod(fake.c_str(), 0755);
  std::string cmd = "bash -c 'source " + path + "; COMP_WORDS=(" + fake +
                    " explain x); COMP_CWORD=2; _gpuops; printf \"%s\\n\" \"${COMPREPLY[@]}\"'";
  auto [out, status] = shell(cmd);
  EXPECT_EQ(status, 0);
  EXPECT_EQ(out, "x$(touch " + marker + ")\n");
  EXPECT_FALSE(std::ifstream(marker).good()) << "the candidate ran";
}

}  // namespace
