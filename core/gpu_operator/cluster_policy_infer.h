// core/gpu_operator/cluster_policy_infer.h: a ClusterPolicy inferred from
// what the operator rendered, for an install whose input lacks it (the dump
// README shows, `kubectl get nodes,daemonsets,pods -A -o json`, holds none),
// so that `plan` still simulates the operator (its node labeller above all)
// instead of dropping it.
#pragma once

#include <string>
#include <vector>

#include "core/gpu_operator/operands.h"
#include "core/model/model.h"

namespace gpuops::core {

struct InferredClusterPolicy {
  // Named "cluster-policy" (the Helm chart's name), generation 1, created
  // with the oldest operand DaemonSet; spec: every required field (as the
  // chart renders them, {} at the defaults), `<field>.enabled` true for each
  // component whose operand DaemonSet is in the state and false for the
  // others, sandboxWorkloads enabled (mode kata when a kata operand runs)
  // when a sandbox operand's DaemonSet is there, and spec.daemonsets'
  // tolerations, priorityClassName and update strategy where every rendered
  // operand DaemonSet holds the same one and it is not the assets' (see
  // `inferred`). Nothing else: images, versions, env, MIG and upgrade
  // settings stay the defaults.
  ClusterPolicy policy;
  // The spec.daemonsets fields inferred ("daemonsets.tolerations",
  // "daemonsets.priorityClassName", "daemonsets.updateStrategy",
  // "daemonsets.rollingUpdate"), for the note.
  std::vector<std::string> inferred;
  // The components enabled, by policy field, for the note ("driver, toolkit,
  // devicePlugin, ...").
  std::vector<std::string> enabled;
  // The catalog's operands whose rendering the inferred policy gets wrong
  // (state_enabled differs from whether their DaemonSet is in the state: an
  // install whose real policy no choice of enabled flags reproduces), for
  // the note: their predictions are uncertain.
  std::vector<std::string> uncertain;
};

// Mirrors the operator's own reading of its policy, the other way round:
// isStateEnabled (controllers/state_manager.go, core::state_enabled) decides
// which operand DaemonSets exist, so their presence tells the enabled
// flags. `catalog` is the install's (operator mode); its version picks the
// release's rules. Never throws.
InferredClusterPolicy infer_cluster_policy(const ClusterState& state, const Catalog& catalog);

}  // namespace gpuops::core
