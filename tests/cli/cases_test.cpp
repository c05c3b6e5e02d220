// Every case of tests/data/cases through the CLI: the lab-contract output and
// exit code its README states, and every bad manifest refused with file, line,
// field and exit 2.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "../common/cli_run.h"

namespace fs = std::filesystem;

namespace {

const std::string kCases = std::string(GPUOPS_CASES_DIR) + "/";

using gpuops::testing::CliRun;
using gpuops::testing::run_gpuops;

std::string dump(const std::string& c) { return kCases + c + "/cluster.json"; }

}  // namespace

TEST(Cases, LabFinalState) {
  auto a = run_gpuops({"audit", "--snapshot", dump("lab-final-state")});
  EXPECT_EQ(a.out, "lab-node-0 OK\nlab-node-1 OK\nlab-node-2 OK\n");
  EXPECT_EQ(a.code, 0);
  EXPECT_EQ(a.err, "");
  auto m = run_gpuops({"matrix", "--snapshot", dump("lab-final-state")});
  EXPECT_EQ(m.out,
            "lab-node-0 driver=yes toolkit=yes device-plugin=yes gfd=yes dcgm=yes\n"
            "lab-node-1 driver=no toolkit=yes device-plugin=yes gfd=yes dcgm=no\n"
            "lab-node-2 driver=no toolkit=no device-plugin=yes gfd=no dcgm=no\n"
            "TOTAL_PODS=9\n");
  EXPECT_EQ(m.code, 0);
  for (auto [node, want, code] : {std::tuple{"lab-node-0", "ok\n", 0}, std::tuple{"lab-node-1", "ok\n", 0},
                                  std::tuple{"lab-node-2", "device-plugin-without-toolkit\n", 1}}) {
    auto o = run_gpuops({"order-check", node, "--snapshot", dump("lab-final-state")});
    EXPECT_EQ(o.out, want) << node;
    EXPECT_EQ(o.code, code) << node;
  }
}

TEST(Cases, EmptyLabelValues) {
  auto a = run_gpuops({"audit", "--snapshot", dump("empty-label-values")});
  EXPECT_EQ(a.out, "gpu-a OK\n");
  EXPECT_EQ(a.code, 0);
}

TEST(Cases, MissingDeployLabels) {
  auto a = run_gpuops({"audit", "--snapshot", dump("missing-deploy-labels")});
  EXPECT_EQ(a.out, "gpu-a OK\ngpu-b OK\n");
  EXPECT_EQ(a.code, 0);
  for (const char* node : {"gpu-a", "gpu-b"}) {
    auto o = run_gpuops({"order-check", node, "--snapshot", dump("missing-deploy-labels")});
    EXPECT_EQ(o.out, "ok\n");
    EXPECT_EQ(o.code, 0);
  }
}

TEST(Cases, PendingInsufficientMemory) {
  auto a = run_gpuops({"audit", "--snapshot", dump("pending-insufficient-memory")});
  EXPECT_EQ(a.out, "gpu-a OK\ngpu-small MISSING driver\n");
  EXPECT_EQ(a.code, 1);
  auto m = run_gpuops({"matrix", "--snapshot", dump("pending-insufficient-memory")});
  EXPECT_EQ(m.out,
            "gpu-a driver=yes toolkit=yes device-plugin=yes gfd=yes dcgm=yes\n"
            "gpu-small driver=no toolkit=yes device-plugin=yes gfd=yes dcgm=yes\n"
            "TOTAL_PODS=9\n");
}

TEST(Cases, StuckInInit) {
  auto a = run_gpuops({"audit", "--snapshot", dump("stuck-in-init")});
  EXPECT_EQ(a.out, "gpu-a MISSING device-plugin\ngpu-a MISSING gpu-feature-discovery\ngpu-a MISSING dcgm-exporter\n");
  EXPECT_EQ(a.code, 1);
}

TEST(Cases, TerminatingAfterOptOut) {
  auto a = run_gpuops({"audit", "--snapshot", dump("terminating-after-optout")});
  EXPECT_EQ(a.out, "gpu-a OK\ngpu-b OK\n");
  EXPECT_EQ(a.code, 0);
  auto m = run_gpuops({"matrix", "--snapshot", dump("terminating-after-optout")});
  EXPECT_EQ(m.out,
            "gpu-a driver=yes toolkit=yes device-plugin=yes gfd=yes dcgm=yes\n"
            "gpu-b driver=yes toolkit=yes device-plugin=yes gfd=yes dcgm=no\n"
            "TOTAL_PODS=9\n");
}

