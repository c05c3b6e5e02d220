#include "core/cluster/snapshot.h"

#include <algorithm>
#include <deque>
#include <exception>
#include <filesystem>
#include <iterator>
#include <set>
#include <string>
#include <system_error>
#include <utility>

#include <boost/unordered/unordered_flat_set.hpp>

#include "core/base/errors.h"
#include "core/base/hashed_key.h"
#include "core/base/input_file.h"
#include "core/cluster/must_gather.h"
#include "core/codec/decode.h"
#include "core/codec/documents.h"
#include "core/gpu_operator/gpu_node_rules.h"
#include "core/gpu_operator/operator_install.h"
#include "core/kube/managed_fields.h"

namespace gpuops::core {

namespace {

// Where the objects of one file start in the snapshot's lists: a file whose
// items stream_documents handed over before it turned out not to be a List
// is read again whole, and what it gave is dropped first.
struct FileStart {
  size_t nodes, daemonsets, pods, cluster_policies, nvidia_drivers;
};

template <class C>
void truncate(C& c, size_t n) {
  c.erase(c.begin() + static_cast<std::ptrdiff_t>(n), c.end());
}

}  // namespace

SnapshotCluster::SnapshotCluster(const std::vector<std::string>& paths, SnapshotOptions options) {
  // A must-gather's node files, in its folder or named alone, are text, not
  // YAML: they go to core/cluster/must_gather.h, everything else to input_files
  // (which reads only the *.yaml, *.yml and *.json of a folder).
  std::vector<std::string> yaml_paths;
  std::vector<MustGatherFiles> gathers;
  MustGatherFiles loose;  // node files named alone: one must-gather, until a kind repeats
  auto slot = [](MustGatherFiles& g, const std::string& name) -> std::string& {
    return name == kMustGatherLabels ? g.labels : name == kMustGatherDescribe ? g.describe : g.status;
  };
  for (const auto& given : paths) {
    const std::string p = resolve_must_gather(given);
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
  // (Open addressing: a key is checked and inserted per object, 120,000
  // times in a 15,000-node dump.)
  using KeySet = boost::unordered_flat_set<HashedKey<std::string>, HashedKeyHash, HashedKeyEqual>;
  KeySet seen;
  KeySet file_keys;  // kind/namespace/name first met in the file being read
  auto take = [&](Document&& doc) {
    if (!doc.value.is_object()) return;
    const auto& o = doc.value.as_object();
    auto kind = o.if_contains("kind");
    if (!kind || !kind->is_string()) return;
    auto k = kind->as_string();
    if (k != "Node" && k != "DaemonSet" && k != "Pod" && k != "ClusterPolicy" && k != "NVIDIADriver") return;
    if (const auto* md = o.if_contains("metadata"); md && md->is_object()) {
      auto str = [&](const char* key) {
        const auto* v = md->as_object().if_contains(key);
        return v && v->is_string() ? std::string(v->as_string()) : std::string();
      };
      std::string name = str("name");
      if (!name.empty()) {
        HashedKey<std::string> key(std::string(k) + "/" + str("namespace") + "/" + name);
        if (seen.contains(key) || !file_keys.insert(std::move(key)).second) return;
      }
    }
    const bool raw = options.keep_raw;
    if (k == "Node")
      nodes_.push_back(raw ? decode_node(std::move(doc)) : decode_node_typed(doc));
    else if (k == "DaemonSet")
      daemonsets_.push_back(decode_daemonset(std::move(doc)));
    else if (k == "Pod")
      pods_.push_back(raw ? decode_pod(std::move(doc)) : decode_pod_typed(doc));
    else if (k == "ClusterPolicy")
      cluster_policies_.push_back(decode_cluster_policy(doc));
    else
      nvidia_drivers_.push_back(decode_nvidia_driver(doc));
  };
  // Errors come as when every file was parsed before any object was decoded
  // (read_paths, then the decoders): a syntax error of any file wins over a
  // decode error, the first file's over a later one's. After a decode error
  // the remaining files are still parsed, for theirs.
  std::exception_ptr decode_error;
  auto parse_only = [](Document&&) {};
  for (const auto& path : yaml_paths)
    for (const auto& file : input_files(path)) {
      if (decode_error) {
        if (!stream_documents(file, parse_only)) read_documents(read_input_file(file), file);
        continue;
      }
      const FileStart start{nodes_.size(), daemonsets_.size(), pods_.size(), cluster_policies_.size(),
                            nvidia_drivers_.size()};
      auto rollback = [&] {
        truncate(nodes_, start.nodes);
        truncate(daemonsets_, start.daemonsets);
        truncate(pods_, start.pods);
        truncate(cluster_policies_, start.cluster_policies);
        truncate(nvidia_drivers_, start.nvidia_drivers);
        file_keys.clear();
      };
      // What `take` threw, to tell it from what the reader threw.
      std::exception_ptr take_error;
      auto take_checked = [&](Document&& doc) {
        try {
          take(std::move(doc));
        } catch (...) {
          take_error = std::current_exception();
          throw;
        }
      };
      try {
        // Without raw, nodes and pods are built only as far as their
        // decoders read them.
        if (!stream_documents(file, take_checked, options.keep_raw ? nullptr : &typed_shape)) {
          rollback();
          for (auto& doc : read_documents(read_input_file(file), file)) take_checked(std::move(doc));
        }
      } catch (...) {
        if (!take_error || std::current_exception() != take_error) throw;  // a syntax or read error: the first wins
        decode_error = take_error;
        continue;
      }
      seen.merge(file_keys);
      file_keys.clear();
    }
  if (decode_error) std::rethrow_exception(decode_error);
  // A must-gather saves no Node: its nodes come from its text files, after
  // any Node a YAML file of the input holds (which, exact, wins).
  for (const auto& g : gathers)
    for (auto& n : must_gather_nodes(g))
      if (seen.insert(HashedKey<std::string>("Node//" + n.metadata.name)).second) nodes_.push_back(std::move(n));
}

SnapshotCluster::SnapshotCluster(std::vector<Object> objects) {
  for (auto& obj : objects) {
    if (auto* n = std::get_if<Node>(&obj))
      nodes_.push_back(std::move(*n));
    else if (auto* d = std::get_if<DaemonSet>(&obj))
      daemonsets_.push_back(std::move(*d));
    else if (auto* p = std::get_if<Pod>(&obj))
      pods_.push_back(std::move(*p));
  }
}

std::optional<Time> newest_timestamp(const ClusterState& state) {
  std::optional<Time> newest;
  auto see = [&](const std::optional<Time>& t) {
    if (t && (!newest || *t > *newest)) newest = t;
  };
  auto see_conditions = [&](const std::vector<Condition>& cs) {
    for (const auto& c : cs) see(c.last_transition_time);
  };
  for (const auto& n : state.nodes) {
    see(n.metadata.creation_timestamp);
    for (const auto& t : n.taints) see(t.time_added);
    see(upgrade_start_time(n, kUpgradeWaitForPodCompletionStartTimeAnnotation));
    see(upgrade_start_time(n, kUpgradeValidationStartTimeAnnotation));
    see(newest_label_write(n));
  }
  for (const auto& d : state.daemonsets) see(d.metadata.creation_timestamp);
  for (const auto& p : state.pods) {
    see(p.metadata.creation_timestamp);
    see(p.status.start_time);
    for (const auto& c : p.status.conditions) see(c.last_transition_time);
    for (const auto* list : {&p.status.init_container_statuses, &p.status.container_statuses})
      for (const auto& c : *list) see(c.started_at);
  }
  for (const auto& cp : state.cluster_policies) {
    see(cp.metadata.creation_timestamp);
    see_conditions(cp.conditions);
  }
  for (const auto& d : state.nvidia_drivers) {
    see(d.metadata.creation_timestamp);
    see_conditions(d.conditions);
  }
  return newest;
}

namespace {

// The GPU workloads of `pods` outside `ns` (core::holds_gpu); nullopt when
// no pod of the file is outside `ns`: a dump of one namespace tells nothing
// of the others (kubectl get pods -A lists kube-system's pods at least).
std::optional<std::vector<Pod>> gpu_workloads(const std::deque<Pod>& pods, const std::string& ns) {
  std::optional<std::vector<Pod>> out;
  for (const auto& p : pods) {
    if (p.metadata.namespace_ == ns) continue;
    if (!out) out.emplace();
    if (holds_gpu(p)) out->push_back(p);
  }
  return out;
}

}  // namespace

ClusterState SnapshotCluster::state(const std::string& ns) {
  ClusterState s;
  s.namespace_ = ns;
  s.nodes = {nodes_.begin(), nodes_.end()};
  for (const auto& d : daemonsets_)
    if (d.metadata.namespace_ == ns) s.daemonsets.push_back(d);
  for (const auto& p : pods_)
    if (p.metadata.namespace_ == ns) s.pods.push_back(p);
  s.gpu_workloads = gpu_workloads(pods_, ns);
  s.cluster_policies = {cluster_policies_.begin(), cluster_policies_.end()};
  s.nvidia_drivers = {nvidia_drivers_.begin(), nvidia_drivers_.end()};
  s.observed_at = newest_timestamp(s);
  return s;
}

ClusterState SnapshotCluster::take_state(const std::string& ns) {
  ClusterState s;
  s.namespace_ = ns;
  auto move_all = [](auto& from, auto& to) {
    to.assign(std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
    from.clear();
  };
  move_all(nodes_, s.nodes);
  auto split = [&](auto& from, auto& to) {
    std::remove_reference_t<decltype(from)> rest;
    to.reserve(static_cast<size_t>(
        std::count_if(from.begin(), from.end(), [&](const auto& x) { return x.metadata.namespace_ == ns; })));
    // Moved one at a time from the front: a deque frees its blocks as it
    // empties, so the objects are not held twice.
    while (!from.empty()) {
      if (from.front().metadata.namespace_ == ns)
        to.push_back(std::move(from.front()));
      else
        rest.push_back(std::move(from.front()));
      from.pop_front();
    }
    from = std::move(rest);
  };
  split(daemonsets_, s.daemonsets);
  split(pods_, s.pods);
  s.gpu_workloads = gpu_workloads(pods_, ns);
  move_all(cluster_policies_, s.cluster_policies);
  move_all(nvidia_drivers_, s.nvidia_drivers);
  s.observed_at = newest_timestamp(s);
  return s;
}

std::vector<std::string> SnapshotCluster::operator_namespaces() {
  std::set<std::string> out;
  for (const auto& d : daemonsets_)
    if (operator_controlled(d)) out.insert(d.metadata.namespace_);
  return {out.begin(), out.end()};
}

std::vector<std::string> SnapshotCluster::namespaces() const {
  std::set<std::string> out;
  for (const auto& d : daemonsets_) out.insert(d.metadata.namespace_);
  for (const auto& p : pods_) out.insert(p.metadata.namespace_);
  return {out.begin(), out.end()};
}

}  // namespace gpuops::core
