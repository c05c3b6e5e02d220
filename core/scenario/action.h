// core/scenario/action.h: a scenario step's action, and how a scenario spells
// it.
//
// kActionKeys is the one table of the actions and their keys as spelled in
// scenario YAML (`label:`, `deleteDaemonSet:`, ...): the loader reads a step's
// action through it (core/scenario/scenario_load.cpp), the runner and `gpuops
// plan` switch on core::Action, and the reports print action_key. Its order is
// the order a step's fields are listed in the loader's errors (`unknown field
// "x" (expected one of: name, createNamespace, apply, ...)`) and the order in
// which a step's keys are looked for (the second one found is the error "a
// step has one action; this one already has <first>").
//
// To add an action: its enumerator and its row here, its arguments in
// scenario_load.cpp, what it does in scenario_run.cpp, docs/SCENARIOS.md.
#pragma once

#include <string>

namespace gpuops::core {

enum class Action {
  kNone,  // no action: the step only checks expectations
  kCreateNamespace,
  kApply,
  kLabel,
  kAddNode,
  kDeleteNode,
  kTaint,
  kUntaint,
  kCordon,
  kUncordon,
  kReady,
  kDeletePod,
  kDeleteDaemonSet,
  kFault,
  kClearFaults,
  kAdvance,
  kInstallOperator,
  kPatchClusterPolicy,
  kRemoveOperator,
  kHost,  // the last: kActionKeys is checked up to it
};

// One row of kActionKeys: an action and its key in scenario YAML.
struct ActionKey {
  Action action;
  const char* key;
};

// Every action but kNone, once, in the loader's order (above).
inline constexpr ActionKey kActionKeys[] = {
    {Action::kCreateNamespace, "createNamespace"},
    {Action::kApply, "apply"},
    {Action::kLabel, "label"},
    {Action::kAddNode, "addNode"},
    {Action::kDeleteNode, "deleteNode"},
    {Action::kTaint, "taint"},
    {Action::kUntaint, "untaint"},
    {Action::kCordon, "cordon"},
    {Action::kUncordon, "uncordon"},
    {Action::kReady, "ready"},
    {Action::kDeletePod, "deletePod"},
    {Action::kDeleteDaemonSet, "deleteDaemonSet"},
    {Action::kFault, "fault"},
    {Action::kClearFaults, "clearFaults"},
    {Action::kAdvance, "advance"},
    {Action::kInstallOperator, "installOperator"},
    {Action::kPatchClusterPolicy, "patchClusterPolicy"},
    {Action::kRemoveOperator, "removeOperator"},
    {Action::kHost, "host"},
};

// One row per enumerator after kNone, in the enumerators' order, kHost
// last (an enumerator added without its row does not compile).
static_assert([] {
  int i = 1;
  for (const auto& row : kActionKeys)
    if (static_cast<int>(row.action) != i++) return false;
  return i == static_cast<int>(Action::kHost) + 1;
}());

// The key of `action` as a scenario spells it ("deleteDaemonSet"); "" for
// kNone. What the reports and the errors print for an action.
inline std::string action_key(Action action) {
  for (const auto& row : kActionKeys)
    if (row.action == action) return row.key;
  return "";
}

}  // namespace gpuops::core
