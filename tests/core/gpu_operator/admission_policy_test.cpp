// The admission policy is generated from the catalog and the audit's own
// rules (core/gpu_operator/admission_policy.h): which rules a catalog gives,
// the value rule agreeing with classify_label on every value, and the
// options the API server would refuse. That the API server enforces it as
// intended is scripts/policy-e2e.sh's (the end-to-end run).
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <regex>
#include <string>
#include <vector>

#include "core/base/errors.h"
#include "core/gpu_operator/admission_policy.h"
#include "core/gpu_operator/gpu_node_rules.h"
#include "core/gpu_operator/operands.h"

using namespace gpuops;

namespace {

std::vector<std::string> rule_ids(const core::Catalog& c) {
  std::vector<std::string> out;
  for (const auto& r : core::admission_policy_rules(c)) out.push_back(r.id);
  return out;
}

std::string expression(const boost::json::array& objects, size_t i) {
  return std::string(objects[0].at("spec").at("validations").at(i).at("expression").as_string());
}

std::string field_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const core::InputError& e) {
    return e.field() + ": " + e.message();
  }
  return "accepted";
}

}  // namespace

TEST(AdmissionPolicy, TheRulesComeFromTheCatalogsNeeds) {
  EXPECT_EQ(rule_ids(core::load_catalog("gpu-operator")),
            (std::vector<std::string>{"deploy-label-value", "workload-config-value", "needs-container-toolkit"}));
  // b is needed by a and c; the driver's "false" is the host driver's marker,
  // never a rule.
  core::Catalog c = core::parse_catalog(
      "operands:\n"
      "  - {name: driver, label: nvidia.com/gpu.deploy.driver, daemonset: d0}\n"
      "  - {name: a, label: nvidia.com/gpu.deploy.a, daemonset: d1, needs: [b, driver]}\n"
      "  - {name: b, label: nvidia.com/gpu.deploy.b, daemonset: d2}\n"
      "  - {name: c, label: nvidia.com/gpu.deploy.c, daemonset: d3, needs: [b]}\n",
      "c.yaml");
  EXPECT_EQ(rule_ids(c), (std::vector<std::string>{"deploy-label-value", "workload-config-value", "needs-b"}));
  auto objects = core::admission_policy(c, {});
  ASSERT_EQ(objects.size(), 2u);
  std::string need = expression(objects, 2);
  EXPECT_NE(need.find("['nvidia.com/gpu.deploy.a', 'nvidia.com/gpu.deploy.c']"), std::string::npos) << need;
  EXPECT_NE(need.find("'gpuops/on-host.b' in variables.labels"), std::string::npos) << need;
}

// One label placing two operands (the device plugin's, also the MPS control
// daemon's) is listed once.
TEST(AdmissionPolicy, ALabelSharedByTwoDependentsIsListedOnce) {
  auto objects = core::admission_policy(core::load_catalog("gpu-operator"), {});
  std::string need = expression(objects, 2);
  const std::string dp = "'nvidia.com/gpu.deploy.device-plugin',";
  size_t first = need.find(dp);
  ASSERT_NE(first, std::string::npos) << need;
  size_t list_end = need.find(']', first);
  EXPECT_EQ(need.find(dp, first + 1) > list_end || need.find(dp, first + 1) == std::string::npos, true) << need;
}

// The value rule is classify_label's table: every value classify_label
// reads as written by the operator or a helper matches, every other value
// does not (RE2 and ECMAScript agree on this pattern: literals, '|', '.*').
TEST(AdmissionPolicy, TheValueRuleIsClassifyLabels) {
  auto objects = core::admission_policy(core::load_catalog("gpu-operator"), {});
  std::string e = expression(objects, 0);
  const std::string open = "matches('";
  size_t at = e.find(open);
  ASSERT_NE(at, std::string::npos) << e;
  size_t end = e.find("')", at);
  std::regex re(e.substr(at + open.size(), end - at - open.size()));
  for (const std::string v : {"true",
                              "false",
                              "",
                              "pre-installed",
                              "paused-for-driver-upgrade",
                              "paused-for-mig-change",
                              "paused-for-vgpu-change",
                              "true_paused-for-driver-upgrade",
                              "paused-for-mig-change_paused-for-driver-upgrade",
                              "True",
                              "TRUE",
                              "yes",
                              "enabled",
                              "1",
                              "truex",
                              "xtrue",
                              "paused-for-foo",
                              "paused-for-driver-upgradex",
                              "pre-installed_",
                              "False"}) {
    bool written = core::classify_label(v) != core::LabelClass::kOther;
    EXPECT_EQ(std::regex_match(v, re), written) << '"' << v << '"';
  }
}

