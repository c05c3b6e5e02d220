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
#include "core/documents.h"

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
