// simulator/gpu_operator/helper_labels.h: internal to simulator/. What the GPU
// Operator's two label-pausing helpers share (k8s-driver-manager,
// driver_manager.h; the MIG manager, mig_manager.h): reading the deploy
// labels they pause, writing labels to their node (one merge of the node's
// labels, as their `kubectl label --overwrite` and UpdateNodeLabels
// strategic merge patches do: a key written "" is set to "", never removed),
// and waiting, up to 5 minutes per wait, for pods to leave the node
// (`kubectl wait --for=delete pod --field-selector spec.nodeName=...`,
// WaitForPodTermination, WaitForPodsWithNodeSelector). The value rules
// (maybeSetPaused, maybeSetTrue) are each tool's own and stay in its file.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/gpu_operator/operands.h"
#include "core/model/model.h"
#include "simulator/kube/cluster_context.h"

namespace gpuops::simulator::internal {

// The values of every key the helper reads (pause, pause_if_set, restore,
// restore_if_set, restore_on_exit): the node's value, "" when absent.
using ReadLabels = std::map<std::string, std::string>;
ReadLabels read_helper_labels(const core::Node& node, const core::HelperRules& rules);

// The writes of one pause or restore step: each key of `keys`, and each of
// `if_set` read non-empty, with `value(read value)` (the tool's
// maybeSetPaused or maybeSetTrue).
std::vector<std::pair<std::string, std::string>> helper_writes(const ReadLabels& read,
                                                               const std::vector<std::string>& keys,
                                                               const std::vector<std::string>& if_set,
                                                               std::string (*value)(const std::string&));

// Writes `labels` onto node `node` in one update; no-op when the node is
// gone or nothing would change.
void write_node_labels(ClusterContext& c, const std::string& node,
                       const std::vector<std::pair<std::string, std::string>>& labels);

// The pods of namespace `ns` bound to node `node` that `wait` waits for
// (app=<app>, or a nodeSelector with key selector_key); terminating pods
// count until they are gone.
bool helper_pods_left(const ClusterContext& c, const std::string& node, const std::string& ns,
                      const core::HelperWait& wait);

// Where a helper is in its list of waits.
struct WaitCursor {
  size_t index = 0;
  core::Time deadline{};
  bool started = false;
};
enum class WaitResult { kDone, kPending, kTimedOut };
// Goes through rules.wait_for from `cursor` (skipping waits whose if_set
// label was read empty): kDone when every pod is gone, kPending while one is
// left before its deadline (cursor.deadline says until when), kTimedOut
// when one is still there at its deadline and rules.wait_timeout_fails
// (else a timed-out wait is passed over, as an unchecked `kubectl wait`).
WaitResult advance_waits(const ClusterContext& c, const std::string& node, const std::string& ns,
                         const core::HelperRules& rules, const ReadLabels& read, WaitCursor& cursor);

// Whether `pod` is one of the operand pods that load a driver on the host
// once Ready (the driver's, by app label or component, and the vGPU
// manager's), by `catalog`.
bool loads_driver(const PodRecord& pod, const core::Catalog& catalog);

}  // namespace gpuops::simulator::internal
