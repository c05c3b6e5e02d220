// core/scenario/scenario_expect.cpp: checking a step's expectations on one
// state (check_expectations, state_parts, daemonset_rollout_status).
#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/analysis.h"
#include "core/base/line_diff.h"
#include "core/diagnose/diagnose.h"
#include "core/diagnose/diagnose_render.h"
#include "core/model/model.h"
#include "core/scenario/scenario.h"
#include "core/scenario/scenario_internal.h"

namespace gpuops::core {

using scenario_internal::controlled_by_ds;

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

// audit: its lines and exit code.
void check_audit(const Expectations& expect, const ClusterState& state, const Catalog& catalog,
                 std::vector<std::string>& failures) {
  Report report = audit(state, catalog);
  if (expect.audit_lines && report.lines != *expect.audit_lines)
    failures.push_back("audit (line " + std::to_string(expect.audit_line) + "): output differs\n" +
                       line_diff(*expect.audit_lines, report.lines));
  if (expect.audit_exit && report.exit_code != *expect.audit_exit)
    failures.push_back("audit (line " + std::to_string(expect.audit_line) + "): exit code: expected " +
                       std::to_string(*expect.audit_exit) + ", got " + std::to_string(report.exit_code));
}

// order: each node's order-check line.
void check_order(const Expectations& expect, const ClusterState& state, const Catalog& catalog,
                 std::vector<std::string>& failures) {
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
}

// daemonsets: the status fields of each DaemonSet.
void check_daemonset_fields(const Expectations& expect, const ClusterState& state, std::vector<std::string>& failures) {
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
}

// running: the nodes where each DaemonSet's pods run.
void check_running(const Expectations& expect, const ClusterState& state, std::vector<std::string>& failures) {
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
}

// rollout: whether each DaemonSet's rollout is complete.
void check_rollouts(const Expectations& expect, const ClusterState& state, std::vector<std::string>& failures) {
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
}

// clusterPolicy: its state and the condition that is True.
void check_cluster_policy(const ClusterPolicyExpectation& want, const ClusterState& state,
                          std::vector<std::string>& failures) {
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
                         (on ? on->type + "/" + on->reason : std::string("(no True Ready or Error condition)")) + "\"");
    if (want.message && (!on || on->message.find(*want.message) == std::string::npos))
      failures.push_back(where + ": condition message: expected it to contain \"" + *want.message + "\", got \"" +
                         (on ? on->message : std::string()) + "\"");
  }
}

// diagnose: each finding there (or absent), with its severity.
void check_findings(const Expectations& expect, const ClusterState& state, const Catalog& catalog,
                    std::vector<std::string>& failures) {
  std::vector<Finding> found = diagnose(state, catalog, {});
  for (const auto& want : expect.findings) {
    if (want.code.empty()) {  // absent, any code: nothing at this severity or worse
      const std::string& level = *want.severity;
      const Severity floor = severity_from_name(level).value_or(Severity::kInfo);  // checked at load
      for (const auto& f : found)
        if ((want.node.empty() || f.node == want.node) && f.severity >= floor)
          failures.push_back("diagnose (line " + std::to_string(want.line) + "): expected nothing at " + level +
                             " or above" + (want.node.empty() ? "" : " on " + want.node) + ", got: " + f.node + " " +
                             (f.operand.empty() ? "-" : f.operand) + " " + severity_name(f.severity) + " " + f.name +
                             ": " + f.reason);
      continue;
    }
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

// nodes: each node's labels (a value, or absent).
void check_node_labels(const Expectations& expect, const ClusterState& state, std::vector<std::string>& failures) {
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
}

}  // namespace

std::vector<std::string> check_expectations(const Expectations& expect, const ClusterState& state,
                                            const Catalog& catalog) {
  std::vector<std::string> failures;
  if (expect.audit_lines || expect.audit_exit) check_audit(expect, state, catalog, failures);
  check_order(expect, state, catalog, failures);
  if (expect.matrix) {
    Report report = matrix(state, catalog);
    if (report.lines != *expect.matrix)
      failures.push_back("matrix (line " + std::to_string(expect.matrix_line) + "): output differs\n" +
                         line_diff(*expect.matrix, report.lines));
  }
  check_daemonset_fields(expect, state, failures);
  check_running(expect, state, failures);
  for (auto& failure : check_object_expectations(expect.asserts, expect.errors, state))
    failures.push_back(std::move(failure));
  check_rollouts(expect, state, failures);
  for (const auto& expected_pod : expect.pods) {
    auto pod_failures = check_pod(expected_pod, state);
    failures.insert(failures.end(), pod_failures.begin(), pod_failures.end());
  }
  if (expect.cluster_policy) check_cluster_policy(*expect.cluster_policy, state, failures);
  if (!expect.findings.empty()) check_findings(expect, state, catalog, failures);
  check_node_labels(expect, state, failures);
  return failures;
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
  object_state_parts(expect.asserts, parts);
  object_state_parts(expect.errors, parts);
  return parts;
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

}  // namespace gpuops::core
