// `gpuops lab run --html` in headless Chromium: the file alone (no network),
// its eight steps, the cells step 5 changed marked with why; screenshot in
// GPUOPS_ARTIFACTS_DIR.
#include <gtest/gtest.h>

#include <cstdlib>

#include "tests/browser/cdp.h"
#include "tests/serve/helpers.h"

namespace gpuops {
namespace {

using browser_testing::Chromium;

TEST(ReportBrowser, TheLabReportShowsTheEightStepsAndWhatEachChanged) {
  serve_testing::TempDir d;
  std::string html = d.path + "/lab.html";
  std::string cmd = std::string(GPUOPS_BINARY) + " lab run --quiet --dir " + d.path + "/work --html " + html;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::string text = serve_testing::read_file(html);
  // Self-contained: nothing fetched, no script at all.
  EXPECT_EQ(text.find("<script"), std::string::npos);
  EXPECT_EQ(text.find("<link"), std::string::npos);
  EXPECT_EQ(text.find("src="), std::string::npos);
  std::unique_ptr<Chromium> c;
  try {
    c = std::make_unique<Chromium>();
  } catch (const std::exception& e) {
    FAIL() << "headless Chromium cannot start: " << e.what();
  }
  c->open("file://" + html);
  ASSERT_GE(c->wait_for("document.readyState === 'complete' && document.querySelectorAll('section.step').length > 0",
                        std::chrono::seconds(10)),
            0);
  EXPECT_EQ(c->eval("document.querySelectorAll('section.step').length"), 8);
  EXPECT_EQ(c->eval("document.querySelector('#step-5 h2').innerText"), "Step 5: lower a label, the pod goes away");
  EXPECT_EQ(c->eval("document.querySelector('#step-5 pre.commands').innerText.trim()"),
            "$ kubectl apply -f k8s/dcgm-ds.yaml\n"
            "$ kubectl label node lab-node-1 nvidia.com/gpu.deploy.dcgm-exporter=false --overwrite");
  // LAB.md step 5: dcgm-exporter's DaemonSet comes (every cell of its row
  // changed since step 4, marked; the CSS upper-cases the mark), lab-node-1
  // opts out (its label is "false"), lab-node-0 runs it; the inline CSS is
  // applied.
  std::string cell = "document.querySelector('#step-5 td[data-node=\"lab-node-1\"][data-operand=\"dcgm-exporter\"]')";
  EXPECT_EQ(c->eval(cell + ".innerText.replace(/\\s+/g, ' ').trim()"), "not wanted absent CHANGED");
  EXPECT_EQ(c->eval("document.querySelector('#step-5 td[data-node=\"lab-node-0\"][data-operand=\"dcgm-exporter\"]')"
                    ".innerText.replace(/\\s+/g, ' ').trim()"),
            "wanted Running CHANGED");
  EXPECT_EQ(c->eval("getComputedStyle(document.querySelector('#step-5 td.pod-running')).backgroundColor"),
            "rgb(201, 239, 208)");
  std::string changes =
      boost::json::value_to<std::string>(c->eval("document.querySelector('#step-5 ul.changes').innerText"));
  EXPECT_NE(changes.find("lab-node-1 label nvidia.com/gpu.deploy.dcgm-exporter=\"false\" (was \"true\")"),
            std::string::npos)
      << changes;
  EXPECT_NE(changes.find("lab-node-0 dcgm-exporter pod created, Running"), std::string::npos) << changes;
  // Step 7 puts the device plugin on lab-node-2 (no toolkit there).
  EXPECT_EQ(c->eval("document.querySelector('#step-5 td[data-operand=\"driver\"]').classList.contains('changed')"),
            false);
  EXPECT_EQ(c->eval("document.querySelector('#step-7 td[data-node=\"lab-node-2\"][data-operand=\"device-plugin\"]')"
                    ".classList.contains('changed')"),
            true);
  c->eval("document.getElementById('step-5').scrollIntoView()");
  c->screenshot(std::string(GPUOPS_ARTIFACTS_DIR) + "/lab-report-step5.png");
}

}  // namespace
}  // namespace gpuops
