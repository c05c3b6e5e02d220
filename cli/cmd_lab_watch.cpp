// gpuops lab grade --watch: the grade redrawn in the terminal whenever it
// changes, until Ctrl-C (cli/lab_watch.h).
#include "cli/cmd_lab_watch.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <iostream>

#include "cli/backends.h"
#include "cli/lab_watch.h"
#include "core/base/errors.h"

namespace gpuops::cli {

namespace {

// SIGINT and SIGTERM set the flag and wake the wait (a self-pipe): the watch
// ends at once between grades; during one, cli/subprocess.h's handler first
// kills the running script and removes the scratch files, then hands the
// signal on to this one.
std::atomic<bool> g_stop{false};
int g_wake_write = -1;

extern "C" void on_watch_signal(int) {
  int saved = errno;
  g_stop.store(true);
  if (g_wake_write >= 0) {
    char c = 1;
    [[maybe_unused]] ssize_t n = ::write(g_wake_write, &c, 1);
  }
  errno = saved;
}

// The handlers and the pipe for one watch; the previous dispositions are
// put back when it ends.
class StopSignals {
 public:
  StopSignals() {
    if (::pipe2(fds_, O_CLOEXEC | O_NONBLOCK) != 0) throw core::ClusterError("--watch: cannot make a pipe");
    g_stop.store(false);
    g_wake_write = fds_[1];
    struct sigaction sa {};
    sa.sa_handler = on_watch_signal;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, &old_int_);
    ::sigaction(SIGTERM, &sa, &old_term_);
  }
  ~StopSignals() {
    ::sigaction(SIGINT, &old_int_, nullptr);
    ::sigaction(SIGTERM, &old_term_, nullptr);
    g_wake_write = -1;
    ::close(fds_[0]);
    ::close(fds_[1]);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // Sleeps `d`, or less when a signal comes.
  void wait(std::chrono::milliseconds d) const {
    struct pollfd p {
      fds_[0], POLLIN, 0
    };
    if (!g_stop.load()) ::poll(&p, 1, static_cast<int>(d.count()));
    char buf[16];
    while (::read(fds_[0], buf, sizeof buf) > 0) {
    }
  }

 private:
  int fds_[2] = {-1, -1};
  struct sigaction old_int_ {
  }, old_term_{};
};

}  // namespace

int run_grade_watch(const GradeWatchOptions& o, std::ostream& out) {
  // The cluster is opened and read once before the watch starts: a wrong
  // kubeconfig or an unreachable server is an error (exit 2 or 3) here,
  // not a watch that waits for ever.
  auto live = open_real(o.kubeconfig, o.context, o.ns, nullptr);
  live->state(o.ns);
  core::Catalog catalog = core::load_catalog("lab");
  StopSignals signals;
  LabWatch::Options wo;
  wo.dir = o.dir;
  wo.ns = o.ns;
  wo.script_timeout = o.script_timeout;
  wo.interval = o.interval;
  wo.stop = &g_stop;
  LabWatch watch(*live, catalog, wo);
  const bool tty = &out == &std::cout && ::isatty(STDOUT_FILENO);
  std::string shown;
  watch.run(
      [&](const WatchStatus& s) {
        std::string text = render_watch(s, o.dir);
        if (text == shown) return;
        // A terminal is cleared and redrawn; a pipe or file gets each new
        // picture after a blank line.
        if (tty)
          out << "\x1b[H\x1b[2J";
        else if (!shown.empty())
          out << "\n";
        out << text << std::flush;
        shown = std::move(text);
      },
      [&](std::chrono::milliseconds d) { signals.wait(d); });
  out << "stopped after " << watch.status().grades << " grade" << (watch.status().grades == 1 ? "" : "s") << "\n"
      << std::flush;
  return core::kExitOk;
}

}  // namespace gpuops::cli
