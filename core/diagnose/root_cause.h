// core/diagnose/root_cause.h: the first broken link of a node's operand chain.
//
// On a GPU Operator node the operands start in a chain held together by the
// validation gates (docs/reference/gpu-operator.md §3): the driver, then the
// container toolkit (its driver-validation waits for driver-ready), then the
// operator-validator (whose toolkit-validation writes toolkit-ready), then the
// device plugin, GFD, DCGM, the exporter, the MIG manager and MPS (their
// toolkit-validation waits for toolkit-ready), and the validator's
// plugin-validation waits for the device plugin's resources. One broken link
// leaves everything after it broken too. Given, per operand of a node, whether
// it is broken and which operand it waits on, find_root_cause names the
// first broken link and what it blocks. Pure graph logic: the findings that
// feed it come from core/diagnose.cpp.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/diagnose/finding.h"
#include "core/gpu_operator/operands.h"
#include "core/model/model.h"

namespace gpuops::core {

// One operand of a node.
struct ChainLink {
  std::string operand;  // catalog name
  bool broken = false;  // its state finding is an error
  // The operand it is waiting on, when that decides its state: the writer of
  // the gate its pod is stuck at (core::gate_writer), else, for a pod that
  // runs without one it needs, that need. Empty: it waits on nothing known.
  std::string waits_on;
  // Its state finding is a warning or an error: it is not doing its job yet
  // (a pause in progress counts, which `broken` does not).
  bool waiting = false;
};

// A circular wait: links each waiting (waiting or broken) on the next, the
// last on the first; none can end its wait. The links in wait order,
// starting at the first of them in link order; empty when there is none.
// Walks waits_on from every waiting link in link order; the first walk that
// comes back to its start gives the cycle.
std::vector<size_t> find_wait_cycle(const std::vector<ChainLink>& links);

struct RootCause {
  size_t root = 0;              // index into the links
  std::vector<size_t> blocked;  // broken links whose wait leads to root, in link order
};

// The root: follow waits_on from each broken link through broken links; the
// last broken link reached (its waits_on is empty, not broken, or leads back
// into the walk) is a root. When several broken links are roots, the first in
// link order whose walk blocks the most is chosen; ties go to link order.
// nullopt when no link is broken.
std::optional<RootCause> find_root_cause(const std::vector<ChainLink>& links);

// The operand a pod of `waiting` stuck at validation gate `gate` (an init
// container of the operator's operands) waits on: the one that writes the
// readiness file the gate waits for. toolkit-validation -> "operator-validator"
// (toolkit-ready); vgpu-manager-validation, vfio-pci-validation,
// vgpu-devices-validation and cc-manager-validation -> "sandbox-validator";
// driver-validation -> "driver"; plugin-validation -> "device-plugin". In the
// validator's own pod the gate is its check of a component, so it waits on
// that component: operator-validator's toolkit-validation ->
// "container-toolkit", sandbox-validator's vgpu-manager-validation ->
// "vgpu-manager", vfio-pci-validation -> "vfio-manager",
// vgpu-devices-validation -> "vgpu-device-manager", cc-manager-validation ->
// "cc-manager". "" for the others (cuda-validation runs its own pod).
// Upstream: the assets' init containers and cmd/nvidia-validator/main.go.
std::string gate_writer(const std::string& gate, const std::string& waiting = "");

// The last termination of a pod as kubectl describe shows it: the container
// waiting in CrashLoopBackOff (else the first, init containers first, with a
// lastState.terminated of non-zero exit code), as `<container>`, its exit
// code, reason and message. nullopt when no container has ended badly.
struct LastFailure {
  std::string container;
  bool init = false;
  std::optional<int32_t> exit_code;
  std::string reason;
  std::string message;
  // The failed run is the container's previous one (lastState.terminated,
  // the container restarted since), not its current state.terminated.
  bool previous = false;
};
std::optional<LastFailure> last_failure(const Pod& pod);

// `kubectl logs -n NS POD -c CONTAINER`, with `--previous` when the failed run
// is a previous one: the command that shows the failed run's log (kubectl
// refuses --previous for a container that has not restarted: "previous
// terminated container ... not found").
std::string logs_command(const std::string& ns, const Pod& pod, const LastFailure& failure);

// A termination message as evidence shows it: on one line (line breaks become
// one space, trailing spaces dropped), at most 120 bytes (117 and "...", cut
// at a UTF-8 character's start): a termination message can be a whole log
// tail.
std::string one_line(const std::string& msg);

// Operator mode, one GPU node. `per_operand[i][0]` is the state finding of
// catalog.operands[i] (core/diagnose/diagnose.cpp), `waits_on[i]` and `pods[i]` what
// it waits on and the pod it shows (nullptr: none), `failed[i]` non-empty when
// the operand failed at its job although its pod may run (mig-manager with
// "nvidia.com/mig.config.state=failed"). A link is broken when its state
// finding is an error, when failed[i] says so, or when a consistency error
// (`<operand>-without-<need>`) names it (it then waits on that need). With a
// root (find_root_cause), inserts before the node's findings one `root-cause`
// finding (error, operand = the root):
//   `<root> <STATUS> (exit <n>: "<message>") blocks <k> operands: a, b`
// (the pod part replaced by failed[root], else by the root's finding name,
// when it has no pod or failed[root] is set; no
// "blocks" part when it blocks nothing), with the root's pod, status,
// restarts, its last termination and the `kubectl logs --previous` command as
// evidence; and turns the errors of the blocked operands (state and
// consistency findings) into warnings whose reason starts `blocked by
// <root>: `. One cause, so one error for it beside the root's own finding.
void attribute_root_cause(const Catalog& catalog, const std::string& ns, const std::string& node,
                          const std::vector<std::string>& waits_on, const std::vector<const Pod*>& pods,
                          const std::vector<std::string>& failed, std::vector<std::vector<Finding>>& per_operand,
                          std::vector<Finding>& consistency, std::vector<Finding>& node_level);

}  // namespace gpuops::core
