// The operand catalog: the built-in ones, and what a user's file may not say.
#include <gtest/gtest.h>

#include "core/errors.h"
#include "core/operands.h"

using namespace gpuops;

namespace {

core::InputError refused(const std::string& text) {
  try {
    core::parse_catalog(text, "c.yaml");
  } catch (const core::InputError& e) {
    return e;
  }
  ADD_FAILURE() << "accepted: " << text;
  return core::InputError("", 0, "", "");
}

const char* kOne = "operands:\n  - name: driver\n    label: nvidia.com/gpu.deploy.driver\n    daemonset: d\n";

}  // namespace

TEST(Catalog, BuiltinsLoad) {
  core::Catalog lab = core::load_catalog("lab");
  ASSERT_EQ(lab.operands.size(), 5u);
  EXPECT_EQ(lab.operands[0].name, "driver");
  EXPECT_EQ(lab.operands[0].label, "nvidia.com/gpu.deploy.driver");
  EXPECT_FALSE(lab.audit_deployed_only);
  core::Catalog full = core::load_catalog("gpu-operator");
  EXPECT_EQ(full.operands.size(), 18u);
  EXPECT_TRUE(full.audit_deployed_only);
  for (const auto& o : full.operands) EXPECT_EQ(o.label.rfind("nvidia.com/gpu.deploy.", 0), 0u) << o.label;
}

TEST(Catalog, DefaultsForOptionalKeys) {
  core::Catalog c = core::parse_catalog(kOne, "c.yaml");
  ASSERT_EQ(c.operands.size(), 1u);
  EXPECT_EQ(c.operands[0].app, "d");
  EXPECT_EQ(c.operands[0].column, "driver");
  EXPECT_EQ(c.operands[0].container, "driver");
}

TEST(Catalog, UnknownKeysAreRefusedWithTheirLine) {
  auto e = refused(std::string(kOne) + "    dameonset: typo\n");
  EXPECT_EQ(e.field(), "operands[0].dameonset");
  EXPECT_EQ(e.line(), 5);
  EXPECT_NE(e.message().find("unknown field \"dameonset\""), std::string::npos) << e.message();
  e = refused(std::string(kOne) + "audits: labelled\n");
  EXPECT_EQ(e.field(), "audits");
  EXPECT_EQ(e.line(), 5);
}

TEST(Catalog, NoOperandIsRefused) {
  auto e = refused("operands: []\n");
  EXPECT_EQ(e.field(), "operands");
  EXPECT_EQ(e.message(), "Required value: at least one operand");
}

// A label is a node label key (apimachinery IsQualifiedName).
TEST(Catalog, LabelMustBeALabelKey) {
  auto e = refused("operands:\n  - name: x\n    label: nvidia.com/gpu.deploy.x-\n    daemonset: d\n");
  EXPECT_EQ(e.field(), "operands[0].label");
  EXPECT_EQ(e.line(), 3);
  EXPECT_EQ(e.message().rfind("Invalid value: \"nvidia.com/gpu.deploy.x-\": ", 0), 0u) << e.message();
  e = refused("operands:\n  - name: x\n    label: a/b/c\n    daemonset: d\n");
  EXPECT_EQ(e.field(), "operands[0].label");
  // Outside nvidia.com/gpu.deploy. is a user's choice.
  EXPECT_EQ(core::parse_catalog("operands:\n  - name: x\n    label: example.com/x\n    daemonset: d\n", "c.yaml")
                .operands[0]
                .label,
            "example.com/x");
}
