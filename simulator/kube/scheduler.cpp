// The scheduler; see scheduler.h.
#include "simulator/kube/scheduler.h"

#include <algorithm>
#include <map>

#include "core/kube/placement.h"

namespace gpuops::simulator::internal {

namespace {

// A container's requests as the API server stores them for a pod:
// SetDefaults_Pod (pkg/apis/core/v1/defaults.go) defaults each resource that
// has a limit but no request to the limit (for pods only, not templates, so
// the DaemonSet's template keeps what it was given).
std::map<std::string, core::Quantity> defaulted_requests(const core::Container& c) {
  std::map<std::string, core::Quantity> r = c.requests;
  for (const auto& [k, q] : c.limits) r.try_emplace(k, q);
  return r;
}

}  // namespace

// mirrors PodRequests, pkg/api/v1/resource.
Amounts pod_requests(const core::PodSpec& spec) {
  Amounts sum;
  for (const auto& c : spec.containers)
    for (const auto& [k, q] : defaulted_requests(c)) sum[k] += q.nanos();
  for (const auto& c : spec.init_containers)
    for (const auto& [k, q] : defaulted_requests(c)) sum[k] = std::max(sum[k], q.nanos());
  return sum;
}

// ------------------------------------------------------------ filter plugins

// mirrors NodeUnschedulable.Filter, pkg/scheduler/framework/plugins/nodeunschedulable.
const char* node_unschedulable_filter(const core::PodSpec& spec, const core::Node& node) {
  if (!node.unschedulable) return nullptr;
  core::Taint t{"node.kubernetes.io/unschedulable", "", "NoSchedule", std::nullopt};
  bool ok = std::any_of(spec.tolerations.begin(), spec.tolerations.end(),
                        [&](const core::Toleration& tol) { return core::tolerates(tol, t); });
  return ok ? nullptr : "node(s) were unschedulable";
}

// mirrors TaintToleration.Filter, pkg/scheduler/framework/plugins/tainttoleration.
const char* taint_toleration_filter(const core::PodSpec& spec, const core::Node& node) {
  static const std::vector<std::string> kEffects = {"NoSchedule", "NoExecute"};
  if (core::untolerated_taint(node.taints, spec.tolerations, kEffects))
    return "node(s) had untolerated taint(s)";  // wording since v1.35 (PR #134740)
  return nullptr;
}

// mirrors NodeAffinity.Filter, pkg/scheduler/framework/plugins/nodeaffinity.
const char* node_affinity_filter(const PodRecord& pod, const core::Node& node) {
  return pod.affinity_matches(node) ? nullptr : "node(s) didn't match Pod's node affinity/selector";
}

// mirrors NodeResourcesFit.Filter (fitsRequest), pkg/scheduler/framework/plugins/noderesources.
void node_resources_fit_filter(const core::Node& node, const Usage& u, const Amounts& req,
                               std::vector<std::string>& reasons) {
  auto alloc = [&](const std::string& r) -> __int128 {
    auto it = node.allocatable.find(r);
    return it == node.allocatable.end() ? 0 : it->second.nanos();
  };
  static const std::string kPods = "pods";
  if (__int128(u.pods + 1) * 1000000000 > alloc(kPods)) reasons.push_back("Too many pods");
  // Upstream checks cpu, memory and ephemeral-storage, then the scalar
  // resources; the order only matters for the list of reasons, which the
  // FitError message counts and sorts, so one pass over the requests does.
  for (const auto& [r, v] : req) {
    if (v <= 0) continue;
    auto used = u.requested.find(r);
    __int128 in_use = used == u.requested.end() ? 0 : used->second;
    if (v > alloc(r) - in_use) reasons.push_back("Insufficient " + r);
  }
}

// mirrors RunFilterPlugins, pkg/scheduler/framework/runtime/framework.go,
// for the default profile's filters in order; the first that fails decides.
// Returns the failure reasons (empty: fits) and whether preemption could help
// (Unschedulable vs UnschedulableAndUnresolvable).
std::vector<std::string> Scheduler::run_filter_plugins(const PodRecord& pod, const core::Node& node, const Usage& u,
                                                       const Amounts& req, bool& resolvable) {
  resolvable = false;
  const core::PodSpec& spec = pod.shared_spec();
  if (const char* r = node_unschedulable_filter(spec, node)) return {r};
  if (const char* r = taint_toleration_filter(spec, node)) return {r};
  if (const char* r = node_affinity_filter(pod, node)) return {r};
  std::vector<std::string> reasons;
  node_resources_fit_filter(node, u, req, reasons);
  resolvable = true;
  return reasons;
}

// ------------------------------------------------------------ queue and cache

void Scheduler::retry_unschedulable(uint32_t node) {
  for (uint32_t n : {node, ClusterContext::kNoTarget}) {
    auto& parked = c_.node_table[n].parked;
    for (uint64_t id : parked)
      if (c_.store.find_pod_by_id(id)) queue.push(id);  // a gone pod: nothing to do
    parked.clear();
  }
}

void Scheduler::on_pod(EventType type, const PodRecord& pod, PodInfo& info) {
  if (type == EventType::kDeleted) std::erase(c_.node_table[info.target].parked, pod.id);
  account(type, pod, info);
  if (type == EventType::kAdded && pod.node_name.empty() && !pod.deletion_timestamp) queue.push(pod.id);
}

// The scheduler cache: bound, non-terminal pods hold their requests on the node.
void Scheduler::account(EventType type, const PodRecord& pod, PodInfo& info) {
  bool should = type != EventType::kDeleted && !pod.node_name.empty() && !terminal(pod);
  if (info.counted && !should) {
    Usage& u = c_.node_table[info.bound].usage;
    for (const auto& [r, v] : *info.counted) u.requested[r] -= v;
    u.pods -= 1;
    info.counted.reset();
    retry_unschedulable(info.bound);  // freed resources: a parked pod may fit now
  } else if (!info.counted && should) {
    info.counted = requests_of(pod);
    Usage& u = c_.node_table[info.bound].usage;
    for (const auto& [r, v] : *info.counted) u.requested[r] += v;
    u.pods += 1;
  }
}

// pod_requests of the pod's template part (pods of one revision share it).
const std::shared_ptr<const Amounts>& Scheduler::requests_of(const PodRecord& pod) {
  if (requests_memo_.first != pod.base)
    requests_memo_ = {pod.base, std::make_shared<const Amounts>(pod_requests(pod.shared_spec()))};
  return requests_memo_.second;
}

// ------------------------------------------------------------ scheduling cycle

// mirrors ScheduleOne / schedulingCycle, pkg/scheduler/schedule_one.go.
void Scheduler::schedule_one(uint64_t id) {
  const PodRecord* pod = c_.store.find_pod_by_id(id);
  if (!pod || !pod->node_name.empty() || pod->deletion_timestamp || terminal(*pod)) return;
  auto& node_table = c_.node_table;
  const uint32_t target = c_.info_of(*pod).target;
  size_t total = c_.store.nodes().size();
  std::shared_ptr<const Amounts> req_ptr = requests_of(*pod);
  const Amounts& req = *req_ptr;
  std::map<std::string, int> reasons, preemption;
  auto evaluate = [&](const core::Node& n, uint32_t id) -> bool {
    bool resolvable = false;
    auto r = run_filter_plugins(*pod, n, node_table[id].usage, req, resolvable);
    if (r.empty()) return true;
    for (const auto& x : r) reasons[x] += 1;
    preemption[resolvable ? "No preemption victims found for incoming pod"
                          : "Preemption is not helpful for scheduling"] += 1;
    return false;
  };
  if (!node_table[target].name.empty()) {
    // NodeAffinity PreFilter: only the pinned node is a candidate.
    const core::Node* n = node_table[target].node;
    if (n && evaluate(*n, target)) return bind(*pod, node_table[target].name);
    int others = static_cast<int>(total) - (n ? 1 : 0);
    if (others > 0) {
      reasons["node(s) didn't satisfy plugin(s) [NodeAffinity]"] += others;
      preemption["Preemption is not helpful for scheduling"] += others;
    }
  } else {
    for (const auto& [name, n] : c_.store.nodes())
      if (evaluate(n, c_.node_id(name))) return bind(*pod, name);
  }
  // FitError.Error, pkg/scheduler/framework/types.go.
  auto histogram = [&](const std::map<std::string, int>& h) {
    std::vector<std::string> parts;
    for (const auto& [r, c] : h) parts.push_back(std::to_string(c) + " " + r);
    std::sort(parts.begin(), parts.end());
    std::string s;
    for (const auto& p : parts) s += (s.empty() ? "" : ", ") + p;
    return s;
  };
  std::string n = std::to_string(total);
  std::string message = total == 0 ? "no nodes available to schedule pods"
                                   : "0/" + n + " nodes are available: " + histogram(reasons) + ". preemption: 0/" + n +
                                         " nodes are available: " + histogram(preemption) + ".";
  auto& parked = node_table[target].parked;
  if (std::find(parked.begin(), parked.end(), id) == parked.end()) parked.push_back(id);
  core::PodStatus s = *pod->status;
  set_condition(s, "PodScheduled", "False", "Unschedulable", message, truncate_seconds(c_.now));
  if (!same_status(s, *pod->status)) c_.store.set_pod_status(id, std::make_shared<const core::PodStatus>(std::move(s)));
}

// mirrors DefaultBinder.Bind, pkg/scheduler/framework/plugins/defaultbinder:
// pods/binding sets spec.nodeName; PodScheduled=True.
void Scheduler::bind(const PodRecord& p, const std::string& node) {
  const PodRecord* pod = &p;
  Time t = truncate_seconds(c_.now);
  if (!(bind_memo_.out && bind_memo_.in == pod->status && bind_memo_.at == t)) {
    core::PodStatus s = *pod->status;
    set_condition(s, "PodScheduled", "True", "", "", t);
    bind_memo_ = StatusMemo{pod->status, nullptr, t, std::make_shared<const core::PodStatus>(std::move(s))};
  }
  c_.store.bind_pod(pod->id, node, bind_memo_.out);
}

}  // namespace gpuops::simulator::internal
