// core/lab/lab.h: the reference lab (LAB.md) performed on any backend, and the
// grader that checks a learner's working directory against a live cluster.
//
// Working directory layout (LAB.md): k8s/{toolkit,driver,device-plugin,gfd,
// dcgm}-ds.yaml; out/{roster,driver,optout,audit,order,matrix}.txt;
// operand-audit.sh and order-check.sh (bash + kubectl + jq, honour
// KUBECONFIG, no node names). Every value written is read back from the
// cluster after it settles, never from memory.
#pragma once

#include <boost/json/value.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "core/cluster/cluster.h"
#include "core/cluster/simulation.h"
#include "core/gpu_operator/operands.h"

namespace gpuops::core {

// The lab's nodes (LAB.md "Environment"): lab-node-0 (GPU), lab-node-1 (GPU,
// host driver), lab-node-2 (no GPU), with no label beyond
// kubernetes.io/hostname.
std::vector<Node> lab_nodes();

// The lab's environment on a cluster that has a kubelet (the simulator,
// whose node-initialize gives the standard conditions as KWOK does to a node
// created on it): lab_nodes() added to `cluster` without their conditions
// (the Ready condition they carry is for backends without a kubelet, and
// would stop it), then settled. Throws what Cluster::add_node throws.
void add_lab_nodes(Cluster& cluster);

// The reference scripts shipped with gpuops (data/lab/), "" if unknown:
// "operand-audit.sh", "order-check.sh".
std::string lab_script(const std::string& name);

struct LabRunOptions {
  std::string dir;  // the learner's working directory
  std::string ns = "gpu-operator";
  // Narration for a teaching demo: each step's title, the change made, what
  // appeared or disappeared on which node and why, and the matrix after it.
  // nullptr: silent.
  std::ostream* narrate = nullptr;
  // Create lab-node-0..2 when they are missing (simulators, KWOK clusters).
  bool create_nodes = true;
  // Write the working directory (k8s/, out/, the two scripts) into `dir`.
  // false: only the cluster is changed, and nothing is written anywhere (the
  // grader's reference cluster: the answers stay in memory, out of the
  // learner's scripts' reach).
  bool write_files = true;
  // The optional ninth act (`gpuops lab run --operator`): after step 8, the
  // simulated GPU Operator of this catalog (a release's built-in catalog,
  // core/gpu_operator/operands.h) is installed on the same nodes with a ClusterPolicy at
  // its defaults, and the narration says which of the lab's hand-made
  // nvidia.com/ labels it keeps, overwrites or removes, which it adds, and
  // what becomes of the lab's DaemonSets (taken over by name, or refused).
  // Needs `sim` (simulator only). nullptr: eight steps, as LAB.md has them.
  const Catalog* operator_catalog = nullptr;
  SimulationControls* sim = nullptr;
  // Called once per step when it is done (`gpuops lab run --html`): its
  // number, title, narration lines (as `narrate` would print them, without
  // the indent; also when narrate is nullptr) and the cluster's state after
  // it. nullptr: not called.
  std::function<void(int step, const std::string& title, const std::vector<std::string>& lines,
                     const ClusterState& after)>
      on_step;
  // Called for each file a step writes (also when write_files is false): the
  // step's number, the path relative to `dir` with '/' separators
  // ("out/driver.txt", "k8s/driver.yaml", "operand-audit.sh") and the whole
  // text (`gpuops lab run --html` shows the deliverables). nullptr: not called.
  std::function<void(int step, const std::string& path, const std::string& text)> on_file;
};

// Performs the eight steps on `cluster` and writes the working directory.
// Throws InputError when `dir` cannot be written, ClusterError from the
// backend. `catalog` must be the lab catalog (or a superset with the same
// first five operands).
void run_lab(Cluster& cluster, const Catalog& catalog, const LabRunOptions& options);

// Runs a learner's script: `script` is a path, `args` its arguments, `limit`
// the time it may take. Returns its exit status, stdout and stderr; a script
// still running at `limit` is killed with everything it started, and the
// result says so (timed_out). Supplied by the CLI (it runs bash with
// KUBECONFIG pointing at the cluster being graded).
struct ScriptResult {
  int exit_code = -1;      // -1 when it did not exit by itself
  bool timed_out = false;  // killed at the time limit: exit_code and out say nothing
  std::string out;
  std::string err;
  bool out_cut = false;  // stdout was longer than what was kept (out): the rest was discarded
  bool err_cut = false;  // the same for stderr
};
using ScriptRunner = std::function<ScriptResult(const std::string& script, const std::vector<std::string>& args,
                                                std::chrono::seconds limit)>;

// A file of the learner's a step read (`lab grade --html` shows them): its
// path relative to the working directory, its text as read (at most
// kMaxLearnerFile bytes; "" when it could not be read, `problem` then says
// why), and what it is checked against: for out/ files the text the grade
// expects (computed from the cluster), for the manifests and the two scripts
// gpuops' reference (manifests/, data/lab/), which the learner's need not
// equal byte for byte.
struct GradeFile {
  std::string path;
  std::string text;
  std::string expected;
  bool exact = false;   // `expected` is what the file must hold (out/), not a reference
  std::string problem;  // why it was not read ("", read)
};

struct GradeLine {
  int step = 0;  // 1..8
  bool pass = false;
  std::string reason;            // why it failed, or what was checked
  std::string title;             // what the step checks ("k8s/driver-ds.yaml and out/driver.txt"), whatever the result
  std::vector<GradeFile> files;  // the learner's files the step read, in the order it read them
};

struct GradeOptions {
  std::string dir;
  std::string ns = "gpu-operator";
  // The node the grader adds to try the scripts (removed afterwards). Its
  // labels ask for the driver and the device plugin, and its allocatable
  // memory (64Mi) cannot hold them: the scheduler leaves both Pending, so a
  // correct audit reports them MISSING while desiredNumberScheduled counts
  // the node.
  std::string probe_node = "grader-probe";
  ScriptRunner run_script;  // nullptr: scripts are not run (steps 6 and 7 say so)
  // The limit for each run of a script: a learner's script may hang (a
  // `sleep`, a kubectl wait, a loop). A run that reaches it fails its step.
  // After order-check.sh times out on one node it is not run on the others.
  std::chrono::seconds script_timeout{60};
};

// The most grade_lab reads of any file in the learner's directory: 1 MiB.
inline constexpr std::size_t kMaxLearnerFile = std::size_t{1} << 20;

// Grades the working directory against the live cluster: one line per step.
// Never throws for the learner's mistakes; backend failures propagate.
//
// The directory is not trusted: a file that is not a regular file (a FIFO, a
// device, a socket, a directory) or that resolves, through symbolic links,
// to a place outside the directory is neither read nor run, and its step
// fails saying which file and why; at most kMaxLearnerFile bytes of a file
// are read (the step says when it was cut); the diffs and script outputs
// shown in the reasons are clipped (a few dozen lines, a few hundred
// characters each).
std::vector<GradeLine> grade_lab(Cluster& cluster, const Catalog& catalog, const GradeOptions& options);

// "PASS step N: reason" / "FAIL step N: reason" lines.
std::string render_grade(const std::vector<GradeLine>& lines);

// The grade for machines (`lab grade -o json|yaml`):
//   {"dir": DIR, "passed": P, "failed": F,
//    "steps": [{"step": N, "title": ..., "result": "PASS"|"FAIL", "reason": ...}]}
// `reason` as render_grade gives it before its escaping (JSON escapes
// control characters itself).
boost::json::value grade_document(const std::vector<GradeLine>& lines, const std::string& dir);

// JUnit XML (`lab grade --junit FILE`, core/base/junit.h): a testsuite
// "gpuops lab grade", one testcase "step N: <title>" per step (classname
// "gpuops.lab"), a failing step's <failure> with the first line of its
// reason as the message and the whole reason (the diff) as the text.
std::string render_grade_junit(const std::vector<GradeLine>& lines);

}  // namespace gpuops::core
