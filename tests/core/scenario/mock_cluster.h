// tests/core/scenario/mock_cluster.h: a gmock core::Cluster for the scenario
// runner's tests (every write and settle() mocked; the reads through state()).
#pragma once

#include <gmock/gmock.h>

#include <optional>
#include <string>
#include <vector>

#include "core/cluster/cluster.h"

namespace gpuops::testing {

class MockCluster : public core::Cluster {
 public:
  MOCK_METHOD(core::ClusterState, state, (const std::string& ns), (override));
  MOCK_METHOD(void, apply, (const std::vector<core::Object>& objects), (override));
  MOCK_METHOD(void, create_namespace, (const std::string& name), (override));
  MOCK_METHOD(void, set_node_label,
              (const std::string& node, const std::string& key, const std::optional<std::string>& value), (override));
  MOCK_METHOD(void, add_node, (const core::Node& node), (override));
  MOCK_METHOD(void, delete_node, (const std::string& node), (override));
  MOCK_METHOD(void, set_node_taints, (const std::string& node, const std::vector<core::Taint>& taints), (override));
  MOCK_METHOD(void, set_node_unschedulable, (const std::string& node, bool unschedulable), (override));
  MOCK_METHOD(void, set_node_ready, (const std::string& node, const std::string& status), (override));
  MOCK_METHOD(void, delete_pod, (const std::string& ns, const std::string& name), (override));
  MOCK_METHOD(void, delete_namespace, (const std::string& name), (override));
  MOCK_METHOD(void, delete_daemonset, (const std::string& ns, const std::string& name, const std::string& cascade),
              (override));
  MOCK_METHOD(void, delete_cluster_policy, (const std::string& name), (override));
  MOCK_METHOD(void, settle, (), (override));
  MOCK_METHOD(bool, serves_cluster_policies, (), (override));
};

}  // namespace gpuops::testing
