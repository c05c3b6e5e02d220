// tests/common/builders.h: small constructors for typed objects in tests.
#pragma once

#include <string>
#include <vector>

#include "core/model/model.h"

namespace gpuops::testing {

inline core::Node node(const std::string& name, core::Labels labels = {}, std::vector<core::Taint> taints = {}) {
  core::Node n;
  n.metadata.name = name;
  n.metadata.uid = "uid-node-" + name;
  n.metadata.labels = std::move(labels);
  n.taints = std::move(taints);
  n.conditions.push_back({"Ready", "True", "KubeletReady", ""});
  return n;
}

inline core::Taint taint(const std::string& key, const std::string& value, const std::string& effect) {
  core::Taint t;
  t.key = key;
  t.value = value;
  t.effect = effect;
  return t;
}

inline core::Toleration toleration(const std::string& key, const std::string& op, const std::string& value,
                                   const std::string& effect) {
  core::Toleration t;
  t.key = key;
  t.op = op;
  t.value = value;
  t.effect = effect;
  return t;
}

// A DaemonSet as the lab writes it: selector and pod label app=<name>,
// nodeSelector <label>: "true".
inline core::DaemonSet daemonset(const std::string& name, const std::string& label,
                                 const std::string& ns = "gpu-operator") {
  core::DaemonSet ds;
  ds.metadata.name = name;
  ds.metadata.namespace_ = ns;
  ds.metadata.uid = "uid-ds-" + name;
  ds.selector.match_labels = {{"app", name}};
  ds.template_.labels = {{"app", name}};
  if (!label.empty()) ds.template_.spec.node_selector = {{label, "true"}};
  core::Container c;
  c.name = "main";
  c.image = "example/image:1";
  ds.template_.spec.containers.push_back(c);
  return ds;
}

// A pod of `ds` bound to `node_name` in `phase`, controlled by the DaemonSet.
inline core::Pod pod(const core::DaemonSet& ds, const std::string& node_name, const std::string& phase = "Running",
                     const std::string& suffix = "abcde") {
  core::Pod p;
  p.metadata.name = ds.metadata.name + "-" + suffix;
  p.metadata.namespace_ = ds.metadata.namespace_;
  p.metadata.labels = ds.template_.labels;
  core::OwnerReference ref;
  ref.api_version = "apps/v1";
  ref.kind = "DaemonSet";
  ref.name = ds.metadata.name;
  ref.uid = ds.metadata.uid;
  ref.controller = true;
  p.metadata.owner_references.push_back(ref);
  p.spec = ds.template_.spec;
  p.spec.node_name = node_name;
  p.status.phase = phase;
  if (phase == "Running") p.status.conditions.push_back({"Ready", "True", "", "", std::nullopt});
  return p;
}

}  // namespace gpuops::testing
