#include "core/snapshot.h"

#include <filesystem>
#include <set>
#include <string>
#include <system_error>
#include <utility>

#include "core/decode.h"
#include "core/documents.h"
#include "core/errors.h"
#include "core/must_gather.h"

namespace gpuops::core {

namespace {
[[noreturn]] void read_only() { throw ClusterError("a snapshot is read-only: this command needs a live cluster"); }
}  // namespace

SnapshotCluster::SnapshotCluster(const std::vector<std::string>& paths) {
  // A must-gather's node files, in its folder or named alone, are text, not
  // YAML: they go to core/must_gather.h, everything else to read_paths (which
  // reads only the *.yaml, *.yml and *.json of a folder).
  std::vector<std::string> yaml_paths;
  std::vector<MustGatherFiles> gathers;
  MustGatherFiles loose;  // node files named alone: one must-gather, until a kind repeats
  auto slot = [](MustGatherFiles& g, const std::string& name) -> std::string& {
    return name == kMustGatherLabels ? g.labels : name == kMustGatherDescribe ? g.describe : g.status;
  };
  for (const auto& p : paths) {
    std::error_code ec;
    if (is_must_gather_node_file(p) && std::filesystem::is_regular_file(p, ec)) {
      std::string name = std::filesystem::path(p).filename().string();
      if (!slot(loose, name).empty()) gathers.push_back(std::exchange(loose, {}));
      slot(loose, name) = p;
      continue;
    }
    if (is_must_gather_folder(p)) gathers.push_back(must_gather_files(p));
    yaml_paths.push_back(p);
  }
  if (!loose.empty()) gathers.push_back(loose);
  // An object read twice (overlapping dumps, a file and the folder holding it)
  // counts once: the API has one object per kind, namespace and name.
  std::set<std::string> seen;
  for (const auto& doc : read_paths(yaml_paths)) {
    if (!doc.value.is_object()) continue;
    const auto& o = doc.value.as_object();
    auto kind = o.if_contains("kind");
    if (!kind || !kind->is_string()) continue;
    auto k = kind->as_string();
    if (const auto* md = o.if_contains("metadata"); md && md->is_object()) {
      auto str = [&](const char* key) {
        const auto* v = md->as_object().if_contains(key);
        return v && v->is_string() ? std::string(v->as_string()) : std::string();
      };
      std::string name = str("name");
      if (!name.empty() && !seen.insert(std::string(k) + "/" + str("namespace") + "/" + name).second) continue;
    }
    if (k == "Node") nodes_.push_back(decode_node(doc));
    else if (k == "DaemonSet") daemonsets_.push_back(decode_daemonset(doc));
    else if (k == "Pod") pods_.push_back(decode_pod(doc));
    else if (k == "ClusterPolicy") cluster_policies_.push_back(decode_cluster_policy(doc));
    else if (k == "NVIDIADriver") nvidia_drivers_.push_back(decode_nvidia_driver(doc));
  }
  // A must-gather saves no Node: its nodes come from its text files, after
  // any Node a YAML file of the input holds (which, exact, wins).
  for (const auto& g : gathers)
    for (auto& n : must_gather_nodes(g))
      if (seen.insert("Node//" + n.metadata.name).second) nodes_.push_back(std::move(n));
}

SnapshotCluster::SnapshotCluster(std::vector<Object> objects) {
  for (auto& obj : objects) {
    if (auto* n = std::get_if<Node>(&obj)) nodes_.push_back(std::move(*n));
    else if (auto* d = std::get_if<DaemonSet>(&obj)) daemonsets_.push_back(std::move(*d));
    else if (auto* p = std::get_if<Pod>(&obj)) pods_.push_back(std::move(*p));
  }
}

ClusterState SnapshotCluster::state(const std::string& ns) {
  ClusterState s;
  s.namespace_ = ns;
  s.nodes = nodes_;
  for (const auto& d : daemonsets_)
    if (d.metadata.namespace_ == ns) s.daemonsets.push_back(d);
  for (const auto& p : pods_)
    if (p.metadata.namespace_ == ns) s.pods.push_back(p);
  s.cluster_policies = cluster_policies_;
  s.nvidia_drivers = nvidia_drivers_;
  return s;
}

std::vector<std::string> SnapshotCluster::namespaces() const {
  std::set<std::string> out;
  for (const auto& d : daemonsets_) out.insert(d.metadata.namespace_);
  for (const auto& p : pods_) out.insert(p.metadata.namespace_);
  return {out.begin(), out.end()};
}

void SnapshotCluster::apply(const std::vector<Object>&) { read_only(); }
void SnapshotCluster::create_namespace(const std::string&) { read_only(); }
void SnapshotCluster::set_node_label(const std::string&, const std::string&, const std::optional<std::string>&) {
  read_only();
}
void SnapshotCluster::add_node(const Node&) { read_only(); }
void SnapshotCluster::delete_node(const std::string&) { read_only(); }
void SnapshotCluster::set_node_taints(const std::string&, const std::vector<Taint>&) { read_only(); }
void SnapshotCluster::set_node_unschedulable(const std::string&, bool) { read_only(); }
void SnapshotCluster::set_node_ready(const std::string&, const std::string&) { read_only(); }
void SnapshotCluster::delete_pod(const std::string&, const std::string&) { read_only(); }

}  // namespace gpuops::core
