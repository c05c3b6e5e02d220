// cli/cluster_options.h: what every cluster-reading subcommand shares: its
// options (--snapshot, --kubeconfig, -n, --operands, -o), opening the
// backend they name, and load_state (the state, the operand catalog, operator
// mode).
#pragma once

#include <cxxopts.hpp>

#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "core/cluster/cluster.h"
#include "core/cluster/snapshot.h"
#include "core/gpu_operator/operands.h"
#include "core/gpu_operator/operator_install.h"

namespace gpuops::cli {

// Options every cluster-reading command takes:
//   --snapshot FILE (repeatable, or comma-separated): read kubectl dumps or
//     a GPU Operator must-gather folder (core/cluster/snapshot.h)
//   --kubeconfig FILE, --context NAME: a live cluster
//   -n/--namespace NS (default gpu-operator), --operands lab|gpu-operator|FILE,
//   -o/--output text|json
void add_cluster_options(cxxopts::Options& opts);

struct ClusterOptions {
  std::vector<std::string> snapshots;
  std::string kubeconfig;
  std::string context;
  std::string server;                     // --server: overrides the kubeconfig's (kubectl's flag)
  std::string token;                      // --token: a bearer token in place of the kubeconfig user's credentials
  std::string certificate_authority;      // --certificate-authority: a PEM file of CAs
  bool insecure_skip_tls_verify = false;  // --insecure-skip-tls-verify
  std::string namespace_ = "gpu-operator";
  bool namespace_given = false;
  std::string operands = "lab";
  // --operator-version: the release an operator install is judged as ("v24.9.2",
  // always with the leading "v"), in place of the detected one; "" when not given.
  // Not with --operands (UsageError).
  std::string operator_version;
  std::string output = "text";
  // A snapshot's nodes and pods keep their whole JSON (core::SnapshotOptions): only
  // for `serve --snapshot`, which serves them again with every field.
  bool keep_raw = false;
  // The command infers a ClusterPolicy where the input has none and says so
  // itself (plan): the banner then does not.
  bool infers_cluster_policy = false;
};

// Reads the options added by add_cluster_options. Throws UsageError for an
// unknown -o value, an --operator-version that is not [v]MAJOR.MINOR[.PATCH]
// or one given with --operands.
ClusterOptions read_cluster_options(const cxxopts::ParseResult& r);

// Opens the backend the options name, to be read: SnapshotCluster for
// --snapshot, the real API otherwise (kubeconfig as kubectl finds it). Without
// -n, the namespace becomes the kubeconfig context's when it names one. Throws
// InputError/ClusterError.
std::unique_ptr<core::ClusterReader> open_cluster(ClusterOptions& o);

// A snapshot without a single node (an empty dump, a dump of other kinds, a
// folder without dumps, a must-gather whose node files list none) cannot be
// audited: throws core::InputError naming the snapshot files ("no nodes in
// ..."). A live cluster without nodes is a fact, not an error: nothing is
// thrown for it.
void require_nodes_in_snapshot(const ClusterOptions& o, const core::ClusterState& state);

// For a snapshot (`snap`, nullptr for a live cluster) whose namespace
// `state` holds none of the catalog's DaemonSets and no pods while another
// namespace of the dump does (the operator installed elsewhere, OpenShift's
// nvidia-gpu-operator): throws core::InputError naming the snapshot and
// suggesting -n. Live clusters and dumps without any operand DaemonSet pass.
void require_operands_in_namespace(const ClusterOptions& o, core::SnapshotCluster* snap,
                                   const core::ClusterState& state, const core::Catalog& catalog);

// The snapshot paths of `o`, comma-separated ("" for a live cluster): the
// file an InputError about the cluster's contents names.
std::string snapshot_list(const ClusterOptions& o);

// The names of the state's nodes, sorted.
std::vector<std::string> sorted_node_names(const core::ClusterState& state);

// Throws core::InputError (exit 2) `nodes "NAME" not found`, kubectl's wording,
// followed by the first ten nodes there are, when `node` is not in
// `sorted_names`.
void require_node(const ClusterOptions& o, const std::vector<std::string>& sorted_names, const std::string& node);

// What the commands that read a cluster once share (audit, order-check,
// matrix, diagnose, explain): the options read, the cluster opened and read,
// the install recognised and the catalog chosen.
struct LoadedState {
  ClusterOptions opts;
  core::ClusterState state;
  core::OperatorInstall install;  // core::detect_operator_install(state)
  // --operands when given; else the operator's catalog for the detected
  // version (core::operator_catalog_name) on an operator install; else "lab".
  // operator_mode is set on an operator install, whichever catalog.
  core::Catalog catalog;
  bool catalog_given = false;           // --operands was on the command line
  std::vector<std::string> node_names;  // sorted
};

// The catalog for a state whose install is `install`: `operands` when the
// user named it (`given`), else the operator's catalog for the detected
// version (core::operator_catalog_name) on an operator install, else "lab";
// operator_mode set on an operator install. `name_out` receives the name
// loaded. Throws core::InputError for a catalog that does not load.
core::Catalog choose_catalog(const core::OperatorInstall& install, const std::string& operands, bool given,
                             std::string* name_out = nullptr);

// Reads the options, opens the cluster, reads the state of the namespace, and
// checks it (require_nodes_in_snapshot, require_operands_in_namespace). A
// snapshot read without -n whose GPU Operator DaemonSets are all in one other
// namespace (SnapshotCluster::operator_namespaces) is read in that one, said
// on `err`. On an operator install writes operator_banner to `err`. Throws
// what those throw.
LoadedState load_state(const cxxopts::ParseResult& r, std::ostream& err);
// The same from options already read (`catalog_given`: options.operands was
// named by the user, else the catalog follows the install).
LoadedState load_state(const ClusterOptions& options, bool catalog_given, std::ostream& err);

// The operator-mode note, one line under 120 columns: the release detected
// (core::OperatorInstall::version, "release unknown" when nothing tells) and
// the catalog used; without a ClusterPolicy in the state (and unless the
// command infers one, ClusterOptions::infers_cluster_policy) the command
// that adds it, instead of the --operands hint:
//   gpuops: operator mode: GPU Operator v26.7.0, catalog gpu-operator (--operands overrides)
//   gpuops: operator mode: v26.7.0, catalog gpu-operator; no ClusterPolicy (kubectl get clusterpolicies -o json)
std::string operator_banner(const LoadedState& l, const std::string& catalog_name);

// A usage error: the CLI prints it with a hint and exits 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace gpuops::cli
