// cli/run_pause.h: `gpuops run --backend real --pause-on-failure`: after a
// failed step, say what failed and how to look at the cluster kept as the
// step left it, then wait for Enter on the terminal.
#pragma once

#include <functional>
#include <ostream>
#include <string>

#include "core/scenario/scenario.h"

namespace gpuops::cli {

// The exit code of `gpuops run --pause-on-failure` when stdin is not a
// terminal: it refuses before running anything rather than wait for an
// Enter that cannot come.
inline constexpr int kExitNoTerminal = 4;

// Whether stdin (fd 0) is a terminal.
bool stdin_is_terminal();

// The core::RunOptions::on_step_failed of --pause-on-failure: writes to
// `err`
//   gpuops run: paused: step N "TITLE" of SCENARIO failed:
//       <each failure line>
//     the cluster is kept as the step left it; to look at it:
//       kubectl [--kubeconfig F] [--context C] get nodes,daemonsets,pods -n NS -o wide
//       gpuops diagnose [--kubeconfig F] [--context C]
//       gpuops explain [--kubeconfig F] [--context C] NODE OPERAND
//   press Enter to go on (the next steps, then the clean-up); Ctrl-C stops and cleans up
// then reads stdin until a newline or end of file, looking at `interrupted`
// every 200 ms (a Ctrl-C ends the wait; the runner then stops).
std::function<void(const core::Scenario&, size_t, const core::StepResult&)> pause_on_failure(
    std::ostream& err, const std::string& kubeconfig, const std::string& context,
    const std::function<bool()>& interrupted);

}  // namespace gpuops::cli
