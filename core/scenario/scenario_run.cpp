// core/scenario/scenario_run.cpp: replaying a Scenario's steps on a Cluster and
// checking their expectations (run_scenario, check_expectations, observe,
// nodes_refusal).
#include "core/scenario/scenario.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/analysis/analysis.h"
#include "core/base/errors.h"
#include "core/base/line_diff.h"
#include "core/base/terminal.h"
#include "core/cluster/cluster.h"
#include "core/cluster/simulation.h"
#include "core/codec/decode.h"
#include "core/codec/documents.h"
#include "core/diagnose/diagnose.h"
#include "core/diagnose/diagnose_render.h"
#include "core/gpu_operator/cluster_policy.h"
#include "core/gpu_operator/manifests.h"
#include "core/gpu_operator/operands.h"
#include "core/model/model.h"

namespace gpuops::core {

namespace {

std::string ds_field(const DaemonSetStatus& status, const std::string& name, bool& known) {
  known = true;
  if (name == "currentNumberScheduled") return std::to_string(status.current_number_scheduled);
  if (name == "numberMisscheduled") return std::to_string(status.number_misscheduled);
  if (name == "desiredNumberScheduled") return std::to_string(status.desired_number_scheduled);
  if (name == "numberReady") return std::to_string(status.number_ready);
  if (name == "observedGeneration") return std::to_string(status.observed_generation);
  if (name == "updatedNumberScheduled") return std::to_string(status.updated_number_scheduled);
  if (name == "numberAvailable") return std::to_string(status.number_available);
  if (name == "numberUnavailable") return std::to_string(status.number_unavailable);
  known = false;
  return "";
}

bool controlled_by_ds(const Pod& pod, const std::string& daemonset) {
  const OwnerReference* ref = pod.metadata.controller_ref();
  return ref && ref->kind == "DaemonSet" && ref->name == daemonset;
}

std::vector<std::string> pod_reasons(const Pod& pod) {
  std::vector<std::string> out;
  if (!pod.status.reason.empty()) out.push_back(pod.status.reason);
  for (const auto& condition : pod.status.conditions)
    if (condition.status != "True" && !condition.reason.empty()) out.push_back(condition.reason);
  for (const auto& container : pod.status.init_container_statuses)
    if (!container.reason.empty()) out.push_back(container.reason);
  for (const auto& container : pod.status.container_statuses)
    if (!container.reason.empty()) out.push_back(container.reason);
  return out;
}

std::string describe_pod(const Pod& pod) {
  std::string text = pod.metadata.name + " phase=" + pod.status.phase + " ready=" + (pod.is_ready() ? "true" : "false");
  if (!pod.spec.containers.empty()) text += " image=" + pod.spec.containers[0].image;
  if (auto g = pod.metadata.labels.find("pod-template-generation"); g != pod.metadata.labels.end())
    text += " pod-template-generation=" + g->second;
  if (pod.metadata.deletion_timestamp) text += " terminating";
  auto reasons = pod_reasons(pod);
  if (!reasons.empty()) {
    text += " reasons=";
    for (size_t i = 0; i < reasons.size(); ++i) text += (i ? "," : "") + reasons[i];
  }
  return text;
}

// IsPodUpdated's template generation test (pkg/controller/daemon/util).
bool of_current_template(const Pod& pod, const ClusterState& state, const std::string& daemonset) {
  for (const auto& ds : state.daemonsets) {
    if (ds.metadata.name != daemonset) continue;
    auto want = ds.metadata.annotations.find("deprecated.daemonset.template.generation");
    auto got = pod.metadata.labels.find("pod-template-generation");
    return want != ds.metadata.annotations.end() && got != pod.metadata.labels.end() && got->second == want->second;
  }
  return false;
}

std::vector<std::string> check_pod(const PodExpectation& expected, const ClusterState& state) {
  std::vector<const Pod*> pods;
  for (const auto& pod : state.pods) {
    bool mine = expected.orphaned
                    ? !pod.metadata.controller_ref() && pod.metadata.name.rfind(expected.daemonset + "-", 0) == 0
                    : controlled_by_ds(pod, expected.daemonset);
    if (mine && pod.target_node() == expected.node) pods.push_back(&pod);
  }
  std::string where = "pods (line " + std::to_string(expected.line) + "): " + expected.daemonset +
                      (expected.orphaned ? " (orphaned)" : "") + " on " + expected.node + ": ";
  if (expected.absent) {
    if (pods.empty()) return {};
    return {where + "expected no pod, found " + describe_pod(*pods[0])};
  }
  if (pods.empty()) return {where + "expected a pod, found none"};
  std::string last;
  for (const Pod* pod : pods) {
    std::vector<std::string> bad;
    if (expected.phase && pod->status.phase != *expected.phase) bad.push_back("phase " + *expected.phase);
    if (expected.ready && pod->is_ready() != *expected.ready)
      bad.push_back(std::string("ready ") + (*expected.ready ? "true" : "false"));
    if (expected.terminating && pod->metadata.deletion_timestamp.has_value() != *expected.terminating)
      bad.push_back(*expected.terminating ? "terminating" : "not terminating");
    if (expected.reason) {
      auto reasons = pod_reasons(*pod);
      if (std::find(reasons.begin(), reasons.end(), *expected.reason) == reasons.end())
        bad.push_back("reason " + *expected.reason);
    }
    if (expected.image) {
      bool all = !pod->spec.containers.empty();
      for (const auto& container : pod->spec.containers) all = all && container.image == *expected.image;
      if (!all) bad.push_back("image " + *expected.image);
    }
    if (expected.updated && of_current_template(*pod, state, expected.daemonset) != *expected.updated)
      bad.push_back(*expected.updated ? "of the current template" : "of an older template");
    if (expected.message) {
      bool found = pod->status.message.find(*expected.message) != std::string::npos;
      for (const auto& condition : pod->status.conditions)
        found = found || condition.message.find(*expected.message) != std::string::npos;
      if (!found) bad.push_back("message containing \"" + *expected.message + "\"");
    }
    if (bad.empty()) return {};
    std::string want;
    for (size_t i = 0; i < bad.size(); ++i) want += (i ? ", " : "") + bad[i];
    last = "expected " + want + "; found " + describe_pod(*pod);
    for (const auto& condition : pod->status.conditions)
      if (!condition.message.empty()) last += "\n    " + condition.type + ": " + condition.message;
  }
  return {where + last};
}

std::vector<Object> decode_apply(const Step& step, const Scenario& scenario) {
  std::vector<Document> docs;
  for (const auto& name : step.apply_operands) {
    const Operand* operand = scenario.catalog.by_name(name);
    auto more = read_documents(builtin_manifest(operand->manifest), "manifests/" + operand->manifest);
    docs.insert(docs.end(), more.begin(), more.end());
  }
  if (!step.apply_files.empty()) {
    auto more = read_paths(step.apply_files);
    docs.insert(docs.end(), more.begin(), more.end());
  }
  if (!step.apply_inline.empty()) {
    auto more = read_documents(step.apply_inline, scenario.file + ":" + std::to_string(step.line) + " (inline)");
    docs.insert(docs.end(), more.begin(), more.end());
  }
  std::vector<Object> objs;
  for (const auto& doc : docs) objs.push_back(decode_manifest(doc));  // all validated before any write
  return objs;
}

// The GPU Operator of `op`: simulated (started with its CRDs) when `sim`;
// on a real cluster it must run already. Then its ClusterPolicy is created
// (or updated) with the spec.
// A scenario's `clusterPolicy:` names only what it changes: the fields the
// CRD requires are added as {} (core::with_required_spec_fields), on every
// backend.
void install_operator(const OperatorSpec& op, Cluster& cluster, SimulationControls* sim) {
  if (sim)
    sim->install_operator(op.catalog, op.namespace_);
  else
    cluster.create_namespace(op.namespace_);
  ClusterPolicy cp;
  cp.metadata.name = op.policy_name;
  cp.raw = cluster_policy_object(op.spec);
  cluster.apply({Object(std::move(cp))});
}

// One case per action (a new core::Action without its case does not compile,
// -Wswitch).
void do_action(const Step& step, const Scenario& scenario, Cluster& cluster, SimulationControls* sim) {
  switch (step.action) {
    case Action::kNone: return;
    case Action::kInstallOperator: return install_operator(step.operator_spec, cluster, sim);
    case Action::kPatchClusterPolicy: return cluster.patch_cluster_policy(step.policy_name, step.policy_patch);
    case Action::kRemoveOperator:
      cluster.delete_cluster_policy(step.policy_name);
      cluster.settle();  // the garbage collector takes the DaemonSets while the operator still runs
      if (sim) sim->uninstall_operator();
      return;
    case Action::kCreateNamespace: return cluster.create_namespace(step.name_arg);
    case Action::kApply: return cluster.apply(decode_apply(step, scenario));
    case Action::kLabel:
      for (const auto& [k, v] : step.label_set) cluster.set_node_label(step.node, k, v);
      for (const auto& k : step.label_remove) cluster.set_node_label(step.node, k, std::nullopt);
      return;
    case Action::kAddNode: return cluster.add_node(step.new_node);
    case Action::kDeleteNode: return cluster.delete_node(step.name_arg);
    case Action::kTaint:
    case Action::kUntaint: {
      StateParts nodes_only{.nodes = true, .daemonsets = false, .pods = false, .cluster_policies = false};
      ClusterState state = cluster.partial_state(scenario.namespace_, nodes_only);
      auto it = std::find_if(state.nodes.begin(), state.nodes.end(),
                             [&](const Node& node) { return node.metadata.name == step.node; });
      if (it == state.nodes.end()) throw ClusterError("node " + core::go_quote(step.node) + " not found", 404);
      std::vector<Taint> taints;
      for (const auto& taint : it->taints) {
        bool same = taint.key == step.taint.key && (step.taint.effect.empty() || taint.effect == step.taint.effect);
        if (!same) taints.push_back(taint);
      }
      if (step.action == Action::kTaint) taints.push_back(step.taint);
      return cluster.set_node_taints(step.node, taints);
    }
    case Action::kCordon: return cluster.set_node_unschedulable(step.name_arg, true);
    case Action::kUncordon: return cluster.set_node_unschedulable(step.name_arg, false);
    case Action::kReady: return cluster.set_node_ready(step.node, step.ready_status);
    case Action::kDeletePod: {
      StateParts pods_only{.nodes = false, .daemonsets = false, .pods = true, .cluster_policies = false};
      ClusterState state = cluster.partial_state(scenario.namespace_, pods_only);
      const Pod* found = nullptr;
      for (const auto& pod : state.pods)
        if (controlled_by_ds(pod, step.daemonset) && pod.target_node() == step.node && !pod.metadata.deletion_timestamp)
          found = &pod;
      if (!found)
        throw ClusterError("no pod of DaemonSet \"" + step.daemonset + "\" on node \"" + step.node + "\"", 404);
      return cluster.delete_pod(scenario.namespace_, found->metadata.name);
    }
    case Action::kDeleteDaemonSet: return cluster.delete_daemonset(scenario.namespace_, step.daemonset, step.cascade);
    case Action::kFault: return sim->inject_fault(step.fault);
    case Action::kClearFaults: return sim->clear_faults();
    case Action::kAdvance: return sim->advance(step.advance);
    case Action::kHost: return sim->set_host(step.host);
  }
}

}  // namespace

void run_step_action(const Step& step, const Scenario& scenario, Cluster& cluster, SimulationControls* sim) {
  if (step.simulator_only() && !sim && step.action != Action::kNone && step.action != Action::kAdvance)
    throw ClusterError("step \"" + step.title() + "\" needs the simulator");
  if (step.action == Action::kAdvance && !sim) throw ClusterError(action_key(step.action) + " needs the simulator");
  do_action(step, scenario, cluster, sim);
}

StepObservation observe(const ClusterState& state, const Catalog& catalog) {
  StepObservation observation;
  Report report = audit(state, catalog);
  observation.audit = report.lines;
  observation.audit_exit = report.exit_code;
  std::vector<std::string> names;
  for (const auto& node : state.nodes) names.push_back(node.metadata.name);
  std::sort(names.begin(), names.end());
  for (const auto& name : names)
    observation.order.push_back(name + " " + order_check(state, catalog, name).lines.at(0));
  observation.matrix = matrix(state, catalog).lines;
  for (const auto& ds : state.daemonsets) {
    auto& fields = observation.daemonsets[ds.metadata.name];
    const DaemonSetStatus& status = ds.status;
    fields["currentNumberScheduled"] = status.current_number_scheduled;
    fields["numberMisscheduled"] = status.number_misscheduled;
    fields["desiredNumberScheduled"] = status.desired_number_scheduled;
    fields["numberReady"] = status.number_ready;
    fields["observedGeneration"] = status.observed_generation;
    fields["updatedNumberScheduled"] = status.updated_number_scheduled;
    fields["numberAvailable"] = status.number_available;
    fields["numberUnavailable"] = status.number_unavailable;
    StepObservation::DaemonSetSpec& spec = observation.daemonset_specs[ds.metadata.name];
    spec.node_selector = ds.template_.spec.node_selector;
    for (const auto& t : ds.template_.spec.tolerations) {
      std::string text = t.key + ":" + (t.op.empty() ? "Equal" : t.op);
      if (!t.value.empty()) text += "=" + t.value;
      text += ":" + t.effect;
      if (t.toleration_seconds) text += ":" + std::to_string(*t.toleration_seconds);
      spec.tolerations.push_back(std::move(text));
    }
    spec.update_strategy = ds.update_strategy;
    for (const auto& c : ds.template_.spec.init_containers) spec.init_containers.push_back(c.name);
  }
  for (const auto& node : state.nodes) {
    Labels& labels = observation.node_labels[node.metadata.name];
    for (const auto& [k, v] : node.metadata.labels)
      if (k.rfind("nvidia.com/", 0) == 0) labels[k] = v;
    observation.pods[node.metadata.name];
  }
  for (const auto& pod : state.pods) {
    if (pod.spec.node_name.empty() || pod.metadata.deletion_timestamp) continue;
    const OwnerReference* ref = pod.metadata.controller_ref();
    // A pod without a DaemonSet owner (orphaned) by its name less the
    // generated suffix, which differs from run to run.
    std::string owner = ref && ref->kind == "DaemonSet"
                            ? ref->name
                            : "(no owner: " + pod.metadata.name.substr(0, pod.metadata.name.rfind('-')) + "-*)";
    observation.pods[pod.spec.node_name].push_back(owner + " " + pod.status.phase);
  }
  for (auto& [node, list] : observation.pods) std::sort(list.begin(), list.end());
  for (const auto& cp : state.cluster_policies) observation.cluster_policies[cp.metadata.name] = cp.state;
  return observation;
}

StateParts state_parts(const Expectations& expect) {
  StateParts parts;
  // audit, order-check, matrix and diagnose read every part.
  if (expect.audit_lines || expect.audit_exit || !expect.order.empty() || expect.matrix || !expect.findings.empty())
    return parts;
  parts.nodes = !expect.node_labels.empty();
  // pods' `updated` and running's owner uid read the DaemonSet too.
  parts.daemonsets =
      !expect.daemonsets.empty() || !expect.rollouts.empty() || !expect.running.empty() || !expect.pods.empty();
  parts.pods = !expect.running.empty() || !expect.pods.empty();
  parts.cluster_policies = expect.cluster_policy.has_value();
  return parts;
}

std::vector<std::string> check_expectations(const Expectations& expect, const ClusterState& state,
                                            const Catalog& catalog) {
  std::vector<std::string> failures;
  if (expect.audit_lines || expect.audit_exit) {
    Report report = audit(state, catalog);
    if (expect.audit_lines && report.lines != *expect.audit_lines)
      failures.push_back("audit (line " + std::to_string(expect.audit_line) + "): output differs\n" +
                         line_diff(*expect.audit_lines, report.lines));
    if (expect.audit_exit && report.exit_code != *expect.audit_exit)
      failures.push_back("audit (line " + std::to_string(expect.audit_line) + "): exit code: expected " +
                         std::to_string(*expect.audit_exit) + ", got " + std::to_string(report.exit_code));
  }
  for (const auto& [node, want] : expect.order) {
    // The binding captured by name: clang++ 14 refuses to capture a
    // structured binding implicitly (P1091, clang 16).
    bool known = std::any_of(state.nodes.begin(), state.nodes.end(),
                             [&node = node](const Node& candidate) { return candidate.metadata.name == node; });
    std::string got = known ? order_check(state, catalog, node).lines.at(0) : "(no such node)";
    if (got != want)
      failures.push_back("order (line " + std::to_string(expect.order_line) + "): " + node + ": expected " + want +
                         ", got " + got);
  }
  if (expect.matrix) {
    Report report = matrix(state, catalog);
    if (report.lines != *expect.matrix)
      failures.push_back("matrix (line " + std::to_string(expect.matrix_line) + "): output differs\n" +
                         line_diff(*expect.matrix, report.lines));
  }
  for (const auto& [name, fields] : expect.daemonsets) {
    auto it = std::find_if(state.daemonsets.begin(), state.daemonsets.end(),
                           [&name = name](const DaemonSet& candidate) { return candidate.metadata.name == name; });
    std::string where = "daemonsets (line " + std::to_string(expect.daemonsets_line) + "): " + name;
    if (it == state.daemonsets.end()) {
      failures.push_back(where + ": no such DaemonSet in " + state.namespace_);
      continue;
    }
    for (const auto& [k, v] : fields) {
      bool known = false;
      std::string got = ds_field(it->status, k, known);
      if (got != std::to_string(v))
        failures.push_back(where + ": status." + k + ": expected " + std::to_string(v) + ", got " + got);
    }
  }
  for (const auto& [name, want] : expect.running) {
    std::vector<std::string> got;
    const DaemonSet* ds = nullptr;
    for (const auto& candidate : state.daemonsets)
      if (candidate.metadata.name == name) ds = &candidate;
    for (const auto& pod : state.pods) {
      if (!controlled_by_ds(pod, name) || pod.spec.node_name.empty() || pod.status.phase != "Running" ||
          pod.metadata.deletion_timestamp)
        continue;
      const OwnerReference* ref = pod.metadata.controller_ref();
      if (ds && !ds->metadata.uid.empty() && !ref->uid.empty() && ref->uid != ds->metadata.uid) continue;
      got.push_back(pod.spec.node_name);
    }
    std::sort(got.begin(), got.end());
    if (got != want) {
      auto list = [](const std::vector<std::string>& names) {
        std::string text = "[";
        for (size_t i = 0; i < names.size(); ++i) text += (i ? ", " : "") + names[i];
        return text + "]";
      };
      failures.push_back("running (line " + std::to_string(expect.running_line) + "): " + name +
                         ": expected Running on " + list(want) + ", got " + list(got));
    }
  }
  for (const auto& want : expect.rollouts) {
    auto it = std::find_if(state.daemonsets.begin(), state.daemonsets.end(),
                           [&want](const DaemonSet& candidate) { return candidate.metadata.name == want.daemonset; });
    std::string where = "rollout (line " + std::to_string(want.line) + "): " + want.daemonset + ": ";
    if (it == state.daemonsets.end()) {
      failures.push_back(where + "no such DaemonSet in " + state.namespace_);
      continue;
    }
    RolloutStatus got = daemonset_rollout_status(*it);
    if (!got.error.empty()) {
      failures.push_back(where + got.error);
    } else if (got.done != want.complete) {
      failures.push_back(where + "expected the rollout " + (want.complete ? "complete" : "in progress") +
                         ", got: " + got.message);
    }
  }
  for (const auto& expected_pod : expect.pods) {
    auto pod_failures = check_pod(expected_pod, state);
    failures.insert(failures.end(), pod_failures.begin(), pod_failures.end());
  }
  if (expect.cluster_policy) {
    const ClusterPolicyExpectation& want = *expect.cluster_policy;
    std::string where = "clusterPolicy (line " + std::to_string(want.line) + "): " + want.name;
    const ClusterPolicy* cp = nullptr;
    for (const auto& candidate : state.cluster_policies)
      if (candidate.metadata.name == want.name) cp = &candidate;
    if (want.absent) {
      if (cp) failures.push_back(where + ": expected absent, it exists");
    } else if (!cp) {
      failures.push_back(where + ": no such ClusterPolicy");
    } else {
      if (want.state && cp->state != *want.state)
        failures.push_back(where + ": status.state: expected \"" + *want.state + "\", got \"" + cp->state + "\"");
      // The condition that is True: Ready (ready) or Error (not ready).
      const Condition* on = nullptr;
      for (const auto& c : cp->conditions)
        if (c.status == "True" && (c.type == "Ready" || c.type == "Error")) on = &c;
      if (want.reason && (!on || on->reason != *want.reason))
        failures.push_back(where + ": condition reason: expected \"" + *want.reason + "\", got \"" +
                           (on ? on->type + "/" + on->reason : std::string("(no True Ready or Error condition)")) +
                           "\"");
      if (want.message && (!on || on->message.find(*want.message) == std::string::npos))
        failures.push_back(where + ": condition message: expected it to contain \"" + *want.message + "\", got \"" +
                           (on ? on->message : std::string()) + "\"");
    }
  }
  if (!expect.findings.empty()) {
    std::vector<Finding> found = diagnose(state, catalog, {});
    for (const auto& want : expect.findings) {
      std::string where = "diagnose (line " + std::to_string(want.line) + "): " + want.node +
                          (want.operand.empty() ? "" : " " + want.operand) + " " + want.code;
      const Finding* hit = nullptr;
      for (const auto& f : found)
        if (f.node == want.node && f.operand == want.operand && f.name == want.code) hit = &f;
      if (want.absent) {
        if (hit) failures.push_back(where + ": expected no such finding, got: " + hit->reason);
        continue;
      }
      if (!hit) {
        std::string seen;
        for (const auto& f : found)
          if (f.node == want.node) seen += "\n    " + f.name + (f.operand.empty() ? "" : " (" + f.operand + ")");
        failures.push_back(where + ": no such finding" +
                           (seen.empty() ? " (none on that node)" : "; on that node:" + seen));
        continue;
      }
      if (want.severity && severity_name(hit->severity) != *want.severity)
        failures.push_back(where + ": severity: expected " + *want.severity + ", got " + severity_name(hit->severity));
    }
  }
  for (const auto& [node, labels] : expect.node_labels) {
    auto it = std::find_if(state.nodes.begin(), state.nodes.end(),
                           [&node = node](const Node& candidate) { return candidate.metadata.name == node; });
    std::string where = "nodes (line " + std::to_string(expect.nodes_line) + "): " + node;
    if (it == state.nodes.end()) {
      failures.push_back(where + ": no such node");
      continue;
    }
    for (const auto& [k, v] : labels) {
      auto label = it->metadata.labels.find(k);
      std::optional<std::string> got;
      if (label != it->metadata.labels.end()) got = label->second;
      if (got != v)
        failures.push_back(where + ": label " + k + ": expected " + (v ? "\"" + *v + "\"" : "absent") + ", got " +
                           (got ? "\"" + *got + "\"" : "absent"));
    }
  }
  return failures;
}

// mirrors DaemonSetStatusViewer.Status, kubectl pkg/polymorphichelpers/rollout_status.go.
RolloutStatus daemonset_rollout_status(const DaemonSet& ds) {
  RolloutStatus out;
  if (ds.update_strategy != "RollingUpdate") {
    out.error = "rollout status is only available for RollingUpdate strategy type";
    return out;
  }
  const DaemonSetStatus& s = ds.status;
  const std::string name = "\"" + ds.metadata.name + "\"";
  if (ds.metadata.generation > s.observed_generation) {
    out.message = "Waiting for daemon set spec update to be observed...";
  } else if (s.updated_number_scheduled < s.desired_number_scheduled) {
    out.message = "Waiting for daemon set " + name +
                  " rollout to finish: " + std::to_string(s.updated_number_scheduled) + " out of " +
                  std::to_string(s.desired_number_scheduled) + " new pods have been updated...";
  } else if (s.number_available < s.desired_number_scheduled) {
    out.message = "Waiting for daemon set " + name + " rollout to finish: " + std::to_string(s.number_available) +
                  " of " + std::to_string(s.desired_number_scheduled) + " updated pods are available...";
  } else {
    out.message = "daemon set " + name + " successfully rolled out";
    out.done = true;
  }
  return out;
}

const char* const kNeedsEmptyCluster =
    "a scenario on a live cluster creates and deletes its own nodes and namespace, so it needs an empty cluster "
    "(gpuops serve, KWOK); nothing was changed";

std::string nodes_refusal(const ClusterState& state) {
  if (state.nodes.empty()) return "";
  std::vector<std::string> names;
  for (const auto& node : state.nodes) names.push_back(node.metadata.name);
  std::sort(names.begin(), names.end());
  std::string list;
  for (size_t i = 0; i < names.size() && i < 5; ++i) list += (i ? ", " : "") + names[i];
  if (names.size() > 5) list += ", ... (" + std::to_string(names.size()) + " nodes)";
  return "the cluster already has nodes (" + list + ")";
}

ScenarioResult run_scenario(const Scenario& scenario, Cluster& cluster, SimulationControls* sim,
                            const RunOptions& options) {
  ScenarioResult result;
  result.file = scenario.file;
  result.name = scenario.name;
  if (scenario.simulator_only && !sim) {
    StepResult step_result;
    step_result.title = "(whole scenario)";
    step_result.status = StepResult::Status::kSkipped;
    step_result.skip_reason = "simulator only (simulatorOnly: true)";
    result.steps.push_back(step_result);
    if (options.observe) result.observations.emplace_back();
    return result;
  }
  // The GPU Operator: simulated with the simulator's controls; elsewhere the
  // cluster's own, which must be there (its CRD served).
  bool needs_operator = scenario.operator_.has_value() ||
                        std::any_of(scenario.steps.begin(), scenario.steps.end(),
                                    [](const Step& step) { return step.action == Action::kInstallOperator; });
  if (needs_operator && !sim) {
    std::string why;
    try {
      if (!cluster.serves_cluster_policies())
        why = "the GPU Operator is not installed on this cluster (it serves no clusterpolicies.nvidia.com)";
    } catch (const std::exception& e) {
      why = std::string("cannot tell whether the GPU Operator is installed: ") + e.what();
    }
    if (!why.empty()) {
      StepResult step_result;
      step_result.title = "(whole scenario)";
      step_result.status = StepResult::Status::kSkipped;
      step_result.skip_reason = why;
      result.steps.push_back(step_result);
      if (options.observe) result.observations.emplace_back();
      return result;
    }
  }
  // A live cluster: the scenario creates and deletes its nodes and its
  // namespace, and its expectations speak of every node. Refuse a cluster
  // that already has nodes, or DaemonSets or pods in the namespace, rather
  // than change or delete what others put there.
  if (options.clean_up) {
    std::string refusal;
    try {
      ClusterState before = cluster.state(scenario.namespace_);
      refusal = nodes_refusal(before);
      if (refusal.empty() && (!before.daemonsets.empty() || !before.pods.empty())) {
        refusal = "namespace " + scenario.namespace_ + " already has DaemonSets or pods";
      }
    } catch (const std::exception& e) {
      refusal = std::string("cannot read the cluster: ") + e.what();
    }
    if (!refusal.empty()) {
      result.passed = false;
      result.error = "not run: " + refusal + "; " + kNeedsEmptyCluster;
      for (const auto& step : scenario.steps) {
        StepResult step_result;
        step_result.title = step.title();
        step_result.line = step.line;
        step_result.status = StepResult::Status::kSkipped;
        step_result.skip_reason = "the scenario was not run";
        result.steps.push_back(step_result);
        if (options.observe) result.observations.emplace_back();
      }
      return result;
    }
  }
  std::vector<std::string> created_nodes;
  try {
    for (const auto& node : scenario.nodes) {
      cluster.add_node(node);
      created_nodes.push_back(node.metadata.name);
    }
    if (sim)
      for (const auto& host : scenario.hosts) sim->set_host(host);
    if (scenario.operator_) install_operator(*scenario.operator_, cluster, sim);
    cluster.settle();
  } catch (const std::exception& e) {
    result.passed = false;
    result.error = std::string("setting up the initial cluster: ") + e.what();
  }
  bool stop = !result.error.empty();
  for (const auto& step : scenario.steps) {
    StepResult step_result;
    step_result.title = step.title();
    step_result.line = step.line;
    if (stop) {
      step_result.status = StepResult::Status::kSkipped;
      step_result.skip_reason = "an earlier step failed";
      result.steps.push_back(step_result);
      if (options.observe) result.observations.emplace_back();
      continue;
    }
    if (step.simulator_only() && !sim) {
      step_result.status = StepResult::Status::kSkipped;
      step_result.skip_reason =
          std::string("simulator only (") + (step.settle ? action_key(step.action) : "settle: false") + ")";
      result.steps.push_back(step_result);
      if (options.observe) result.observations.emplace_back();
      continue;
    }
    // The action.
    std::optional<std::string> error;
    int error_exit = 0;
    std::string error_field;
    int error_line = 0;
    try {
      do_action(step, scenario, cluster, sim);
      if (step.settle)
        cluster.settle();
      else
        sim->run();
    } catch (const InputError& e) {
      error = e.what();
      error_exit = 2;
      error_field = e.field();
      error_line = e.line();
    } catch (const ClusterError& e) {
      error = e.what();
      error_exit = 3;
    }
    if (step.expect_error) {
      const ExpectedError& expected = *step.expect_error;
      if (!error) {
        step_result.failures.push_back("expectError: the action succeeded, expected it to fail");
      } else {
        if (expected.exit && error_exit != expected.exit)
          step_result.failures.push_back("expectError: exit: expected " + std::to_string(expected.exit) + ", got " +
                                         std::to_string(error_exit) + " (" + *error + ")");
        if (!expected.contains.empty() && error->find(expected.contains) == std::string::npos)
          step_result.failures.push_back("expectError: message: expected it to contain \"" + expected.contains +
                                         "\", got \"" + *error + "\"");
        if (!expected.field.empty() && error_field != expected.field)
          step_result.failures.push_back("expectError: field: expected " + expected.field + ", got " + error_field);
        if (expected.line && error_line != expected.line)
          step_result.failures.push_back("expectError: line: expected " + std::to_string(expected.line) + ", got " +
                                         std::to_string(error_line));
      }
    } else if (error) {
      step_result.failures.push_back(action_key(step.action) + " failed: " + *error);
    }
    // The expectations, polled on a real cluster.
    std::optional<ClusterState> last;  // the state they were last checked on
    if (step_result.failures.empty() && !step.expect.empty()) {
      Duration timeout = step.timeout.value_or(options.default_timeout);
      Time deadline = options.poll ? options.now() + timeout : Time{};
      while (true) {
        try {
          // What the expectations read; the whole state when it is observed.
          last = options.observe ? cluster.state(scenario.namespace_)
                                 : cluster.partial_state(scenario.namespace_, state_parts(step.expect));
          step_result.failures = check_expectations(step.expect, *last, scenario.catalog);
        } catch (const std::exception& e) {
          last.reset();
          step_result.failures = {std::string("reading the cluster: ") + e.what()};
        }
        if (step_result.failures.empty() || !options.poll || options.now() >= deadline) break;
        options.sleep(options.poll_interval);
      }
      if (!step_result.failures.empty() && options.poll)
        step_result.failures.push_back("(still failing after " + std::to_string(timeout.count() / 1000) +
                                       "s; last state shown)");
    }
    if (!step_result.failures.empty()) {
      step_result.status = StepResult::Status::kFailed;
      result.passed = false;
      if (options.fail_fast) stop = true;
    }
    result.steps.push_back(std::move(step_result));
    if (options.observe) {
      std::optional<StepObservation> observation;
      try {
        if (!last) last = cluster.state(scenario.namespace_);
        observation = observe(*last, scenario.catalog);
        if (options.poll && needs_operator) {
          // Unchanged for longer than the operator's requeue while notReady
          // (Reconcile's RequeueAfter 5 s, clusterpolicy_controller.go): a
          // state it reports for a moment is not taken for the step's end.
          const Duration quiet = std::chrono::seconds(6);
          Time deadline = options.now() + step.timeout.value_or(options.default_timeout);
          Time since = options.now();
          while (options.now() < deadline && options.now() - since < quiet) {
            options.sleep(options.poll_interval);
            StepObservation again = observe(cluster.state(scenario.namespace_), scenario.catalog);
            if (again == *observation) continue;
            observation = std::move(again);
            since = options.now();
          }
        }
      } catch (const std::exception&) {
        observation.reset();
      }
      result.observations.push_back(std::move(observation));
    }
  }
  if (options.clean_up) {
    // The ClusterPolicies the scenario created, before their namespace and nodes.
    // Those applied beside the operator's own first: while the operator's
    // singleton exists, they stay "ignored" and render nothing.
    std::set<std::string> own, applied;
    if (scenario.operator_) own.insert(scenario.operator_->policy_name);
    for (const auto& step : scenario.steps) {
      if (step.action == Action::kInstallOperator) own.insert(step.operator_spec.policy_name);
      if (step.action != Action::kApply) continue;
      try {  // a ClusterPolicy among the applied objects (an apply meant to fail may not decode)
        for (const auto& object : decode_apply(step, scenario))
          if (const auto* cp = std::get_if<ClusterPolicy>(&object)) applied.insert(cp->metadata.name);
      } catch (const std::exception&) {
      }
    }
    std::vector<std::string> policies;
    for (const auto& name : applied)
      if (!own.count(name)) policies.push_back(name);
    policies.insert(policies.end(), own.begin(), own.end());
    bool deleted_policy = false;
    for (const auto& name : policies) {
      try {
        cluster.delete_cluster_policy(name);
        deleted_policy = true;
      } catch (const std::exception&) {
      }
    }
    // The garbage collector takes the operator's DaemonSets (owned by the
    // ClusterPolicy) and then their pods, in the background: wait until the
    // namespace has neither, so that the next scenario finds it empty and
    // the pods do not wait for pod GC on deleted nodes.
    if (deleted_policy && options.poll) {
      Time deadline = options.now() + options.default_timeout;
      while (true) {
        bool empty = false;
        try {
          ClusterState now = cluster.state(scenario.namespace_);
          empty = now.daemonsets.empty() && now.pods.empty();
        } catch (const std::exception&) {
        }
        if (empty || options.now() >= deadline) break;
        options.sleep(options.poll_interval);
      }
    }
    for (const auto& step : scenario.steps)
      if (step.action == Action::kCreateNamespace) {
        try {
          cluster.delete_namespace(step.name_arg);
        } catch (const std::exception&) {
        }
      }
    for (const auto& step : scenario.steps)
      if (step.action == Action::kAddNode) created_nodes.push_back(step.new_node.metadata.name);
    for (const auto& name : created_nodes) {
      try {
        cluster.delete_node(name);
      } catch (const std::exception&) {
      }
    }
  }
  return result;
}

}  // namespace gpuops::core
