// bench/bench_common.h: the clusters the benchmarks run on (docs/PERFORMANCE.md).
//
// Operands come from the built-in "gpu-operator" catalog
// (data/operands/gpu-operator.yaml): its first `n` entries, with their real
// DaemonSet names, app labels and deploy labels. n = 5 is the reference lab's
// five; n = 16 adds operator-validator, mps-control-daemon, dcgm, mig-manager,
// node-status-exporter, the vGPU and sandbox operands. Each becomes a
// DaemonSet shaped like the GPU Operator's: selector and pod label
// app=<app>, nodeSelector `<deploy label>: "true"`, one container with the
// catalog's image and memory request (64Mi when the catalog has none), the
// nvidia.com/gpu NoSchedule toleration. Nodes `node-<i>` carry every one of
// those deploy labels set to "true", so every (node, operand) pair wants a pod.
// Everything lives in namespace kNs ("gpu-operator").
#pragma once

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "core/gpu_operator/operands.h"
#include "core/model/model.h"
#include "core/model/quantity.h"

namespace gpuops::bench {

inline const char* kNs = "gpu-operator";

// The first `n` operands of the gpu-operator catalog; past its 18, copies of
// its device plugin named bench-extra-<k> (DaemonSet, app and deploy label
// nvidia.com/gpu.deploy.bench-extra-<k>), for the clusters larger than any
// one install (docs/PERFORMANCE.md: 20 DaemonSets).
inline std::vector<core::Operand> operands(int n) {
  core::Catalog c = core::load_catalog("gpu-operator");
  const core::Operand plugin = *std::find_if(c.operands.begin(), c.operands.end(),
                                             [](const core::Operand& o) { return o.name == "device-plugin"; });
  for (int k = static_cast<int>(c.operands.size()); k < n; ++k) {
    core::Operand x = plugin;
    x.name = x.daemonset = x.app = "bench-extra-" + std::to_string(k);
    x.label = "nvidia.com/gpu.deploy." + x.name;
    x.component.clear();  // recognised by its name only
    c.operands.push_back(x);
  }
  c.operands.resize(static_cast<size_t>(n));
  return c.operands;
}

inline core::Catalog catalog(int n) {
  core::Catalog c;
  c.operands = operands(n);
  return c;
}

// The operand's DaemonSet (see the file comment).
inline core::DaemonSet daemonset(const core::Operand& op) {
  core::DaemonSet d;
  d.metadata.name = op.daemonset;
  d.metadata.namespace_ = kNs;
  d.selector.match_labels = {{"app", op.app}};
  d.template_.labels = {{"app", op.app}};
  d.template_.spec.node_selector = {{op.label, "true"}};
  d.template_.spec.tolerations.push_back(core::Toleration{"nvidia.com/gpu", "Exists", "", "NoSchedule", std::nullopt});
  core::Container c;
  c.name = op.container.empty() ? op.name : op.container;
  c.image = op.image.empty() ? "nvcr.io/nvidia/" + op.name + ":bench" : op.image;
  c.requests["memory"] = core::Quantity::parse(op.memory.empty() ? "64Mi" : op.memory);
  d.template_.spec.containers.push_back(c);
  return d;
}

inline std::string node_name(int i) { return "node-" + std::to_string(i); }

// Node `node-<i>` with every deploy label of `ops` "true".
inline core::Node node(int i, const std::vector<core::Operand>& ops) {
  core::Node n;
  n.metadata.name = node_name(i);
  n.metadata.labels = {{"kubernetes.io/hostname", n.metadata.name}, {"nvidia.com/gpu.present", "true"}};
  for (const auto& op : ops) n.metadata.labels[op.label] = "true";
  return n;
}

// The order `kubectl get nodes,daemonsets,pods -A -o json` lists a kind in:
// the API server lists by storage key, namespace then name, so by name in
// one namespace. Returns the indexes of `names` in that order.
inline std::vector<size_t> kubectl_order(const std::vector<std::string>& names) {
  std::vector<size_t> order(names.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return names[a] < names[b]; });
  return order;
}

// The process's peak resident set (VmHWM), in MB; 0 when unknown.
inline double peak_rss_mb() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;  // kB
  return 0;
}

}  // namespace gpuops::bench
