// Stock kubectl against `gpuops serve` with the simulated GPU Operator: the
// ClusterPolicy CRD's resources (discovery, get with the CRD's printer
// columns, apply, patch --type merge, delete) and what the operator does
// with them. Expected outputs are kubectl's own messages, the CRDs'
// definitions (deployments/gpu-operator/crds/ of NVIDIA/gpu-operator) and
// the operator's rules (state_manager.go, object_controls.go).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/gpu_operator/operands.h"
#include "tests/serve/helpers.h"

namespace gpuops::serve_testing {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;

const char* kPolicy = R"(apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata:
  name: cluster-policy
spec:
  dcgmExporter:
    enabled: true
  daemonsets: {}
  dcgm: {}
  devicePlugin: {}
  driver: {}
  gfd: {}
  nodeStatusExporter: {}
  operator: {}
  toolkit: {}
)";

void gpu_nodes_and_operator(simulator::FakeCluster& c) {
  for (const char* name : {"gpu-node-1", "gpu-node-2"}) {
    core::Node n;
    n.metadata.name = name;
    n.metadata.labels = {{"feature.node.kubernetes.io/pci-10de.present", "true"},
                         {"feature.node.kubernetes.io/kernel-version.full", "6.8.0-101-generic"}};
    c.add_node(n);
  }
  c.install_operator(core::load_catalog("gpu-operator-v25.3"));
  c.settle();
}

TEST(ServeOperator, WithoutTheOperatorThereIsNoClusterPolicyResource) {
  Served s;
  Proc r = s.kubectl({"get", "clusterpolicies"});
  EXPECT_NE(r.code, 0);
  EXPECT_THAT(r.err, HasSubstr("the server doesn't have a resource type \"clusterpolicies\""));
  Proc a = s.kubectl({"api-resources", "--api-group=nvidia.com", "--no-headers"});
  EXPECT_EQ(a.out, "");
}

TEST(ServeOperator, DiscoveryListsTheCrdsResources) {
  Served s(false, {}, gpu_nodes_and_operator);
  Proc a = s.kubectl({"api-resources", "--api-group=nvidia.com", "--no-headers"});
  ASSERT_EQ(a.code, 0) << a.err;
  // NAME SHORTNAMES APIVERSION NAMESPACED KIND, as the CRDs declare them.
  EXPECT_THAT(a.out, MatchesRegex("clusterpolicies +nvidia.com/v1 +false +ClusterPolicy\n"
                                  "nvidiadrivers +nvd,nvdriver,nvdrivers +nvidia.com/v1alpha1 +false +NVIDIADriver\n"));
}

// The CRD's required spec fields, as a v1.37 API server with the v25.3.4
// CRD answered `kubectl apply` of a policy that names only dcgmExporter
// (measured, docs/FIDELITY.md): 422, every missing field listed, one cause
// each, which kubectl v1.37 prints as a list (measured again 2026-12-05).
TEST(ServeOperator, AClusterPolicyWithoutTheRequiredFieldsIsRefused) {
  Served s(false, {}, gpu_nodes_and_operator);
  Proc c = s.kubectl_stdin(R"(apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata:
  name: cluster-policy
spec:
  dcgmExporter: {enabled: true}
)",
                           {"apply", "-f", "-"});
  EXPECT_NE(c.code, 0);
  // kubectl prints it from the Status' causes; the first and the last field.
  EXPECT_THAT(c.err, HasSubstr("The ClusterPolicy \"cluster-policy\" is invalid: \n"
                               "* spec.daemonsets: Required value\n"
                               "* spec.dcgm: Required value\n"
                               "* spec.devicePlugin: Required value\n"
                               "* spec.driver: Required value\n"
                               "* spec.gfd: Required value\n"
                               "* spec.nodeStatusExporter: Required value\n"
                               "* spec.operator: Required value\n"
                               "* spec.toolkit: Required value\n"));
  Proc g = s.kubectl({"get", "clusterpolicies", "--no-headers"});
  EXPECT_EQ(g.out, "");
}

