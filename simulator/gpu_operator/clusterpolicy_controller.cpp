// The simulated GPU Operator; see clusterpolicy_controller.h.
#include "simulator/gpu_operator/clusterpolicy_controller.h"

#include <boost/json/serialize.hpp>

#include <algorithm>
#include <cstdio>

#include "core/codec/encode.h"
#include "core/gpu_operator/cluster_policy.h"
#include "core/gpu_operator/gpu_node_rules.h"
#include "core/gpu_operator/nfd.h"
#include "simulator/gpu_operator/operator_object_controls.h"
#include "simulator/gpu_operator/operator_render.h"

namespace gpuops::simulator::internal {

namespace {

// FNV-32a of the rendered object, as utils.GetObjectHash keys the
// last-applied-hash annotation (internal/utils/utils.go).
std::string object_hash(const core::DaemonSet& ds) {
  boost::json::object o = core::encode(ds);
  std::string text = boost::json::serialize(o["spec"]) + boost::json::serialize(o["metadata"].as_object()["labels"]);
  uint32_t h = 2166136261u;
  for (unsigned char ch : text) {
    h ^= ch;
    h *= 16777619u;
  }
  char buf[16];
  std::snprintf(buf, sizeof buf, "%u", h);
  return buf;
}

}  // namespace

void ClusterPolicyController::install(core::Catalog catalog, std::string ns, bool adopt) {
  catalog_ = std::move(catalog);
  ns_ = std::move(ns);
  adopt_ = adopt;
  adopted_.clear();
  installed_ = true;
  node_labels_.clear();
  for (const auto& [name, n] : c_.store.nodes()) node_labels_[name] = n.metadata.labels;
  for (const auto& [name, cp] : c_.store.cluster_policies()) generations_[name] = cp.metadata.generation;
  policy_queued_ = true;
  // Started, the operator labels every node (its first reconcile). Adopting
  // a running install, it has already: the nodes' labels are what its last
  // labelGPUNodes left and what changed since without any of its watches
  // firing (a deploy label lowered to "false" on an operands=false node: no
  // pod, no DaemonSet event; measured on the real v25.3.4 operator by
  // scripts/plan-predict.sh --operator), so it relabels only on an event,
  // or for a GPU node it has not labelled at all (its create event still
  // queued: every node labelGPUNodes saw carries nvidia.com/gpu.present).
  label_queued_ = !adopt;
  if (adopt)
    for (const auto& [name, n] : c_.store.nodes())
      if (core::is_gpu_node(n) && !n.metadata.labels.count("nvidia.com/gpu.present")) label_queued_ = true;
}

void ClusterPolicyController::uninstall() {
  installed_ = false;
  label_queued_ = policy_queued_ = false;
}

// ------------------------------------------------------------ watches

// mirrors addWatchNewGPUNode (CreateFunc: NFD GPU labels; UpdateFunc: the
// release's predicates) and the v26.7 node-labelling predicate
void ClusterPolicyController::on_node(EventType type, const core::Node& node) {
  if (!installed_) return;
  const std::string& name = node.metadata.name;
  if (type == EventType::kDeleted) {
    node_labels_.erase(name);
    return;
  }
  auto it = node_labels_.find(name);
  bool trigger;
  if (it == node_labels_.end()) {
    trigger = core::is_gpu_node(node);
    node_labels_[name] = node.metadata.labels;
  } else {
    trigger = core::node_update_triggers_labelling(it->second, node.metadata.labels, catalog_);
    it->second = node.metadata.labels;
  }
  if (trigger) label_queued_ = policy_queued_ = true;
  // A failed reconcile is requeued (controller-runtime's backoff): a node
  // event after it finds the pass run again.
  if (failed_pass_) policy_queued_ = true;
}

// mirrors the owned-DaemonSet watch (handler.OnlyControllerOwner)
void ClusterPolicyController::on_daemonset(EventType, const core::DaemonSet& d) {
  if (!installed_ || !owns(d)) return;
  policy_queued_ = true;
  if (catalog_.rules.relabel_on_daemonset_events) label_queued_ = true;
}

// mirrors the ClusterPolicy watch with GenerationChangedPredicate (creation
// and deletion always pass)
void ClusterPolicyController::on_cluster_policy(EventType type, const core::ClusterPolicy& cp) {
  const std::string& name = cp.metadata.name;
  if (type == EventType::kDeleted) {
    generations_.erase(name);
    if (cp.metadata.uid == singleton_uid_) singleton_uid_.clear();
    if (installed_) policy_queued_ = true;
    return;
  }
  auto [it, fresh] = generations_.try_emplace(name, cp.metadata.generation);
  bool changed = fresh || it->second != cp.metadata.generation;
  it->second = cp.metadata.generation;
  if (installed_ && changed) label_queued_ = policy_queued_ = true;
}

bool ClusterPolicyController::owns(const core::DaemonSet& d) const {
  if (d.metadata.namespace_ != ns_) return false;
  const core::OwnerReference* ref = d.metadata.controller_ref();
  return ref && ref->kind == "ClusterPolicy" && ref->api_version == "nvidia.com/v1";
}

// The singleton: the ClusterPolicy reconciled first stays the one
// (clusterPolicyCtrl.singleton); the oldest when none was yet.
const core::ClusterPolicy* ClusterPolicyController::singleton() const {
  const core::ClusterPolicy* first = nullptr;
  for (const auto& [name, cp] : c_.store.cluster_policies()) {
    if (cp.metadata.uid == singleton_uid_) return &cp;
    if (!first || cp.metadata.creation_timestamp < first->metadata.creation_timestamp) first = &cp;
  }
  return first;
}

// ------------------------------------------------------------ reconcile

void ClusterPolicyController::reconcile() {
  const bool label = label_queued_, policy = policy_queued_;
  label_queued_ = policy_queued_ = false;
  const core::ClusterPolicy* cp = singleton();
  if (!cp) return;  // "No ClusterPolicy": nothing to do
  singleton_uid_ = cp->metadata.uid;
  const std::string name = cp->metadata.name;
  if (label) label_gpu_nodes(*cp);
  cp = &c_.store.cluster_policies().at(name);
  if (policy || label) reconcile_policy(*cp);
}

void ClusterPolicyController::label_gpu_nodes(const core::ClusterPolicy& policy) {
  const core::LabellerPolicy lp = core::labeller_policy(policy);
  std::vector<std::pair<std::string, core::Labels>> writes;
  for (const auto& [name, node] : c_.store.nodes()) {
    core::Labels labels = node.metadata.labels;
    if (core::reconcile_gpu_node_labels(labels, lp, catalog_)) writes.emplace_back(name, std::move(labels));
  }
  // The real operator's writes carry its client's field manager, the
  // binary's name (managedFields: manager gpu-operator, operation Update).
  WriterScope writer(c_.store, "gpu-operator");
  for (auto& write : writes)
    c_.store.mutate_node(write.first, [&write](core::Node& n) { n.metadata.labels = std::move(write.second); });
}

void ClusterPolicyController::write_status(const core::ClusterPolicy& policy, const std::string& state, bool ready,
                                           const std::string& reason, const std::string& message) {
  // mirrors setConditions (internal/conditions/clusterpolicy.go) with
  // meta.SetStatusCondition: lastTransitionTime moves only when the status does.
  std::vector<core::Condition> conds = policy.conditions;
  auto set = [&](const std::string& type, const std::string& status, const std::string& r, const std::string& m) {
    for (auto& c : conds)
      if (c.type == type) {
        if (c.status != status) c.last_transition_time = truncate_seconds(c_.now);
        c.status = status;
        c.reason = r;
        c.message = m;
        return;
      }
    conds.push_back(core::Condition{type, status, r, m, truncate_seconds(c_.now)});
  };
  if (ready) {
    set("Ready", "True", reason, message);
    set("Error", "False", "Ready", "");
  } else {
    set("Ready", "False", "Error", "");
    set("Error", "True", reason, message);
  }
  bool same = policy.state == state && conds.size() == policy.conditions.size();
  for (size_t i = 0; same && i < conds.size(); ++i) {
    const auto &a = conds[i], &b = policy.conditions[i];
    same = a.type == b.type && a.status == b.status && a.reason == b.reason && a.message == b.message;
  }
  if (!same) c_.store.mutate_cluster_policy_status(policy.metadata.name, state, conds);
}

bool ClusterPolicyController::has_variant_daemonsets(const core::Operand& op) const {
  if (op.component.empty()) return false;
  for (const auto& [key, d] : c_.store.daemonsets()) {
    if (d.metadata.namespace_ != ns_ || d.metadata.name == op.daemonset) continue;
    auto it = d.template_.labels.find("app.kubernetes.io/component");
    if (it != d.template_.labels.end() && it->second == op.component) return true;
  }
  return false;
}

void ClusterPolicyController::reconcile_policy(const core::ClusterPolicy& policy) {
  const std::string policy_name = policy.metadata.name;
  // Every other ClusterPolicy: Reconcile's SetStatus(gpuv1.Ignored) sets
  // "ignored" on its in-memory copy only and returns before any status
  // update, so the stored status stays as it was (unset): measured on the
  // real v25.3.4 operator (docs/FIDELITY.md). Nothing is written here.
  const core::ClusterPolicy& cp = c_.store.cluster_policies().at(policy_name);
  if (!c_.store.find_namespace(ns_)) return;  // the operator's namespace is gone

  bool has_nfd = false;
  const core::Node* first_gpu = nullptr;
  for (const auto& [name, node] : c_.store.nodes()) {
    has_nfd = has_nfd || core::has_nfd_labels(node);
    if (!first_gpu && core::has_common_gpu_label(node.metadata.labels)) first_gpu = &node;
  }
  const std::string os_tag = first_gpu ? core::driver_os_tag(*first_gpu, catalog_.version) : "";
  const core::DriverInputGap gap =
      first_gpu ? core::driver_input_gap(*first_gpu, catalog_.version) : core::DriverInputGap{};
  failed_pass_ = true;  // until the pass ends well
  if (gap.fails_init) {
    // init (v26.3+): the GPU node's OS is read before any state; without it
    // Reconcile sets ReconcileFailed with init's error and returns.
    write_status(cp, "notReady", false, "ReconcileFailed", gap.failure);
    return;
  }

  std::vector<const core::Operand*> states;
  for (const auto& n : catalog_.rules.reconcile_order)
    if (const core::Operand* op = catalog_.by_name(n)) states.push_back(op);
  if (states.empty())
    for (const auto& op : catalog_.operands) states.push_back(&op);

  std::vector<std::string> not_ready;
  for (const core::Operand* op : states) {
    const std::string state_name = op->state.empty() ? op->name : op->state;
    const core::DaemonSet* existing = c_.store.find_daemonset(ns_, op->daemonset);
    std::optional<bool> enabled = core::state_enabled(cp, op->name, catalog_.version);
    if (!enabled.value_or(false)) {
      // DaemonSet(): a disabled state's DaemonSet is deleted, by name (whoever made it).
      if (existing) c_.store.remove(Kind::kDaemonSet, ns_, op->daemonset);
      continue;
    }
    if (!first_gpu) continue;  // !hasGPUNodes: nothing to create, the state is ready
    // An imported install whose operand runs under other DaemonSets (the
    // precompiled or NVIDIADriver driver variants, which are not rendered
    // here): left to them.
    if (adopt_ && !existing && has_variant_daemonsets(*op)) continue;
    if (op->name == "driver" && !gap.failure.empty()) {
      // The driver transform needs the kernel version (before v26.3;
      // measured on v25.3.4: the pass stops here, no later state is
      // reconciled).
      write_status(cp, "notReady", false, "ReconcileFailed", "Failed to reconcile " + state_name + ": " + gap.failure);
      return;
    }
    // The rendered DaemonSet is judged as the API server judges a create (a
    // policy whose fields it takes may render one it refuses: a toleration
    // operator "Bogus" in spec.daemonsets.tolerations): the create fails,
    // and with it the state, in the API server's words.
    core::DaemonSet ds;
    try {
      ds = render_operand_daemonset(*op, cp, catalog_, ns_, os_tag);
    } catch (const core::InputError& e) {
      write_status(cp, "notReady", false, "ReconcileFailed", "Failed to reconcile " + state_name + ": " + e.message());
      return;
    }
    const std::string hash = object_hash(ds);
    ds.metadata.annotations[kLastAppliedHash] = hash;
    // Create, or Update by name (the operator updates a DaemonSet of that
    // name whoever made it). A write the API server refuses (a hand-made
    // DaemonSet of that name with another selector: spec.selector is
    // immutable) fails the state and stops the pass, as a reconcile error
    // does upstream.
    try {
      if (!existing) {
        c_.store.create(core::Object(std::move(ds)));
      } else {
        auto h = existing->metadata.annotations.find(kLastAppliedHash);
        const std::string applied = h == existing->metadata.annotations.end() ? "" : h->second;
        bool same = h != existing->metadata.annotations.end() && applied == hash;
        if (adopt_) {
          auto [a, fresh] = adopted_.try_emplace(op->daemonset, applied, hash);
          (void)fresh;
          same = same || (a->second.first == applied && a->second.second == hash);
        }
        if (!same) {
          // The stored object's annotations the operator does not own are kept.
          for (const auto& [k, v] : existing->metadata.annotations)
            if (!ds.metadata.annotations.count(k)) ds.metadata.annotations[k] = v;
          ds.metadata.resource_version.clear();
          c_.store.update(core::Object(std::move(ds)));
        }
      }
    } catch (const std::exception& e) {
      write_status(c_.store.cluster_policies().at(policy_name), "notReady", false, "ReconcileFailed",
                   "Failed to reconcile " + state_name + ": " + e.what());
      return;
    }
    existing = c_.store.find_daemonset(ns_, op->daemonset);
    // isDaemonSetReady, with the DaemonSet controller's view of its pods.
    std::vector<const PodRecord*> pods;
    std::string rev;
    if (const DaemonSetState* st = daemonsets_.find(ObjectStore::key(ns_, op->daemonset))) {
      rev = st->hash;
      for (const auto& on_node : st->nodes)
        for (const PodRecord* p : on_node.pods) pods.push_back(p);
    }
    if (!operand_daemonset_ready(*existing, pods, rev)) not_ready.push_back(state_name);
  }

  failed_pass_ = false;
  const core::ClusterPolicy& now = c_.store.cluster_policies().at(policy_name);
  if (!not_ready.empty()) {
    std::string list;
    for (const auto& s : not_ready) list += (list.empty() ? "" : " ") + s;
    write_status(now, "notReady", false, "OperandNotReady",
                 "ClusterPolicy is not ready, states not ready: [" + list + "]");
  } else if (!has_nfd) {
    write_status(now, "ready", true, "NFDLabelsMissing", "No NFD labels found");
  } else if (!first_gpu) {
    write_status(now, "ready", true, "NoGPUNodes", "No GPU node found, watching for new nodes to join the cluster.");
  } else {
    write_status(now, "ready", true, "Reconciled",
                 "ClusterPolicy is ready as all resources have been successfully reconciled");
  }
}

}  // namespace gpuops::simulator::internal
