// gpuops policy: deploy/admission-policy.yaml is what it prints (regenerated
// here and compared), lint accepts it, and options the API server would
// refuse are exit 2. What the API server does with it is
// scripts/policy-e2e.sh's, on the real control plane.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include "../common/cli_run.h"

using gpuops::testing::CliRun;
using gpuops::testing::run_gpuops;

namespace {

std::string read(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The file without its leading comment lines.
std::string without_header(const std::string& text) {
  std::istringstream in(text);
  std::string out, line;
  bool header = true;
  while (std::getline(in, line)) {
    if (header && line.rfind("#", 0) == 0) continue;
    header = false;
    out += line + "\n";
  }
  return out;
}

}  // namespace

TEST(Policy, DeployShipsWhatTheCommandPrints) {
  CliRun r = run_gpuops({"policy"});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string path = std::string(GPUOPS_SOURCE_DIR) + "/deploy/admission-policy.yaml";
  EXPECT_EQ(without_header(read(path)), r.out)
      << "deploy/admission-policy.yaml is stale: regenerate it with gpuops policy (keep its comment header)";
  CliRun lint = run_gpuops({"lint", path});
  EXPECT_EQ(lint.code, 0) << lint.err;
}

TEST(Policy, JsonIsAListOfThePolicyAndItsBinding) {
  CliRun r = run_gpuops({"policy", "-o", "json", "--validation-actions", "Warn,Audit", "--name", "p"});
  ASSERT_EQ(r.code, 0) << r.err;
  boost::json::value v = boost::json::parse(r.out);
  EXPECT_EQ(v.at("kind"), "List");
  ASSERT_EQ(v.at("items").as_array().size(), 2u);
  EXPECT_EQ(v.at("items").at(0).at("kind"), "ValidatingAdmissionPolicy");
  EXPECT_EQ(v.at("items").at(1).at("spec").at("validationActions"), (boost::json::array{"Warn", "Audit"}));
}

TEST(Policy, ListRulesNamesEachRule) {
  CliRun r = run_gpuops({"policy", "--list-rules"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("deploy-label-value\t", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("\nneeds-container-toolkit\tdevice-plugin, gpu-feature-discovery, "), std::string::npos)
      << r.out;
}

TEST(Policy, WhatTheApiServerWouldRefuseIsExit2) {
  CliRun r = run_gpuops({"policy", "--validation-actions", "Deny,Warn"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "gpuops: error: --validation-actions: must not contain both Deny and Warn (repeating the same validation "
            "failure information in the API response and headers serves no purpose)\n");
  EXPECT_EQ(run_gpuops({"policy", "--rules", "nope"}).code, 2);
  EXPECT_EQ(run_gpuops({"policy", "-o", "wide"}).code, 2);
  EXPECT_EQ(run_gpuops({"policy", "--operands", "/no/such/catalog.yaml"}).code, 2);
}
