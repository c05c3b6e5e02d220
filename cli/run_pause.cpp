// `gpuops run --pause-on-failure` (cli/run_pause.h).
#include "cli/run_pause.h"

#include <poll.h>
#include <unistd.h>

#include <sstream>

#include "core/base/terminal.h"

namespace gpuops::cli {

bool stdin_is_terminal() { return ::isatty(0) == 1; }

namespace {

// Waits for a newline (or end of file) on stdin, or for `interrupted`.
void wait_for_enter(const std::function<bool()>& interrupted) {
  while (!(interrupted && interrupted())) {
    pollfd fd{0, POLLIN, 0};
    const int ready = ::poll(&fd, 1, 200);
    if (ready <= 0) continue;  // timeout, or EINTR: look at the flag again
    char c = 0;
    const ssize_t n = ::read(0, &c, 1);
    if (n <= 0 || c == '\n') return;
  }
}

}  // namespace

std::function<void(const core::Scenario&, size_t, const core::StepResult&)> pause_on_failure(
    std::ostream& err, const std::string& kubeconfig, const std::string& context,
    const std::function<bool()>& interrupted) {
  std::string flags;
  if (!kubeconfig.empty()) flags += " --kubeconfig " + core::escape_terminal(kubeconfig);
  if (!context.empty()) flags += " --context " + core::escape_terminal(context);
  return [&err, flags, interrupted](const core::Scenario& scenario, size_t index, const core::StepResult& step) {
    auto safe = [](const std::string& s) { return core::escape_terminal(s); };
    err << "gpuops run: paused: step " << index + 1 << " \"" << safe(step.title) << "\" of " << safe(scenario.name)
        << " failed:\n";
    for (const auto& failure : step.failures) {
      std::istringstream in(failure);
      for (std::string line; std::getline(in, line);) err << "    " << safe(line) << "\n";
    }
    err << "  the cluster is kept as the step left it; to look at it:\n"
        << "    kubectl" << flags << " get nodes,daemonsets,pods -n " << safe(scenario.namespace_) << " -o wide\n"
        << "    gpuops diagnose" << flags << "\n"
        << "    gpuops explain" << flags << " NODE OPERAND\n"
        << "press Enter to go on (the next steps, then the clean-up); Ctrl-C stops and cleans up\n"
        << std::flush;
    wait_for_enter(interrupted);
  };
}

}  // namespace gpuops::cli
