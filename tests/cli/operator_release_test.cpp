// The release an install runs against the catalogs gpuops has (v23.9 to
// v26.7, the `version` keys of data/operands/): an install of another release
// line is judged with a catalog of another release, and that is said once on
// stderr (core::catalog_release_note); --operator-version names the release
// in place of the detected one. The release comes from the operand
// DaemonSets' helm.sh/chart label (gpu-operator-v24.9.2 as the chart of
// deployments/gpu-operator writes it for release v24.9.2).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "../common/cli_run.h"
#include "../common/temp_dir.h"

namespace {

using gpuops::testing::run_gpuops;
using gpuops::testing::TempDir;

std::string healthy() { return std::string(GPUOPS_SOURCE_DIR) + "/tests/data/operator/healthy-v26.7/dump.yaml"; }

// The healthy v26.7 install with every "v26.7.0" (chart labels, image tags)
// replaced by `release`.
std::string as_release(const TempDir& dir, const std::string& release) {
  std::ifstream in(healthy());
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  for (size_t at = text.find("v26.7.0"); at != std::string::npos; at = text.find("v26.7.0", at + release.size()))
    text.replace(at, 7, release);
  return dir.write("dump.yaml", text);
}

const char* const kHealthy = "cpu-node-1 OK\ngpu-node-1 OK\ngpu-node-2 OK\n";

TEST(OperatorRelease, AReleaseWithoutACatalogIsSaidOnce) {
  TempDir dir;
  // Older than every catalog: the oldest (v23.9) judges it.
  auto a = run_gpuops({"audit", "--snapshot", as_release(dir, "v23.6.1")});
  EXPECT_EQ(a.err,
            "gpuops: operator mode: GPU Operator v23.6.1, catalog gpu-operator-v23.9 (--operands overrides)\n"
            "gpuops: GPU Operator v23.6.1: no catalog for v23.6 (gpuops has v23.9, v24.3, v24.6, v24.9, v25.3, "
            "v25.10, v26.3, v26.7); judged with v23.9's, whose operands, deploy labels, validator gates and helpers' "
            "label writes may differ from v23.6's\n");
  // Between two catalogued lines: the older one judges it.
  auto b = run_gpuops({"audit", "--snapshot", as_release(dir, "v25.6.0")});
  EXPECT_NE(b.err.find("gpuops: GPU Operator v25.6.0: no catalog for v25.6 (gpuops has "), std::string::npos) << b.err;
  EXPECT_NE(b.err.find("judged with v25.3's,"), std::string::npos) << b.err;
  // A newer release than any catalog: the newest judges it.
  auto c = run_gpuops({"audit", "--snapshot", as_release(dir, "v27.1.0")});
  EXPECT_NE(c.err.find("no catalog for v27.1 (gpuops has v23.9, "), std::string::npos) << c.err;
  EXPECT_NE(c.err.find("judged with v26.7's,"), std::string::npos) << c.err;
}

// Every catalogued release is judged with its own catalog, without a note.
TEST(OperatorRelease, EachCataloguedReleaseGetsItsOwnCatalog) {
  TempDir dir;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"v23.9.2", "gpu-operator-v23.9"}, {"v24.3.0", "gpu-operator-v24.3"},   {"v24.6.2", "gpu-operator-v24.6"},
      {"v24.9.2", "gpu-operator-v24.9"}, {"v25.10.1", "gpu-operator-v25.10"}, {"v26.3.3", "gpu-operator-v26.3"}};
  for (const auto& [release, catalog] : cases) {
    auto r = run_gpuops({"audit", "--snapshot", as_release(dir, release)});
    EXPECT_EQ(r.err,
              "gpuops: operator mode: GPU Operator " + release + ", catalog " + catalog + " (--operands overrides)\n");
  }
}

TEST(OperatorRelease, ACataloguedReleaseIsNotNoted) {
  auto a = run_gpuops({"audit", "--snapshot", healthy()});
  EXPECT_EQ(a.err, "gpuops: operator mode: GPU Operator v26.7.0, catalog gpu-operator (--operands overrides)\n");
  EXPECT_EQ(a.out, kHealthy);
  EXPECT_EQ(a.code, 0);
}

TEST(OperatorRelease, AnotherReleasesCatalogNamedIsSaid) {
  auto a = run_gpuops({"audit", "--operands", "gpu-operator-v25.3", "--snapshot", healthy()});
  EXPECT_EQ(a.err,
            "gpuops: operator mode: GPU Operator v26.7.0, catalog gpu-operator-v25.3\n"
            "gpuops: GPU Operator v26.7.0: judged with v25.3's catalog, as --operands names it, whose operands, "
            "deploy labels, validator gates and helpers' label writes may differ from v26.7's\n");
  // A catalog of no release (the lab's) names none to compare: not said.
  auto lab = run_gpuops({"audit", "--operands", "lab", "--snapshot", healthy()});
  EXPECT_EQ(lab.err, "gpuops: operator mode: GPU Operator v26.7.0, catalog lab\n");
}

