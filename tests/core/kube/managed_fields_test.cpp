// core/kube/managed_fields.h on the managedFields kube-apiserver writes
// (ManagedFieldsEntry: manager, operation, time, fieldsType FieldsV1,
// fieldsV1 with "f:" keys).
#include "core/kube/managed_fields.h"

#include <gtest/gtest.h>

#include "core/model/rfc3339.h"

namespace gpuops::core {
namespace {

Node node_with(const char* managed_fields_json) {
  Node n;
  auto v = boost::json::parse(managed_fields_json);
  n.label_writes = decode_label_writes(&v);
  return n;
}

TEST(ManagedFields, TheNewestWriterOfALabelAndItsTime) {
  Node n = node_with(R"([
    {"manager":"kubelet","operation":"Update","time":"2026-11-30T01:00:00Z","fieldsType":"FieldsV1",
     "fieldsV1":{"f:metadata":{"f:labels":{"f:kubernetes.io/hostname":{}}}}},
    {"manager":"nvidia-mig-manager","operation":"Update","time":"2026-11-30T05:05:00Z","fieldsType":"FieldsV1",
     "fieldsV1":{"f:metadata":{"f:labels":{"f:nvidia.com/mig.config.state":{}}}}},
    {"manager":"kubectl-label","operation":"Update","time":"2026-11-30T04:00:00Z","fieldsType":"FieldsV1",
     "fieldsV1":{"f:metadata":{"f:labels":{"f:nvidia.com/mig.config.state":{},"f:nvidia.com/mig.config":{}}}}},
    {"manager":"kubelet","operation":"Update","subresource":"status","time":"2026-11-30T06:00:00Z",
     "fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:conditions":{}}}}])");
  ASSERT_EQ(n.label_writes.size(), 4u);
  auto w = last_label_write(n, "nvidia.com/mig.config.state");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->manager, "nvidia-mig-manager");
  EXPECT_EQ(w->time, parse_time("2026-11-30T05:05:00Z"));
  w = last_label_write(n, "nvidia.com/mig.config");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->manager, "kubectl-label");
  EXPECT_FALSE(last_label_write(n, "nvidia.com/vgpu.config.state"));
  // A status write is a time the node was current at too.
  EXPECT_EQ(newest_label_write(n), parse_time("2026-11-30T06:00:00Z"));
}

TEST(ManagedFields, WhatIsNotThereOrNotATimeGivesNothing) {
  EXPECT_TRUE(decode_label_writes(nullptr).empty());
  EXPECT_FALSE(newest_label_write(Node{}));
  Node n = node_with(R"([{"manager":"m","time":"yesterday","fieldsV1":{"f:metadata":{"f:labels":{"f:x":{}}}}},
                         {"manager":"m","fieldsV1":{"f:metadata":{"f:labels":{"f:x":{}}}}},
                         {"manager":"m","time":"2026-11-30T05:05:00Z","fieldsV1":{"f:metadata":[]}},
                         "not an entry"])");
  ASSERT_EQ(n.label_writes.size(), 1u);
  EXPECT_FALSE(last_label_write(n, "x"));
  EXPECT_EQ(newest_label_write(n), parse_time("2026-11-30T05:05:00Z"));
  EXPECT_TRUE(node_with("{}").label_writes.empty());
}

}  // namespace
}  // namespace gpuops::core
