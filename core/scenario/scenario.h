// core/scenario/scenario.h: YAML scenarios and the runner that replays them on any
// backend (core::Cluster), asserting what a user cares about.
//
// Format (docs/SCENARIOS.md has the full reference):
//
//   name: opt-out                      # required, unique in a suite
//   description: ...                   # optional
//   operands: lab                      # optional: lab | gpu-operator | catalog file
//   namespace: gpu-operator            # optional
//   simulatorOnly: false               # optional: needs fault injection or time
//   cluster:
//     profile: kwok                    # simulator kubelet: kwok | kubelet
//     nodes:
//       - name: lab-node-0
//         labels: {nvidia.com/gpu.deploy.driver: "true"}
//         taints: [{key: k, value: v, effect: NoSchedule}]
//         allocatable: {memory: 256Mi}
//         ready: true                  # default true
//         unschedulable: false
//   steps:
//     - name: apply the toolkit         # optional
//       apply: {operands: [container-toolkit], files: [x.yaml], inline: "..."}
//       expect: {...}                    # optional, see Expectations
//       expectError: {exit: 2, contains: "...", field: "...", line: 12}
//       timeout: 60s                     # real backend: how long to poll
//       settle: false                    # simulator: do not move virtual time
//       catch: [{diagnose: {}}, {dump: {}}]   # when it failed (scenario_diagnostics.h)
//       finally: [{events: {}}]          # always
//   catch: [...]                       # optional: the scenario's, after its last step
//   finally: [...]
//
// One action per step: createNamespace, apply, label {node, set, remove},
// addNode {node as in cluster.nodes}, deleteNode, taint {node, key, value,
// effect}, untaint {node, key, effect?}, cordon, uncordon, ready {node,
// status}, deletePod {daemonset, node}, deleteDaemonSet {name, cascade:
// background|foreground|orphan}, fault {kind, node, daemonset, reason},
// clearFaults, advance (a duration: 30s, 5m, 1h, 500ms), installOperator
// (as the top-level `operator:`, OperatorSpec), patchClusterPolicy (a JSON
// merge patch of the ClusterPolicy, e.g. {spec: {dcgm: {enabled: true}}};
// `name:` beside `patch:` for another than cluster-policy), removeOperator
// (the ClusterPolicy deleted, its DaemonSets garbage collected, the
// operator stopped), or none (only expectations). Every step settles the
// cluster after its action.
//
// The GPU Operator (docs/OPERATOR.md):
//   operator:                          # optional: installed before the first step
//     version: v25.3                   # v25.3 | v26.7
//     clusterPolicy: {dcgm: {enabled: true}}   # the spec
// With `operator:` (or, without it, a step's installOperator), operands
// default to the release's catalog (operator mode) and namespace to
// gpu-operator. Expectations add clusterPolicy
// {state, reason, message, absent} and diagnose [{node, operand, code,
// severity, absent}].
//
// Bindings (core/scenario/scenario_bindings.h): `bindings: {k: v}` and
// `matrix: [{k: v}, ...]` at the top level, `($k)` as a whole value
// anywhere; one Scenario per matrix entry, named "name[k=v,...]".
// Expectations `assert` and `error`: any object by partial match, with
// `(expr)` keys and values (core/scenario/scenario_assert.h,
// core/scenario/scenario_expr.h). The keys: core/scenario/scenario_keys.h.
//
// Errors: load_scenario throws core::InputError naming the file, line and
// field for anything malformed (unknown keys, two actions in one step, a bad
// duration, an unknown operand).
#pragma once

#include <boost/json/object.hpp>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/base/line_diff.h"  // line_diff, which the audit and matrix failures print
#include "core/cluster/cluster.h"
#include "core/cluster/simulation.h"
#include "core/gpu_operator/operands.h"
#include "core/model/duration.h"  // parse_duration, for a step's durations and run --timeout
#include "core/scenario/action.h"
#include "core/scenario/scenario_assert.h"       // ObjectExpectation
#include "core/scenario/scenario_diagnostics.h"  // DiagnosticBlocks, DiagnosticOutput

