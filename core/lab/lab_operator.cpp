// The lab's ninth act; see core/lab_operator.h.
#include "core/lab/lab_operator.h"

#include <boost/json.hpp>

#include <set>

#include "core/gpu_operator/cluster_policy.h"
#include "core/gpu_operator/nfd.h"

namespace gpuops::core {

void start_lab_operator(Cluster& cluster, SimulationControls& sim, const Catalog& oc, const std::string& ns,
                        const std::vector<std::string>& nodes, ClusterState* before) {
  // The chart installs NFD too, which labels every node's kernel version and
  // OS release, as its default kernel and system sources do (the driver needs
  // them: core::driver_input_gap, core/gpu_operator/nfd.h); the lab's nodes
  // already carry its GPU label where the lab put one.
  for (const auto& node : nodes) {
    cluster.set_node_label(node, kKernelVersionFullLabel, "6.8.0-101-generic");
    cluster.set_node_label(node, kOsReleaseIdLabel, "ubuntu");
    cluster.set_node_label(node, kOsVersionIdLabel, "24.04");
  }
  cluster.settle();
  if (before) *before = cluster.state(ns);
  sim.install_operator(oc, ns);
  ClusterPolicy cp;
  cp.metadata.name = "cluster-policy";
  cp.raw = cluster_policy_object({});
  cluster.apply({Object(cp)});
  cluster.settle();
}

// What it does to each label follows labelGPUNodes (core/gpu_operator/gpu_node_rules.h);
// the words say which rule.
OperatorAct run_operator_act(Cluster& cluster, SimulationControls& sim, const Catalog& oc, const std::string& ns,
                             const std::vector<std::string>& nodes) {
  OperatorAct act;
  auto say = [&act](const std::string& line) { act.lines.push_back(line); };
  ClusterState before;
  start_lab_operator(cluster, sim, oc, ns, nodes, &before);
  say("NFD (installed with the chart) labels each node's kernel version and OS release");
  say("helm install gpu-operator (its ClusterPolicy at the defaults)");
  ClusterState after = cluster.state(ns);
  auto labels_of = [](const ClusterState& st, const std::string& node) {
    for (const auto& n : st.nodes)
      if (n.metadata.name == node) return n.metadata.labels;
    return Labels{};
  };
  for (const auto& node : nodes) {
    Labels b = labels_of(before, node), a = labels_of(after, node);
    std::set<std::string> keys;
    for (const auto& [k, v] : b)
      if (k.rfind("nvidia.com/", 0) == 0) keys.insert(k);
    for (const auto& [k, v] : a)
      if (k.rfind("nvidia.com/", 0) == 0) keys.insert(k);
    if (keys.empty()) {
      say(node + ": no NVIDIA label before or after (no NFD GPU label: not a GPU node to the operator)");
      continue;
    }
    for (const auto& k : keys) {
      auto bi = b.find(k), ai = a.find(k);
      const bool had = bi != b.end(), has = ai != a.end();
      if (had && has && bi->second == ai->second)
        say(node + " " + k + "=" + ai->second + " kept" +
            (ai->second == "true" ? "" : " (the operator adds only missing keys: a value set by hand stays)"));
      else if (had && has)
        say(node + " " + k + "=" + bi->second + " overwritten to \"" + ai->second + "\"");
      else if (had && a.count("nvidia.com/gpu.present") && a.at("nvidia.com/gpu.present") == "true")
        say(node + " " + k + "=" + bi->second + " removed (not a label of this node's workload config)");
      else if (had)
        say(node + " " + k + "=" + bi->second +
            " removed (the node has no nvidia.com/gpu.present=true: no NFD GPU label, so not a GPU node)");
      else
        say(node + " " + k + "=" + ai->second + " added by the operator");
    }
  }
  // The lab's DaemonSets: updated by name, or refused (the selector is immutable).
  for (const auto& ds : before.daemonsets) {
    const DaemonSet* now = nullptr;
    for (const auto& d : after.daemonsets)
      if (d.metadata.name == ds.metadata.name) now = &d;
    bool owned = now && now->metadata.controller_ref() && now->metadata.controller_ref()->kind == "ClusterPolicy";
    say("DaemonSet " + ds.metadata.name +
        (owned ? ": taken over by the operator (updated by name)"
         : now ? ": left as the lab wrote it (the operator could not update it: see the ClusterPolicy below)"
               : ": gone"));
  }
  for (const auto& p : after.cluster_policies) {
    std::string line = "ClusterPolicy " + p.metadata.name + " status.state " + (p.state.empty() ? "(none)" : p.state);
    for (const auto& cond : p.conditions)
      if (cond.status == "True" && !cond.message.empty()) line += ": " + cond.message;
    say(line);
  }
  act.before = std::move(before);
  act.after = std::move(after);
  return act;
}
}  // namespace gpuops::core