TEST(Cases, UntoleratedTaint) {
  auto a = run_gpuops({"audit", "--snapshot", dump("untolerated-taint")});
  EXPECT_EQ(a.out,
            "gpu-a OK\n"
            "gpu-b MISSING driver\n"
            "gpu-b MISSING container-toolkit\n"
            "gpu-b MISSING device-plugin\n"
            "gpu-b MISSING gpu-feature-discovery\n"
            "gpu-b MISSING dcgm-exporter\n");
  EXPECT_EQ(a.code, 1);
}

struct BadManifest {
  const char* file;
  int line;
  const char* field;
  const char* message_part;
};

class BadManifests : public ::testing::TestWithParam<BadManifest> {};

TEST_P(BadManifests, RefusedWithFileLineFieldAndExit2) {
  const BadManifest& b = GetParam();
  std::string path = kCases + "bad-manifests/" + b.file;
  auto r = run_gpuops({"lint", path});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  std::string want_prefix = "gpuops: error: " + path + ":" + std::to_string(b.line) + ": " + b.field;
  EXPECT_EQ(r.err.substr(0, want_prefix.size()), want_prefix) << r.err;
  EXPECT_NE(r.err.find(b.message_part), std::string::npos) << r.err;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BadManifests,
    ::testing::Values(
        BadManifest{
            "unquoted-true.yaml", 16, "spec.template.spec.nodeSelector[nvidia.com/gpu.deploy.driver]: ",
            "json: cannot unmarshal bool into Go struct field PodSpec.spec.template.spec.nodeSelector of type string"},
        BadManifest{"selector-mismatch.yaml", 12,
                    "spec.template.metadata.labels: ", "`selector` does not match template `labels`"},
        BadManifest{"removed-api-version.yaml", 1,
                    "apiVersion: ", "no matches for kind \"DaemonSet\" in version \"extensions/v1beta1\""},
        BadManifest{"tab-indent.yaml", 7, "", "invalid YAML: found a tab character in indentation"},
        // `yes` is a YAML 1.1 boolean: the first thing the API trips on.
        BadManifest{
            "second-document-bad.yaml", 21,
            "spec.template.spec.nodeSelector[nvidia.com/gpu.deploy.container-toolkit]: ",
            "cannot unmarshal bool into Go struct field PodSpec.spec.template.spec.nodeSelector of type string"}));

TEST(Cli, UsageErrorsExit2) {
  EXPECT_EQ(run_gpuops({}).code, 2);
  auto u = run_gpuops({"frobnicate"});
  EXPECT_EQ(u.code, 2);
  EXPECT_NE(u.err.find("unknown command \"frobnicate\""), std::string::npos);
  EXPECT_EQ(u.err.find("Did you mean"), std::string::npos) << u.err;
  auto typo = run_gpuops({"audti"});
  EXPECT_EQ(typo.code, 2);
  EXPECT_EQ(typo.err.substr(0, typo.err.find("\n\n")), "gpuops: unknown command \"audti\"\nDid you mean \"audit\"?");
  auto v = run_gpuops({"--version"});
  EXPECT_EQ(v.code, 0);
  EXPECT_EQ(v.out, "gpuops 0.1.0\n");
  auto o = run_gpuops({"audit", "--snapshot", dump("lab-final-state"), "-o", "xml"});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("--output must be text, json, yaml, html or wide"), std::string::npos);
  auto n = run_gpuops({"order-check", "--snapshot", dump("lab-final-state")});
  EXPECT_EQ(n.code, 2);
  EXPECT_NE(n.err.find("missing NODE"), std::string::npos);
  auto f = run_gpuops({"audit", "--bogus"});
  EXPECT_EQ(f.code, 2);
  auto l = run_gpuops({"lint"});
  EXPECT_EQ(l.code, 2);
}

