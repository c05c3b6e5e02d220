// gpuops lab run reproduces LAB.md; gpuops lab grade passes it, and fails
// exactly the step that owns each of the lab's named mistakes.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include <yaml-cpp/yaml.h>
#include <boost/json.hpp>
#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>

#include "../common/cli_run.h"
#include "tests/cli/process_helpers.h"

namespace fs = std::filesystem;

namespace {

using gpuops::process_testing::alive;
using gpuops::process_testing::dies;
using gpuops::process_testing::slurp;

using gpuops::testing::CliRun;
using gpuops::testing::run_gpuops;

void spit(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

// The pids a script wrote to `file`, one a line.
std::vector<pid_t> read_pids(const fs::path& file) {
  std::vector<pid_t> pids;
  std::ifstream f(file);
  for (long pid; f >> pid;) pids.push_back(static_cast<pid_t>(pid));
  return pids;
}

class LabDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gpuops-lab-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    CliRun r = run_gpuops({"lab", "run", "--dir", dir_.string(), "--quiet"});
    ASSERT_EQ(r.code, 0) << r.err;
    ASSERT_EQ(r.out, "");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The grade lines, one per step, and the exit code.
  std::pair<std::vector<std::string>, int> grade() {
    CliRun r = run_gpuops({"lab", "grade", "--dir", dir_.string()});
    std::vector<std::string> lines;
    std::istringstream in(r.out);
    // One line per step; a multi-line reason continues on lines indented by
    // four spaces.
    for (std::string l; std::getline(in, l);) {
      if (l.starts_with("    ")) {
        EXPECT_FALSE(lines.empty()) << r.out;
        EXPECT_EQ(lines.back().substr(0, 4), "FAIL") << r.out;
        continue;
      }
      lines.push_back(l);
    }
    last_output_ = r.out;
    return {lines, r.code};
  }
  // Which steps failed, e.g. {3}.
  std::vector<int> failed_steps() {
    auto [lines, code] = grade();
    std::vector<int> out;
    static const std::regex re(R"(^FAIL step (\d):)");
    for (const auto& l : lines) {
      std::smatch m;
      if (std::regex_search(l, m, re)) out.push_back(std::stoi(m[1]));
    }
    EXPECT_EQ(code, out.empty() ? 0 : 1);
    EXPECT_EQ(lines.size(), 8u);
    return out;
  }

  fs::path dir_;
  std::string last_output_;  // of the last grade()
};

}  // namespace

// LAB.md's results, every file (worked out in LAB.md "Final state" and steps 1-7).
TEST_F(LabDir, RunReproducesLabMd) {
  EXPECT_EQ(slurp(dir_ / "out/roster.txt"),
            "driver=nvidia.com/gpu.deploy.driver\n"
            "container-toolkit=nvidia.com/gpu.deploy.container-toolkit\n"
            "device-plugin=nvidia.com/gpu.deploy.device-plugin\n"
            "gpu-feature-discovery=nvidia.com/gpu.deploy.gpu-feature-discovery\n"
            "dcgm-exporter=nvidia.com/gpu.deploy.dcgm-exporter\n");
  EXPECT_EQ(slurp(dir_ / "out/driver.txt"), "DESIRED=1\nSKIPPED=lab-node-1\n");
  EXPECT_EQ(slurp(dir_ / "out/optout.txt"), "BEFORE=2\nAFTER=1\n");
  EXPECT_EQ(slurp(dir_ / "out/audit.txt"), "lab-node-0 OK\nlab-node-1 OK\nlab-node-2 OK\n");
  EXPECT_EQ(slurp(dir_ / "out/order.txt"), "lab-node-0 ok\nlab-node-1 ok\nlab-node-2 device-plugin-without-toolkit\n");
  EXPECT_EQ(slurp(dir_ / "out/matrix.txt"),
            "lab-node-0 driver=yes toolkit=yes device-plugin=yes gfd=yes dcgm=yes\n"
            "lab-node-1 driver=no toolkit=yes device-plugin=yes gfd=yes dcgm=no\n"
            "lab-node-2 driver=no toolkit=no device-plugin=yes gfd=no dcgm=no\n"
            "TOTAL_PODS=9\n");
  for (const char* f : {"toolkit-ds.yaml", "driver-ds.yaml", "device-plugin-ds.yaml", "gfd-ds.yaml", "dcgm-ds.yaml"})
    EXPECT_TRUE(fs::exists(dir_ / "k8s" / f)) << f;
  // The manifests are valid, the scripts executable and free of node names.
  EXPECT_EQ(run_gpuops({"lint", (dir_ / "k8s").string()}).code, 0);
  for (const char* s : {"operand-audit.sh", "order-check.sh"}) {
    auto perms = fs::status(dir_ / s).permissions();
    EXPECT_NE(perms & fs::perms::owner_exec, fs::perms::none) << s;
    EXPECT_EQ(slurp(dir_ / s).find("lab-node"), std::string::npos) << s;
  }
  EXPECT_NE(slurp(dir_ / "k8s/driver-ds.yaml").find("nvidia.com/gpu.deploy.driver: \"true\""), std::string::npos);
}

