// What the simulated GPU Operator renders for one operand under a
// ClusterPolicy spec, for the render tests of this folder.
#pragma once

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <string>

#include "core/codec/decode.h"
#include "core/gpu_operator/operands.h"
#include "simulator/gpu_operator/operator_render.h"

namespace gpuops::testing {

// A ClusterPolicy "cluster-policy" whose spec is the JSON text `spec`.
inline core::ClusterPolicy policy_of(const std::string& spec) {
  core::Document doc;
  doc.value = boost::json::object{{"apiVersion", "nvidia.com/v1"},
                                  {"kind", "ClusterPolicy"},
                                  {"metadata", boost::json::object{{"name", "cluster-policy"}, {"uid", "cp-uid"}}},
                                  {"spec", boost::json::parse(spec)}};
  doc.file = "policy.yaml";
  return core::decode_cluster_policy(doc);
}

// The pod template spec of `operand`'s DaemonSet as the built-in catalog
// `catalog_name` renders it under `spec` (namespace gpu-operator, OS tag
// ubuntu22.04).
inline boost::json::object rendered_pod_spec(const std::string& catalog_name, const std::string& operand,
                                             const std::string& spec) {
  const core::Catalog catalog = core::load_catalog(catalog_name);
  const core::Operand* op = catalog.by_name(operand);
  EXPECT_NE(op, nullptr) << operand;
  core::DaemonSet ds = simulator::rendered_daemonset(*op, policy_of(spec), catalog, "gpu-operator", "ubuntu22.04");
  return ds.raw.at("spec").at("template").at("spec").as_object();
}

}  // namespace gpuops::testing