TEST(Cli, MissingSnapshotFileIsInputError) {
  auto r = run_gpuops({"audit", "--snapshot", "/no/such/dump.json"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "gpuops: error: /no/such/dump.json: no such file or directory\n");
}

// A node name that is not in the snapshot is bad input (exit 2), worded as
// kubectl words it, the same for every command that takes a node.
TEST(Cli, UnknownNodeIsInputErrorEverywhere) {
  std::string snap = dump("lab-final-state");
  std::string want =
      "gpuops: error: " + snap + ": nodes \"lab-node-9\" not found (nodes: lab-node-0, lab-node-1, lab-node-2)\n";
  auto o = run_gpuops({"order-check", "lab-node-9", "--snapshot", snap});
  EXPECT_EQ(o.code, 2);
  EXPECT_EQ(o.err, want);
  auto d = run_gpuops({"diagnose", "lab-node-9", "--snapshot", snap});
  EXPECT_EQ(d.code, 2);
  EXPECT_EQ(d.err, want);
  auto e = run_gpuops({"explain", "lab-node-9", "driver", "--snapshot", snap});
  EXPECT_EQ(e.code, 2);
  EXPECT_EQ(e.err, want);
}

// On a large cluster the "not found" line names ten nodes and the count.
TEST(Cli, UnknownNodeListsAtMostTenNodes) {
  fs::path file = fs::temp_directory_path() / "gpuops-cli-twelve-nodes.json";
  std::string items;
  for (int i = 0; i < 12; ++i)
    items += std::string(i ? "," : "") + R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n)" +
             (i < 10 ? "0" : "") + std::to_string(i) + R"("}})";
  std::ofstream(file) << R"({"apiVersion":"v1","kind":"List","items":[)" + items + "]}";
  auto r = run_gpuops({"order-check", "gpu-z", "--snapshot", file.string()});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "gpuops: error: " + file.string() +
                       ": nodes \"gpu-z\" not found (nodes: n00, n01, n02, n03, n04, n05, n06, n07, n08, n09, ... "
                       "(12 in all))\n");
  fs::remove(file);
}

// diagnose shows warnings and errors by default; --severity info every check.
TEST(Cli, DiagnoseSeverityFilter) {
  std::string snap = dump("lab-final-state");
  auto healthy = run_gpuops({"diagnose", "lab-node-0", "--snapshot", snap});
  EXPECT_EQ(healthy.code, 0);
  EXPECT_EQ(healthy.out, "nothing at severity warning or above on 1 node (--severity info lists every check)\n");
  // Every check of lab-node-0: one "running" info finding per lab operand.
  auto all = run_gpuops({"diagnose", "lab-node-0", "--snapshot", snap, "--severity", "info"});
  EXPECT_EQ(all.code, 0);
  size_t running = 0;
  for (size_t p = all.out.find(" info running: "); p != std::string::npos; p = all.out.find(" info running: ", p + 1))
    ++running;
  EXPECT_EQ(running, 5u) << all.out;
  // lab-node-2: a device plugin without toolkit (error) and deploy labels on a
  // node without a GPU (warning); --severity error keeps only the first, and
  // the exit code stays 1 whatever is shown.
  auto errors = run_gpuops({"diagnose", "lab-node-2", "--snapshot", snap, "--severity", "error"});
  EXPECT_EQ(errors.code, 1);
  EXPECT_EQ(errors.out.rfind("lab-node-2 device-plugin error device-plugin-without-toolkit: ", 0), 0u) << errors.out;
  EXPECT_EQ(errors.out.find(" warning "), std::string::npos) << errors.out;
  auto warnings = run_gpuops({"diagnose", "lab-node-2", "--snapshot", snap});
  EXPECT_EQ(warnings.out.rfind("lab-node-2 - warning deploy-labels-on-non-gpu-node: ", 0), 0u) << warnings.out;
  EXPECT_EQ(run_gpuops({"diagnose", "--snapshot", snap, "--severity", "loud"}).code, 2);
}

TEST(Cli, UnknownOperandListsTheCatalog) {
  auto e = run_gpuops({"explain", "lab-node-0", "drivr", "--snapshot", dump("lab-final-state")});
  EXPECT_EQ(e.code, 2);
  EXPECT_EQ(e.err,
            "gpuops: error: operand: Not found: \"drivr\" is not an operand of the catalog (operands: driver, "
            "container-toolkit, device-plugin, gpu-feature-discovery, dcgm-exporter)\n");
}