// The workloads the rule allows are the ones workload_config reads.
TEST(AdmissionPolicy, TheWorkloadConfigRuleIsGetWorkloadConfigs) {
  auto objects = core::admission_policy(core::load_catalog("gpu-operator"), {});
  std::string e = expression(objects, 1);
  EXPECT_NE(e.find("in ['container', 'vm-passthrough', 'vm-vgpu']"), std::string::npos) << e;
  for (const std::string v : {"container", "vm-passthrough", "vm-vgpu"}) {
    core::Node n;
    n.metadata.labels[core::kWorkloadConfigLabel] = v;
    EXPECT_EQ(core::workload_config(n, true, "vm-vgpu"), v);
  }
  core::Node other;
  other.metadata.labels[core::kWorkloadConfigLabel] = "vm";
  EXPECT_EQ(core::workload_config(other, true, "vm-vgpu"), "vm-vgpu");  // the fallback the rule refuses
}

TEST(AdmissionPolicy, TheBindingCarriesTheActions) {
  core::AdmissionPolicyOptions o;
  o.validation_actions = {"Warn", "Audit"};
  o.name = "p";
  auto objects = core::admission_policy(core::load_catalog("gpu-operator"), o);
  const auto& b = objects[1].as_object();
  EXPECT_EQ(b.at("kind"), "ValidatingAdmissionPolicyBinding");
  EXPECT_EQ(b.at("spec").at("policyName"), "p");
  EXPECT_EQ(b.at("spec").at("validationActions"), (boost::json::array{"Warn", "Audit"}));
  EXPECT_EQ(objects[0].at("spec").at("matchConstraints").at("resourceRules").at(0).at("operations"),
            (boost::json::array{"UPDATE"}));
  o.rules = {"needs-container-toolkit"};
  objects = core::admission_policy(core::load_catalog("gpu-operator"), o);
  EXPECT_EQ(objects[0].at("spec").at("validations").as_array().size(), 1u);
  EXPECT_EQ(objects[0].at("metadata").at("annotations").at("gpuops/rules"), "needs-container-toolkit");
}

// As the API server refuses the binding (ValidateValidatingAdmissionPolicyBinding).
TEST(AdmissionPolicy, OptionsTheApiServerWouldRefuse) {
  core::Catalog c = core::load_catalog("gpu-operator");
  auto with = [&](std::vector<std::string> actions, std::vector<std::string> rules = {}) {
    core::AdmissionPolicyOptions o;
    o.validation_actions = std::move(actions);
    o.rules = std::move(rules);
    return field_of([&] { core::admission_policy(c, o); });
  };
  EXPECT_EQ(with({"Deny", "Warn"}),
            "--validation-actions: must not contain both Deny and Warn (repeating the same validation failure "
            "information in the API response and headers serves no purpose)");
  EXPECT_EQ(with({"deny"}), "--validation-actions: \"deny\": supported values: \"Audit\", \"Deny\", \"Warn\"");
  EXPECT_EQ(with({"Deny", "Deny"}), "--validation-actions: \"Deny\" is given twice");
  EXPECT_EQ(with({}), "--validation-actions: at least one of Deny, Warn, Audit");
  EXPECT_EQ(with({"Deny"}, {"needs-driver"}),
            "--rules: \"needs-driver\" is not a rule of this catalog (deploy-label-value, workload-config-value, "
            "needs-container-toolkit)");
}
