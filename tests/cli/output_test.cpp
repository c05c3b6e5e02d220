// -o yaml (cli/output.h): for every command with -o json, the YAML reads
// back, as kubectl reads YAML (core::read_documents), as the very document
// -o json prints, with the same exit code; strings YAML would take for
// other types stay strings.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "../common/cli_run.h"
#include "cli/output.h"
#include "core/codec/documents.h"

namespace {

using gpuops::testing::run_gpuops;
namespace json = boost::json;

const std::string kCases = std::string(GPUOPS_SOURCE_DIR) + "/tests/data/cases/";

json::value read_yaml(const std::string& text) {
  auto docs = gpuops::core::read_documents(text, "out.yaml");
  EXPECT_EQ(docs.size(), 1u) << text;
  return docs.empty() ? json::value() : docs[0].value;
}

TEST(Output, YamlIsTheJsonDocumentForEveryCommand) {
  const std::string lab = kCases + "lab-final-state/cluster.json";
  const std::string init = kCases + "stuck-in-init/cluster.json";
  std::vector<std::vector<std::string>> commands = {
      {"roster"},
      {"audit", "--snapshot", lab},
      {"matrix", "--snapshot", lab},
      {"diagnose", "--snapshot", lab},
      {"diagnose", "--snapshot", init},
      {"explain", "lab-node-1", "driver", "--snapshot", lab},
      {"plan", "--snapshot", lab, "label", "node", "lab-node-0", "nvidia.com/gpu.deploy.driver=false", "--overwrite"},
  };
  for (auto cmd : commands) {
    std::string what = cmd[0];
    cmd.push_back("-o");
    cmd.push_back("json");
    auto j = run_gpuops(cmd);
    cmd.back() = "yaml";
    auto y = run_gpuops(cmd);
    EXPECT_EQ(y.code, j.code) << what << y.err;
    ASSERT_FALSE(j.out.empty()) << what << j.err;
    EXPECT_EQ(read_yaml(y.out), json::parse(j.out)) << what << "\n" << y.out;
    EXPECT_NE(y.out.front(), '{') << what;  // block style, not JSON
  }
}

TEST(Output, StringsThatLookLikeOtherTypesStayStrings) {
  json::value doc = json::parse(
      R"({"a":"true","b":"yes","c":"off","d":"null","e":"","f":"0x1F","g":"1_000","h":"12:30","i":"2026-12-03",)"
      R"("j":"-","k":"a: b","l":"x #y","m":"line\nbreak","n":"- item","o":"~","p":".5","q":"nvidia.com/gpu.deploy.driver",)"
      R"("r":[],"s":{},"t":[1,2.5,true,null,"3"],"u":{"true":"key"}})");
  std::ostringstream out;
  gpuops::cli::write_document(out, doc, "yaml");
  EXPECT_EQ(read_yaml(out.str()), doc) << out.str();
  EXPECT_NE(out.str().find("q: nvidia.com/gpu.deploy.driver\n"), std::string::npos) << out.str();
  EXPECT_THROW(gpuops::cli::write_document(out, doc, "xml"), std::invalid_argument);
}

}  // namespace

namespace {

// matrix -o wide: kubectl's table layout (text/tabwriter: min width 10,
// padding 3, last column unpadded), one row per node, and in each cell the
// operand's pod STATUS as kubectl get pods prints it; "-" where no DaemonSet
// wants the node. The lab's final state: every present pod is Running (the
// matrix's yes), the rest are opted out, tainted away or not GPU nodes.
TEST(Output, MatrixWideIsATableOfPodStatuses) {
  const std::string lab = kCases + "lab-final-state/cluster.json";
  auto w = run_gpuops({"matrix", "--snapshot", lab, "-o", "wide"});
  EXPECT_EQ(w.code, 0) << w.err;
  auto j = run_gpuops({"matrix", "--snapshot", lab, "-o", "json"});
  json::value m = json::parse(j.out);
  std::istringstream lines(w.out);
  std::string header;
  std::getline(lines, header);
  EXPECT_EQ(header, "NODE         STATUS    DRIVER    TOOLKIT   DEVICE-PLUGIN   GFD       DCGM");
  const std::vector<std::string> cols = {"driver", "toolkit", "device-plugin", "gfd", "dcgm"};
  for (const auto& row : m.at("nodes").as_array()) {
    std::string line;
    ASSERT_TRUE(std::getline(lines, line));
    std::istringstream cells(line);
    std::string node, status;
    cells >> node >> status;
    EXPECT_EQ(node, row.at("node").as_string());
    EXPECT_EQ(status, "Ready");
    for (const auto& c : cols) {
      std::string cell;
      cells >> cell;
      EXPECT_EQ(cell, row.at("operands").at(c).as_bool() ? "Running" : "-") << node << " " << c;
    }
  }
  // A pod waiting in its init container is shown as kubectl shows it.
  auto init = run_gpuops({"matrix", "--snapshot", kCases + "stuck-in-init/cluster.json", "-o", "wide"});
  EXPECT_NE(init.out.find("   Init:0/1"), std::string::npos) << init.out;
  // Only the matrix is a table.
  auto a = run_gpuops({"audit", "--snapshot", lab, "-o", "wide"});
  EXPECT_EQ(a.code, 2);
  EXPECT_NE(a.err.find("-o wide is for matrix"), std::string::npos);
}

}  // namespace
