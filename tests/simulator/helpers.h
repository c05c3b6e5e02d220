// Shared builders for the simulator tests: nodes, and operand DaemonSets
// written as the lab's manifests are (LAB.md "The five operands": pod label
// and selector `app: <DaemonSet name>`, nodeSelector `<label key>: "true"`,
// image, memory request), decoded by core's codec like any manifest.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/codec/decode.h"
#include "core/codec/documents.h"
#include "core/gpu_operator/operands.h"
#include "simulator/fake_cluster.h"

namespace gpuops::simulator::testing {

inline const char* kNs = "gpu-operator";

struct DsExtras {
  std::vector<std::string> tolerations_yaml;  // items of spec.template.spec.tolerations, flow style
  std::vector<std::string> init_containers;   // names; image nvcr.io/nvidia/gpu-operator:v24.9.2
  std::string grace;                          // terminationGracePeriodSeconds, empty: unset
  int min_ready_seconds = 0;
};

inline std::string daemonset_yaml(const core::Operand& op, const DsExtras& x = {}) {
  std::string y = "apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: " + op.daemonset +
                  "\n  namespace: gpu-operator\nspec:\n";
  if (x.min_ready_seconds) y += "  minReadySeconds: " + std::to_string(x.min_ready_seconds) + "\n";
  y += "  selector:\n    matchLabels:\n      app: " + op.app +
       "\n  template:\n    metadata:\n      labels:\n        app: " + op.app +
       "\n    spec:\n      nodeSelector:\n        " + op.label + ": \"true\"\n";
  if (!x.grace.empty()) y += "      terminationGracePeriodSeconds: " + x.grace + "\n";
  if (!x.tolerations_yaml.empty()) {
    y += "      tolerations:\n";
    for (const auto& t : x.tolerations_yaml) y += "      - " + t + "\n";
  }
  if (!x.init_containers.empty()) {
    y += "      initContainers:\n";
    for (const auto& n : x.init_containers)
      y += "      - name: " + n + "\n        image: nvcr.io/nvidia/gpu-operator:v24.9.2\n";
  }
  y += "      containers:\n      - name: " + (op.container.empty() ? op.name : op.container) +
       "\n        image: " + op.image + "\n";
  if (!op.memory.empty()) y += "        resources:\n          requests:\n            memory: " + op.memory + "\n";
  return y;
}

inline core::DaemonSet operand_daemonset(const core::Operand& op, const DsExtras& x = {}) {
  auto docs = core::read_documents(daemonset_yaml(op, x), op.manifest.empty() ? op.name + ".yaml" : op.manifest);
  return core::decode_daemonset(docs.at(0));
}

inline const core::Catalog& lab_catalog() {
  static const core::Catalog c = core::load_catalog("lab");
  return c;
}

inline core::DaemonSet lab_daemonset(const std::string& operand, const DsExtras& x = {}) {
  const core::Operand* op = lab_catalog().by_name(operand);
  if (!op) throw std::runtime_error("no operand " + operand);
  return operand_daemonset(*op, x);
}

// A node with labels and, optionally, allocatable (cpu, memory, pods).
inline core::Node make_node(const std::string& name, core::Labels labels = {},
                            const std::map<std::string, std::string>& allocatable = {}) {
  core::Node n;
  n.metadata.name = name;
  labels["kubernetes.io/hostname"] = name;
  n.metadata.labels = std::move(labels);
  for (const auto& [k, v] : allocatable) n.allocatable[k] = core::Quantity::parse(v);
  return n;
}

// Every deploy label of the lab catalog set to "true".
inline core::Labels all_deploy_labels() {
  core::Labels l{{"nvidia.com/gpu.present", "true"}, {"feature.node.kubernetes.io/pci-10de.present", "true"}};
  for (const auto& op : lab_catalog().operands) l[op.label] = "true";
  return l;
}

// Pods of DaemonSet `ds` in the state, in name order.
inline std::vector<core::Pod> pods_of(const core::ClusterState& s, const std::string& ds) {
  std::vector<core::Pod> out;
  for (const auto& p : s.pods) {
    auto* ref = p.metadata.controller_ref();
    if (ref && ref->name == ds) out.push_back(p);
  }
  return out;
}

inline const core::DaemonSet& ds_of(const core::ClusterState& s, const std::string& name) {
  for (const auto& d : s.daemonsets)
    if (d.metadata.name == name) return d;
  throw std::runtime_error("no DaemonSet " + name);
}

inline core::DaemonSetStatus status(int desired, int current, int misscheduled, int ready, int updated, int available,
                                    int unavailable, int64_t observed_generation = 1) {
  core::DaemonSetStatus s;
  s.desired_number_scheduled = desired;
  s.current_number_scheduled = current;
  s.number_misscheduled = misscheduled;
  s.number_ready = ready;
  s.updated_number_scheduled = updated;
  s.number_available = available;
  s.number_unavailable = unavailable;
  s.observed_generation = observed_generation;
  return s;
}

inline std::string describe(const core::DaemonSetStatus& s) {
  return "desired=" + std::to_string(s.desired_number_scheduled) +
         " current=" + std::to_string(s.current_number_scheduled) +
         " misscheduled=" + std::to_string(s.number_misscheduled) + " ready=" + std::to_string(s.number_ready) +
         " updated=" + std::to_string(s.updated_number_scheduled) + " available=" + std::to_string(s.number_available) +
         " unavailable=" + std::to_string(s.number_unavailable) +
         " observedGeneration=" + std::to_string(s.observed_generation);
}

// Every field case and operator dump of the tests (tests/data/cases and
// tests/data/operator, but the bad manifests), sorted.
inline std::vector<std::string> dumps() {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  for (const char* dir : {"tests/data/cases", "tests/data/operator"})
    for (const auto& e : fs::directory_iterator(fs::path(GPUOPS_SOURCE_DIR) / dir))
      if (e.is_directory() && e.path().filename() != "bad-manifests") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace gpuops::simulator::testing

namespace gpuops::core {
inline void PrintTo(const DaemonSetStatus& s, std::ostream* os) { *os << simulator::testing::describe(s); }
}  // namespace gpuops::core
