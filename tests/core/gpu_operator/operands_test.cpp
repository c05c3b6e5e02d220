// The operand catalog: the built-in ones, and what a user's file may not say.
#include <gtest/gtest.h>

#include "core/base/errors.h"
#include "core/gpu_operator/operands.h"

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

// operator.driver_manager / mig_manager (core::HelperRules): restore lists
// default to the pause lists; a wait names an app or a nodeSelector key.
TEST(Catalog, HelperRules) {
  core::Catalog c = core::parse_catalog(std::string(kOne) + R"(operator:
  driver_manager:
    pause: [nvidia.com/gpu.deploy.container-toolkit]
    pause_if_set: [nvidia.com/gpu.deploy.mig-manager]
    wait_for: [nvidia-container-toolkit-daemonset, {selector_key: nvidia.com/gpu.deploy.client, if_set: nvidia.com/gpu.deploy.client}]
    wait_timeout_fails: true
)",
                                        "c.yaml");
  const core::HelperRules& dm = c.rules.driver_manager;
  EXPECT_EQ(dm.restore, dm.pause);
  EXPECT_EQ(dm.restore_if_set, dm.pause_if_set);
  EXPECT_EQ(dm.restore_on_exit, dm.pause);
  ASSERT_EQ(dm.wait_for.size(), 2u);
  EXPECT_EQ(dm.wait_for[0].app, "nvidia-container-toolkit-daemonset");
  EXPECT_EQ(dm.wait_for[1].selector_key, "nvidia.com/gpu.deploy.client");
  EXPECT_TRUE(dm.wait_timeout_fails);
  EXPECT_TRUE(c.rules.mig_manager.empty());

  auto e = refused(std::string(kOne) + "operator:\n  mig_manager:\n    wait_for: [{app: a, selector_key: b}]\n");
  EXPECT_EQ(e.field(), "operator.mig_manager.wait_for[0]");
  EXPECT_EQ(e.message(), "give exactly one of app and selector_key");
  e = refused(std::string(kOne) + "operator:\n  mig_manager:\n    pause: [nvidia.com/x-]\n");
  EXPECT_EQ(e.field(), "operator.mig_manager.pause[0]");
  EXPECT_EQ(e.line(), 7);
  e = refused(std::string(kOne) + "operator:\n  driver_manager:\n    paus: []\n");
  EXPECT_EQ(e.field(), "operator.driver_manager.paus");

  // The built-in releases carry both helpers.
  for (const char* name : {"gpu-operator", "gpu-operator-v25.3"}) {
    core::Catalog r = core::load_catalog(name);
    EXPECT_FALSE(r.rules.driver_manager.empty()) << name;
    EXPECT_FALSE(r.rules.mig_manager.empty()) << name;
    EXPECT_EQ(r.rules.mig_manager.configs.front(), "all-disabled") << name;
  }
}

// A catalog is a file anyone may hand to gpuops (--operands): its names
// become label keys, DaemonSet, container and file names and shell
// completion candidates, so each is what Kubernetes takes it for
// (apimachinery's IsDNS1123Label, IsDNS1123Subdomain, IsValidLabelValue),
// refused with its field, line and the value quoted as Go's %q.
TEST(Catalog, NamesAreWhatKubernetesTakesThemFor) {
  auto with = [](const std::string& extra) {
    return std::string("operands:\n  - name: x\n    label: nvidia.com/gpu.deploy.x\n    daemonset: d\n") + extra;
  };
  const std::string dns_label =
      ": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and "
      "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
      "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
  // A completion candidate that would run code in `compgen -W`.
  auto e = refused("operands:\n  - name: $(touch /tmp/pwned)\n    label: nvidia.com/gpu.deploy.x\n    daemonset: d\n");
  EXPECT_EQ(e.field(), "operands[0].name");
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.message(), "Invalid value: \"$(touch /tmp/pwned)\"" + dns_label);
  e = refused("operands:\n  - name: \"a\\u001b[2Jb\"\n    label: nvidia.com/gpu.deploy.x\n    daemonset: d\n");
  EXPECT_EQ(e.message(), "Invalid value: \"a\\x1b[2Jb\"" + dns_label);
  // A file the lab writes under k8s/.
  e = refused(with("    manifest: ../../etc/cron.d/x.yaml\n"));
  EXPECT_EQ(e.field(), "operands[0].manifest");
  EXPECT_EQ(e.line(), 5);
  e = refused(with("    manifest: driver-ds\n"));
  EXPECT_EQ(e.field(), "operands[0].manifest");
  e = refused(with("    container: Driver\n"));
  EXPECT_EQ(e.field(), "operands[0].container");
  e = refused("operands:\n  - name: x\n    label: nvidia.com/gpu.deploy.x\n    daemonset: D_S\n");
  EXPECT_EQ(e.field(), "operands[0].daemonset");
  e = refused(with("    column: \"a b\"\n"));
  EXPECT_EQ(e.field(), "operands[0].column");
  e = refused(with("    memory: lots\n"));
  EXPECT_EQ(e.field(), "operands[0].memory");
  e = refused(with("    image: \"example.com/x:1 ;rm\"\n"));
  EXPECT_EQ(e.field(), "operands[0].image");
  e = refused(with("    pod_labels: {app: \"not a value\"}\n"));
  EXPECT_EQ(e.field(), "operands[0].pod_labels[app]");
  e = refused(with("    gates: [\"x y\"]\n"));
  EXPECT_EQ(e.field(), "operands[0].gates");
  // host_paths: volume names (a pod's volume name is a DNS-1123 label) to
  // absolute paths.
  e = refused(with("    host_paths: {host-root: relative/dir}\n"));
  EXPECT_EQ(e.field(), "operands[0].host_paths[host-root]");
  EXPECT_EQ(e.message(), "Invalid value: \"relative/dir\": must be an absolute path");
  e = refused(with("    host_paths: {Host_Root: /}\n"));
  EXPECT_EQ(e.field(), "operands[0].host_paths[Host_Root]");
  EXPECT_EQ(e.message(), "Invalid value: \"Host_Root\"" + dns_label);
  // The built-in catalogs pass the same rules.
  for (const char* name : {"lab", "gpu-operator", "gpu-operator-v23.9", "gpu-operator-v24.3", "gpu-operator-v24.6",
                           "gpu-operator-v24.9", "gpu-operator-v25.3", "gpu-operator-v25.10", "gpu-operator-v26.3"})
    EXPECT_NO_THROW(core::load_catalog(name)) << name;
}