TEST(OperatorRelease, OperatorVersionOverridesTheDetectedRelease) {
  TempDir dir;
  const std::string v24 = as_release(dir, "v24.9.2");
  // Judged as v26.7: the v26.7 catalog, nothing to note, the healthy verdict.
  for (const char* given : {"v26.7", "26.7", "v26.7.0"}) {
    auto a = run_gpuops({"audit", "--operator-version", given, "--snapshot", v24});
    const std::string shown = given[0] == 'v' ? given : std::string("v") + given;
    EXPECT_EQ(a.err, "gpuops: operator mode: GPU Operator " + shown + ", catalog gpu-operator (--operands overrides)\n")
        << given;
    EXPECT_EQ(a.out, kHealthy) << given;
    EXPECT_EQ(a.code, 0) << given;
  }
  // Judged as v26.3 (the dump says v26.7.0): v26.3's own catalog, nothing to note.
  auto b = run_gpuops({"audit", "--operator-version", "v26.3.0", "--snapshot", healthy()});
  EXPECT_EQ(b.err, "gpuops: operator mode: GPU Operator v26.3.0, catalog gpu-operator-v26.3 (--operands overrides)\n");
  // Judged as v25.6 (no such line): v25.3's catalog, said.
  auto c = run_gpuops({"audit", "--operator-version", "v25.6.0", "--snapshot", healthy()});
  EXPECT_NE(c.err.find("GPU Operator v25.6.0, catalog gpu-operator-v25.3"), std::string::npos) << c.err;
  EXPECT_NE(c.err.find("no catalog for v25.6"), std::string::npos) << c.err;
}

TEST(OperatorRelease, OperatorVersionMisusedIsAUsageError) {
  for (const char* bad : {"banana", "v26", "", "v.7", "26.x", "v26.7abc", "v26.7.0.1"}) {
    auto a = run_gpuops({"audit", "--operator-version", bad, "--snapshot", healthy()});
    EXPECT_EQ(a.code, 2) << bad;
    EXPECT_NE(a.err.find("--operator-version must be a GPU Operator release such as v25.3 or v24.9.2, not \"" +
                         std::string(bad) + "\""),
              std::string::npos)
        << a.err;
    EXPECT_EQ(a.out, "") << bad;
  }
  auto both = run_gpuops({"audit", "--operator-version", "v25.3", "--operands", "lab", "--snapshot", healthy()});
  EXPECT_EQ(both.code, 2);
  EXPECT_NE(both.err.find("--operator-version picks the release's catalog; it cannot be combined with --operands"),
            std::string::npos)
      << both.err;
}

TEST(OperatorRelease, OperatorVersionOnALabStateIsLeftAside) {
  auto a = run_gpuops({"audit", "--operator-version", "v25.3", "--snapshot",
                       std::string(GPUOPS_CASES_DIR) + "/lab-final-state/cluster.json"});
  EXPECT_EQ(a.err, "gpuops: --operator-version v25.3 left aside: the input is not a GPU Operator install\n");
  EXPECT_EQ(a.out, "lab-node-0 OK\nlab-node-1 OK\nlab-node-2 OK\n");
  EXPECT_EQ(a.code, 0);
}

const char* const kLines[] = {"v23.9", "v24.3", "v24.6", "v24.9", "v25.3", "v25.10", "v26.3", "v26.7"};

// The field cases recorded on operator installs diagnose the same way under
// every release's catalog where the releases agree: the findings rest on pod
// states and the gates every release shares (driver -> toolkit -> validator).
TEST(OperatorRelease, FieldCasesDiagnoseAlikeWhereTheReleasesAgree) {
  for (const char* name : {"driver-crashloop", "cuda-validator-failing", "mig-failed", "upgrade-failed",
                           "sandbox-vfio-crashloop", "driver-manager-hung"}) {
    const std::string dump = std::string(GPUOPS_SOURCE_DIR) + "/tests/data/operator/" + name + "/dump.yaml";
    auto first = run_gpuops({"diagnose", "--operator-version", kLines[0], "--snapshot", dump});
    EXPECT_NE(first.out.find(" error "), std::string::npos) << name << ": " << first.out;
    for (const char* line : kLines) {
      auto r = run_gpuops({"diagnose", "--operator-version", line, "--snapshot", dump});
      EXPECT_EQ(r.out, first.out) << name << " as " << line;
      EXPECT_EQ(r.code, first.code) << name << " as " << line;
    }
  }
}

// Where they differ, the finding says so with the release's rule: an empty
// deploy label is kept by addGPUStateLabels up to v26.3 (any existing value
// stays: the operand is off for good, an error) and treated as absent from
// v26.7 (re-set to "true" on the next reconcile: a warning).
TEST(OperatorRelease, AnEmptyDeployLabelIsJudgedByEachReleasesRule) {
  std::ifstream in(healthy());
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  const std::string from = "nvidia.com/gpu.deploy.device-plugin: 'true'";
  const size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, from.size(), "nvidia.com/gpu.deploy.device-plugin: ''");  // gpu-node-1's
  TempDir dir;
  const std::string dump = dir.write("empty.yaml", text);
  for (const char* line : kLines) {
    auto r = run_gpuops({"diagnose", "--operator-version", line, "--snapshot", dump});
    const bool kept = std::string(line) != "v26.7";
    const std::string finding =
        kept ? "gpu-node-1 device-plugin error label-empty-value: nvidia.com/gpu.deploy.device-plugin=\"\": a stale "
               "pause marker of k8s-driver-manager; this operator release (" +
                   std::string(line) + ") keeps any existing value"
             : "gpu-node-1 device-plugin warning label-empty-value: nvidia.com/gpu.deploy.device-plugin=\"\": a pause "
               "marker of k8s-driver-manager; the operator (v26.7) re-sets \"true\" on its next reconcile";
    EXPECT_NE(r.out.find(finding), std::string::npos) << line << ": " << r.out;
  }
}

}  // namespace
