// The simulator sees every namespace, so its state always carries the GPU
// workloads (ClusterState::gpu_workloads): the pods of the other namespaces
// whose containers ask for nvidia.com/gpu or a MIG resource and that are not
// terminal (core::holds_gpu), and in a partial state only those of its nodes.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/codec/decode.h"
#include "core/codec/documents.h"
#include "simulator/fake_cluster.h"
#include "tests/simulator/helpers.h"

namespace gpuops::simulator {
namespace {

using testing::kNs;
using testing::make_node;

core::Object pod(const std::string& ns, const std::string& name, const std::string& node, const std::string& limits) {
  std::string y = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  namespace: " + ns +
                  "\nspec:\n  nodeName: " + node + "\n  containers:\n  - name: c\n    image: cuda:12\n";
  if (!limits.empty()) y += "    resources:\n      limits: {" + limits + "}\n";
  auto docs = core::read_documents(y, name + ".yaml");
  return core::decode_object(docs.at(0));
}

std::set<std::string> names(const std::vector<core::Pod>& pods) {
  std::set<std::string> out;
  for (const auto& p : pods) out.insert(p.metadata.namespace_ + "/" + p.metadata.name);
  return out;
}

TEST(GpuWorkloads, TheSimulatorSeesThoseOfEveryOtherNamespace) {
  FakeCluster c;
  c.create_namespace(kNs);
  c.create_namespace("ml");
  for (const char* n : {"gpu-a", "gpu-b"})
    c.add_node(make_node(n, {}, {{"nvidia.com/gpu", "2"}, {"nvidia.com/mig-1g.10gb", "2"}, {"pods", "110"}}));
  c.apply({pod("ml", "train", "gpu-a", "nvidia.com/gpu: 1"), pod("ml", "mig-job", "gpu-b", "nvidia.com/mig-1g.10gb: 1"),
           pod("ml", "cpu-only", "gpu-a", ""), pod(kNs, "in-operator-namespace", "gpu-a", "nvidia.com/gpu: 1")});
  c.settle();

  core::ClusterState s = c.state(kNs);
  ASSERT_TRUE(s.gpu_workloads.has_value());
  // Not the CPU pod, not the operator namespace's own (it is in s.pods).
  EXPECT_EQ(names(*s.gpu_workloads), (std::set<std::string>{"ml/train", "ml/mig-job"}));

  const std::set<std::string> only_b{"gpu-b"};
  core::StateParts parts;
  parts.of_nodes = &only_b;
  core::ClusterState part = c.partial_state(kNs, parts);
  ASSERT_TRUE(part.gpu_workloads.has_value());
  EXPECT_EQ(names(*part.gpu_workloads), (std::set<std::string>{"ml/mig-job"}));

  // Without pods in the parts read, no claim about the workloads either.
  core::StateParts no_pods;
  no_pods.pods = false;
  EXPECT_FALSE(c.partial_state(kNs, no_pods).gpu_workloads.has_value());

  // A namespace without GPU pods: an empty list, seen (not unseen).
  c.delete_pod("ml", "train");
  c.delete_pod("ml", "mig-job");
  c.settle();
  core::ClusterState after = c.state(kNs);
  ASSERT_TRUE(after.gpu_workloads.has_value());
  EXPECT_TRUE(after.gpu_workloads->empty());
}

}  // namespace
}  // namespace gpuops::simulator
