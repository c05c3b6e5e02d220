// cli/cmd_lab_watch.h: `gpuops lab grade --watch` (docs/LAB.md "Grading as
// you work"): the grade of a working directory against a running cluster,
// redrawn in the terminal whenever it changes, until SIGINT or SIGTERM.
#pragma once

#include <chrono>
#include <iosfwd>
#include <string>

namespace gpuops::cli {

struct GradeWatchOptions {
  std::string dir;         // the working directory (exists: checked by the caller)
  std::string kubeconfig;  // the learner's cluster ("" with context "": kubectl's defaults)
  std::string context;
  std::string ns = "gpu-operator";
  std::chrono::seconds script_timeout{60};
  std::chrono::milliseconds interval{300};  // between two polls of the files and the cluster
};

// Opens the cluster and reads it once (core::InputError, exit 2, for a
// kubeconfig that does not load; core::ClusterError, exit 3, for a server
// that does not answer), then watches (cli/lab_watch.h), writing
// render_watch's picture to `out` each time it changes: on a terminal
// (`out` is std::cout on a tty) the screen is cleared first, otherwise each
// picture follows the last after a blank line. SIGINT or SIGTERM ends it:
// a script running is killed, scratch files removed, `stopped after N
// grades` written, and 0 returned. The learner's cluster is only read.
int run_grade_watch(const GradeWatchOptions& options, std::ostream& out);

}  // namespace gpuops::cli