TEST(ServeOperator, ApplyGetPatchDeleteAClusterPolicy) {
  Served s(false, {}, gpu_nodes_and_operator);
  Proc c = s.kubectl_stdin(kPolicy, {"apply", "-f", "-"});
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_EQ(c.out, "clusterpolicy.nvidia.com/cluster-policy created\n");

  // The CRD's printer columns: Status (.status.state) and Age
  // (.metadata.creationTimestamp, a string column: the timestamp itself).
  Proc g = s.kubectl({"get", "clusterpolicies"});
  ASSERT_EQ(g.code, 0) << g.err;
  EXPECT_THAT(g.out, MatchesRegex("NAME +STATUS +AGE\ncluster-policy +ready +[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z\n"));

  // labelGPUNodes: gpu.present and the deploy labels on both GPU nodes.
  Proc l = s.kubectl({"get", "node", "gpu-node-2", "-o",
                      "jsonpath={.metadata.labels.nvidia\\.com/gpu\\.present} "
                      "{.metadata.labels.nvidia\\.com/gpu\\.deploy\\.device-plugin}"});
  EXPECT_EQ(l.out, "true true");
  // Nine DaemonSets (every container state the defaults enable), owned by the policy.
  Proc ds = s.kubectl({"get", "ds", "-n", "gpu-operator", "-o", "name"});
  EXPECT_EQ(ds.out,
            "daemonset.apps/gpu-feature-discovery\n"
            "daemonset.apps/nvidia-container-toolkit-daemonset\n"
            "daemonset.apps/nvidia-dcgm\n"
            "daemonset.apps/nvidia-dcgm-exporter\n"
            "daemonset.apps/nvidia-device-plugin-daemonset\n"
            "daemonset.apps/nvidia-device-plugin-mps-control-daemon\n"
            "daemonset.apps/nvidia-driver-daemonset\n"
            "daemonset.apps/nvidia-mig-manager\n"
            "daemonset.apps/nvidia-operator-validator\n");
  Proc owner = s.kubectl({"get", "ds", "-n", "gpu-operator", "nvidia-driver-daemonset", "-o",
                          "jsonpath={.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name} "
                          "{.spec.updateStrategy.type} {.spec.template.spec.priorityClassName}"});
  EXPECT_EQ(owner.out, "ClusterPolicy/cluster-policy OnDelete system-node-critical");

  // kubectl patch --type merge: the state is disabled, its DaemonSet deleted.
  Proc p = s.kubectl({"patch", "clusterpolicy", "cluster-policy", "--type", "merge", "-p",
                      R"({"spec":{"dcgmExporter":{"enabled":false}}})"});
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_EQ(p.out, "clusterpolicy.nvidia.com/cluster-policy patched\n");
  Proc gone = s.kubectl({"get", "ds", "-n", "gpu-operator", "nvidia-dcgm-exporter"});
  EXPECT_NE(gone.code, 0);
  EXPECT_THAT(gone.err, HasSubstr("daemonsets.apps \"nvidia-dcgm-exporter\" not found"));
  Proc gen = s.kubectl({"get", "clusterpolicy", "cluster-policy", "-o", "jsonpath={.metadata.generation}"});
  EXPECT_EQ(gen.out, "2");

  // Deleted: the garbage collector takes its DaemonSets.
  Proc d = s.kubectl({"delete", "clusterpolicy", "cluster-policy"});
  ASSERT_EQ(d.code, 0) << d.err;
  EXPECT_EQ(d.out, "clusterpolicy.nvidia.com \"cluster-policy\" deleted\n");
  Proc none = s.kubectl({"get", "ds", "-n", "gpu-operator", "-o", "name"});
  EXPECT_EQ(none.out, "");
}

// A patch that renames a custom resource or changes its kind or apiVersion,
// as kube-apiserver v1.37.2 with the v25.3.4 CRDs answered kubectl v1.37.2
// (measured): the name 400 BadRequest (checkName), the kind and apiVersion
// 422 Invalid naming the patched object's kind (ValidateTypeMeta), for a
// merge patch and a JSON patch alike. The policy is left as it was.
TEST(ServeOperator, APatchChangingTheNameOrKindOfACustomResourceIsRefused) {
  Served s(false, {}, gpu_nodes_and_operator);
  ASSERT_EQ(s.kubectl_stdin(kPolicy, {"apply", "-f", "-"}).code, 0);
  Proc gen0 = s.kubectl({"get", "clusterpolicy", "cluster-policy", "-o", "jsonpath={.metadata.resourceVersion}"});
  Proc name = s.kubectl(
      {"patch", "clusterpolicy", "cluster-policy", "--type", "merge", "-p", R"({"metadata":{"name":"other"}})"});
  EXPECT_NE(name.code, 0);
  EXPECT_EQ(name.err,
            "Error from server (BadRequest): the name of the object (other) does not match the name on the URL "
            "(cluster-policy)\n");
  Proc json_name = s.kubectl({"patch", "clusterpolicy", "cluster-policy", "--type", "json", "-p",
                              R"([{"op":"replace","path":"/metadata/name","value":"other"}])"});
  EXPECT_EQ(json_name.err, name.err);
  Proc kind = s.kubectl({"patch", "clusterpolicy", "cluster-policy", "--type", "merge", "-p", R"({"kind":"Other"})"});
  EXPECT_NE(kind.code, 0);
  EXPECT_EQ(kind.err,
            "The Other \"cluster-policy\" is invalid: kind: Invalid value: \"Other\": must be ClusterPolicy\n");
  Proc version = s.kubectl({"patch", "clusterpolicy", "cluster-policy", "--type", "json", "-p",
                            R"([{"op":"replace","path":"/apiVersion","value":"nvidia.com/v2"}])"});
  EXPECT_NE(version.code, 0);
  EXPECT_THAT(version.err, HasSubstr("The ClusterPolicy \"cluster-policy\" is invalid: apiVersion: Invalid value: "
                                     "\"nvidia.com/v2\": must be nvidia.com/v1\n"));
  Proc gen1 = s.kubectl({"get", "clusterpolicy", "cluster-policy", "-o", "jsonpath={.metadata.resourceVersion}"});
  EXPECT_EQ(gen1.out, gen0.out);
  Proc nvd = s.kubectl_stdin(R"(apiVersion: nvidia.com/v1alpha1
kind: NVIDIADriver
metadata:
  name: default
spec:
  driverType: gpu
  image: driver
  repository: nvcr.io/nvidia
  version: "570.172.08"
)",
                             {"apply", "-f", "-"});
  ASSERT_EQ(nvd.code, 0) << nvd.err;
  Proc nvd_kind =
      s.kubectl({"patch", "nvidiadriver", "default", "--type", "merge", "-p", R"({"kind":"ClusterPolicy"})"});
  EXPECT_EQ(nvd_kind.err,
            "The ClusterPolicy \"default\" is invalid: kind: Invalid value: \"ClusterPolicy\": must be NVIDIADriver\n");
}

TEST(ServeOperator, NoNvidiaDrivers) {
  Served s(false, {}, gpu_nodes_and_operator);
  Proc g = s.kubectl({"get", "nvd"});
  EXPECT_EQ(g.code, 0) << g.err;
  EXPECT_THAT(g.err, HasSubstr("No resources found"));
}

}  // namespace
}  // namespace gpuops::serve_testing
