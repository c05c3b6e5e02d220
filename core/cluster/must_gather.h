// core/cluster/must_gather.h: the nodes of a GPU Operator must-gather folder.
//
// NVIDIA/gpu-operator's hack/must-gather.sh writes one folder: kubectl YAML
// (gpu_operand_pods.yaml and gpu_operand_ds.yaml, Lists of the operator
// namespace's pods and DaemonSets; cluster_policy.yaml; nvidiadrivers.yaml;
// gpu_operator_pod.yaml), which core/codec/documents.h read_paths reads as any
// dump, and logs, `.status` tables, `.descr` texts and a `version` file, which
// read_paths skips (it reads *.yaml, *.yml and *.json only). It saves no Node
// object. The nodes are in three text files, read here:
//
//  * gpu_nodes.labels: for each node that has an NVIDIA PCI label
//    (feature.node.kubernetes.io/pci-10de.present, pci-0302_10de.present or
//    pci-0300_10de.present), its name on a line, then
//    `kubectl get node/NAME -ojsonpath={.metadata.labels}` (json.Marshal of
//    the map: keys sorted, no trailing newline) through the script's
//    `sed 's|,|,- |g' | tr ',' '\n' | sed 's/{"/- /' | tr : = | sed 's/"//g' |
//    sed 's/}/\n/'`, then an empty line. So each label is `- key=value`
//    (`- key=` for an empty value); a node without labels has no line (or `{`
//    when kubectl printed `{}`); an older kubectl printed the map as
//    `map[k:v k2:v2]`, which the pipeline makes `map[k=v k2=v2]`. A node
//    with several of the PCI labels is listed once per label, and a second
//    run into the same folder appends: a name met again replaces its earlier
//    block (the later one is the newer).
//  * gpu_nodes.descr: `kubectl describe nodes -l nvidia.com/gpu.present=true`
//    (k8s.io/kubectl pkg/describe describeNode, aligned by text/tabwriter:
//    `Key:` at column 0, continuation lines indented). Read: Name, Labels,
//    Taints (`key[=value]:Effect`, Taint.ToString), Unschedulable, the
//    Conditions table (type, status, reason and message, located by the
//    header's columns) and Allocatable. Other sections (Annotations, which
//    describe shortens past 140 characters, Capacity, Addresses, System Info,
//    pods, events) are skipped.
//  * gpu_nodes.status: `kubectl get nodes -l nvidia.com/gpu.present=true -o
//    wide`. Only its STATUS column is read (printers.go's node status:
//    Ready, NotReady, or Unknown when there is no Ready condition, then
//    ",SchedulingDisabled" when cordoned), as a fallback: the Ready
//    condition of a node that has none after the describe, spec.unschedulable
//    of a node the describe does not describe.
//
// What is recovered, per node: the name; the labels (gpu_nodes.labels, else,
// for a node it lists without labels or not at all, the describe's Labels); the taints (without timeAdded),
// spec.unschedulable, the conditions (without their times) and status.allocatable from the describe; else the Ready
// condition (status "True", or "False" for NotReady, which stands for False and Unknown alike, no reason or message)
// and unschedulable from gpu_nodes.status. What is not: annotations, capacity, addresses, nodeInfo, uid,
// creationTimestamp; and every node without an NVIDIA PCI label or gpu.present=true (CPU nodes, whose pods, such as the
// operator's own, then sit on a node the snapshot does not have). The nodes
// are the union of gpu_nodes.labels and gpu_nodes.descr, in that order.
//
// The parsers never crash on bad text: a line they cannot read is an
// InputError(file, line, "", message) naming it; a line over 1 MiB and more
// than 100,000 nodes are refused the same way. Labels and taints are checked
// as the API server checks a Node's (core/kube/names.h), node names as
// DNS-1123 subdomains.
#pragma once

#include <string>
#include <vector>

#include "core/model/model.h"

namespace gpuops::core {

// The file names hack/must-gather.sh gives the node files.
inline constexpr const char* kMustGatherLabels = "gpu_nodes.labels";
inline constexpr const char* kMustGatherDescribe = "gpu_nodes.descr";
inline constexpr const char* kMustGatherStatus = "gpu_nodes.status";

// The node files of one must-gather; an empty path is a file not there.
struct MustGatherFiles {
  std::string labels;    // gpu_nodes.labels
  std::string describe;  // gpu_nodes.descr
  std::string status;    // gpu_nodes.status
  bool empty() const { return labels.empty() && describe.empty() && status.empty(); }
};

// True when `path` is a folder hack/must-gather.sh wrote: it holds
// gpu_nodes.labels, gpu_nodes.descr or gpu_operand_ds.yaml. Never throws.
bool is_must_gather_folder(const std::string& path);

// The folder to read for `path` (a --snapshot argument): `path` itself unless
// it is a folder that is not a must-gather and holds no *.json, *.yaml or
// *.yml of its own; then the one must-gather folder among its subfolders,
// at most two levels down: `oc adm must-gather` writes the gather script's
// /must-gather into must-gather.local.<N>/<image>/ next to its own files
// (timestamp, event-filter.html). `path` itself when none is found. Throws
// InputError(path) naming them when there are several (name one).
std::string resolve_must_gather(const std::string& path);

// The node files present in `folder` (regular files only). Throws
// InputError(file) when one is not the folder's own (a symbolic link out of
// it, a hard link: core/base/input_file.h, folder_entry_problem).
MustGatherFiles must_gather_files(const std::string& folder);

// True when `path`'s file name is one of the three node files (a path given
// alone, not in its folder). Never throws.
bool is_must_gather_node_file(const std::string& path);

// gpu_nodes.labels: one Node per node block (metadata.name and
// metadata.labels only), in file order; a name met again replaces its
// earlier block in place. Throws InputError(file, line, "", ...) for a line
// that is neither a node name (a DNS-1123 subdomain), a `- key=value` label of
// a node, `{`, a `map[...]` line nor blank, and for an invalid label key or
// value (upstream's message).
std::vector<Node> parse_must_gather_labels(const std::string& text, const std::string& file);

// gpu_nodes.descr: one Node per `Name:` (name, labels, taints, unschedulable,
// conditions, allocatable), in file order; a name met again replaces its
// earlier description. A truncated last node keeps what was read of it.
// Throws InputError(file, line, "", ...) for text before the first `Name:`, a
// column-0 line without ':', and a value it cannot read: a label without '=',
// a taint that is not `key[=value]:Effect` (effect NoSchedule,
// PreferNoSchedule or NoExecute), Unschedulable neither true nor false, a
// condition status other than True, False or Unknown, an allocatable line
// that is not `name: quantity`.
std::vector<Node> parse_must_gather_describe(const std::string& text, const std::string& file);

// One row of gpu_nodes.status.
struct NodeStatusRow {
  std::string name;
  std::string ready;           // "True" (Ready), "False" (NotReady), "" (Unknown: no Ready condition)
  bool unschedulable = false;  // ",SchedulingDisabled"
  int line = 0;
};

// gpu_nodes.status: its rows, in file order. Empty text has none. Throws
// InputError(file, line, "", ...) when the first line is not a `NAME STATUS`
// header, or a row has no STATUS or one other than Ready, NotReady or
// Unknown (optionally followed by ",SchedulingDisabled").
std::vector<NodeStatusRow> parse_must_gather_status(const std::string& text, const std::string& file);

// The nodes of a must-gather, from whichever of its node files are there
// (read with core/base/input_file.h read_input_file, whose errors it throws), as
// the top of this file says. Throws what the parsers throw.
std::vector<Node> must_gather_nodes(const MustGatherFiles& files);

}  // namespace gpuops::core
