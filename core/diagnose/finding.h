// core/diagnose/finding.h: what diagnose() and explain() return (core/diagnose/diagnose.h),
// and what core/diagnose/diagnose_render.h prints.
//
// Plain data: no rules here. Every finding name, its severity and the source
// of its rule are listed in docs/DIAGNOSE.md.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/kube/placement.h"

namespace gpuops::core {

enum class Severity { kInfo, kWarning, kError };

// One diagnosis. `evidence` is ordered key/value text, e.g.
//   {"label nvidia.com/gpu.deploy.device-plugin", ""}
//   {"taint", "dedicated=ml-team:NoSchedule"}
//   {"pod", "nvidia-device-plugin-daemonset-e8af9"}, {"phase", "Pending"},
//   {"status", "Init:0/1"}, {"gate", "toolkit-validation"},
//   {"scheduler", "0/2 nodes are available: 1 Insufficient memory, ..."}
// A key may repeat (several pods). An absent label is given the value
// "(absent)", which no label value can be (label values have no parentheses).
struct Finding {
  std::string name;  // stable machine name, e.g. "label-empty-value"
  Severity severity = Severity::kInfo;
  std::string node;
  std::string operand;  // empty for a node-level finding
  std::string reason;   // one line, no newline
  std::vector<std::pair<std::string, std::string>> evidence;
};

// One node/operand pair: the DaemonSet controller's verdict plus every finding
// that concerns the pair (the node's findings, the pair's state and
// foreign-pod findings, and consistency findings naming this operand).
struct Explanation {
  std::string node;
  std::string operand;
  std::string label;                       // the operand's deploy label key
  std::optional<std::string> label_value;  // on the node; nullopt when absent
  std::string daemonset;                   // the operand's DaemonSet name (catalog)
  bool daemonset_found = false;
  // core::should_run(DaemonSet, Node); nullopt when the DaemonSet is absent.
  std::optional<Placement> placement;
  std::vector<Finding> findings;
};

}  // namespace gpuops::core
