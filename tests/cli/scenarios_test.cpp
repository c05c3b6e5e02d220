// The scenario library, run through the CLI on the simulator, and the run
// command's reports and exit codes.
#include <gtest/gtest.h>

#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "../common/cli_run.h"

namespace fs = std::filesystem;

namespace {

using gpuops::testing::CliRun;
using gpuops::testing::run_gpuops;

const std::string kScenarios = std::string(GPUOPS_SOURCE_DIR) + "/scenarios";

}  // namespace

TEST(ScenarioLibrary, AllPassOnTheSimulator) {
  fs::path junit = fs::temp_directory_path() / "gpuops-scenarios-junit.xml";
  fs::path report = fs::temp_directory_path() / "gpuops-scenarios.json";
  auto r = run_gpuops({"run", kScenarios, "--junit", junit.string(), "--report-json", report.string()});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("FAIL"), std::string::npos) << r.out;
  // At least 20 scenarios, every one passed.
  size_t passes = 0;
  for (size_t p = r.out.find("PASS "); p != std::string::npos; p = r.out.find("PASS ", p + 1)) ++passes;
  EXPECT_GE(passes, 20u);
  EXPECT_NE(r.out.find(std::to_string(passes) + " passed, 0 failed\n"), std::string::npos);
  // JUnit: valid XML, one testcase per scenario.
  boost::property_tree::ptree t;
  ASSERT_NO_THROW(boost::property_tree::read_xml(junit.string(), t));
  EXPECT_EQ(t.get<size_t>("testsuite.<xmlattr>.tests"), passes);
  EXPECT_EQ(t.get_child("testsuite").count("testcase"), passes);
  EXPECT_EQ(t.get<int>("testsuite.<xmlattr>.failures"), 0);
  std::ifstream js(report);
  std::string json((std::istreambuf_iterator<char>(js)), {});
  EXPECT_NE(json.find("\"failed\":0"), std::string::npos);
  fs::remove(junit);
  fs::remove(report);
}

TEST(ScenarioLibrary, LabScenarioAlone) {
  auto r = run_gpuops({"run", kScenarios + "/lab/lab.yaml"});
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out, "PASS lab (11 steps)\n1 passed, 0 failed\n");
}

TEST(ScenarioRun, DeliberatelyWrongExpectationFailsWithDiff) {
  fs::path dir = fs::temp_directory_path() / "gpuops-wrong-scenario";
  fs::create_directories(dir);
  std::ofstream(dir / "wrong.yaml") << R"(name: wrong-opt-out
cluster:
  nodes:
    - name: gpu-a
      labels: {nvidia.com/gpu.deploy.dcgm-exporter: "true"}
steps:
  - createNamespace: gpu-operator
  - apply: {operands: [dcgm-exporter]}
  - label: {node: gpu-a, set: {nvidia.com/gpu.deploy.dcgm-exporter: "false"}}
    expect:
      matrix: |
        gpu-a driver=no toolkit=no device-plugin=no gfd=no dcgm=yes
        TOTAL_PODS=1
)";
  auto r = run_gpuops({"run", (dir / "wrong.yaml").string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out,
            "FAIL wrong-opt-out (3 steps)\n"
            "  " +
                (dir / "wrong.yaml").string() +
                ":9: step \"label gpu-a nvidia.com/gpu.deploy.dcgm-exporter=false\"\n"
                "    matrix (line 11): output differs\n"
                "    --- expected\n"
                "    +++ actual\n"
                "    @@ -1,2 +1,2 @@\n"
                "    -gpu-a driver=no toolkit=no device-plugin=no gfd=no dcgm=yes\n"
                "    -TOTAL_PODS=1\n"
                "    +gpu-a driver=no toolkit=no device-plugin=no gfd=no dcgm=no\n"
                "    +TOTAL_PODS=0\n"
                "0 passed, 1 failed\n");
  fs::remove_all(dir);
}