namespace gpuops::core {

struct PodExpectation {
  int line = 0;
  std::string daemonset;
  std::string node;
  bool absent = false;                 // no pod of the DaemonSet on the node
  std::optional<std::string> phase;    // status.phase
  std::optional<bool> ready;           // Ready condition
  std::optional<bool> terminating;     // deletionTimestamp set
  std::optional<std::string> reason;   // any of: status.reason, a False
                                       // condition's reason, a container or
                                       // init container state reason
  std::optional<std::string> message;  // substring of status.message or a
                                       // condition's message
  std::optional<std::string> image;    // every container's image is this one
  // Of the DaemonSet's current template: the pod's pod-template-generation
  // label is the DaemonSet's deprecated.daemonset.template.generation
  // (IsPodUpdated's template generation test, as on any cluster).
  std::optional<bool> updated;
  // The pod of the DaemonSet was orphaned (cascade orphan): it is looked up
  // among pods without a controller owner whose name starts "<daemonset>-".
  bool orphaned = false;
};

// A diagnose finding a step expects (core/diagnose/diagnose.h): by node, operand
// ("" for a node-level one) and code (Finding::name), optionally severity
// ("error", "warning", "info"); `absent`: no such finding. Without a code
// (then absent and a severity are required): no finding at that severity or
// worse, on `node` when given (else on any node), of any operand.
struct FindingExpectation {
  int line = 0;
  std::string node;
  std::string operand;
  std::string code;
  std::optional<std::string> severity;
  bool absent = false;
};

// The ClusterPolicy a step expects: status.state, optionally the Ready
// condition's status and reasons and a substring of a condition's message.
struct ClusterPolicyExpectation {
  int line = 0;
  std::string name = "cluster-policy";
  std::optional<std::string> state;    // "ready", "notReady", "ignored"; "" absent state
  std::optional<std::string> reason;   // the reason of the condition that is True (Ready or Error)
  std::optional<std::string> message;  // substring of that condition's message
  bool absent = false;                 // no such ClusterPolicy
};
// `rollout: {daemonset, complete}`: whether `kubectl rollout status ds/X`
// would call the rollout finished (DaemonSetStatusViewer, see
// daemonset_rollout_status).
struct RolloutExpectation {
  int line = 0;
  std::string daemonset;
  bool complete = true;
};

// mirrors DaemonSetStatusViewer.Status, kubectl pkg/polymorphichelpers/rollout_status.go:
// only for RollingUpdate (else `error` is set); finished when
// observedGeneration >= generation, updatedNumberScheduled and
// numberAvailable both >= desiredNumberScheduled. `message` is kubectl's line.
struct RolloutStatus {
  std::string message;
  bool done = false;
  std::string error;
};
RolloutStatus daemonset_rollout_status(const DaemonSet& ds);

struct Expectations {
  // audit: exact lines and exit code.
  std::optional<std::vector<std::string>> audit_lines;
  std::optional<int> audit_exit;
  int audit_line = 0;
  // order: node -> "ok" | "device-plugin-without-toolkit".
  std::map<std::string, std::string> order;
  int order_line = 0;
  // matrix: exact text (lines).
  std::optional<std::vector<std::string>> matrix;
  int matrix_line = 0;
  // daemonsets: name -> status field (API JSON name) -> value.
  std::map<std::string, std::map<std::string, int64_t>> daemonsets;
  int daemonsets_line = 0;
  // running: DaemonSet name -> exactly the nodes where it has a present pod.
  std::map<std::string, std::vector<std::string>> running;
  int running_line = 0;
  std::vector<PodExpectation> pods;
  std::vector<RolloutExpectation> rollouts;
  // nodes: node -> label -> value (null in YAML: the label must be absent).
  std::map<std::string, std::map<std::string, std::optional<std::string>>> node_labels;
  int nodes_line = 0;
  std::optional<ClusterPolicyExpectation> cluster_policy;
  std::vector<FindingExpectation> findings;
  // assert / error: objects by partial match (core/scenario/scenario_assert.h).
  std::vector<ObjectExpectation> asserts;
  std::vector<ObjectExpectation> errors;
  bool empty() const {
    return !audit_lines && !audit_exit && order.empty() && !matrix && daemonsets.empty() && running.empty() &&
           pods.empty() && node_labels.empty() && rollouts.empty() && !cluster_policy && findings.empty() &&
           asserts.empty() && errors.empty();
  }
};

struct ExpectedError {
  int exit = 0;          // 2 input error, 3 cluster error, 0 either
  std::string contains;  // substring of the message
  std::string field;     // exact field path, if given
  int line = 0;          // exact line, if given
};

// The GPU Operator a scenario installs (top-level `operator:`, or a step's
// `installOperator:`): `version` v25.3 or v26.7 picks the release's built-in
// catalog (core::operator_catalog_name); the ClusterPolicy `name` (default
// cluster-policy) is created with `clusterPolicy`, its spec (a map, default
// {}: every component at its default). On the simulator the operator is
// simulated (SimulationControls::install_operator); on a real cluster only
// the ClusterPolicy is written: the operator must be running already.
struct OperatorSpec {
  int line = 0;
  std::string version;
  Catalog catalog;
  std::string namespace_ = "gpu-operator";
  std::string policy_name = "cluster-policy";
  boost::json::object spec;
};

struct Step {
  int line = 0;  // line of the step in the scenario file
  std::string name;
  Action action = Action::kNone;  // core/scenario/action.h
  // apply
  std::vector<std::string> apply_files;     // resolved against the scenario file
  std::vector<std::string> apply_operands;  // catalog operand names
  std::string apply_inline;
  // single-object actions
  std::string node;
  std::string name_arg;  // createNamespace, deleteNode, cordon, uncordon
  Labels label_set;
  std::vector<std::string> label_remove;
  Node new_node;  // addNode
  Taint taint;    // taint / untaint (untaint: effect may be empty = any)
  std::string ready_status;
  std::string daemonset;               // deletePod, deleteDaemonSet
  std::string cascade = "background";  // deleteDaemonSet
  FaultSpec fault;
  Duration advance{0};
  OperatorSpec operator_spec;                  // installOperator
  HostSpec host;                               // host (simulator only)
  boost::json::object policy_patch;            // patchClusterPolicy: a JSON merge patch of the ClusterPolicy
  std::string policy_name = "cluster-policy";  // patchClusterPolicy, removeOperator
  Expectations expect;
  std::optional<ExpectedError> expect_error;
  DiagnosticBlocks diagnostics;  // catch: / finally:
  std::optional<Duration> timeout;
  // false: run the controllers without moving virtual time (simulator only),
  // to observe what exists between two timers (a pod in its grace period).
  bool settle = true;

