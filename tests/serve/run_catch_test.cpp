// The scenario that fails on purpose in the end-to-end run
// (tests/data/e2e/fails-on-purpose.yaml, scripts/e2e-real.sh step 1a), here
// over gpuops serve's API with `gpuops run --backend real`: it fails (exit
// 1), scripts/e2e-catch-check.py finds its catch artefacts and the JUnit
// test case carrying them, and it leaves no node behind.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "cli/backends.h"
#include "helpers.h"
#include "tests/common/cli_run.h"

namespace gpuops::serve_testing {
namespace {

TEST(RunCatch, FailingScenarioLeavesItsCatchArtefacts) {
  simulator::ApiServer::Options opts;
  opts.clock = [] { return std::chrono::steady_clock::now(); };
  Served served(/*lab=*/false, opts);
  TempDir dir;
  const std::string art = dir.path + "/art", junit = dir.path + "/junit.xml";
  gpuops::testing::CliRun r = gpuops::testing::run_gpuops(
      {"run", "--backend", "real", "--kubeconfig", served.kubeconfig, "--artifacts", art, "--junit", junit,
       std::string(GPUOPS_SOURCE_DIR) + "/tests/data/e2e/fails-on-purpose.yaml"});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  Proc check = sh("python3 " + quote(std::string(GPUOPS_SOURCE_DIR) + "/scripts/e2e-catch-check.py") + " " +
                      quote(art) + " " + quote(junit),
                  dir.path);
  EXPECT_EQ(check.code, 0) << check.out << check.err;
  EXPECT_EQ(check.out, "");
  EXPECT_TRUE(cli::open_real(served.kubeconfig, "", "", nullptr)->state("gpu-operator").nodes.empty());
}

}  // namespace
}  // namespace gpuops::serve_testing
