// cli/run_signals.h: SIGINT and SIGTERM during `gpuops run --backend real`,
// turned into a flag the runner polls (core::RunOptions::interrupted), so
// that the scenario running stops and what it created is deleted before
// gpuops exits 130 (SIGINT) or 143 (SIGTERM).
#pragma once

namespace gpuops::cli {

// While it lives, SIGINT and SIGTERM set the flag `received()` reads
// instead of ending the process. Each handler is installed with
// SA_RESETHAND: a second signal of the same kind (a second Ctrl-C during
// the clean-up) ends the process at once, as if no handler were there. The
// handlers in place before are restored by the destructor. One at a time.
class InterruptSignals {
 public:
  InterruptSignals();
  ~InterruptSignals();
  InterruptSignals(const InterruptSignals&) = delete;
  InterruptSignals& operator=(const InterruptSignals&) = delete;
  // The first signal received since construction (SIGINT or SIGTERM), 0 none.
  static int received();
  // "SIGINT" or "SIGTERM".
  static const char* name(int signal);
};

}  // namespace gpuops::cli