// A snapshot without nodes (an empty list, another kind, a folder without
// dumps) cannot be audited: exit 2 naming it, never an empty "all fine".
TEST(Cli, SnapshotWithoutNodesIsInputError) {
  fs::path dir = fs::temp_directory_path() / "gpuops-cli-empty-snapshot";
  fs::create_directories(dir / "sub");
  std::ofstream(dir / "pods.json")
      << R"({"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"x"}}]})";
  std::string file = (dir / "pods.json").string();
  for (const char* cmd : {"audit", "matrix", "diagnose"}) {
    auto r = run_gpuops({cmd, "--snapshot", file});
    EXPECT_EQ(r.code, 2) << cmd;
    EXPECT_EQ(r.out, "") << cmd;
    EXPECT_EQ(r.err, "gpuops: error: " + file +
                         ": no nodes in this snapshot: save one with `kubectl get nodes,daemonsets,pods -A -o json`\n")
        << cmd;
  }
  auto folder = run_gpuops({"audit", "--snapshot", (dir / "sub").string()});
  EXPECT_EQ(folder.code, 2) << folder.err;
  fs::remove_all(dir);
}

// With the full GPU Operator catalog the audit checks only operands the
// operator deploys there: the lab's dump has no MPS or MIG manager DaemonSet,
// so a node labelled for them is not MISSING them; with the lab catalog the
// five operands are judged exactly as before.
TEST(Cli, AuditWithTheGpuOperatorCatalogSkipsUndeployedOperands) {
  auto lab = run_gpuops({"audit", "--snapshot", dump("lab-final-state")});
  auto full = run_gpuops({"audit", "--snapshot", dump("lab-final-state"), "--operands", "gpu-operator"});
  EXPECT_EQ(full.code, lab.code) << full.out;
  EXPECT_EQ(full.out, lab.out);
  EXPECT_EQ(full.out.find("mps-control-daemon"), std::string::npos);
}

