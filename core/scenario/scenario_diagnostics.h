// core/scenario/scenario_diagnostics.h: a step's or a scenario's `catch:` and
// `finally:` (chainsaw's), lists of diagnostic operations run on the cluster
// after the step (or the scenario): `catch` when it failed, `finally` always.
// Their output goes into the reports (core::render_json, render_junit's
// <system-out>) and, with `gpuops run --artifacts DIR`, into files.
//
//   catch:
//     - diagnose: {}                 # gpuops diagnose, every node (diagnose.txt)
//     - dump: {}                     # the nodes, DaemonSets, pods and ClusterPolicies
//                                    # as a kubectl List (dump.json; gpuops diagnose -f reads it)
//     - explain: {daemonset: nvidia-dcgm-exporter, node: gpu-b}
//                                    # gpuops explain of the pair (explain-<node>-<daemonset>.txt)
//     - events: {}                   # the namespace's events (events.txt)
//     - podLogs: {pod: NAME, container: C}   # or {selector: app=x}: a pod's log (podlogs-<pod|selector>.txt)
//   finally: [...]                   # the same operations; files "finally-<file>"
//
// events and podLogs read a live cluster through core::DiagnosticReader
// (core/cluster/diagnostic_reader.h, real::ApiCluster): the namespace's
// events, the last kPodLogLines lines of each log. On the simulator they say
// they are unavailable; on a backend without the reader, they give the
// kubectl command that reads them.
#pragma once

#include <string>
#include <vector>

namespace YAML {
class Node;
}

namespace gpuops::core {

struct Catalog;
class Cluster;
struct Scenario;

// The lines of each pod's log a podLogs operation reads (the tail).
inline constexpr int kPodLogLines = 200;

struct DiagnosticOp {
  enum class Kind { kDiagnose, kDump, kExplain, kEvents, kPodLogs };
  Kind kind = Kind::kDiagnose;
  int line = 0;
  std::string node, daemonset;           // explain
  std::string pod, selector, container;  // podLogs: pod or selector, container optional
};

// The operations' names, as written in a file: "diagnose", "dump",
// "explain", "events", "podLogs" (the order the errors list them).
inline constexpr const char* kDiagnosticOpKeys[] = {"diagnose", "dump", "explain", "events", "podLogs"};
std::string diagnostic_op_name(DiagnosticOp::Kind kind);

// A step's or a scenario's two lists.
struct DiagnosticBlocks {
  std::vector<DiagnosticOp> catch_ops;    // `catch:`, run when it failed
  std::vector<DiagnosticOp> finally_ops;  // `finally:`, run always (after catch)
  bool empty() const { return catch_ops.empty() && finally_ops.empty(); }
};

// Reads `catch` and `finally` of the map `parent` (either may be absent)
// into `out`. `field` is the parent's field path ("steps[2]", "" at the top
// level), `catalog` checks explain's DaemonSet. Throws InputError naming
// `file`, the line and the field ("steps[2].catch[0].explain.node"): a list
// expected, an item that is not a map of exactly one operation, an unknown
// operation, an unknown or missing argument, a value of the wrong type, an
// explain of a DaemonSet no operand of the catalog has, a podLogs with both
// or neither of pod and selector.
void read_diagnostic_blocks(const YAML::Node& parent, const std::string& file, const std::string& field,
                            const Catalog& catalog, DiagnosticBlocks& out);

// What one operation gave. `file`: its artefact's name, unique in its step
// (diagnose.txt, dump.json, explain-gpu-b-nvidia-dcgm-exporter.txt,
// events.txt, podlogs-<pod or selector>.txt; "finally-" before those of
// `finally`, "-2", "-3" after a repeated name).
struct DiagnosticOutput {
  std::string block;  // "catch" or "finally"
  std::string op;     // diagnostic_op_name
  std::string file;
  std::string text;  // the output; an error reading the cluster is its text
};

// Runs `ops` of `block` ("catch" or "finally") on one read of `cluster`
// (the scenario's namespace), appending to `out`. `simulator`: the cluster
// is the simulator (events and podLogs then say they are unavailable there).
// Never throws: a failure is the operation's text ("error: ...").
void run_diagnostics(const std::vector<DiagnosticOp>& ops, const std::string& block, const Scenario& scenario,
                     Cluster& cluster, bool simulator, std::vector<DiagnosticOutput>& out);

// A name made safe as one path component: every character but ASCII
// letters, digits, '.', '-' and '_' becomes '_', "." and ".." become "_"
// and "__", "" becomes "_"; at most 100 characters.
std::string path_safe(const std::string& name);

}  // namespace gpuops::core
