#include "cli/cluster_options.h"

#include <algorithm>
#include <ostream>
#include <regex>

#include "cli/backends.h"
#include "core/base/errors.h"
#include "core/base/terminal.h"
#include "core/cluster/must_gather.h"
#include "core/cluster/snapshot.h"

namespace gpuops::cli {

void add_cluster_options(cxxopts::Options& opts) {
  opts.add_options("cluster")(
      "snapshot",
      "read the cluster from kubectl dumps (`kubectl get nodes,daemonsets,pods -A -o json|yaml`) "
      "or a GPU Operator must-gather folder (hack/must-gather.sh: nodes from gpu_nodes.labels and "
      "gpu_nodes.descr): files or folders; repeat or separate with commas",
      cxxopts::value<std::vector<std::string>>())("kubeconfig", "path to the kubeconfig of a live cluster",
                                                  cxxopts::value<std::string>())("context", "kubeconfig context to use",
                                                                                 cxxopts::value<std::string>())(
      "server", "the API server's address, in place of the kubeconfig's (as kubectl --server)",
      cxxopts::value<std::string>())(
      "token", "bearer token for the API server, in place of the kubeconfig user's credentials (as kubectl --token)",
      cxxopts::value<std::string>())("certificate-authority",
                                     "a PEM file of the CAs that sign the API server's certificate (as kubectl's flag)",
                                     cxxopts::value<std::string>())(
      "insecure-skip-tls-verify",
      "do not check the API server's certificate: the connection is then open to interception (as kubectl's flag)")(
      "n,namespace", "namespace of the operand DaemonSets",
      cxxopts::value<std::string>()->default_value("gpu-operator"))(
      "operands",
      "operand catalog: lab, gpu-operator (v26.7), gpu-operator-v25.3, or a catalog file (default: lab; on a GPU "
      "Operator install, the catalog of its version)",
      cxxopts::value<std::string>()->default_value("lab"))(
      "operator-version",
      "judge a GPU Operator install as this release (v25.3, v24.9.2) whatever its labels and images say; picks "
      "that release's catalog (not with --operands)",
      cxxopts::value<std::string>())(
      "o,output",
      "output format: text, json or yaml (matrix and diagnose: also html, one self-contained page; matrix: also wide, "
      "a kubectl-style table of each pod's STATUS)",
      cxxopts::value<std::string>()->default_value("text"))("h,help", "show this help");
}

ClusterOptions read_cluster_options(const cxxopts::ParseResult& r) {
  ClusterOptions o;
  if (r.count("snapshot")) o.snapshots = r["snapshot"].as<std::vector<std::string>>();
  if (r.count("kubeconfig")) o.kubeconfig = r["kubeconfig"].as<std::string>();
  if (r.count("context")) o.context = r["context"].as<std::string>();
  if (r.count("server")) o.server = r["server"].as<std::string>();
  if (r.count("token")) o.token = r["token"].as<std::string>();
  if (r.count("certificate-authority")) o.certificate_authority = r["certificate-authority"].as<std::string>();
  o.insecure_skip_tls_verify = r.count("insecure-skip-tls-verify") > 0;
  o.namespace_ = r["namespace"].as<std::string>();
  o.namespace_given = r.count("namespace") > 0;
  o.operands = r["operands"].as<std::string>();
  if (r.count("operator-version")) {
    o.operator_version = r["operator-version"].as<std::string>();
    static const std::regex release(R"(v?[0-9]{1,6}\.[0-9]{1,6}(\.[0-9]{1,6})?)");
    if (!std::regex_match(o.operator_version, release))
      throw UsageError("--operator-version must be a GPU Operator release such as v25.3 or v24.9.2, not \"" +
                       o.operator_version + "\"");
    if (r.count("operands"))
      throw UsageError("--operator-version picks the release's catalog; it cannot be combined with --operands");
    if (o.operator_version[0] != 'v') o.operator_version = "v" + o.operator_version;
  }
  o.output = r["output"].as<std::string>();
  if (o.output != "text" && o.output != "json" && o.output != "yaml" && o.output != "html" && o.output != "wide")
    throw UsageError("--output must be text, json, yaml, html or wide, not \"" + o.output + "\"");
  if (!o.snapshots.empty() && (!o.kubeconfig.empty() || !o.context.empty()))
    throw UsageError("--snapshot reads a dump; it cannot be combined with --kubeconfig or --context");
  return o;
}

std::unique_ptr<core::ClusterReader> open_cluster(ClusterOptions& o) {
  if (!o.snapshots.empty())
    return std::make_unique<core::SnapshotCluster>(o.snapshots, core::SnapshotOptions{o.keep_raw});
  // A live cluster, as kubectl finds it: --kubeconfig, KUBECONFIG, ~/.kube/config,
  // in-cluster. The namespace: -n, else the context's, else gpu-operator.
  std::string context_ns;
  auto c = open_real(o.kubeconfig, o.context, o.namespace_given ? o.namespace_ : "", &context_ns,
                     {o.server, o.token, o.certificate_authority, o.insecure_skip_tls_verify});
  if (!o.namespace_given && !context_ns.empty()) o.namespace_ = context_ns;
  return c;
}

std::string snapshot_list(const ClusterOptions& o) {
  std::string s;
  for (const auto& f : o.snapshots) s += (s.empty() ? "" : ",") + f;
  return s;
}

void require_nodes_in_snapshot(const ClusterOptions& o, const core::ClusterState& state) {
  if (o.snapshots.empty() || !state.nodes.empty()) return;
  for (const auto& path : o.snapshots)
    if (core::is_must_gather_folder(core::resolve_must_gather(path)))
      throw core::InputError(snapshot_list(o), 0, "",
                             "no nodes in this must-gather: gpu_nodes.labels and gpu_nodes.descr list none (the "
                             "script found no node with an NVIDIA PCI label or nvidia.com/gpu.present=true); add "
                             "`kubectl get nodes -o yaml` to the folder");
  throw core::InputError(snapshot_list(o), 0, "",
                         "no nodes in this snapshot: save one with `kubectl get nodes,daemonsets,pods -A -o json`");
}

namespace {

bool has_operand_daemonset(const core::ClusterState& s, const core::Catalog& catalog) {
  for (const auto& d : s.daemonsets)
    for (const auto& op : catalog.operands)
      if (core::is_operand_daemonset(catalog, op, d)) return true;
  return false;
}

}  // namespace

void require_operands_in_namespace(const ClusterOptions& o, core::SnapshotCluster* snap,
                                   const core::ClusterState& state, const core::Catalog& catalog) {
  if (!snap || has_operand_daemonset(state, catalog) || !state.pods.empty()) return;
  std::string elsewhere;
  for (const auto& ns : snap->namespaces())
    if (ns != o.namespace_ && has_operand_daemonset(snap->state(ns), catalog))
      elsewhere += (elsewhere.empty() ? "" : ", ") + ns;
  if (elsewhere.empty()) return;
  throw core::InputError(snapshot_list(o), 0, "",
                         "no operand DaemonSets in namespace " + o.namespace_ + "; this snapshot has them in " +
                             elsewhere + ": pass -n " + elsewhere.substr(0, elsewhere.find(',')));
}

std::vector<std::string> sorted_node_names(const core::ClusterState& state) {
  std::vector<std::string> names;
  for (const auto& n : state.nodes) names.push_back(n.metadata.name);
  std::sort(names.begin(), names.end());
  return names;
}

void require_node(const ClusterOptions& o, const std::vector<std::string>& sorted_names, const std::string& node) {
  if (std::binary_search(sorted_names.begin(), sorted_names.end(), node)) return;
  // At most ten names: a large cluster's error stays one readable line.
  std::string known;
  for (size_t i = 0; i < sorted_names.size() && i < 10; ++i) known += (i ? ", " : "") + sorted_names[i];
  if (sorted_names.size() > 10) known += ", ... (" + std::to_string(sorted_names.size()) + " in all)";
  throw core::InputError(
      snapshot_list(o), 0, "",
      "nodes " + core::go_quote(node) + " not found" + (known.empty() ? std::string() : " (nodes: " + known + ")"));
}

core::Catalog choose_catalog(const core::OperatorInstall& install, const std::string& operands, bool given,
                             std::string* name_out) {
  std::string name = given ? operands : core::default_catalog_name(install);
  core::Catalog c = core::load_catalog(name);
  c.operator_mode = install.detected;
  if (name_out) *name_out = name;
  return c;
}

std::string operator_banner(const LoadedState& l, const std::string& catalog_name) {
  const std::string release = l.install.version.empty() ? "release unknown" : l.install.version;
  if (l.state.cluster_policies.empty() && !l.opts.infers_cluster_policy)
    return "gpuops: operator mode: " + release + ", catalog " + catalog_name +
           "; no ClusterPolicy (kubectl get clusterpolicies -o json)";
  return "gpuops: operator mode: GPU Operator " + release + ", catalog " + catalog_name +
         (l.catalog_given ? "" : " (--operands overrides)");
}

LoadedState load_state(const cxxopts::ParseResult& r, std::ostream& err) {
  return load_state(read_cluster_options(r), r.count("operands") > 0, err);
}

LoadedState load_state(const ClusterOptions& options, bool catalog_given, std::ostream& err) {
  LoadedState l;
  l.opts = options;
  l.catalog_given = catalog_given;
  // A catalog named on the command line is read first: a typo in it is an
  // error before any cluster is contacted.
  if (l.catalog_given) l.catalog = core::load_catalog(l.opts.operands);
  // A snapshot is opened as itself: the namespace check below asks it which
  // namespaces the dump holds.
  std::unique_ptr<core::SnapshotCluster> snapshot;
  std::unique_ptr<core::ClusterReader> live;
  if (!l.opts.snapshots.empty())
    snapshot = std::make_unique<core::SnapshotCluster>(l.opts.snapshots, core::SnapshotOptions{l.opts.keep_raw});
  else
    live = open_cluster(l.opts);
  // No -n, and the GPU Operator's DaemonSets are in one other namespace of
  // the dump (nvidia-gpu-operator on OpenShift, a chart installed elsewhere):
  // that one, said once.
  auto move_to_operator_namespace = [&](core::ClusterReader& reader) {
    const auto ops = reader.operator_namespaces();
    if (ops.size() != 1 || ops.front() == l.opts.namespace_) return false;
    err << "gpuops: namespace " << ops.front() << ", where the GPU Operator's DaemonSets are (none in "
        << l.opts.namespace_ << "; -n overrides)\n";
    l.opts.namespace_ = ops.front();
    return true;
  };
  if (snapshot && !l.opts.namespace_given) move_to_operator_namespace(*snapshot);
  // Read once: a snapshot's objects are moved out, not copied.
  l.state = snapshot ? snapshot->take_state(l.opts.namespace_) : live->state(l.opts.namespace_);
  // A live cluster is asked only when the namespace read holds no DaemonSet
  // at all (one more list, of every namespace's DaemonSets).
  if (live && !l.opts.namespace_given && l.state.daemonsets.empty() && move_to_operator_namespace(*live))
    l.state = live->state(l.opts.namespace_);
  require_nodes_in_snapshot(l.opts, l.state);
  l.install = core::detect_operator_install(l.state);
  if (!l.opts.operator_version.empty()) {
    if (l.install.detected) {
      l.install.version = l.opts.operator_version;
      l.install.version_source = "--operator-version";
    } else {
      err << "gpuops: --operator-version " << l.opts.operator_version
          << " left aside: the input is not a GPU Operator install\n";
    }
  }
  std::string catalog_name = l.opts.operands;
  if (!l.catalog_given) l.catalog = choose_catalog(l.install, l.opts.operands, false, &catalog_name);
  l.catalog.operator_mode = l.install.detected;
  require_operands_in_namespace(l.opts, snapshot.get(), l.state, l.catalog);
  if (l.install.detected) {
    err << operator_banner(l, catalog_name) << "\n";
    // The release's line against the catalog's: a release gpuops has no
    // catalog for is judged with another's, said once.
    if (auto note = core::catalog_release_note(l.install.version, l.catalog.version); !note.empty())
      err << note << "\n";
  }
  l.node_names = sorted_node_names(l.state);
  return l;
}

}  // namespace gpuops::cli
