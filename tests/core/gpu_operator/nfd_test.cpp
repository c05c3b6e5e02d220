// core/gpu_operator/nfd.cpp: what the operator reads off its first GPU node's
// NFD labels to render the driver, per release. Expected values from the
// operator's source at each tag: kernelFullVersion and resolveDriverTag
// (controllers/object_controls.go v25.3.4), getGPUNodeOSTag
// (controllers/state_manager.go v26.3.0), getGPUNodeOSInfo (v26.7.0).
#include <gtest/gtest.h>

#include "../../common/builders.h"
#include "core/gpu_operator/nfd.h"

namespace core = gpuops::core;
using gpuops::testing::node;

namespace {

const char* const kKernel = "feature.node.kubernetes.io/kernel-version.full";
const char* const kId = "feature.node.kubernetes.io/system-os_release.ID";
const char* const kVersion = "feature.node.kubernetes.io/system-os_release.VERSION_ID";

core::Node gpu(const std::string& name, core::Labels more) {
  core::Labels l{{"nvidia.com/gpu.present", "true"}, {"feature.node.kubernetes.io/pci-10de.present", "true"}};
  for (auto& [k, v] : more) l[k] = v;
  return node(name, l);
}

TEST(Nfd, TheOsTagPerRelease) {
  const core::Node ubuntu = gpu("a", {{kKernel, "6.8.0-101-generic"}, {kId, "ubuntu"}, {kVersion, "22.04"}});
  for (const char* r : {"v25.3", "v26.3", "v26.7", ""}) EXPECT_EQ(core::driver_os_tag(ubuntu, r), "ubuntu22.04") << r;
  const core::Node rhel9 = gpu("b", {{kKernel, "5.14.0-427.el9"}, {kId, "rhel"}, {kVersion, "9.4"}});
  EXPECT_EQ(core::driver_os_tag(rhel9, "v25.3"), "rhel9.4");
  EXPECT_EQ(core::driver_os_tag(rhel9, "v26.3"), "rhel9.4");  // rhel drops the minor from 10 on there
  EXPECT_EQ(core::driver_os_tag(rhel9, "v26.7"), "rhel9");
  const core::Node rhel10 = gpu("c", {{kId, "rhel"}, {kVersion, "10.0"}});
  EXPECT_EQ(core::driver_os_tag(rhel10, "v26.3"), "rhel10");
  const core::Node rocky = gpu("d", {{kId, "rocky"}, {kVersion, "9.3"}});
  EXPECT_EQ(core::driver_os_tag(rocky, "v26.3"), "rocky9");
  EXPECT_EQ(core::driver_os_tag(rocky, "v26.7"), "rocky9");
  const core::Node ol = gpu("e", {{kId, "ol"}, {kVersion, "8.10"}});
  EXPECT_EQ(core::driver_os_tag(ol, "v26.3"), "ol8.10");
  EXPECT_EQ(core::driver_os_tag(ol, "v26.7"), "ol8");
  // Before v26.3 the tag comes with the kernel version or not at all.
  EXPECT_EQ(core::driver_os_tag(rocky, "v25.3"), "");
  EXPECT_EQ(core::driver_os_tag(gpu("f", {{kKernel, "6.8.0"}, {kId, "ubuntu"}}), "v26.7"), "");
}

TEST(Nfd, WhereTheOperatorStopsWithoutTheLabels) {
  // v25.3: no kernel version, state-driver fails with resolveDriverTag's error.
  auto g = core::driver_input_gap(gpu("a", {{kId, "ubuntu"}, {kVersion, "22.04"}}), "v25.3");
  EXPECT_EQ(g.missing, (std::vector<std::string>{kKernel}));
  EXPECT_EQ(g.failure, "ERROR: Could not find kernel full version: ('', '')");
  EXPECT_FALSE(g.fails_init);
  EXPECT_FALSE(g.bad_image_tag);
  // v25.3: the kernel there, the OS not: it goes on with an empty OS tag.
  g = core::driver_input_gap(gpu("a", {{kKernel, "6.8.0-101-generic"}}), "v25.3");
  EXPECT_EQ(g.missing, (std::vector<std::string>{kId, kVersion}));
  EXPECT_EQ(g.failure, "");
  EXPECT_TRUE(g.bad_image_tag);
  // v26.7: no OS name, init fails; the kernel label is not read.
  g = core::driver_input_gap(gpu("a", {}), "v26.7");
  EXPECT_EQ(g.missing, (std::vector<std::string>{kId, kVersion}));
  EXPECT_EQ(g.failure,
            "failed to retrieve GPU node OS info: unable to retrieve OS name from label "
            "feature.node.kubernetes.io/system-os_release.ID");
  EXPECT_TRUE(g.fails_init);
  g = core::driver_input_gap(gpu("a", {{kId, "ubuntu"}}), "v26.3");
  EXPECT_EQ(g.failure,
            "failed to retrieve GPU node OS tag: unable to retrieve OS version from label "
            "feature.node.kubernetes.io/system-os_release.VERSION_ID");
  // Present but unusable: Atoi's refusal on v26.3, an empty name on v26.7.
  g = core::driver_input_gap(gpu("a", {{kId, "arch"}, {kVersion, "rolling"}}), "v26.3");
  EXPECT_EQ(g.failure,
            "failed to retrieve GPU node OS tag: error processing OS major version rolling: strconv.Atoi: parsing "
            "\"rolling\": invalid syntax");
  EXPECT_TRUE(g.missing.empty());
  g = core::driver_input_gap(gpu("a", {{kId, ""}, {kVersion, "22.04"}}), "v26.7");
  EXPECT_EQ(g.failure, "GPU node OS info is empty: release=\"\", tag=\"22.04\"");
  EXPECT_TRUE(g.fails_init);
  // Everything there: nothing missing on either release line.
  const core::Node whole = gpu("a", {{kKernel, "6.8.0-101-generic"}, {kId, "ubuntu"}, {kVersion, "22.04"}});
  for (const char* r : {"v25.3", "v26.7"}) {
    g = core::driver_input_gap(whole, r);
    EXPECT_TRUE(g.missing.empty()) << r;
    EXPECT_EQ(g.failure, "") << r;
  }
  EXPECT_TRUE(core::driver_input_gap(gpu("a", {{kId, "ubuntu"}, {kVersion, "22.04"}}), "v26.7").missing.empty());
}

TEST(Nfd, GpuNodesThatDisagreeLeaveTheOutcomeOpen) {
  core::ClusterState s;
  s.nodes = {gpu("gpu-b", {{kKernel, "6.8.0"}, {kId, "ubuntu"}, {kVersion, "22.04"}}),
             gpu("gpu-a", {{kId, "ubuntu"}, {kVersion, "22.04"}}), node("cpu-a")};
  EXPECT_EQ(core::driver_input_disagreement(s, "v25.3"), (std::vector<std::string>{"gpu-a"}));
  // v26.7 does not read the kernel label: they agree.
  EXPECT_TRUE(core::driver_input_disagreement(s, "v26.7").empty());
  // All lacking it: the operator stops whichever it reads: determined.
  s.nodes[0].metadata.labels.erase(kKernel);
  EXPECT_TRUE(core::driver_input_disagreement(s, "v25.3").empty());
}

}  // namespace
