// cli/lab_watch.h: the lab's grade re-run as the learner works (docs/LAB.md
// "Grading as you work"): `gpuops lab grade --watch` in the terminal, and
// `gpuops serve --lab --ui --grade-dir DIR` in the placement view's
// checklist. One implementation for both.
//
// What is watched: the files the grader reads in the working directory (the
// five manifests under k8s/, the six out/*.txt, operand-audit.sh,
// order-check.sh), polled every Options::interval (stat, and the content of
// a file whose stat changed: a file rewritten with the same bytes is no
// change), and the learner's cluster, read through a core::ClusterReader
// (reads only) at the same pace: its placement view, its DaemonSets'
// statuses and its pods' phases.
//
// Grading never writes to the learner's cluster: each grade copies the state
// it read into a fresh in-process simulator (simulator::FakeCluster::
// import_state, as `serve --from-kubeconfig`), serves the copy on loopback,
// and runs core::grade_lab against the copy, so steps 6 and 7 add their
// probe node and run the learner's scripts (with KUBECONFIG naming the copy)
// there. The copy is dropped after the grade.
#pragma once

#include <boost/json/value.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/cluster/cluster.h"
#include "core/gpu_operator/operands.h"
#include "core/lab/lab.h"

namespace gpuops::cli {

// Runs `bash script args...` with KUBECONFIG (when not empty) and NAMESPACE
// (which the lab's reference scripts honour) set, stdout and stderr
// captured, killed with everything it started after the limit
// (cli/subprocess.h). Throws core::ClusterError when bash cannot be started.
core::ScriptRunner lab_script_runner(const std::string& kubeconfig, const std::string& ns);

// Where a watched grade stands: what the terminal and the page show.
struct WatchStatus {
  uint64_t grades = 0;                 // grades done; 0: every step pending
  std::vector<core::GradeLine> lines;  // the last grade's (empty before the first)
  bool grading = false;                // a grade runs now; `lines` are the previous one's
  // Why the last attempt did not grade ("" when it did): the cluster could
  // not be read, the copy could not be made. Steps keep their last state.
  std::string error;
};

class LabWatch {
 public:
  struct Options {
    std::string dir;  // the working directory (must exist when the watch starts)
    std::string ns = "gpu-operator";
    std::chrono::seconds script_timeout{60};  // each run of a learner's script
    std::chrono::milliseconds interval{300};  // between two polls
    const std::atomic<bool>* stop = nullptr;  // set: no further script is started, run() returns
  };

  // `live` is only read (ClusterReader::state); it and `catalog` (the lab's,
  // core::load_catalog("lab")) must outlive the watch.
  LabWatch(core::ClusterReader& live, const core::Catalog& catalog, Options options);

  // One poll: reads the files and the cluster, and grades (on a copy) when
  // either differs from what the last grade saw, or nothing was graded yet.
  // `started` is called before a grade starts (with grading set). Returns
  // true when status() changed. Never throws for the cluster or the
  // learner's files (status().error says why it did not grade); throws
  // WatchStopped when Options::stop was set during a grade.
  bool poll(const std::function<void(const WatchStatus&)>& started = {});

  // poll() until Options::stop is set, waiting Options::interval between
  // polls with `wait` (returns early when woken; nullptr: a plain sleep).
  // `changed` is called with the status whenever it changed, and when a
  // grade starts.
  void run(const std::function<void(const WatchStatus&)>& changed,
           const std::function<void(std::chrono::milliseconds)>& wait = {});

  const WatchStatus& status() const { return status_; }

  // What poll() throws when stopped in the middle of a grade.
  struct WatchStopped {};

 private:
  std::string files_fingerprint();
  std::vector<core::GradeLine> grade_copy(core::ClusterState state);

  core::ClusterReader& live_;
  const core::Catalog& catalog_;
  Options opt_;
  WatchStatus status_;
  std::string seen_files_, seen_cluster_;  // what the last grade saw
  bool attempted_ = false;                 // a grade was tried
  bool read_failed_ = false;               // the last read of the cluster failed
  std::string last_grade_error_;           // why the last grade failed ("": it did not)
  struct FileSeen {
    std::string stat_key;  // type, size, mtime, inode
    std::string content_key;
  };
  std::map<std::string, FileSeen> files_;  // per path under dir
};

// The terminal's picture of `s` for `lab grade --watch` (without the
// screen-clearing prefix): a heading, then one line per step: before the
// first grade `pending step N`, after it core::render_grade's lines
// (PASS/FAIL, a failure's diff indented below it), unchanged; then the
// error, if any. Equal statuses give equal text, so a redraw is only needed
// when the text changes.
std::string render_watch(const WatchStatus& s, const std::string& dir);

// The checklist the page shows beside the grid (UiServer::set_checklist):
//   {"dir": DIR, "grades": N, "grading": bool, "error": "...",
//    "steps": [{"step": N, "state": "pending"|"passed"|"failed",
//               "title": ..., "reason": ...}]}
// with the eight steps pending before the first grade.
boost::json::value watch_document(const WatchStatus& s, const std::string& dir);

}  // namespace gpuops::cli