TEST(Cli, LintReportsEveryInvalidFile) {
  std::string a = kCases + "bad-manifests/unquoted-true.yaml";
  std::string b = kCases + "bad-manifests/selector-mismatch.yaml";
  std::string good = std::string(GPUOPS_SOURCE_DIR) + "/manifests/driver-ds.yaml";
  auto r = run_gpuops({"lint", a, good, b});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  std::istringstream is(r.err);
  std::vector<std::string> lines;
  for (std::string l; std::getline(is, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 2u) << r.err;
  EXPECT_EQ(lines[0].rfind("gpuops: error: " + a + ":16: ", 0), 0u) << lines[0];
  EXPECT_EQ(lines[1].rfind("gpuops: error: " + b + ":12: ", 0), 0u) << lines[1];
  EXPECT_EQ(run_gpuops({"lint", good}).code, 0);
  // A file of only a document separator holds no object: an error, as for kubectl apply.
  fs::path empty = fs::temp_directory_path() / "gpuops-lint-empty.yaml";
  std::ofstream(empty) << "---\n";
  auto e = run_gpuops({"lint", empty.string()});
  EXPECT_EQ(e.code, 2);
  EXPECT_EQ(e.err, "gpuops: error: " + empty.string() + ": no objects in this file\n");
  fs::remove(empty);
}

TEST(Cli, JsonOutputs) {
  auto a = run_gpuops({"audit", "--snapshot", dump("pending-insufficient-memory"), "-o", "json"});
  EXPECT_EQ(a.code, 1);
  EXPECT_EQ(a.out, R"({"namespace":"gpu-operator","nodes":[{"node":"gpu-a","ok":true,"missing":[]},)"
                   R"({"node":"gpu-small","ok":false,"missing":["driver"]}],"exitCode":1})"
                   "\n");
  auto o = run_gpuops({"order-check", "lab-node-2", "-o", "json", "--snapshot", dump("lab-final-state")});
  EXPECT_EQ(o.out, R"({"node":"lab-node-2","result":"device-plugin-without-toolkit","exitCode":1})"
                   "\n");
  auto m = run_gpuops({"matrix", "-o", "json", "--snapshot", dump("lab-final-state")});
  EXPECT_NE(
      m.out.find(
          R"({"node":"lab-node-2","operands":{"driver":false,"toolkit":false,"device-plugin":true,"gfd":false,"dcgm":false}})"),
      std::string::npos);
  EXPECT_NE(m.out.find(R"("totalPods":9)"), std::string::npos);
}

// The operator in another namespace than -n: the snapshot knows where its
// DaemonSets are, so the commands say so instead of reporting every operand
// MISSING (or "ok" for order-check).
TEST(Cli, WrongNamespaceNamesTheRightOne) {
  std::string snap = dump("lab-final-state");
  std::string want = "gpuops: error: " + snap +
                     ": no operand DaemonSets in namespace kube-system; this snapshot has them in gpu-operator: "
                     "pass -n gpu-operator\n";
  for (std::vector<std::string> args :
       {std::vector<std::string>{"audit"}, {"matrix"}, {"order-check", "lab-node-2"}, {"diagnose"}}) {
    args.insert(args.end(), {"-n", "kube-system", "--snapshot", snap});
    auto r = run_gpuops(args);
    EXPECT_EQ(r.code, 2) << args[0];
    EXPECT_EQ(r.out, "") << args[0];
    EXPECT_EQ(r.err, want) << args[0];
  }
}

// Overlapping snapshots (a dump given twice) count each object once.
TEST(Cli, OverlappingSnapshotsCountOnce) {
  std::string snap = dump("lab-final-state");
  auto once = run_gpuops({"matrix", "--snapshot", snap});
  auto twice = run_gpuops({"matrix", "--snapshot", snap, "--snapshot", snap});
  EXPECT_EQ(twice.code, 0);
  EXPECT_EQ(twice.out, once.out);
  EXPECT_NE(twice.out.find("TOTAL_PODS=9\n"), std::string::npos) << twice.out;
}

TEST(Cli, RosterAndHelp) {
  auto r = run_gpuops({"roster"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out.substr(0, 36), "driver=nvidia.com/gpu.deploy.driver\n");
  auto h = run_gpuops({"help"});
  EXPECT_EQ(h.code, 0);
  EXPECT_NE(h.out.find("audit"), std::string::npos);
  auto ah = run_gpuops({"audit", "--help"});
  EXPECT_EQ(ah.code, 0);
  EXPECT_NE(ah.out.find("--snapshot"), std::string::npos);
}

// The real process: exit status and streams as a shell sees them.
TEST(Binary, ExitStatusAndStreams) {
  std::string cmd = std::string(GPUOPS_BINARY) + " audit --snapshot " + dump("untolerated-taint") + " 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[256];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  int status = pclose(p);
  EXPECT_EQ(WEXITSTATUS(status), 1);
  EXPECT_EQ(out.substr(0, 9), "gpu-a OK\n");
}

// As a process, the commands that read a state end through cli::done
// (std::_Exit once the result is written, not through the destructors):
// stdout and stderr, to a pipe or to a file, and the exit status are what
// the same command prints in process, where everything is freed.
TEST(Binary, CommandsEndingAtOnceWriteAllTheyPrint) {
  const std::string lab = dump("lab-final-state");
  const std::vector<std::vector<std::string>> commands = {
      {"audit", "--snapshot", lab},
      {"matrix", "--snapshot", lab},
      {"matrix", "--snapshot", lab, "-o", "wide"},
      {"matrix", "--snapshot", lab, "-o", "html"},
      {"order-check", "lab-node-1", "--snapshot", lab},
      {"diagnose", "--snapshot", lab, "-o", "json"},
      {"explain", "lab-node-1", "driver", "--snapshot", lab},
      {"plan", "--snapshot", lab, "label", "node", "lab-node-0", "nvidia.com/gpu.deploy.driver=false", "--overwrite"},
      {"plan", "--snapshot", lab, "-o", "json", "label", "node", "lab-node-0", "nvidia.com/gpu.deploy.dcgm=false"},
  };
  const std::string dir = ::testing::TempDir();
  for (const auto& args : commands) {
    auto in_process = run_gpuops(args);
    std::string line = GPUOPS_BINARY;
    for (const auto& a : args) line += " '" + a + "'";
    for (bool to_file : {false, true}) {
      const std::string out_path = dir + "/done-out.txt", err_path = dir + "/done-err.txt";
      std::string cmd = line + " 2>" + err_path + (to_file ? " >" + out_path : "");
      FILE* p = popen(cmd.c_str(), "r");
      ASSERT_NE(p, nullptr);
      std::string out;
      char buf[4096];
      while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
      int status = pclose(p);
      auto slurp = [](const std::string& path) {
        std::ifstream f(path, std::ios::binary);
        return std::string(std::istreambuf_iterator<char>(f), {});
      };
      if (to_file) out = slurp(out_path);
      EXPECT_TRUE(WIFEXITED(status)) << line;
      EXPECT_EQ(WEXITSTATUS(status), in_process.code) << line;
      EXPECT_EQ(out, in_process.out) << line << (to_file ? " (to a file)" : " (to a pipe)");
      EXPECT_EQ(slurp(err_path), in_process.err) << line;
      EXPECT_FALSE(in_process.out.empty()) << line;
    }
  }
}