// `diagnose: [{severity, absent: true}]` without a code: nothing at that
// severity or worse (on the node, when given). A device plugin without its
// toolkit is an error (LAB.md's order rule), so "nothing at warning" fails
// naming it, "nothing at error on gpu-b" (a node without operands) passes,
// and an entry with neither code nor severity is refused at load.
TEST(ScenarioRun, SilentDiagnoseIsAnExpectation) {
  fs::path dir = fs::temp_directory_path() / "gpuops-silent-scenario";
  fs::create_directories(dir);
  auto scenario = [](const std::string& findings) {
    return "name: silent\ncluster:\n  nodes:\n"
           "    - name: gpu-a\n      labels: {nvidia.com/gpu.deploy.device-plugin: \"true\"}\n"
           "    - name: gpu-b\n"
           "steps:\n  - createNamespace: gpu-operator\n  - apply: {operands: [device-plugin]}\n    expect:\n"
           "      diagnose:\n" +
           findings;
  };
  std::ofstream(dir / "loud.yaml") << scenario("        - {severity: warning, absent: true}\n");
  auto loud = run_gpuops({"run", (dir / "loud.yaml").string()});
  EXPECT_EQ(loud.code, 1) << loud.out;
  EXPECT_NE(loud.out.find("    diagnose (line 12): expected nothing at warning or above, got: gpu-a device-plugin "
                          "error device-plugin-without-toolkit: "),
            std::string::npos)
      << loud.out;

  std::ofstream(dir / "quiet.yaml") << scenario("        - {node: gpu-b, severity: error, absent: true}\n");
  auto quiet = run_gpuops({"run", (dir / "quiet.yaml").string()});
  EXPECT_EQ(quiet.code, 0) << quiet.out;

  std::ofstream(dir / "bad.yaml") << scenario("        - {node: gpu-a, absent: true}\n");
  auto bad = run_gpuops({"run", (dir / "bad.yaml").string()});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find((dir / "bad.yaml").string() +
                         ":12: steps[1].expect.diagnose[0]: node and code are required (without code: absent: true "
                         "and a severity)"),
            std::string::npos)
      << bad.err;
  fs::remove_all(dir);
}

TEST(ScenarioRun, InvalidScenarioIsExit2) {
  fs::path dir = fs::temp_directory_path() / "gpuops-bad-scenario";
  fs::create_directories(dir);
  std::ofstream(dir / "bad.yaml") << "name: bad\nsteps:\n  - cordon: a\n    colour: blue\n";
  auto r = run_gpuops({"run", (dir / "bad.yaml").string()});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find((dir / "bad.yaml").string() + ":4: steps[0].colour: unknown field \"colour\""),
            std::string::npos)
      << r.err;
  fs::remove_all(dir);
  EXPECT_EQ(run_gpuops({"run"}).code, 2);
  EXPECT_EQ(run_gpuops({"run", "--backend", "moon", kScenarios}).code, 2);
}

// --timeout is read on the simulator backend too (a hostile-input run:
// `--timeout abc`, `-1s`, '' and one nanosecond past Go's maximum were
// taken with exit 0 there, refused only with --backend real).
TEST(ScenarioRun, TimeoutIsCheckedOnEitherBackend) {
  for (const std::string bad : {"abc", "-1s", "", "2562047h47m16.854775808s"}) {
    SCOPED_TRACE(bad);
    auto r = run_gpuops({"run", kScenarios, "--filter", "^opt-out$", "--timeout", bad});
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.err.find("--timeout: "), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  }
  auto ok = run_gpuops({"run", kScenarios, "--filter", "^opt-out$", "--timeout", "0"});
  EXPECT_EQ(ok.code, 0) << ok.err;
}

TEST(ScenarioRun, FilterSelectsByName) {
  auto r = run_gpuops({"run", kScenarios, "--filter", "^opt-out$"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "PASS opt-out (3 steps)\n1 passed, 0 failed\n");
}

// Found by a hostile-input run: --filter matched with std::regex_search,
// which recursed once per character of the name: a 40,000-character name
// (20,000 with '(a|b)*$') ended the process with SIGSEGV.
TEST(ScenarioRun, FilterMatchesLongNamesWithoutRecursion) {
  fs::path dir = fs::temp_directory_path() / "gpuops-filter-long-name";
  fs::create_directories(dir);
  const std::string name(40000, 'a');
  std::ofstream(dir / "long.yaml") << "name: " << name
                                   << "\ncluster: {nodes: [{name: x}]}\nsteps: [{createNamespace: gpu-operator}]\n";
  for (const char* filter : {".*", "(a|b)*$", "^a+$"}) {
    SCOPED_TRACE(filter);
    auto r = run_gpuops({"run", (dir / "long.yaml").string(), "--filter", filter});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out, "PASS " + name + " (1 step)\n1 passed, 0 failed\n");
  }
  auto none = run_gpuops({"run", (dir / "long.yaml").string(), "--filter", "b"});
  EXPECT_EQ(none.code, 2);
  EXPECT_NE(none.err.find("no scenario name matches --filter \"b\""), std::string::npos) << none.err;
  fs::remove_all(dir);
}

