// gpuops lab grade --watch in a terminal's place (a pipe): against `gpuops
// serve --lab`, the pending picture first, then the grade, a redraw when a
// file is fixed and none when nothing changed, exit 0 on SIGINT (also in the
// middle of a learner's hanging script, which dies with it), and the
// learner's cluster never sees the grader's probe node. Bad input fails
// with a distinct exit code, without waiting.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "../common/cli_run.h"
#include "../common/spawned.h"
#include "../common/temp_dir.h"
#include "tests/cli/process_helpers.h"

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using gpuops::testing::CliRun;
using gpuops::testing::run_gpuops;
using gpuops::testing::Spawned;
using gpuops::testing::TempDir;

void spit(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

// Single-quotes `s` for /bin/sh.
std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The last picture the watch drew: from its last heading on.
std::string last_picture(const std::string& out) {
  size_t at = out.rfind("gpuops lab grade --watch ");
  return at == std::string::npos ? "" : out.substr(at);
}

// `gpuops serve --lab` with the lab performed on it (`lab run --kubeconfig`),
// its working directory at `dir`.
class ServedLab : public ::testing::Test {
 protected:
  void SetUp() override {
    kc_ = tmp_.path + "/kc";
    dir_ = tmp_.path + "/lab";
    serve_ =
        std::make_unique<Spawned>(std::vector<std::string>{GPUOPS_BINARY, "serve", "--lab", "--kubeconfig-out", kc_});
    ASSERT_TRUE(serve_->read_until_contains("serving on", 30s)) << serve_->err;
    CliRun run = run_gpuops({"lab", "run", "--dir", dir_, "--kubeconfig", kc_, "--quiet"});
    ASSERT_EQ(run.code, 0) << run.err;
  }
  void TearDown() override {
    if (serve_) {
      EXPECT_EQ(serve_->signal_and_wait(SIGINT, 10s), 0) << serve_->err;
    }
  }
  std::unique_ptr<Spawned> watch() {
    return std::make_unique<Spawned>(
        std::vector<std::string>{GPUOPS_BINARY, "lab", "grade", "--watch", dir_, "--kubeconfig", kc_});
  }

  TempDir tmp_;
  std::string kc_, dir_;
  std::unique_ptr<Spawned> serve_;
};

TEST_F(ServedLab, WatchRedrawsWhenAFileIsFixedAndEndsCleanlyOnSigint) {
  // Every node the learner's cluster shows, as kubectl watches them.
  Spawned nodes({"/bin/sh", "-c",
                 "KUBECACHEDIR=" + quote(tmp_.path + "/kube-cache") + " exec kubectl --kubeconfig " + quote(kc_) +
                     " get nodes --watch -o name"});
  ASSERT_TRUE(nodes.read_until_contains("node/lab-node-2", 30s)) << nodes.err;
  // LAB.md step 3: one GPU node (lab-node-0) runs the driver, lab-node-1
  // has driver=false: DESIRED=1, SKIPPED=lab-node-1. The learner wrote 2.
  spit(fs::path(dir_) / "out/driver.txt", "DESIRED=2\nSKIPPED=lab-node-1\n");
  auto w = watch();
  ASSERT_TRUE(w->read_until_contains("pending step 8\n", 30s)) << w->out << w->err;
  for (int i = 1; i <= 8; ++i) EXPECT_NE(w->out.find("pending step " + std::to_string(i) + "\n"), std::string::npos);
  ASSERT_TRUE(w->read_until_contains("7 of 8 steps passed\n", 60s)) << w->out << w->err;
  std::string failed = last_picture(w->out);
  EXPECT_NE(failed.find("FAIL step 3: out/driver.txt does not match"), std::string::npos) << failed;
  EXPECT_NE(failed.find("\n    -DESIRED=1\n    +DESIRED=2\n"), std::string::npos) << failed;
  for (int step : {1, 2, 4, 5, 6, 7, 8})
    EXPECT_NE(failed.find("PASS step " + std::to_string(step) + ":"), std::string::npos) << failed;

  // Fixed: redrawn with step 3 passed.
  const size_t before = w->out.size();
  spit(fs::path(dir_) / "out/driver.txt", "DESIRED=1\nSKIPPED=lab-node-1\n");
  ASSERT_TRUE(w->read_until(
      [&](const std::string& o) { return o.find("8 of 8 steps passed\n", before) != std::string::npos; }, 30s))
      << w->out;
  EXPECT_NE(last_picture(w->out).find("PASS step 3: k8s/driver-ds.yaml and out/driver.txt\n"), std::string::npos);

  // The same bytes written again change nothing: no redraw within several
  // polls (300 ms each).
  const size_t drawn = w->out.size();
  spit(fs::path(dir_) / "out/driver.txt", "DESIRED=1\nSKIPPED=lab-node-1\n");
  EXPECT_FALSE(w->read_until([&](const std::string& o) { return o.size() > drawn; }, 2s)) << w->out.substr(drawn);

  EXPECT_EQ(w->signal_and_wait(SIGINT, 10s), 0) << w->err;
  EXPECT_TRUE(w->out.ends_with("stopped after 2 grades\n")) << w->out.substr(drawn);
  // The grades ran steps 6-7 on a copy: the learner's cluster never had the
  // probe node.
  nodes.read_until([](const std::string&) { return false; }, 200ms);
  EXPECT_EQ(nodes.out.find("grader-probe"), std::string::npos) << nodes.out;
  EXPECT_EQ(w->err, "");
}

// A SIGINT while a learner's script hangs: the script dies, the watch exits 0.
TEST_F(ServedLab, SigintDuringAHangingScriptEndsTheWatchAndTheScript) {
  const std::string pids = tmp_.path + "/pids", seen = tmp_.path + "/seen";
  spit(fs::path(dir_) / "operand-audit.sh", "#!/usr/bin/env bash\ndirname \"$KUBECONFIG\" > " + quote(seen) +
                                                "\necho $$ >> " + quote(pids) + "\nsleep 1000\n");
  auto w = watch();
  pid_t script = 0;
  for (int i = 0; i < 600 && script == 0; ++i) {
    std::ifstream f(pids);
    if (!(f >> script)) script = 0;
    w->read_until([](const std::string&) { return false; }, 50ms);
  }
  ASSERT_GT(script, 0) << w->out << w->err;
  EXPECT_EQ(w->signal_and_wait(SIGINT, 10s), 0) << w->err;
  EXPECT_TRUE(gpuops::process_testing::dies(script)) << "the learner's script outlived the watch";
  EXPECT_TRUE(w->out.ends_with("stopped after 0 grades\n")) << w->out;
  // The script ran against the copy (its kubeconfig in the watch's scratch
  // directory, not the learner's), and that directory is gone.
  std::string scratch = gpuops::process_testing::slurp(seen);
  while (scratch.ends_with("\n")) scratch.pop_back();
  EXPECT_NE(fs::path(scratch).filename().string().find("gpuops-watch-"), std::string::npos) << scratch;
  EXPECT_FALSE(fs::exists(scratch)) << scratch;
}

// The cluster goes away: said under the steps, the watch goes on, and still
// ends with 0.
TEST_F(ServedLab, AClusterThatStopsAnsweringIsSaidAndTheWatchGoesOn) {
  auto w = watch();
  ASSERT_TRUE(w->read_until_contains("8 of 8 steps passed\n", 60s)) << w->out << w->err;
  ASSERT_EQ(serve_->signal_and_wait(SIGINT, 10s), 0);
  serve_.reset();
  ASSERT_TRUE(w->read_until_contains("error: cannot read the cluster: ", 30s)) << w->out;
  EXPECT_NE(last_picture(w->out).find("PASS step 8:"), std::string::npos) << "the last grade stays shown";
  EXPECT_EQ(w->signal_and_wait(SIGINT, 10s), 0) << w->err;
}

TEST(LabWatchInput, BadInputFailsAtOnceWithItsExitCode) {
  TempDir t;
  fs::create_directories(t.path + "/lab");
  const std::string dir = t.path + "/lab";
  // A kubeconfig whose server does not listen (port 1 on loopback).
  const std::string dead = t.write("dead.kubeconfig",
                                   "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: "
                                   "https://127.0.0.1:1\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  "
                                   "user:\n    token: x\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: "
                                   "u\ncurrent-context: c\n");
  CliRun r = run_gpuops({"lab", "grade", "--watch", t.path + "/missing", "--kubeconfig", dead});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("no such working directory"), std::string::npos) << r.err;

  r = run_gpuops({"lab", "grade", "--watch", dir});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--watch grades against a running cluster: give --kubeconfig"), std::string::npos) << r.err;

  r = run_gpuops({"lab", "grade", "--watch", dir, "--kubeconfig", dead, "-o", "json"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--output writes one grade: it cannot be combined with --watch"), std::string::npos) << r.err;

  r = run_gpuops({"lab", "grade", "--watch", dir, "--dir", t.path, "--kubeconfig", dead});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("name two directories"), std::string::npos) << r.err;

  r = run_gpuops({"lab", "grade", "--watch", dir, "--kubeconfig", t.path + "/no-such.kubeconfig"});
  EXPECT_EQ(r.code, 2) << r.err;

  auto t0 = std::chrono::steady_clock::now();
  r = run_gpuops({"lab", "grade", "--watch", dir, "--kubeconfig", dead});
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find("127.0.0.1:1"), std::string::npos) << r.err;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 30s);
  EXPECT_EQ(r.out, "");

  // serve --grade-dir: with --lab and --ui, on a directory.
  r = run_gpuops({"serve", "--grade-dir", dir, "--kubeconfig-out", t.path + "/kc"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--grade-dir needs --lab and --ui"), std::string::npos) << r.err;
  r = run_gpuops({"serve", "--lab", "--ui", "--grade-dir", t.path + "/missing", "--kubeconfig-out", t.path + "/kc"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("no such working directory"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(t.path + "/kc"));

  // --dir DIR --watch is the same as --watch DIR.
  r = run_gpuops({"lab", "grade", "--dir", t.path + "/missing", "--watch", "--kubeconfig", dead});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("no such working directory"), std::string::npos) << r.err;
}

}  // namespace
