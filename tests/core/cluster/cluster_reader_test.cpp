// The read port by type (core/cluster/cluster.h): a snapshot is a
// core::ClusterReader and not a core::Cluster, so a write on it does not
// compile. Each write below is well-formed on a core::Cluster (the requires
// expressions test what they mean to) and ill-formed on a SnapshotCluster.
#include <gtest/gtest.h>

#include <concepts>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "../../common/builders.h"
#include "core/cluster/cluster.h"
#include "core/cluster/snapshot.h"

using namespace gpuops;

namespace {

static_assert(std::is_base_of_v<core::ClusterReader, core::Cluster>);
static_assert(std::is_base_of_v<core::ClusterReader, core::SnapshotCluster>);
static_assert(!std::is_base_of_v<core::Cluster, core::SnapshotCluster>);
static_assert(!std::is_convertible_v<core::SnapshotCluster*, core::Cluster*>);
static_assert(!std::is_convertible_v<core::SnapshotCluster&, core::Cluster&>);

// The reads: on both.
template <class C>
constexpr bool reads = requires(C& c, const core::StateParts& parts) {
  { c.state("ns") } -> std::same_as<core::ClusterState>;
  { c.partial_state("ns", parts) } -> std::same_as<core::ClusterState>;
  { c.serves_cluster_policies() } -> std::same_as<bool>;
};
static_assert(reads<core::ClusterReader>);
static_assert(reads<core::Cluster>);
static_assert(reads<core::SnapshotCluster>);

// Each write of core::Cluster, and settle(), one requires expression apiece:
// one that compiled for a snapshot would say so by its name.
template <class C>
constexpr bool can_apply = requires(C& c, const std::vector<core::Object>& objects) {
  c.apply(objects);
};
template <class C>
constexpr bool can_create_namespace = requires(C& c) {
  c.create_namespace("ns");
};
template <class C>
constexpr bool can_set_node_label = requires(C& c) {
  c.set_node_label("n", "k", std::optional<std::string>("v"));
};
template <class C>
constexpr bool can_add_node = requires(C& c, const core::Node& node) {
  c.add_node(node);
};
template <class C>
constexpr bool can_delete_node = requires(C& c) {
  c.delete_node("n");
};
template <class C>
constexpr bool can_set_node_taints = requires(C& c, const std::vector<core::Taint>& taints) {
  c.set_node_taints("n", taints);
};
template <class C>
constexpr bool can_set_node_unschedulable = requires(C& c) {
  c.set_node_unschedulable("n", true);
};
template <class C>
constexpr bool can_set_node_ready = requires(C& c) {
  c.set_node_ready("n", "True");
};
template <class C>
constexpr bool can_delete_namespace = requires(C& c) {
  c.delete_namespace("ns");
};
template <class C>
constexpr bool can_patch_cluster_policy = requires(C& c, const boost::json::object& patch) {
  c.patch_cluster_policy("cluster-policy", patch);
};
template <class C>
constexpr bool can_delete_cluster_policy = requires(C& c) {
  c.delete_cluster_policy("cluster-policy");
};
template <class C>
constexpr bool can_delete_daemonset = requires(C& c) {
  c.delete_daemonset("ns", "ds", "background");
};
template <class C>
constexpr bool can_delete_pod = requires(C& c) {
  c.delete_pod("ns", "p");
};
template <class C>
constexpr bool can_settle = requires(C& c) {
  c.settle();
};

template <class C>
constexpr bool writes_any =
    can_apply<C> || can_create_namespace<C> || can_set_node_label<C> || can_add_node<C> || can_delete_node<C> ||
    can_set_node_taints<C> || can_set_node_unschedulable<C> || can_set_node_ready<C> || can_delete_namespace<C> ||
    can_patch_cluster_policy<C> || can_delete_cluster_policy<C> || can_delete_daemonset<C> || can_delete_pod<C> ||
    can_settle<C>;
template <class C>
constexpr bool writes_all = can_apply<C>&& can_create_namespace<C>&& can_set_node_label<C>&& can_add_node<C>&&
    can_delete_node<C>&& can_set_node_taints<C>&& can_set_node_unschedulable<C>&& can_set_node_ready<C>&&
        can_delete_namespace<C>&& can_patch_cluster_policy<C>&& can_delete_cluster_policy<C>&& can_delete_daemonset<C>&&
            can_delete_pod<C>&& can_settle<C>;

static_assert(writes_all<core::Cluster>);
static_assert(!writes_any<core::ClusterReader>);
static_assert(!writes_any<core::SnapshotCluster>);

// A snapshot read through the read port: what a read-only command sees.
TEST(ClusterReader, SnapshotReadThroughThePort) {
  core::Node node = gpuops::testing::node("gpu-a");
  core::SnapshotCluster snapshot(std::vector<core::Object>{core::Object(node)});
  core::ClusterReader& reader = snapshot;
  core::ClusterState state = reader.state("gpu-operator");
  ASSERT_EQ(state.nodes.size(), 1u);
  EXPECT_EQ(state.nodes[0].metadata.name, "gpu-a");
  EXPECT_EQ(reader.partial_state("gpu-operator", core::StateParts{.pods = false}).nodes.size(), 1u);
  EXPECT_FALSE(reader.serves_cluster_policies());
}

}  // namespace
