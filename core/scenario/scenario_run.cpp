// core/scenario/scenario_run.cpp: replaying a Scenario's steps on a Cluster
// (run_scenario, observe, nodes_refusal); the expectations are checked in
// core/scenario/scenario_expect.cpp.
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
#include "core/base/terminal.h"
#include "core/cluster/cluster.h"
#include "core/cluster/simulation.h"
#include "core/codec/decode.h"
#include "core/codec/documents.h"
#include "core/gpu_operator/cluster_policy.h"
#include "core/gpu_operator/manifests.h"
#include "core/gpu_operator/operands.h"
#include "core/model/model.h"
#include "core/scenario/scenario_cleanup.h"
#include "core/scenario/scenario_internal.h"

namespace gpuops::core {

using scenario_internal::controlled_by_ds;
using scenario_internal::CreatedObjects;
using scenario_internal::decode_apply;

namespace {

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
namespace {

// The whole scenario skipped, for `why`: one step result (and its empty
// observation).
void skip_whole(ScenarioResult& result, const std::string& why, const RunOptions& options) {
  StepResult step_result;
  step_result.title = "(whole scenario)";
  step_result.status = StepResult::Status::kSkipped;
  step_result.skip_reason = why;
  result.steps.push_back(step_result);
  if (options.observe) result.observations.emplace_back();
}

// Why a cluster without the simulator's controls cannot run a scenario of
// the GPU Operator: the operator is not there (its CRD not served), or that
// cannot be told; "" when it is there.
std::string operator_missing(Cluster& cluster) {
  std::string why;
  try {
    if (!cluster.serves_cluster_policies())
      why = "the GPU Operator is not installed on this cluster (it serves no clusterpolicies.nvidia.com)";
  } catch (const std::exception& e) {
    why = std::string("cannot tell whether the GPU Operator is installed: ") + e.what();
  }
  return why;
}

// A live cluster: the scenario creates and deletes its nodes and its
// namespace, and its expectations speak of every node. Refuse a cluster
// that already has nodes, or DaemonSets or pods in the namespace, rather
// than change or delete what others put there. Why, or "" to run.
std::string cluster_refusal(const Scenario& scenario, Cluster& cluster) {
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
  return refusal;
}

// The scenario not run for `refusal`: failed, every step skipped.
void refuse_run(ScenarioResult& result, const Scenario& scenario, const std::string& refusal,
                const RunOptions& options) {
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
}

// The initial cluster: its nodes and ClusterPolicy (recorded in `created`
// before each is written), hosts and operator, settled. A failure is the
// result's error.
void set_up_cluster(const Scenario& scenario, Cluster& cluster, SimulationControls* sim, CreatedObjects& created,
                    ScenarioResult& result) {
  try {
    for (const auto& node : scenario.nodes) {
      created.add({"Node", "", node.metadata.name});
      cluster.add_node(node);
    }
    if (sim)
      for (const auto& host : scenario.hosts) sim->set_host(host);
    if (scenario.operator_) {
      created.add({"ClusterPolicy", "", scenario.operator_->policy_name});
      install_operator(*scenario.operator_, cluster, sim);
    }
    cluster.settle();
  } catch (const std::exception& e) {
    result.passed = false;
    result.error = std::string("setting up the initial cluster: ") + e.what();
  }
}

bool interrupted(const RunOptions& options) { return options.interrupted && options.interrupted(); }

// A step's (or the scenario's) catch, when it `failed`, then its finally;
// neither once interrupted (the run is to end quickly).
void run_step_diagnostics(const DiagnosticBlocks& blocks, bool failed, const Scenario& scenario, Cluster& cluster,
                          SimulationControls* sim, const RunOptions& options, std::vector<DiagnosticOutput>& out) {
  if (interrupted(options)) return;
  if (failed) run_diagnostics(blocks.catch_ops, "catch", scenario, cluster, sim != nullptr, out);
  run_diagnostics(blocks.finally_ops, "finally", scenario, cluster, sim != nullptr, out);
}

// How a step's action ended: its error (none: it succeeded), with the exit
// code gpuops would give it (2 bad input, 3 cluster error) and, for bad
// input, the field and line it names.
struct ActionOutcome {
  std::optional<std::string> error;
  int exit = 0;
  std::string field;
  int line = 0;
};

// The step's action, then settle (or, with settle: false, the simulator's
// run).
ActionOutcome run_action(const Step& step, const Scenario& scenario, Cluster& cluster, SimulationControls* sim) {
  ActionOutcome outcome;
  try {
    do_action(step, scenario, cluster, sim);
    if (step.settle)
      cluster.settle();
    else
      sim->run();
  } catch (const InputError& e) {
    outcome.error = e.what();
    outcome.exit = 2;
    outcome.field = e.field();
    outcome.line = e.line();
  } catch (const ClusterError& e) {
    outcome.error = e.what();
    outcome.exit = 3;
  }
  return outcome;
}

// The action's outcome against the step's expectError (else: an error fails
// the step).
void check_outcome(const Step& step, const ActionOutcome& outcome, StepResult& step_result) {
  const std::optional<std::string>& error = outcome.error;
  if (step.expect_error) {
    const ExpectedError& expected = *step.expect_error;
    if (!error) {
      step_result.failures.push_back("expectError: the action succeeded, expected it to fail");
    } else {
      if (expected.exit && outcome.exit != expected.exit)
        step_result.failures.push_back("expectError: exit: expected " + std::to_string(expected.exit) + ", got " +
                                       std::to_string(outcome.exit) + " (" + *error + ")");
      if (!expected.contains.empty() && error->find(expected.contains) == std::string::npos)
        step_result.failures.push_back("expectError: message: expected it to contain \"" + expected.contains +
                                       "\", got \"" + *error + "\"");
      if (!expected.field.empty() && outcome.field != expected.field)
        step_result.failures.push_back("expectError: field: expected " + expected.field + ", got " + outcome.field);
      if (expected.line && outcome.line != expected.line)
        step_result.failures.push_back("expectError: line: expected " + std::to_string(expected.line) + ", got " +
                                       std::to_string(outcome.line));
    }
  } else if (error) {
    step_result.failures.push_back(action_key(step.action) + " failed: " + *error);
  }
}

// The step's expectations, polled on a real cluster until they hold or the
// step's timeout runs out; their failures into `step_result`. Returns the
// state they were last checked on (none when it could not be read).
std::optional<ClusterState> check_step_expectations(const Step& step, const Scenario& scenario, Cluster& cluster,
                                                    const RunOptions& options, StepResult& step_result) {
  std::optional<ClusterState> last;
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
    if (interrupted(options)) {
      step_result.failures.push_back("(interrupted while waiting; last state shown)");
      return last;
    }
    options.sleep(options.poll_interval);
  }
  if (!step_result.failures.empty() && options.poll)
    step_result.failures.push_back("(still failing after " + std::to_string(timeout.count() / 1000) +
                                   "s; last state shown)");
  return last;
}

// The observation after a step that ran, of `last` (the state its
// expectations were last checked on) or else a fresh read; none when the
// cluster cannot be read.
std::optional<StepObservation> observe_step(const Step& step, const Scenario& scenario, Cluster& cluster,
                                            const RunOptions& options, bool needs_operator,
                                            std::optional<ClusterState> last) {
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
      while (options.now() < deadline && options.now() - since < quiet && !interrupted(options)) {
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
  return observation;
}

}  // namespace

ScenarioResult run_scenario(const Scenario& scenario, Cluster& cluster, SimulationControls* sim,
                            const RunOptions& options) {
  ScenarioResult result;
  result.file = scenario.file;
  result.name = scenario.name;
  if (scenario.simulator_only && !sim) {
    skip_whole(result, "simulator only (simulatorOnly: true)", options);
    return result;
  }
  // The GPU Operator: simulated with the simulator's controls; elsewhere the
  // cluster's own, which must be there (its CRD served).
  bool needs_operator = scenario.operator_.has_value() ||
                        std::any_of(scenario.steps.begin(), scenario.steps.end(),
                                    [](const Step& step) { return step.action == Action::kInstallOperator; });
  if (needs_operator && !sim) {
    std::string why = operator_missing(cluster);
    if (!why.empty()) {
      skip_whole(result, why, options);
      return result;
    }
  }
  if (options.clean_up) {
    std::string refusal = cluster_refusal(scenario, cluster);
    if (!refusal.empty()) {
      refuse_run(result, scenario, refusal, options);
      return result;
    }
  }
  // --start-at: the steps before it run unchecked.
  size_t first_checked = 0;
  if (!options.start_at.empty()) {
    const std::optional<size_t> start = start_step(scenario, options.start_at);
    if (!start) {
      result.passed = false;
      result.error = "--start-at: no step \"" + options.start_at + "\" (a step's name or 1 to " +
                     std::to_string(scenario.steps.size()) + ")";
      skip_whole(result, "the scenario was not run", options);
      return result;
    }
    first_checked = *start;
  }
  CreatedObjects created;
  set_up_cluster(scenario, cluster, sim, created, result);
  bool stop = !result.error.empty();
  for (size_t index = 0; index < scenario.steps.size(); ++index) {
    const Step& step = scenario.steps[index];
    StepResult step_result;
    step_result.title = step.title();
    step_result.line = step.line;
    if (!result.interrupted && interrupted(options)) {
      result.interrupted = true;
      result.passed = false;
      stop = true;
    }
    if (stop) {
      step_result.status = StepResult::Status::kSkipped;
      step_result.skip_reason = result.interrupted ? "interrupted" : "an earlier step failed";
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
    // The action (what it creates recorded first).
    created.add_step(step, scenario);
    check_outcome(step, run_action(step, scenario, cluster, sim), step_result);
    // The expectations, polled on a real cluster.
    std::optional<ClusterState> last;  // the state they were last checked on
    if (index < first_checked && step_result.failures.empty()) {
      step_result.status = StepResult::Status::kSkipped;
      step_result.skip_reason = "before --start-at (its action ran, its expectations were not checked)";
    } else if (step_result.failures.empty() && !step.expect.empty()) {
      last = check_step_expectations(step, scenario, cluster, options, step_result);
    }
    if (!step_result.failures.empty()) {
      step_result.status = StepResult::Status::kFailed;
      result.passed = false;
      if (options.fail_fast) stop = true;
    }
    run_step_diagnostics(step.diagnostics, step_result.status == StepResult::Status::kFailed, scenario, cluster, sim,
                         options, step_result.diagnostics);
    if (step_result.status == StepResult::Status::kFailed && options.on_step_failed && !interrupted(options))
      options.on_step_failed(scenario, index, step_result);
    result.steps.push_back(std::move(step_result));
    if (options.observe)
      result.observations.push_back(observe_step(step, scenario, cluster, options, needs_operator, std::move(last)));
  }
  if (!result.interrupted && interrupted(options)) {  // during the last step, or the set-up
    result.interrupted = true;
    result.passed = false;
  }
  if (result.interrupted) result.error = std::string(result.error.empty() ? "" : result.error + "; ") + "interrupted";
  run_step_diagnostics(scenario.diagnostics, !result.passed, scenario, cluster, sim, options, result.diagnostics);
  if (options.clean_up && !options.skip_cleanup)
    result.cleanup_failures = scenario_internal::delete_created(created.objects(), scenario, cluster, options);
  return result;
}

std::optional<size_t> start_step(const Scenario& scenario, const std::string& start_at) {
  for (size_t i = 0; i < scenario.steps.size(); ++i)
    if (scenario.steps[i].name == start_at) return i;
  if (start_at.empty() || !std::all_of(start_at.begin(), start_at.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  if (start_at.size() > 9) return std::nullopt;  // beyond any scenario's steps (and int's range)
  const size_t number = std::stoul(start_at);
  if (number < 1 || number > scenario.steps.size()) return std::nullopt;
  return number - 1;
}

}  // namespace gpuops::core