namespace {

// The scenario names a run printed ("PASS name (...)"), in order.
std::vector<std::string> ran(const std::string& out) {
  std::vector<std::string> names;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (line.starts_with("PASS ") || line.starts_with("FAIL ")) names.push_back(line.substr(5, line.find(" (") - 5));
  return names;
}

}  // namespace

// The scenario files of a run's names: a matrix entry "name[k=v]" is of
// the file of "name" (the library's names are unique per file).
size_t files_of(const std::vector<std::string>& names) {
  std::set<std::string> files;
  for (const auto& name : names) files.insert(name.substr(0, name.find('[')));
  return files.size();
}

// Three machines of a CI job: the shards are consecutive, cover the library
// once, keep a file's matrix entries together, and differ in size by at
// most one scenario file.
TEST(ScenarioRun, ShardsCoverTheLibraryOnce) {
  auto whole = run_gpuops({"run", kScenarios, "-j", "2"});
  ASSERT_EQ(whole.code, 0) << whole.out;
  const std::vector<std::string> all = ran(whole.out);
  ASSERT_GE(all.size(), 20u);
  std::vector<std::string> joined;
  size_t shortest = all.size(), longest = 0;
  for (int i = 0; i < 3; ++i) {
    auto r = run_gpuops({"run", kScenarios, "-j", "2", "--shard-count", "3", "--shard-index", std::to_string(i)});
    EXPECT_EQ(r.code, 0) << r.out;
    const auto part = ran(r.out);
    EXPECT_NE(r.err.find("gpuops run: shard " + std::to_string(i) + " of 3: scenario files "), std::string::npos)
        << r.err;
    EXPECT_NE(r.out.find(std::to_string(part.size()) + " passed, 0 failed\n"), std::string::npos) << r.out;
    joined.insert(joined.end(), part.begin(), part.end());
    shortest = std::min(shortest, files_of(part));
    longest = std::max(longest, files_of(part));
  }
  EXPECT_EQ(joined, all);
  EXPECT_LE(longest - shortest, 1u);
}

TEST(ScenarioRun, ShardsAfterTheFilterAndMisuse) {
  // One scenario over two shards: the second is empty, and says so.
  auto first = run_gpuops({"run", kScenarios, "--filter", "^opt-out$", "--shard-count", "2"});
  EXPECT_EQ(first.out, "PASS opt-out (3 steps)\n1 passed, 0 failed\n");
  EXPECT_EQ(first.err, "gpuops run: shard 0 of 2: scenario files 1-1 of 1\n");
  auto empty = run_gpuops({"run", kScenarios, "--filter", "^opt-out$", "--shard-count", "2", "--shard-index", "1"});
  EXPECT_EQ(empty.code, 0);
  EXPECT_EQ(empty.out, "0 passed, 0 failed\n");
  EXPECT_EQ(empty.err, "gpuops run: shard 1 of 2 holds no scenario file (1 in all)\n");
  for (const std::vector<std::string>& bad : {std::vector<std::string>{"--shard-index", "1"},
                                              {"--shard-count", "0"},
                                              {"--shard-count", "2", "--shard-index", "2"},
                                              {"--shard-count", "2", "--shard-index", "-1"}}) {
    std::vector<std::string> args{"run", kScenarios};
    args.insert(args.end(), bad.begin(), bad.end());
    auto r = run_gpuops(args);
    EXPECT_EQ(r.code, 2) << bad.front() << r.err;
    EXPECT_EQ(r.out, "");
  }
}