// The HTML report carries each step's deliverables in full, in the step that
// writes them (LAB.md: roster in step 1, driver.txt in 3, optout.txt in 5, the
// audit and its script in 6, the order check in 7, the matrix with
// TOTAL_PODS=9 in 8), each out/ file open, the manifests folded.
TEST_F(LabDir, TheHtmlReportShowsEachStepsFiles) {
  const fs::path html = dir_ / "lab.html";
  CliRun r = run_gpuops({"lab", "run", "--dir", (dir_ / "again").string(), "--quiet", "--html", html.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string page = slurp(html);
  // Step n's section, up to the next one.
  auto section = [&page](int n) {
    size_t at = page.find("<section class=\"step\" id=\"step-" + std::to_string(n) + "\">");
    if (at == std::string::npos) return std::string();
    return page.substr(at, page.find("</section>", at) - at);
  };
  auto shown = [](const std::string& path, const std::string& text, bool open) {
    return std::string("<details class=\"file\"") + (open ? " open" : "") + "><summary>" + path +
           "</summary><pre class=\"file-text\">" + text + "</pre></details>";
  };
  EXPECT_NE(section(3).find(shown("out/driver.txt", "DESIRED=1\nSKIPPED=lab-node-1\n", true)), std::string::npos)
      << section(3);
  EXPECT_NE(section(5).find(shown("out/optout.txt", "BEFORE=2\nAFTER=1\n", true)), std::string::npos);
  EXPECT_NE(section(6).find(shown("out/audit.txt", "lab-node-0 OK\nlab-node-1 OK\nlab-node-2 OK\n", true)),
            std::string::npos);
  EXPECT_NE(section(6).find("<details class=\"file\"><summary>operand-audit.sh</summary>"), std::string::npos);
  EXPECT_NE(section(7).find(shown("out/order.txt",
                                  "lab-node-0 ok\nlab-node-1 ok\nlab-node-2 device-plugin-without-toolkit\n", true)),
            std::string::npos);
  EXPECT_NE(section(8).find(shown("out/matrix.txt",
                                  "lab-node-0 driver=yes toolkit=yes device-plugin=yes gfd=yes dcgm=yes\n"
                                  "lab-node-1 driver=no toolkit=yes device-plugin=yes gfd=yes dcgm=no\n"
                                  "lab-node-2 driver=no toolkit=no device-plugin=yes gfd=no dcgm=no\n"
                                  "TOTAL_PODS=9\n",
                                  true)),
            std::string::npos)
      << section(8);
  // The manifest applied in step 3, folded; a file only in the step that wrote it.
  EXPECT_NE(section(3).find("<details class=\"file\"><summary>k8s/driver-ds.yaml</summary>"), std::string::npos);
  EXPECT_EQ(section(5).find("out/driver.txt"), std::string::npos);
  EXPECT_EQ(section(2).find("<details"), section(2).find("<details class=\"file\"><summary>k8s/toolkit-ds.yaml"));
}

TEST_F(LabDir, RunNarratesEachStep) {
  // The fixture ran the lab into dir_ already: without --overwrite it is refused.
  CliRun refused = run_gpuops({"lab", "run", "--dir", dir_.string()});
  EXPECT_EQ(refused.code, 2);
  EXPECT_EQ(refused.err, "gpuops lab: " + dir_.string() +
                             " already has k8s, out, operand-audit.sh, order-check.sh: pass --overwrite to replace "
                             "them with the reference solution, or choose another --dir\nRun 'gpuops lab --help' "
                             "for usage.\n");
  CliRun r = run_gpuops({"lab", "run", "--dir", dir_.string(), "--overwrite"});
  ASSERT_EQ(r.code, 0);
  for (int i = 1; i <= 8; ++i) EXPECT_NE(r.out.find("== Step " + std::to_string(i) + ":"), std::string::npos) << i;
  EXPECT_NE(r.out.find("driver not on lab-node-1: nodeSelector nvidia.com/gpu.deploy.driver=true: node has \"false\""),
            std::string::npos);
  EXPECT_NE(r.out.find("- dcgm-exporter pod gone from lab-node-1"), std::string::npos);
  // Step 4: both DaemonSets at 2 (LAB.md).
  EXPECT_NE(r.out.find("nvidia-device-plugin-daemonset: desiredNumberScheduled=2\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gpu-feature-discovery: desiredNumberScheduled=2\n"), std::string::npos) << r.out;
}

TEST_F(LabDir, GradingTheReferencePassesAllEightSteps) {
  auto [lines, code] = grade();
  ASSERT_EQ(lines.size(), 8u);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(lines[i].substr(0, 12), "PASS step " + std::to_string(i + 1) + ":") << lines[i];
  EXPECT_EQ(code, 0);
}

TEST_F(LabDir, UnquotedTrueFailsStep3) {
  std::string m = slurp(dir_ / "k8s/driver-ds.yaml");
  spit(dir_ / "k8s/driver-ds.yaml", std::regex_replace(m, std::regex("driver: \"true\""), "driver: true"));
  EXPECT_EQ(failed_steps(), std::vector<int>{3});
}

TEST_F(LabDir, NodeNamesInTheAuditScriptFailStep6) {
  // A script that walks a fixed list of nodes: right today, wrong when the
  // grader adds a node.
  std::string s = slurp(dir_ / "operand-audit.sh");
  s = std::regex_replace(
      s, std::regex(R"(\| \$nodes\[0\]\.items \| sort_by\(\.metadata\.name\)\[\])"),
      R"(| $$nodes[0].items | map(select(.metadata.name == "lab-node-0" or .metadata.name == "lab-node-1" or .metadata.name == "lab-node-2")) | sort_by(.metadata.name)[])");
  ASSERT_NE(s.find("lab-node-0"), std::string::npos);
  spit(dir_ / "operand-audit.sh", s);
  EXPECT_EQ(failed_steps(), std::vector<int>{6});
}

// Found by a hostile-input run: a line of 40,000 digits after "lab-node-"
// overflowed std::regex_search's recursion (SIGSEGV) in the grader. It is a
// node name all the same; the grader must never crash on a learner's file.
TEST_F(LabDir, AVeryLongNodeNameInOrderCheckFailsStep7NotTheGrader) {
  std::string s = slurp(dir_ / "order-check.sh");
  spit(dir_ / "order-check.sh", s + "# lab-node-" + std::string(40000, '1') + "\n");
  EXPECT_EQ(failed_steps(), std::vector<int>{7});
  // A longer word is no node name: lab-node-1x, xlab-node-1, lab-node- alone.
  spit(dir_ / "order-check.sh", s + "# lab-node-1x xlab-node-1 lab-node- lab-node-_1 my_lab-node-2\n");
  EXPECT_EQ(failed_steps(), std::vector<int>{});
}

TEST_F(LabDir, AuditTrustingDesiredNumberScheduledFailsStep6) {
  // desiredNumberScheduled counts a node whose pod is Pending: this audit
  // says OK where the pod never came up.
  spit(dir_ / "operand-audit.sh", R"SH(#!/usr/bin/env bash
# judges by the DaemonSet's desiredNumberScheduled and pod existence only
set -euo pipefail
OPS='driver nvidia.com/gpu.deploy.driver nvidia-driver-daemonset
container-toolkit nvidia.com/gpu.deploy.container-toolkit nvidia-container-toolkit-daemonset
device-plugin nvidia.com/gpu.deploy.device-plugin nvidia-device-plugin-daemonset
gpu-feature-discovery nvidia.com/gpu.deploy.gpu-feature-discovery gpu-feature-discovery
dcgm-exporter nvidia.com/gpu.deploy.dcgm-exporter nvidia-dcgm-exporter'
pods=$(kubectl get pods -n gpu-operator -o json)
rc=0
for node in $(kubectl get nodes -o jsonpath='{.items[*].metadata.name}' | tr ' ' '\n' | sort); do
  labels=$(kubectl get node "$node" -o json | jq -r '.metadata.labels // {} | to_entries[] | "\(.key)=\(.value)"')
  missing=0
  while read -r op label ds; do
    grep -qx "$label=true" <<<"$labels" || continue
    n=$(jq --arg ds "$ds" --arg node "$node" '[.items[] | select(.metadata.ownerReferences[0].name == $ds) | select((.spec.nodeName // .spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].values[0]) == $node)] | length' <<<"$pods")
    if [ "$n" = 0 ]; then echo "$node MISSING $op"; missing=1; rc=1; fi
  done <<<"$OPS"
  [ $missing = 0 ] && echo "$node OK"
done
exit $rc
)SH");
  EXPECT_EQ(failed_steps(), std::vector<int>{6});
}

TEST_F(LabDir, MatrixWrittenFromMemoryFailsStep8) {
  // The table as it was before the opt-out: stale.
  spit(dir_ / "out/matrix.txt",
       "lab-node-0 driver=yes toolkit=yes device-plugin=yes gfd=yes dcgm=yes\n"
       "lab-node-1 driver=no toolkit=yes device-plugin=yes gfd=yes dcgm=yes\n"
       "lab-node-2 driver=no toolkit=no device-plugin=yes gfd=no dcgm=no\n"
       "TOTAL_PODS=10\n");
  EXPECT_EQ(failed_steps(), std::vector<int>{8});
}

// A script that changes the cluster cannot make the live state agree with a
// wrong matrix: step 8 judges the state from before the scripts ran, and the
// script's step says it wrote.
TEST_F(LabDir, AScriptThatDeletesTheDaemonSetsCannotPassAWrongMatrix) {
  std::string audit = slurp(dir_ / "operand-audit.sh");
  spit(dir_ / "operand-audit.sh",
       "#!/usr/bin/env bash\nkubectl delete daemonsets --all -n \"${NAMESPACE:-gpu-operator}\" >/dev/null 2>&1\n" +
           audit);
  // What gpuops matrix says once no DaemonSet is left.
  spit(dir_ / "out/matrix.txt",
       "lab-node-0 driver=no toolkit=no device-plugin=no gfd=no dcgm=no\n"
       "lab-node-1 driver=no toolkit=no device-plugin=no gfd=no dcgm=no\n"
       "lab-node-2 driver=no toolkit=no device-plugin=no gfd=no dcgm=no\n"
       "TOTAL_PODS=0\n");
  auto [lines, code] = grade();
  EXPECT_EQ(code, 1);
  ASSERT_EQ(lines.size(), 8u) << last_output_;
  EXPECT_TRUE(lines[7].starts_with("FAIL step 8: out/matrix.txt does not match")) << last_output_;
  EXPECT_TRUE(lines[5].starts_with("FAIL step 6:")) << last_output_;
  EXPECT_NE(last_output_.find("the cluster changed while the scripts ran (they must only read it)"), std::string::npos)
      << last_output_;
}

// A script's output is shown escaped: an escape sequence or a carriage
// return cannot erase the FAIL block or print a PASS over it.
TEST_F(LabDir, AScriptsEscapeSequencesAreShownNotObeyed) {
  spit(dir_ / "order-check.sh", "#!/usr/bin/env bash\nprintf '\\033[1A\\033[2K\\rPASS step 7: all good\\n'\n");
  auto [lines, code] = grade();
  EXPECT_EQ(code, 1);
  EXPECT_EQ(last_output_.find('\x1b'), std::string::npos) << last_output_;
  EXPECT_EQ(last_output_.find('\r'), std::string::npos) << last_output_;
  EXPECT_NE(last_output_.find("got \"^[[1A^[[2K\\rPASS step 7: all good\""), std::string::npos) << last_output_;
  ASSERT_EQ(lines.size(), 8u) << last_output_;
  EXPECT_TRUE(lines[6].starts_with("FAIL step 7: order-check.sh ")) << lines[6];
}

// The grade for machines: -o json (and yaml) with each step's title, result
// and reason, and --junit: one testcase per step, the failing step's first
// reason line as the failure message and the diff as its text, read back as
// a JUnit consumer reads it (the attributes the JUnit schema requires).
TEST_F(LabDir, GradeAsJsonAndJUnit) {
  CliRun ok = run_gpuops({"lab", "grade", "--dir", dir_.string(), "-o", "json"});
  ASSERT_EQ(ok.code, 0) << ok.err;
  boost::json::value v = boost::json::parse(ok.out);
  EXPECT_EQ(v.at("passed"), 8);
  EXPECT_EQ(v.at("failed"), 0);
  ASSERT_EQ(v.at("steps").as_array().size(), 8u);
  EXPECT_EQ(v.at("steps").at(2).at("title"), "k8s/driver-ds.yaml and out/driver.txt");
  EXPECT_EQ(v.at("steps").at(2).at("result"), "PASS");

  std::string m = slurp(dir_ / "out/matrix.txt");
  spit(dir_ / "out/matrix.txt", std::regex_replace(m, std::regex("TOTAL_PODS=9"), "TOTAL_PODS=10"));
  const fs::path junit = dir_ / "grade.xml";
  CliRun bad = run_gpuops({"lab", "grade", "--dir", dir_.string(), "-o", "json", "--junit", junit.string()});
  EXPECT_EQ(bad.code, 1);
  v = boost::json::parse(bad.out);
  EXPECT_EQ(v.at("failed"), 1);
  const auto& step8 = v.at("steps").at(7);
  EXPECT_EQ(step8.at("result"), "FAIL");
  EXPECT_EQ(step8.at("title"), "out/matrix.txt matches the live state");
  std::string reason(step8.at("reason").as_string());
  EXPECT_NE(reason.find("-TOTAL_PODS=9\n+TOTAL_PODS=10"), std::string::npos) << reason;

  boost::property_tree::ptree t;
  ASSERT_NO_THROW(boost::property_tree::read_xml(junit.string(), t));
  const auto& suite = t.get_child("testsuite");
  EXPECT_EQ(suite.get<std::string>("<xmlattr>.name"), "gpuops lab grade");
  EXPECT_EQ(suite.get<int>("<xmlattr>.tests"), 8);
  EXPECT_EQ(suite.get<int>("<xmlattr>.failures"), 1);
  EXPECT_EQ(suite.get<int>("<xmlattr>.errors"), 0);
  int cases = 0, failures = 0;
  for (const auto& [tag, c] : suite) {
    if (tag != "testcase") continue;
    ++cases;
    EXPECT_FALSE(c.get<std::string>("<xmlattr>.name").empty());
    EXPECT_EQ(c.get<std::string>("<xmlattr>.classname"), "gpuops.lab");
    if (auto f = c.get_child_optional("failure")) {
      ++failures;
      EXPECT_EQ(c.get<std::string>("<xmlattr>.name"), "step 8: out/matrix.txt matches the live state");
      EXPECT_EQ(f->get<std::string>("<xmlattr>.message"), reason.substr(0, reason.find('\n')));
      EXPECT_EQ(f->get_value<std::string>(), reason);
    }
  }
  EXPECT_EQ(cases, 8);
  EXPECT_EQ(failures, 1);

  CliRun yaml = run_gpuops({"lab", "grade", "--dir", dir_.string(), "-o", "yaml"});
  EXPECT_EQ(yaml.code, 1);
  EXPECT_NE(yaml.out.find("failed: 1\n"), std::string::npos) << yaml.out;
  EXPECT_EQ(run_gpuops({"lab", "grade", "--dir", dir_.string(), "-o", "wide"}).code, 2);
}

// lab grade --html: one page, each step's result, the learner's files beside
// the expected ones (LAB.md's "Final state" and step 3), the diff and the
// fix hint of a failure, the placement graded; the learner's text escaped.
// The text output is the same with and without --html.
TEST_F(LabDir, GradeAsHtmlOnAPassingAndAFailingDirectory) {
  const fs::path html = dir_ / "grade.html";
  auto section = [](const std::string& page, int n) {
    size_t at = page.find("id=\"step-" + std::to_string(n) + "\">");
    if (at == std::string::npos) return std::string();
    at = page.rfind("<section", at);
    return page.substr(at, page.find("</section>", at) - at);
  };
  CliRun ok = run_gpuops({"lab", "grade", "--dir", dir_.string(), "--html", html.string()});
  ASSERT_EQ(ok.code, 0) << ok.err;
  EXPECT_EQ(ok.out, run_gpuops({"lab", "grade", "--dir", dir_.string()}).out);
  std::string page = slurp(html);
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  for (int n = 1; n <= 8; ++n) {
    std::string s = section(page, n);
    EXPECT_EQ(s.rfind("<section class=\"step pass\" id=\"step-" + std::to_string(n) + "\">", 0), 0u) << n;
    EXPECT_NE(s.find("<span class=\"result\">PASS</span>"), std::string::npos) << n;
    EXPECT_EQ(s.find("class=\"hint\""), std::string::npos) << n;
  }
  // LAB.md step 3's driver.txt, the learner's and the expected, side by side.
  EXPECT_NE(section(page, 3).find("<div class=\"learner\"><h4>The learner&#39;s out/driver.txt</h4><pre "
                                  "class=\"file-text\">DESIRED=1\nSKIPPED=lab-node-1\n</pre></div><div "
                                  "class=\"expected\"><h4>Expected (from the cluster)</h4><pre "
                                  "class=\"file-text\">DESIRED=1\nSKIPPED=lab-node-1\n</pre></div>"),
            std::string::npos)
      << section(page, 3);
  EXPECT_NE(section(page, 3).find("<summary>k8s/driver-ds.yaml</summary>"), std::string::npos);
  EXPECT_NE(page.find("<table class=\"report-grid\""), std::string::npos);
  EXPECT_NE(page.find("8 of 8 steps passed"), std::string::npos);

  std::string m = slurp(dir_ / "out/matrix.txt");
  spit(dir_ / "out/matrix.txt", std::regex_replace(m, std::regex("TOTAL_PODS=9"), "TOTAL_PODS=9 <b>x</b>"));
  CliRun bad = run_gpuops({"lab", "grade", "--dir", dir_.string(), "--html", html.string()});
  EXPECT_EQ(bad.code, 1);
  EXPECT_EQ(bad.out, run_gpuops({"lab", "grade", "--dir", dir_.string()}).out);
  page = slurp(html);
  EXPECT_EQ(page.find("<b>"), std::string::npos);
  EXPECT_NE(page.find("7 of 8 steps passed"), std::string::npos);
  EXPECT_NE(page.find("<li class=\"fail\"><a href=\"#step-8\">FAIL step 8: out/matrix.txt matches the live "
                      "state</a></li>"),
            std::string::npos);
  std::string s8 = section(page, 8);
  EXPECT_EQ(s8.rfind("<section class=\"step fail\" id=\"step-8\">", 0), 0u) << s8;
  EXPECT_NE(s8.find("<span class=\"result\">FAIL</span>"), std::string::npos);
  EXPECT_NE(s8.find("-TOTAL_PODS=9\n+TOTAL_PODS=9 &lt;b&gt;x&lt;/b&gt;"), std::string::npos) << s8;
  EXPECT_NE(s8.find("<p class=\"hint\">How to fix: LAB.md step 8: "), std::string::npos);
  EXPECT_NE(s8.find("<details class=\"file\" open><summary>out/matrix.txt</summary>"), std::string::npos);
  EXPECT_NE(s8.find("TOTAL_PODS=9 &lt;b&gt;x&lt;/b&gt;\n</pre></div><div class=\"expected\">"), std::string::npos);
  EXPECT_NE(s8.find("dcgm=no\nTOTAL_PODS=9\n</pre></div></div></details>"), std::string::npos);
}

TEST_F(LabDir, WrongOptOutNumbersFailStep5) {
  spit(dir_ / "out/optout.txt", "BEFORE=2\nAFTER=2\n");
  EXPECT_EQ(failed_steps(), std::vector<int>{5});
}

TEST(Lab, GradeNeedsTheDirectory) {
  CliRun r = run_gpuops({"lab", "grade", "--dir", "/no/such/lab"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "gpuops: error: /no/such/lab: no such working directory\n");
  EXPECT_EQ(run_gpuops({"lab", "frobnicate"}).code, 2);
}

// A working directory without the scripts: steps 6 and 7 say which script is
// missing (not "got exit 127" from running it), the other steps still grade.
TEST_F(LabDir, MissingScriptsFailSteps6And7ByName) {
  fs::remove(dir_ / "operand-audit.sh");
  fs::remove(dir_ / "order-check.sh");
  auto [lines, code] = grade();
  ASSERT_EQ(lines.size(), 8u) << last_output_;
  EXPECT_EQ(code, 1);
  EXPECT_EQ(lines[5], "FAIL step 6: operand-audit.sh is missing");
  EXPECT_EQ(lines[6], "FAIL step 7: order-check.sh is missing");
  for (int i : {0, 1, 2, 3, 4, 7}) EXPECT_EQ(lines[i].substr(0, 4), "PASS") << lines[i];
}

// An out/ file that differs is shown as a diff below the step's line.
TEST_F(LabDir, MatrixFromMemoryFailsStep8WithADiff) {
  std::string m = slurp(dir_ / "out/matrix.txt");
  spit(dir_ / "out/matrix.txt", std::regex_replace(m, std::regex("TOTAL_PODS=9"), "TOTAL_PODS=10"));
  auto [lines, code] = grade();
  EXPECT_EQ(code, 1);
  ASSERT_EQ(lines.size(), 8u) << last_output_;
  EXPECT_EQ(lines[7],
            "FAIL step 8: out/matrix.txt does not match gpuops matrix on the cluster now (was it written "
            "from memory?):");
  EXPECT_NE(last_output_.find("\n    -TOTAL_PODS=9\n    +TOTAL_PODS=10\n"), std::string::npos) << last_output_;
}

// A file right but for its line endings (written on Windows, CRLF) fails, and
// the diff shows why: the carriage returns are printed as \r.
TEST_F(LabDir, CrlfLineEndingsFailWithAVisibleDiff) {
  std::string d = slurp(dir_ / "out/driver.txt");
  spit(dir_ / "out/driver.txt", std::regex_replace(d, std::regex("\n"), "\r\n"));
  auto [lines, code] = grade();
  EXPECT_EQ(code, 1);
  ASSERT_EQ(lines.size(), 8u) << last_output_;
  EXPECT_TRUE(lines[2].starts_with("FAIL step 3: out/driver.txt does not match the API")) << lines[2];
  EXPECT_NE(
      last_output_.find("\n    -DESIRED=1\n    -SKIPPED=lab-node-1\n    +DESIRED=1\\r\n    +SKIPPED=lab-node-1\\r\n"),
      std::string::npos)
      << last_output_;
}

// A learner's script that hangs is killed at --script-timeout with everything
// it started, and grading goes on: all eight lines, exit 1. operand-audit.sh
// hangs in a `sleep` that is bash's grandchild (it would keep the output pipe
// open after bash is killed); order-check.sh in a background `sleep` it waits
// for, which also keeps it from being run on the other nodes.
TEST_F(LabDir, HangingScriptsAreKilledAtTheScriptTimeout) {
  auto [reference, reference_code] = grade();
  ASSERT_EQ(reference.size(), 8u) << last_output_;
  ASSERT_EQ(reference_code, 0) << last_output_;
  const fs::path pids = dir_ / "pids";
  const std::string to_pids = " >> '" + pids.string() + "'\n";
  spit(dir_ / "operand-audit.sh", "#!/usr/bin/env bash\necho $$" + to_pids +
                                      "echo 'waiting for the API server' >&2\n"
                                      "bash -c 'echo $$ >> \"$0\"; exec sleep 100000' '" +
                                      pids.string() + "'\n");
  spit(dir_ / "order-check.sh",
       "#!/usr/bin/env bash\necho $$" + to_pids + "sleep 100000 &\necho $!" + to_pids + "wait\n");
  // Without a time limit the grade would never return: after 30 s this kills
  // what the scripts started, so that such a grader fails this test instead
  // of hanging it.
  std::atomic<bool> done{false};
  std::thread watchdog([&] {
    auto rescue = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    for (; !done; std::this_thread::sleep_for(std::chrono::milliseconds(100)))
      if (std::chrono::steady_clock::now() > rescue)
        for (pid_t pid : read_pids(pids)) ::kill(pid, SIGKILL);
  });
  auto start = std::chrono::steady_clock::now();
  CliRun r = run_gpuops({"lab", "grade", "--dir", dir_.string(), "--script-timeout", "1"});
  auto took = std::chrono::steady_clock::now() - start;
  done = true;
  watchdog.join();

  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(r.err, "");
  std::string want;
  for (int i : {0, 1, 2, 3, 4}) want += reference[i] + "\n";
  want +=
      "FAIL step 6: operand-audit.sh did not finish within 1 s (killed)\n"
      "    its stderr:\n"
      "      waiting for the API server\n"
      "FAIL step 7: order-check.sh grader-probe did not finish within 1 s (killed); not run on the other nodes\n";
  want += reference[7] + "\n";
  EXPECT_EQ(r.out, want);
  // Two runs of one second each, and the grading around them.
  EXPECT_LT(took, std::chrono::seconds(15));
  // Both bashes and both sleeps, and none of them is left.
  std::vector<pid_t> started = read_pids(pids);
  EXPECT_EQ(started.size(), 4u) << slurp(pids);
  for (pid_t pid : started) EXPECT_TRUE(dies(pid)) << "pid " << pid << " outlived the grade";
}

// What a script leaves running in the background when it exits is killed;
// the script's own result counts as usual.
TEST_F(LabDir, WhatAScriptLeavesRunningIsKilled) {
  const fs::path pids = dir_ / "pids";
  std::string s = slurp(dir_ / "operand-audit.sh");
  s.insert(s.find('\n') + 1, "sleep 100000 >/dev/null 2>&1 &\necho $! >> '" + pids.string() + "'\n");
  spit(dir_ / "operand-audit.sh", s);
  auto [lines, code] = grade();
  ASSERT_EQ(lines.size(), 8u) << last_output_;
  for (const auto& l : lines) EXPECT_TRUE(l.starts_with("PASS")) << l;
  EXPECT_EQ(code, 0);
  std::vector<pid_t> started = read_pids(pids);
  ASSERT_EQ(started.size(), 1u) << slurp(pids);
  EXPECT_TRUE(dies(started[0])) << "pid " << started[0] << " outlived the grade";
}

TEST(Lab, ScriptTimeoutIsAPositiveWholeNumberOfSeconds) {
  const std::string dir = fs::temp_directory_path().string();
  for (std::string v : {"0", "-5", "1.5", "abc", "", "60s", "99999999999"}) {
    CliRun r = run_gpuops({"lab", "grade", "--dir", dir, "--script-timeout=" + v});
    EXPECT_EQ(r.code, 2) << v;
    EXPECT_EQ(r.err, "gpuops lab: --script-timeout must be a positive whole number of seconds, not \"" + v +
                         "\"\nRun 'gpuops lab --help' for usage.\n");
    EXPECT_EQ(r.out, "") << v;
  }
  CliRun help = run_gpuops({"lab", "grade", "--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("--script-timeout"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("(default: 60)"), std::string::npos) << help.out;
}

// --dir is required and not empty: without it `lab run` wrote k8s/ and out/
// into the current directory. Checked from an empty current directory, which
// must stay empty.
TEST(Lab, DirIsRequiredAndNotEmpty) {
  const fs::path here = fs::current_path();
  const fs::path cwd = fs::temp_directory_path() / ("gpuops-lab-cwd-" + std::to_string(::getpid()));
  fs::remove_all(cwd);
  fs::create_directories(cwd);
  fs::current_path(cwd);
  const std::string hint = "\nRun 'gpuops lab --help' for usage.\n";
  for (const char* cmd : {"run", "grade"}) {
    CliRun missing = run_gpuops({"lab", cmd});
    EXPECT_EQ(missing.code, 2) << cmd;
    EXPECT_EQ(missing.err, "gpuops lab: --dir DIR is required: the lab's working directory" + hint) << cmd;
    EXPECT_EQ(missing.out, "") << cmd;
    CliRun empty = run_gpuops({"lab", cmd, "--dir", ""});
    EXPECT_EQ(empty.code, 2) << cmd;
    EXPECT_EQ(empty.err, "gpuops lab: --dir is empty: give the lab's working directory" + hint) << cmd;
    EXPECT_EQ(empty.out, "") << cmd;
  }
  EXPECT_EQ(run_gpuops({"lab", "run", "--dir", "", "--overwrite", "--quiet"}).code, 2);
  EXPECT_TRUE(fs::is_empty(cwd));
  fs::current_path(here);
  fs::remove_all(cwd);
  // The usage and the option's help say so.
  EXPECT_NE(run_gpuops({"lab", "--help"}).out.find("gpuops lab run --dir DIR"), std::string::npos);
  CliRun help = run_gpuops({"lab", "run", "--help"});
  EXPECT_NE(help.out.find("scripts); required"), std::string::npos) << help.out;
  EXPECT_EQ(help.out.find("(default: .)"), std::string::npos) << help.out;
}

// A --dir that names a file is refused before anything is done.
TEST(Lab, DirMustBeADirectory) {
  const fs::path file = fs::temp_directory_path() / ("gpuops-lab-file-" + std::to_string(::getpid()));
  spit(file, "not a lab\n");
  for (std::vector<std::string> args : {std::vector<std::string>{"lab", "run", "--dir", file.string()},
                                        {"lab", "run", "--dir", file.string(), "--overwrite"},
                                        {"lab", "grade", "--dir", file.string()}}) {
    CliRun r = run_gpuops(args);
    EXPECT_EQ(r.code, 2) << args[1];
    EXPECT_EQ(r.err, "gpuops: error: " + file.string() + ": not a directory\n") << args[1];
    EXPECT_EQ(r.out, "") << args[1];
  }
  EXPECT_EQ(slurp(file), "not a lab\n");
  fs::remove(file);
}

// ------------------------------------------------------------ lab grade's own files

// The scripts' kubeconfig lies in a directory made with mkdtemp (not
// gpuops-grade-<pid>, whatever is there), mode 0700, holding nothing but the
// kubeconfig: no reference answers a script could copy or run. It is gone
// after the grade.
TEST_F(LabDir, ScratchDirIsPrivateAndHoldsNoReference) {
  // What a predictable name would have used: a symbolic link planted there.
  const fs::path planted = fs::temp_directory_path() / ("gpuops-grade-" + std::to_string(::getpid()));
  const fs::path bait = dir_ / "bait";
  fs::create_directories(bait);
  fs::remove_all(planted);
  fs::create_directory_symlink(bait, planted);
  const fs::path seen = dir_ / "seen";
  std::string audit = slurp(dir_ / "operand-audit.sh");
  audit.insert(
      audit.find('\n') + 1,
      "d=$(dirname \"$KUBECONFIG\"); { echo \"$d\"; stat -c %a \"$d\"; ls -A \"$d\"; } > '" + seen.string() + "'\n");
  spit(dir_ / "operand-audit.sh", audit);
  // A script that runs the reference solution, were it there.
  spit(dir_ / "order-check.sh",
       "#!/usr/bin/env bash\nexec bash \"$(dirname \"$KUBECONFIG\")/reference/order-check.sh\" \"$@\"\n");
  auto [lines, code] = grade();
  fs::remove(planted);
  ASSERT_EQ(lines.size(), 8u) << last_output_;
  EXPECT_EQ(code, 1);
  for (int i : {0, 1, 2, 3, 4, 5, 7}) EXPECT_TRUE(lines[i].starts_with("PASS")) << lines[i];
  EXPECT_TRUE(lines[6].starts_with("FAIL step 7: order-check.sh grader-probe: expected")) << lines[6];
  EXPECT_TRUE(fs::is_empty(bait));
  std::vector<std::string> s;
  std::istringstream in(slurp(seen));
  for (std::string l; std::getline(in, l);) s.push_back(l);
  ASSERT_EQ(s.size(), 3u) << slurp(seen);
  EXPECT_NE(s[0], planted.string());
  EXPECT_TRUE(fs::path(s[0]).filename().string().starts_with("gpuops-grade-")) << s[0];
  EXPECT_EQ(s[1], "700");
  EXPECT_EQ(s[2], "kubeconfig");
  EXPECT_FALSE(fs::exists(s[0])) << s[0];
}

// --context: the kubeconfig copy beside the user's is created, never one
// found there (a symbolic link planted at the old predictable name is not
// written through), and is gone afterwards.
TEST_F(LabDir, ContextKubeconfigIsCreatedExclusively) {
  const fs::path kdir = dir_ / "kube";
  fs::create_directories(kdir);
  YAML::Node kc;
  kc["apiVersion"] = "v1";
  kc["kind"] = "Config";
  YAML::Node cluster, user;
  cluster["name"] = "c";
  cluster["cluster"]["server"] = "https://127.0.0.1:1";
  cluster["cluster"]["insecure-skip-tls-verify"] = true;
  user["name"] = "u";
  user["user"]["token"] = "t";
  kc["clusters"].push_back(cluster);
  kc["users"].push_back(user);
  for (const char* name : {"a", "b"}) {
    YAML::Node ctx;
    ctx["name"] = name;
    ctx["context"]["cluster"] = "c";
    ctx["context"]["user"] = "u";
    kc["contexts"].push_back(ctx);
  }
  kc["current-context"] = "a";
  spit(kdir / "config", YAML::Dump(kc) + "\n");
  spit(kdir / "victim", "precious\n");
  fs::create_symlink(kdir / "victim", kdir / (".gpuops-grade-" + std::to_string(::getpid()) + ".kubeconfig"));
  CliRun r = run_gpuops({"lab", "grade", "--dir", dir_.string(), "--kubeconfig", (kdir / "config").string(),
                         "--context", "b", "--script-timeout", "5"});
  EXPECT_EQ(r.code, 3) << r.out << r.err;  // nothing listens there
  EXPECT_EQ(slurp(kdir / "victim"), "precious\n");
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(kdir)) left.push_back(e.path().filename().string());
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{".gpuops-grade-" + std::to_string(::getpid()) + ".kubeconfig", "config",
                                            "victim"}));
}

// A SIGTERM while a script runs: the scratch directory is removed, the
// script and what it started (one that left its session too) are killed,
// and gpuops dies of the signal.
TEST_F(LabDir, SigtermRemovesTheScratchDirAndKillsTheScripts) {
  const fs::path seen = dir_ / "seen", pids = dir_ / "pids";
  spit(dir_ / "operand-audit.sh", "#!/usr/bin/env bash\ndirname \"$KUBECONFIG\" > '" + seen.string() +
                                      "'\nsetsid sleep 1000 >/dev/null 2>&1 &\necho $! >> '" + pids.string() +
                                      "'\necho $$ >> '" + pids.string() + "'\nsleep 1000\n");
  pid_t child = ::fork();
  if (child == 0) {
    int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::execl(GPUOPS_BINARY, GPUOPS_BINARY, "lab", "grade", "--dir", dir_.c_str(), "--script-timeout", "60",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ASSERT_GT(child, 0);
  for (int i = 0; i < 600 && read_pids(pids).size() < 2; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::vector<pid_t> started = read_pids(pids);
  ::kill(child, SIGTERM);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_EQ(started.size(), 2u) << slurp(pids);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << status;
  std::string scratch = slurp(seen);
  while (scratch.ends_with("\n")) scratch.pop_back();
  ASSERT_FALSE(scratch.empty());
  EXPECT_FALSE(fs::exists(scratch)) << scratch;
  for (pid_t pid : started) {
    bool gone = dies(pid);
    if (!gone) ::kill(pid, SIGKILL);
    EXPECT_TRUE(gone) << "pid " << pid << " outlived the grade";
  }
}

// ------------------------------------------------------------ an untrusted directory

// A FIFO, a device, a file outside the directory (through a symbolic link),
// a script that leads outside: none is read or run, each step says which file
// and why, and nothing of the outside file is printed. A symbolic link that
// stays inside is followed.
TEST_F(LabDir, UntrustedFilesAreRefusedByName) {
  const fs::path outside = fs::path(dir_.string() + "-outside");
  fs::create_directories(outside);
  spit(outside / "secret.txt", "DESIRED=1\nSECRET-42\n");
  fs::copy_file(dir_ / "order-check.sh", outside / "order-check.sh");
  fs::remove(dir_ / "out/matrix.txt");
  ASSERT_EQ(::mkfifo((dir_ / "out/matrix.txt").c_str(), 0600), 0);
  fs::remove(dir_ / "out/driver.txt");
  fs::create_symlink(outside / "secret.txt", dir_ / "out/driver.txt");
  fs::remove(dir_ / "k8s/gfd-ds.yaml");
  fs::create_symlink("/dev/zero", dir_ / "k8s/gfd-ds.yaml");
  fs::remove(dir_ / "order-check.sh");
  fs::create_symlink(outside / "order-check.sh", dir_ / "order-check.sh");
  fs::rename(dir_ / "out/roster.txt", dir_ / "roster-copy.txt");
  fs::create_symlink("../roster-copy.txt", dir_ / "out/roster.txt");
  // Should the grader open the FIFO and wait for a writer, this one ends the
  // wait after 30 s, so that the test fails instead of hanging.
  std::atomic<bool> done{false};
  std::thread rescue([&] {
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!done && std::chrono::steady_clock::now() < end) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (!done) ::close(::open((dir_ / "out/matrix.txt").c_str(), O_WRONLY | O_NONBLOCK));
  });
  auto [lines, code] = grade();
  done = true;
  rescue.join();
  fs::remove_all(outside);
  ASSERT_EQ(lines.size(), 8u) << last_output_;
  EXPECT_EQ(code, 1);
  EXPECT_TRUE(lines[0].starts_with("PASS step 1")) << lines[0];
  EXPECT_EQ(lines[2], "FAIL step 3: out/driver.txt leads outside the working directory (to " +
                          (outside / "secret.txt").string() + "): not read");
  EXPECT_EQ(lines[3], "FAIL step 4: k8s/gfd-ds.yaml is a character device, not a regular file: not read");
  EXPECT_EQ(lines[6].substr(0, lines[6].find(';')),
            "FAIL step 7: order-check.sh leads outside the working directory (to " +
                (outside / "order-check.sh").string() + "): not run");
  EXPECT_EQ(lines[7], "FAIL step 8: out/matrix.txt is a FIFO, not a regular file: not read");
  EXPECT_EQ(last_output_.find("SECRET-42"), std::string::npos) << last_output_;
}

// A hard link is another name of a file that may be anywhere (a learner's
// out/roster.txt hard-linked to a file only root reads would be printed in
// the FAIL diff): refused as a link out of the directory is, by name.
TEST_F(LabDir, HardLinkedFilesAreRefused) {
  const fs::path outside = fs::path(dir_.string() + "-outside");
  fs::create_directories(outside);
  spit(outside / "secret.txt", "SECRET-42\n");
  fs::remove(dir_ / "out/roster.txt");
  fs::create_hard_link(outside / "secret.txt", dir_ / "out/roster.txt");
  auto [lines, code] = grade();
  fs::remove_all(outside);
  ASSERT_EQ(lines.size(), 8u) << last_output_;
  EXPECT_EQ(code, 1);
  EXPECT_EQ(
      lines[0],
      "FAIL step 1: out/roster.txt has 2 hard links, so it may be a file outside the working directory: not read");
  EXPECT_EQ(last_output_.find("SECRET-42"), std::string::npos) << last_output_;
}

// A script that prints without end, and an out/ file of megabytes: at most
// 1 MiB of each is kept, the step says where it was cut, and the grade shows
// a clipped diff, not the megabytes.
TEST_F(LabDir, HugeOutputsAreCutAndClipped) {
  spit(dir_ / "operand-audit.sh", "#!/usr/bin/env bash\nhead -c 3000000 /dev/zero | tr '\\0' x\nexit 0\n");
  std::string big;
  for (int i = 0; i < 1000000; ++i) big += "x\n";
  spit(dir_ / "out/matrix.txt", big);
  auto [lines, code] = grade();
  ASSERT_EQ(lines.size(), 8u) << last_output_.substr(0, 2000);
  EXPECT_EQ(code, 1);
  EXPECT_LT(last_output_.size(), 32u * 1024) << last_output_.substr(0, 2000);
  EXPECT_TRUE(lines[5].starts_with("FAIL step 6: ")) << lines[5];
  EXPECT_NE(lines[5].find("operand-audit.sh with node grader-probe added"), std::string::npos) << lines[5];
  EXPECT_NE(last_output_.find("more characters not shown); its stdout was cut at 1048576 bytes (the rest discarded)"),
            std::string::npos)
      << last_output_.substr(0, 4000);
  EXPECT_EQ(lines[7],
            "FAIL step 8: out/matrix.txt does not match gpuops matrix on the cluster now (was it written "
            "from memory?) (only its first 1048576 bytes were read):");
  EXPECT_NE(last_output_.find("more lines not shown"), std::string::npos);
}

// Children that leave the script's session (setsid), directly or after a
// double fork, do not outlive the grade.
TEST_F(LabDir, WhatLeavesTheScriptsSessionIsKilled) {
  const fs::path pids = dir_ / "pids";
  std::string s = slurp(dir_ / "operand-audit.sh");
  s.insert(s.find('\n') + 1, "setsid sleep 1000 >/dev/null 2>&1 &\necho $! >> '" + pids.string() +
                                 "'\n( setsid bash -c 'sleep 1000 >/dev/null 2>&1 & echo $! >> \"$0\"' '" +
                                 pids.string() + "' & )\n");
  spit(dir_ / "operand-audit.sh", s);
  auto [lines, code] = grade();
  ASSERT_EQ(lines.size(), 8u) << last_output_;
  for (const auto& l : lines) EXPECT_TRUE(l.starts_with("PASS")) << l;
  EXPECT_EQ(code, 0);
  std::vector<pid_t> started = read_pids(pids);
  ASSERT_EQ(started.size(), 2u) << slurp(pids);
  for (pid_t pid : started) {
    bool gone = dies(pid);
    if (!gone) ::kill(pid, SIGKILL);
    EXPECT_TRUE(gone) << "pid " << pid << " outlived the grade";
  }
}

namespace {

// The ninth act: the simulated operator on the lab's nodes. Expected lines
// follow labelGPUNodes (addGPUStateLabels keeps a value set by hand;
// v26.7's updateGPUStateLabels removes every deploy label from a node
// without gpu.present=true, v25.3 leaves it) and DaemonSet() updating by
// name, which the API server refuses for the lab's GFD (its selector lacks
// app.kubernetes.io/part-of and spec.selector is immutable).
TEST(LabOperatorAct, KeepsTheHandMadeFalsesAndTakesOverTheDaemonSets) {
  fs::path dir = fs::temp_directory_path() / ("gpuops-lab-operator-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  CliRun r = run_gpuops({"lab", "run", "--dir", dir.string(), "--operator"});
  fs::remove_all(dir);
  ASSERT_EQ(r.code, 0) << r.err;
  auto has = [&](const std::string& line) { return r.out.find("  " + line + "\n") != std::string::npos; };
  EXPECT_TRUE(has("== Step 9: the real GPU Operator (v26.7, simulated) on the same nodes") ||
              r.out.find("== Step 9: the real GPU Operator (v26.7, simulated) on the same nodes\n") !=
                  std::string::npos)
      << r.out;
  EXPECT_TRUE(
      has("lab-node-1 nvidia.com/gpu.deploy.driver=false kept (the operator adds only missing keys: a value "
          "set by hand stays)"))
      << r.out;
  EXPECT_TRUE(has("lab-node-0 nvidia.com/gpu.deploy.operator-validator=true added by the operator")) << r.out;
  EXPECT_TRUE(has("lab-node-0 nvidia.com/gpu.deploy.client=true added by the operator")) << r.out;
  EXPECT_TRUE(
      has("lab-node-2 nvidia.com/gpu.deploy.device-plugin=true removed (the node has no "
          "nvidia.com/gpu.present=true: no NFD GPU label, so not a GPU node)"))
      << r.out;
  EXPECT_TRUE(has("DaemonSet nvidia-device-plugin-daemonset: taken over by the operator (updated by name)")) << r.out;
  EXPECT_TRUE(
      has("DaemonSet gpu-feature-discovery: left as the lab wrote it (the operator could not update it: see "
          "the ClusterPolicy below)"))
      << r.out;
  EXPECT_TRUE(
      has("ClusterPolicy cluster-policy status.state notReady: Failed to reconcile gpu-feature-discovery: "
          "spec.selector: field is immutable"))
      << r.out;

  fs::remove_all(dir);
  CliRun old = run_gpuops({"lab", "run", "--dir", dir.string(), "--operator=v25.3", "--overwrite"});
  fs::remove_all(dir);
  ASSERT_EQ(old.code, 0) << old.err;
  EXPECT_NE(old.out.find("  lab-node-2 nvidia.com/gpu.deploy.device-plugin=true kept\n"), std::string::npos) << old.out;
  EXPECT_EQ(old.out.find("nvidia.com/gpu.deploy.client"), std::string::npos) << old.out;

  CliRun bad = run_gpuops({"lab", "run", "--dir", dir.string(), "--operator=v22.9"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(
      bad.err.find("--operator: \"v22.9\": supported values: v23.9, v24.3, v24.6, v24.9, v25.3, v25.10, v26.3, v26.7"),
      std::string::npos)
      << bad.err;
  fs::remove_all(dir);
}

}  // namespace
