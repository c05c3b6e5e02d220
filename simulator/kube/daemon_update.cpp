// The DaemonSet controller's rolling update and history, as upstream's
// pkg/controller/daemon/update.go; see daemon_controller.h.
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <set>

#include "core/codec/encode.h"
#include "simulator/kube/daemon_controller.h"

namespace gpuops::simulator::internal {

namespace json = boost::json;

namespace {

const std::string kRevisionHashLabel = "controller-revision-hash";  // DefaultDaemonSetUniqueLabelKey

// The JSON with every object's keys in order, as Go's json.Marshal writes a
// map[string]interface{} (getPatch's output is compared byte for byte).
json::value sorted_keys(const json::value& v) {
  if (const json::object* o = v.if_object()) {
    std::vector<const json::key_value_pair*> items;
    for (const auto& kv : *o) items.push_back(&kv);
    std::sort(items.begin(), items.end(), [](auto* a, auto* b) { return a->key() < b->key(); });
    json::object out;
    out.reserve(items.size());
    for (const auto* kv : items) out.emplace(kv->key(), sorted_keys(kv->value()));
    return out;
  }
  if (const json::array* a = v.if_array()) {
    json::array out;
    out.reserve(a->size());
    for (const auto& x : *a) out.push_back(sorted_keys(x));
    return out;
  }
  return v;
}

// mirrors getPatch, pkg/controller/daemon/update.go: the strategic merge
// patch that puts the DaemonSet's pod template back,
// {"spec":{"template":{...,"$patch":"replace"}}}, keys sorted.
json::value get_patch(const core::DaemonSet& d) {
  json::object o = core::encode(d);
  json::object tmpl;
  if (auto* spec = o.if_contains("spec"); spec && spec->is_object())
    if (auto* t = spec->as_object().if_contains("template"); t && t->is_object()) tmpl = t->as_object();
  tmpl["$patch"] = "replace";
  json::object spec;
  spec["template"] = std::move(tmpl);
  json::object patch;
  patch["spec"] = std::move(spec);
  return sorted_keys(patch);
}

bool controlled_by(const core::ControllerRevision& r, const std::string& uid) {
  const core::OwnerReference* ref = r.metadata.controller_ref();
  return ref && ref->uid == uid;
}

}  // namespace

// mirrors constructHistory, pkg/controller/daemon/update.go: the
// DaemonSet's revisions (controlledHistories; without ClaimControllerRevisions'
// adoption of orphans, as for pods) split by Match into the current one and
// the old ones; the current one is created (snapshot), deduplicated
// (dedupCurHistories) or renumbered to maxRevision(old) + 1 (a rollback to a
// template seen before adopts its revision).
void DaemonSetController::construct_history(const core::DaemonSet& d, DaemonSetState& st) {
  const std::string patch = json::serialize(get_patch(d));
  std::vector<const core::ControllerRevision*> current, old;
  std::vector<std::string> unlabelled;
  const std::string prefix = st.ns + "/";
  const auto& revisions = c_.store.controller_revisions();
  for (auto it = revisions.lower_bound(prefix); it != revisions.end() && it->first.rfind(prefix, 0) == 0; ++it) {
    const core::ControllerRevision& r = it->second;
    if (!controlled_by(r, st.uid)) continue;
    if (!r.metadata.labels.count(kRevisionHashLabel)) unlabelled.push_back(r.metadata.name);
    // Match: the recorded patch is the DaemonSet's, byte for byte.
    (json::serialize(sorted_keys(r.data)) == patch ? current : old).push_back(&r);
  }
  // The unique label, when missing, is the revision's name.
  for (const auto& name : unlabelled) {
    core::ControllerRevision r = revisions.at(ObjectStore::key(st.ns, name));
    r.metadata.labels[kRevisionHashLabel] = r.metadata.name;
    c_.store.update(core::Object(std::move(r)));
  }
  if (!unlabelled.empty()) return construct_history(d, st);  // pointers above are stale
  int64_t max_old = 0;                                       // maxRevision
  for (const auto* r : old) max_old = std::max(max_old, r->revision);
  const int64_t curr_revision = max_old + 1;
  st.old_revisions = old.size();
  if (current.empty()) {
    // mirrors snapshot: <name>-<hash>, the template's labels plus the hash,
    // the DaemonSet's annotations, controlled by it. (A name taken by a
    // revision of another template, a hash collision, would bump
    // status.collisionCount upstream; FNV-32a of distinct templates does not
    // collide here in practice, so the revision is then left as it is.)
    core::ControllerRevision r;
    r.metadata.name = st.name + "-" + st.hash;
    r.metadata.namespace_ = st.ns;
    r.metadata.labels = d.template_.labels;
    r.metadata.labels[kRevisionHashLabel] = st.hash;
    r.metadata.annotations = d.metadata.annotations;
    r.metadata.owner_references.push_back(
        core::OwnerReference{"apps/v1", "DaemonSet", d.metadata.name, d.metadata.uid, true});
    r.data = json::parse(patch);
    r.revision = curr_revision;
    if (!c_.store.get(Kind::kControllerRevision, st.ns, r.metadata.name)) c_.store.create(core::Object(std::move(r)));
    return;
  }
  // mirrors dedupCurHistories: the highest revision is kept, the other
  // matches deleted. (Upstream first relabels pods of the deleted ones with
  // the kept hash; here every match of one template has the same hash, so
  // there is nothing to relabel.)
  const core::ControllerRevision* keep = current.front();
  for (const auto* r : current)
    if (r->revision >= keep->revision) keep = r;
  std::string keep_name = keep->metadata.name;
  std::vector<std::string> duplicates;
  for (const auto* r : current)
    if (r->metadata.name != keep_name) duplicates.push_back(r->metadata.name);
  for (const auto& name : duplicates) c_.store.remove(Kind::kControllerRevision, st.ns, name);
  const core::ControllerRevision& cur = revisions.at(ObjectStore::key(st.ns, keep_name));
  set_pod_template_hash(st, cur.metadata.labels.at(kRevisionHashLabel));
  if (cur.revision < curr_revision) {
    core::ControllerRevision bumped = cur;
    bumped.revision = curr_revision;
    c_.store.update(core::Object(std::move(bumped)));
  }
}

// mirrors cleanupHistory, pkg/controller/daemon/update.go: old revisions
// beyond revisionHistoryLimit go, lowest revision first, except those some
// pod of the DaemonSet (terminal ones included) is of.
void DaemonSetController::cleanup_history(const core::DaemonSet& d, DaemonSetState& st) {
  std::vector<const core::ControllerRevision*> old;
  const std::string prefix = st.ns + "/";
  const auto& revisions = c_.store.controller_revisions();
  for (auto it = revisions.lower_bound(prefix); it != revisions.end() && it->first.rfind(prefix, 0) == 0; ++it) {
    const core::ControllerRevision& r = it->second;
    auto h = r.metadata.labels.find(kRevisionHashLabel);
    if (controlled_by(r, st.uid) && !(h != r.metadata.labels.end() && h->second == st.hash)) old.push_back(&r);
  }
  st.old_revisions = old.size();
  int64_t to_kill = static_cast<int64_t>(old.size()) - std::max(d.revision_history_limit, 0);
  if (to_kill <= 0) return;
  std::set<std::string> live_hashes;
  for (const auto& on_node : st.nodes)
    for (const PodRecord* p : on_node.pods) {
      auto h = p->shared_meta().labels.find(kRevisionHashLabel);
      if (h != p->shared_meta().labels.end() && !h->second.empty()) live_hashes.insert(h->second);
    }
  std::sort(old.begin(), old.end(), [](auto* a, auto* b) { return a->revision < b->revision; });  // historiesByRevision
  std::vector<std::string> doomed;
  for (const auto* r : old) {
    if (to_kill <= 0) break;
    auto h = r->metadata.labels.find(kRevisionHashLabel);
    if (h != r->metadata.labels.end() && live_hashes.count(h->second)) continue;
    doomed.push_back(r->metadata.name);
    --to_kill;
  }
  for (const auto& name : doomed) c_.store.remove(Kind::kControllerRevision, st.ns, name);
  st.old_revisions -= doomed.size();
}

// mirrors rollingUpdate, pkg/controller/daemon/update.go. The nodes are
// visited in name order (upstream ranges over a Go map, in random order: on
// a real cluster the same number of pods is replaced per step, maybe on
// other nodes).
std::vector<uint32_t> DaemonSetController::rolling_update(const core::DaemonSet& d, DaemonSetState& st) {
  // updatedDesiredNodeCounts: maxUnavailable and maxSurge of the desired
  // count (util.UnavailableCount, util.SurgeCount:
  // GetScaledValueFromIntOrPercent, rounded up), and unavailability 1 when
  // both come out 0.
  const int desired = static_cast<int>(st.sum.desired);
  int max_unavailable = core::scaled_value(d.max_unavailable, desired, true);
  const int max_surge = core::scaled_value(d.max_surge, desired, true);
  if (desired > 0 && max_unavailable == 0 && max_surge == 0) max_unavailable = 1;

  // nodeToDaemonPods (getNodesToDaemonPods, terminal deleted pods left
  // out), with an empty entry for every desired node without pods.
  std::vector<uint32_t> ids = c_.stored_node_ids();
  for (uint32_t id = 0; id < st.nodes.size(); ++id)
    if (!c_.node_table[id].node && !st.nodes[id].pods.empty()) ids.push_back(id);

  // findUpdatedPodsOnNode: at most one current and one old pod without a
  // deletionTimestamp, else not ok.
  struct OnNode {
    const PodRecord* new_pod = nullptr;
    const PodRecord* old_pod = nullptr;
    bool ok = true;
  };
  auto find_updated_pods_on_node = [&](const DaemonPodsOnNode& on_node) {
    OnNode r;
    for (const PodRecord* p : get_nodes_to_daemon_pods(on_node)) {
      if (p->deletion_timestamp) continue;
      const PodRecord*& slot = is_pod_updated(st, *p) ? r.new_pod : r.old_pod;
      if (slot) return OnNode{nullptr, nullptr, false};
      slot = p;
    }
    return r;
  };
  auto in_map = [&](uint32_t id) {
    if (id >= st.nodes.size()) return false;
    const DaemonPodsOnNode& on_node = st.nodes[id];
    return !get_nodes_to_daemon_pods(on_node).empty() || (c_.node_table[id].node && on_node.should_run);
  };

  std::vector<std::string> old_pods_to_delete;
  std::vector<uint32_t> new_nodes_to_create, touched;
  auto pod_key = [&](const PodRecord* p) { return ObjectStore::key(st.ns, p->name); };
  auto node_of_pod = [&](const PodRecord* p) { return c_.info_of(*p).target; };

  if (max_surge == 0) {
    // Delete just enough available old pods to stay within maxUnavailable
    // (the unavailable old ones all go); manage makes the new pods.
    int num_unavailable = 0;
    std::vector<const PodRecord*> allowed_replacement_pods, candidate_pods_to_delete;
    for (uint32_t id : ids) {
      if (!in_map(id)) continue;
      OnNode on = find_updated_pods_on_node(st.nodes[id]);
      if (!on.ok) {
        ++num_unavailable;  // excess pods: the manage loop prunes them
        continue;
      }
      if ((!on.old_pod && !on.new_pod) || (on.old_pod && on.new_pod)) {
        ++num_unavailable;  // the manage loop creates or deletes
      } else if (on.new_pod) {
        if (!is_pod_available(d, st, *on.new_pod, id)) ++num_unavailable;
      } else if (!is_pod_available(d, st, *on.old_pod, id)) {
        allowed_replacement_pods.push_back(on.old_pod);  // out of date and unavailable: replaced at once
        ++num_unavailable;
      } else if (num_unavailable < max_unavailable) {
        candidate_pods_to_delete.push_back(on.old_pod);
      }
    }
    int remaining = std::clamp(max_unavailable - num_unavailable, 0, static_cast<int>(candidate_pods_to_delete.size()));
    for (const PodRecord* p : allowed_replacement_pods) {
      old_pods_to_delete.push_back(pod_key(p));
      touched.push_back(node_of_pod(p));
    }
    for (int i = 0; i < remaining; ++i) {
      old_pods_to_delete.push_back(pod_key(candidate_pods_to_delete[static_cast<size_t>(i)]));
      touched.push_back(node_of_pod(candidate_pods_to_delete[static_cast<size_t>(i)]));
    }
    sync_nodes(st, {}, old_pods_to_delete);
    return touched;
  }

  // Surging: a new pod beside each unavailable old one at once, and beside
  // up to maxSurge available ones; an old pod goes once the new one beside
  // it is available.
  std::vector<const PodRecord*> should_not_run_pods_to_delete;
  std::vector<uint32_t> candidate_new_nodes, allowed_new_nodes;
  int num_surge = 0, num_available = 0;
  for (uint32_t id : ids) {
    if (!in_map(id)) continue;
    OnNode on = find_updated_pods_on_node(st.nodes[id]);
    if (!on.ok) {
      ++num_surge;
      continue;
    }
    if (on.old_pod) {
      if (is_pod_available(d, st, *on.old_pod, id)) ++num_available;
    } else if (on.new_pod) {
      if (is_pod_available(d, st, *on.new_pod, id)) ++num_available;
    }
    if (!on.old_pod) continue;  // the manage loop handles it
    const bool node_exists = c_.node_table[id].node != nullptr;
    if (!on.new_pod) {
      if (!node_exists) continue;  // upstream: the node lookup fails; manage deletes the pod
      bool should_run = st.nodes[id].should_run;
      if (!is_pod_available(d, st, *on.old_pod, id)) {
        if (!should_run) {
          old_pods_to_delete.push_back(pod_key(on.old_pod));
          touched.push_back(id);
          continue;
        }
        allowed_new_nodes.push_back(id);
      } else if (!should_run) {
        should_not_run_pods_to_delete.push_back(on.old_pod);
      } else if (num_surge < max_surge) {
        candidate_new_nodes.push_back(id);
      }
    } else if (!is_pod_available(d, st, *on.new_pod, id)) {
      ++num_surge;  // waiting for the new pod
    } else {
      old_pods_to_delete.push_back(pod_key(on.old_pod));  // the new one is available
      touched.push_back(id);
    }
  }
  int remaining_surge = max_surge - num_surge;
  // With surge the owner expects full availability: a pod on a node that
  // should no longer run it goes only while more than desired are available.
  if (int deletable = num_available - desired; deletable > 0) {
    deletable = std::min(deletable, static_cast<int>(should_not_run_pods_to_delete.size()));
    for (int i = 0; i < deletable; ++i) {
      const PodRecord* p = should_not_run_pods_to_delete[static_cast<size_t>(i)];
      old_pods_to_delete.push_back(pod_key(p));
      touched.push_back(node_of_pod(p));
    }
  }
  remaining_surge = std::clamp(remaining_surge, 0, static_cast<int>(candidate_new_nodes.size()));
  new_nodes_to_create = allowed_new_nodes;
  new_nodes_to_create.insert(new_nodes_to_create.end(), candidate_new_nodes.begin(),
                             candidate_new_nodes.begin() + remaining_surge);
  touched.insert(touched.end(), new_nodes_to_create.begin(), new_nodes_to_create.end());
  sync_nodes(st, new_nodes_to_create, old_pods_to_delete);
  return touched;
}

}  // namespace gpuops::simulator::internal
