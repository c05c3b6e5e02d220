// SIGINT/SIGTERM as a flag for `gpuops run` (cli/run_signals.h).
#include "cli/run_signals.h"

#include <signal.h>

#include <atomic>

namespace gpuops::cli {

namespace {

std::atomic<int> g_received{0};
static_assert(std::atomic<int>::is_always_lock_free, "the handler stores to it");
struct sigaction g_old_int, g_old_term;

void on_signal(int signal) {
  int none = 0;
  g_received.compare_exchange_strong(none, signal);
}

}  // namespace

InterruptSignals::InterruptSignals() {
  g_received = 0;
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  // SA_RESTART: a read or poll the signal lands in goes on (the flag is
  // looked at between them), rather than failing with EINTR.
  action.sa_flags = SA_RESETHAND | SA_RESTART;
  ::sigaction(SIGINT, &action, &g_old_int);
  ::sigaction(SIGTERM, &action, &g_old_term);
}

InterruptSignals::~InterruptSignals() {
  ::sigaction(SIGINT, &g_old_int, nullptr);
  ::sigaction(SIGTERM, &g_old_term, nullptr);
}

int InterruptSignals::received() { return g_received.load(); }

const char* InterruptSignals::name(int signal) { return signal == SIGINT ? "SIGINT" : "SIGTERM"; }

}  // namespace gpuops::cli