  bool simulator_only() const {
    return action == Action::kFault || action == Action::kClearFaults || action == Action::kAdvance ||
           action == Action::kHost || !settle;
  }
  std::string title() const;  // name, or a description of the action
};

struct Scenario {
  std::string file;
  std::string name;
  std::string description;
  std::string namespace_ = "gpu-operator";
  Catalog catalog;
  bool simulator_only = false;
  std::string profile = "kwok";
  std::vector<Node> nodes;
  // cluster.nodes[].host: host facts set before the operator is installed
  // (simulator only: such a scenario is simulatorOnly).
  std::vector<HostSpec> hosts;
  std::optional<OperatorSpec> operator_;
  std::vector<Step> steps;
  DiagnosticBlocks diagnostics;  // top-level catch: / finally:, after the last step
};

// The command line's bindings (`gpuops run --values FILE --set k=v`), over
// a scenario's `bindings:` and matrix entry (core/scenario/scenario_bindings.h
// has the rules; docs/SCENARIOS.md "Bindings and matrix").
struct BindingOverrides {
  std::string values_file;       // --values: a YAML map of bindings ("" none)
  std::vector<std::string> set;  // --set NAME=VALUE, in order (the last one of a name wins)
};

// Parses one scenario file: one Scenario per entry of its `matrix:` (one
// without a matrix), each named "<name>[key=value,...]" after its entry
// (scenario_bindings::entry) and decoded after its bindings were
// substituted. Throws InputError (file, line, field): malformed YAML or
// scenario, a bad binding or matrix, an unknown binding, a bad --values or
// --set (file "--set").
std::vector<Scenario> load_scenario_entries(const std::string& path, const BindingOverrides& overrides = {});
// Parses one scenario file without a matrix (load_scenario_entries without
// overrides; a file with a matrix of more than one entry is an InputError
// naming its `matrix`).
Scenario load_scenario(const std::string& path);
// Files, or folders (every *.yaml below, recursively, sorted by path, except
// under folders named `manifests`, which hold scenarios' inputs), each
// file's matrix entries in their order, consecutive.
// Throws InputError for the first malformed file, or duplicate names.
std::vector<Scenario> load_scenarios(const std::vector<std::string>& paths, const BindingOverrides& overrides = {});

// Shard `index` of `count` (`gpuops run --shard-index I --shard-count N`, as
// chainsaw's flags) of a list of n scenario files in load order (a file's
// matrix entries stay together: `gpuops run` counts files): the half-open range
// [first, second) of a consecutive chunk. Chunks differ in size by at most one
// (the first n % count are one longer), every scenario is in exactly one
// shard, and a shard may be empty when count > n. Throws
// std::invalid_argument when count is 0 or index >= count.
std::pair<size_t, size_t> shard_range(size_t n, size_t index, size_t count);

// A file holding a bare YAML list of steps (`gpuops plan --steps F`), read as
// a scenario's `steps:` with `catalog` for `apply: {operands}`. Throws
// InputError naming the file, line and field ("[2].label.node").
std::vector<Step> load_steps(const std::string& path, const Catalog& catalog);

// Runs one step's action (not its expectations) on `cluster`, as the
// scenario runner does; `sim` is needed for the simulator-only actions
// (else they throw ClusterError). `scenario` gives the namespace and the
// catalog (an apply's operands, deletePod's lookup).
void run_step_action(const Step& step, const Scenario& scenario, Cluster& cluster, SimulationControls* sim);

struct StepResult {
  std::string title;
  int line = 0;
  enum class Status { kPassed, kFailed, kSkipped } status = Status::kPassed;
  // Each failure: what was checked, expected against actual, with a unified
  // line diff for audit and matrix.
  std::vector<std::string> failures;
  std::string skip_reason;
  // What its catch (it failed) and finally operations gave, in that order.
  std::vector<DiagnosticOutput> diagnostics;
};

// What gpuops' analyses saw after a step, for the differential run
// (scripts/fidelity.sh compares these between the simulator and a real
// cluster): the same text as `gpuops audit`, `gpuops order-check NODE` and
// `gpuops matrix` on that state, and every DaemonSet's status.
struct StepObservation {
  std::vector<std::string> audit;  // audit report lines
  int audit_exit = 0;
  std::vector<std::string> order;   // "<node> <order-check result>", by node name
  std::vector<std::string> matrix;  // matrix report lines
  // DaemonSet name -> status field (API JSON name) -> value; the eight
  // integer fields ds_field knows.
  std::map<std::string, std::map<std::string, int64_t>> daemonsets;
  // What the GPU Operator writes, for its differential:
  // node -> its nvidia.com/* labels (every node, empty when it has none);
  std::map<std::string, Labels> node_labels;
  // DaemonSet name -> what placement and rollout depend on in its spec.
  struct DaemonSetSpec {
    Labels node_selector;                      // spec.template.spec.nodeSelector
    std::vector<std::string> tolerations;      // "key:operator=value:effect[:seconds]", as listed
    std::string update_strategy;               // "RollingUpdate" or "OnDelete"
    std::vector<std::string> init_containers;  // names, in order
    bool operator==(const DaemonSetSpec&) const = default;
  };
  std::map<std::string, DaemonSetSpec> daemonset_specs;
  // node -> "<DaemonSet> <phase>" of each pod bound to it and not being
  // deleted ("(no owner: <name less its suffix>-*) <phase>" for an orphan),
  // sorted (every node, empty when it has none);
  std::map<std::string, std::vector<std::string>> pods;
  // ClusterPolicy name -> status.state ("" while unset).
  std::map<std::string, std::string> cluster_policies;
  bool operator==(const StepObservation&) const = default;
};

// Computes the observation of one state (pure).
StepObservation observe(const ClusterState& state, const Catalog& catalog);

struct ScenarioResult {
  std::string file;
  std::string name;
  bool passed = true;
  std::vector<StepResult> steps;
  // With RunOptions::observe: one entry per step, parallel to `steps`; empty
  // for a skipped step or when the state could not be read.
  std::vector<std::optional<StepObservation>> observations;
  std::string error;   // the scenario could not run (set-up failed); "...interrupted" when interrupted
  double seconds = 0;  // wall time, filled by the caller
  // RunOptions::interrupted became true while it ran: the steps left were
  // skipped ("interrupted"), the scenario failed, and then it was cleaned up.
  bool interrupted = false;
  // With RunOptions::clean_up: each deletion of what the scenario created
  // that failed ("deleting node \"gpu-a\": <error>"); empty when all went
  // (an object already gone counts as deleted). They leave `passed` as the
  // steps made it.
  std::vector<std::string> cleanup_failures;
  // The scenario's own catch (it failed) and finally operations' output,
  // run after its last step and before its clean-up (not when interrupted,
  // nor when it did not run).
  std::vector<DiagnosticOutput> diagnostics;
};

struct RunOptions {
  // Poll expectations until they hold or the step's timeout runs out (real
  // clusters). With false (the simulator), expectations are checked once
  // after settle().
  bool poll = false;
  Duration default_timeout = std::chrono::seconds(60);
  Duration poll_interval = std::chrono::milliseconds(500);
  // Wall clock and sleep for polling; required when poll is true.
  std::function<Time()> now;
  std::function<void(Duration)> sleep;
  // Stop at the first failed step of the scenario.
  bool fail_fast = false;
  // A live cluster: refuse (ScenarioResult::error, every step skipped,
  // nothing written) when the cluster already has nodes or the scenario's
  // namespace has DaemonSets or pods; afterwards (at its end, after a failed
  // step, after an interruption) delete what the scenario created, in
  // reverse order of creation: its nodes (cluster.nodes, addNode, applied),
  // the namespaces of createNamespace, applied DaemonSets and pods, and
  // ClusterPolicies (operator:, installOperator, applied), each recorded
  // before the write that creates it. Failed deletions are
  // ScenarioResult::cleanup_failures.
  bool clean_up = false;
  // Polled between steps, while expectations are polled and while a step's
  // observation waits (every poll_interval): once true, the scenario stops
  // (ScenarioResult::interrupted) and is cleaned up. Empty: never.
  // (`gpuops run` sets it on SIGINT and SIGTERM.)
  std::function<bool()> interrupted;
  // `gpuops run --pause-on-failure`: called after a step failed (after its
  // catch and finally, before the next step and the clean-up), with the
  // scenario, the step's 0-based index and its result; it returns when the
  // run is to go on. Not called once interrupted. Empty: no pause.
  std::function<void(const Scenario&, size_t, const StepResult&)> on_step_failed;
  // Record a StepObservation after every step that ran (after its
  // expectations held or timed out; without expectations, after settle()).
  // With poll, in a scenario of the GPU Operator (on a real cluster it acts
  // after settle() has returned), the state is read again every
  // poll_interval until two reads in a row give the same observation, for
  // at most the step's timeout.
  bool observe = false;
  // `gpuops run --start-at STEP`: a step's name, or its 1-based index
  // ("3"). The steps before it run their actions (an action's failure
  // still fails the scenario) but their expectations are not checked: they
  // are reported skipped, "before --start-at". Empty: from the first step.
  // A scenario without such a step fails with an error naming it.
  std::string start_at;
  // `gpuops run --skip-cleanup`: with clean_up, what the scenario created
  // is left on the cluster (the refusal of a non-empty cluster still
  // applies, so the next scenario of the run is refused). No effect
  // without clean_up (the simulator).
  bool skip_cleanup = false;
};

// The 0-based index of the step `start_at` names in `scenario` (a step's
// name, else a 1-based index in range); nullopt when none.
std::optional<size_t> start_step(const Scenario& scenario, const std::string& start_at);

// Why a live cluster cannot take scenarios: "the cluster already has nodes
// (a, b, ...)" (the first five names in order, then the count), or "" when it
// has none. run_scenario refuses such a cluster, and so does `gpuops run`
// before its first scenario.
std::string nodes_refusal(const ClusterState& state);
// What follows a refusal: why a scenario needs an empty cluster.
extern const char* const kNeedsEmptyCluster;

// Replays `scenario` on `cluster`. `sim` is nullptr on backends without
// simulator controls: simulator-only steps are then skipped with a reason.
// Never throws for a failing expectation; backend errors during an action
// fail the step (unless expected by expectError).
ScenarioResult run_scenario(const Scenario& scenario, Cluster& cluster, SimulationControls* sim,
                            const RunOptions& options);

// Checks `expect` against one state; returns the failures (empty when all
// hold). The state needs only the parts state_parts(expect) names.
std::vector<std::string> check_expectations(const Expectations& expect, const ClusterState& state,
                                            const Catalog& catalog);

// The parts of the cluster check_expectations reads for `expect`: every
// part for audit, order, matrix and diagnose; else the nodes for `nodes`,
// the DaemonSets for `daemonsets`, `rollout`, `running` and `pods`, the pods
// for `running` and `pods`, the ClusterPolicies for `clusterPolicy`, and
// each `assert` and `error` item's kind's part.
StateParts state_parts(const Expectations& expect);

// Reports.
// JSON: {"scenarios": [{name, file, status, seconds, steps: [{title, line,
// status, failures, skipReason?, observed?, diagnostics?}], error?,
// interrupted? (true), cleanupFailures? [..], diagnostics?}], passed, failed};
// `diagnostics` (catch/finally, core/scenario/scenario_diagnostics.h) is
// [{block: "catch"|"finally", op, file, output}].
// `observed` (with RunOptions::observe) is {audit: [lines], auditExit,
// order: [lines], matrix: [lines], daemonsets: {name: {field: n}},
// nodeLabels: {node: {nvidia.com/* key: value}}, daemonsetSpecs: {name:
// {nodeSelector: {k: v}, tolerations: [..], updateStrategy, initContainers:
// [..]}}, pods: {node: ["<daemonset> <phase>", ..]}, clusterPolicies: {name:
// state}}.
// Console: one line per scenario ("PASS name (N steps)" / "FAIL name"), the
// failures indented below, each clean-up failure ("  clean-up: ..."), then
// "N passed, M failed" (", K clean-up failure(s)" when there are any).
std::string render_console(const std::vector<ScenarioResult>& results);
std::string render_json(const std::vector<ScenarioResult>& results);
// JUnit XML: one <testsuite>, one <testcase> per scenario, a <failure> with
// every failed step's message, its clean-up failures in <system-err>
// ("clean-up: ..." lines), its catch/finally output in <system-out>, each
// under a line "=== step N \"title\": catch diagnose (diagnose.txt)" or
// "=== scenario: finally dump (finally-dump.json)". Written with Boost.PropertyTree.
std::string render_junit(const std::vector<ScenarioResult>& results);

}  // namespace gpuops::core
