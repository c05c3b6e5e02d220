// core/scenario/scenario_cleanup.cpp: what a scenario created on a live
// cluster, and its deletion in reverse order (core/scenario/scenario_cleanup.h).
#include "core/scenario/scenario_cleanup.h"

#include <algorithm>
#include <exception>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "core/base/errors.h"
#include "core/codec/decode.h"
#include "core/codec/documents.h"
#include "core/gpu_operator/manifests.h"

namespace gpuops::core::scenario_internal {

std::vector<Object> decode_apply(const Step& step, const Scenario& scenario) {
  std::vector<Document> docs;
  for (const auto& name : step.apply_operands) {
    const Operand* operand = scenario.catalog.by_name(name);
    auto more = read_documents(builtin_manifest(operand->manifest), "manifests/" + operand->manifest);
    docs.insert(docs.end(), more.begin(), more.end());
  }
  if (!step.apply_files.empty()) {
    auto more = read_paths(step.apply_files);
    docs.insert(docs.end(), more.begin(), more.end());
  }
  if (!step.apply_inline.empty()) {
    auto more = read_documents(step.apply_inline, scenario.file + ":" + std::to_string(step.line) + " (inline)");
    docs.insert(docs.end(), more.begin(), more.end());
  }
  std::vector<Object> objs;
  for (const auto& doc : docs) objs.push_back(decode_manifest(doc));  // all validated before any write
  return objs;
}

void CreatedObjects::add(CreatedObject object) {
  if (std::find(objects_.begin(), objects_.end(), object) == objects_.end()) objects_.push_back(std::move(object));
}

void CreatedObjects::add_step(const Step& step, const Scenario& scenario) {
  switch (step.action) {
    case Action::kAddNode: return add({"Node", "", step.new_node.metadata.name});
    case Action::kCreateNamespace: return add({"Namespace", "", step.name_arg});
    case Action::kInstallOperator: return add({"ClusterPolicy", "", step.operator_spec.policy_name});
    case Action::kApply: break;
    default: return;
  }
  std::vector<Object> objects;
  try {
    objects = decode_apply(step, scenario);
  } catch (const std::exception&) {
    return;  // an apply that does not decode writes nothing
  }
  auto ns_of = [&](const std::string& ns) { return ns.empty() ? scenario.namespace_ : ns; };
  for (const auto& object : objects) {
    if (const auto* node = std::get_if<Node>(&object)) add({"Node", "", node->metadata.name});
    if (const auto* ds = std::get_if<DaemonSet>(&object))
      add({"DaemonSet", ns_of(ds->metadata.namespace_), ds->metadata.name});
    if (const auto* pod = std::get_if<Pod>(&object)) add({"Pod", ns_of(pod->metadata.namespace_), pod->metadata.name});
    if (const auto* cp = std::get_if<ClusterPolicy>(&object)) add({"ClusterPolicy", "", cp->metadata.name});
  }
}

namespace {

// Waits (polling, at most the default timeout) until the scenario's
// namespace has neither DaemonSets nor pods.
void wait_namespace_empty(const Scenario& scenario, Cluster& cluster, const RunOptions& options) {
  Time deadline = options.now() + options.default_timeout;
  while (true) {
    bool empty = false;
    try {
      ClusterState now = cluster.state(scenario.namespace_);
      empty = now.daemonsets.empty() && now.pods.empty();
    } catch (const std::exception&) {
    }
    if (empty || options.now() >= deadline) break;
    options.sleep(options.poll_interval);
  }
}

void delete_one(const CreatedObject& object, Cluster& cluster) {
  if (object.kind == "Node") return cluster.delete_node(object.name);
  if (object.kind == "Namespace") return cluster.delete_namespace(object.name);
  if (object.kind == "DaemonSet") return cluster.delete_daemonset(object.ns, object.name, "background");
  if (object.kind == "Pod") return cluster.delete_pod(object.ns, object.name);
  if (object.kind == "ClusterPolicy") return cluster.delete_cluster_policy(object.name);
}

// "node \"gpu-a\"", "DaemonSet gpu-operator/x" as the failures name them.
std::string describe(const CreatedObject& object) {
  std::string kind = object.kind;
  if (kind == "Node" || kind == "Namespace" || kind == "Pod") kind[0] = static_cast<char>(kind[0] - 'A' + 'a');
  return kind + " \"" + (object.ns.empty() ? "" : object.ns + "/") + object.name + "\"";
}

}  // namespace

std::vector<std::string> delete_created(const std::vector<CreatedObject>& created, const Scenario& scenario,
                                        Cluster& cluster, const RunOptions& options) {
  std::vector<std::string> failures;
  bool policy_deleted = false;  // one of the consecutive ClusterPolicies now being deleted
  for (size_t i = created.size(); i-- > 0;) {
    const CreatedObject& object = created[i];
    bool deleted = false;
    try {
      delete_one(object, cluster);
      deleted = true;
    } catch (const ClusterError& e) {
      if (e.http_status() != 404) failures.push_back("deleting " + describe(object) + ": " + e.what());
    } catch (const std::exception& e) {
      failures.push_back("deleting " + describe(object) + ": " + e.what());
    }
    // The garbage collector takes the operator's DaemonSets (owned by the
    // ClusterPolicy) and then their pods, in the background: wait until
    // the namespace has neither, so that the next scenario finds it empty
    // and the pods do not wait for pod GC on deleted nodes.
    if (object.kind != "ClusterPolicy") continue;
    policy_deleted = policy_deleted || deleted;
    bool last_policy = i == 0 || created[i - 1].kind != "ClusterPolicy";
    if (last_policy && policy_deleted && options.poll) wait_namespace_empty(scenario, cluster, options);
    if (last_policy) policy_deleted = false;
  }
  return failures;
}

}  // namespace gpuops::core::scenario_internal
