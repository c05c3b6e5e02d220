// The fake kubelet; see kubelet.h.
#include "simulator/kube/kubelet.h"

#include <algorithm>
#include <vector>

namespace gpuops::simulator::internal {

namespace {

using namespace std::chrono_literals;

// Kubelet image pull back-off starts at 10 s (pkg/kubelet/images).
constexpr Duration kImagePullBackoff = 10s;

// A failed container's restart back-off: 10 s, doubled per restart, at most
// 5 min (pkg/kubelet/kuberuntime, initialContainerBackOff and
// MaxContainerBackOff).
Duration init_restart_backoff(int32_t restarts) {
  Duration d = 10s;
  for (int32_t i = 0; i < restarts && d < 300s; ++i) d *= 2;
  return std::min<Duration>(d, 300s);
}
// A played init container is restarted until its back-off reaches the cap
// (10, 20, 40, 80, 160 s): then it stays in CrashLoopBackOff. A real kubelet
// goes on every 5 minutes; each later run would repeat the same writes, and
// settle() needs a fixed point.
constexpr int32_t kMaxPlayedRestarts = 5;

// "5m0s", "40s", as Go's time.Duration prints them in the back-off message.
std::string backoff_text(Duration d) {
  auto sec = std::chrono::duration_cast<std::chrono::seconds>(d).count();
  return sec >= 60 ? std::to_string(sec / 60) + "m" + std::to_string(sec % 60) + "s" : std::to_string(sec) + "s";
}

std::string names_of(const std::vector<core::Container>& cs) {
  std::string s;
  for (const auto& c : cs) s += (s.empty() ? "" : " ") + c.name;
  return "[" + s + "]";
}

core::ContainerStatus container_status(const core::Container& c, bool ready, const std::string& state,
                                       const std::string& reason = "", const std::string& message = "") {
  core::ContainerStatus s;
  s.name = c.name;
  s.ready = ready;
  s.state = state;
  s.reason = reason;
  s.message = message;
  return s;
}

// The pieces of the statuses generate_api_pod_status writes, each filling
// `s` (`ics`: the init containers, `cs`: the containers, `t`: now to the
// second).
using Containers = std::vector<core::Container>;

// ContainersReady and Ready False for `reason`.
void set_not_ready(core::PodStatus& s, const Containers& cs, const std::string& reason, Time t) {
  std::string msg = "containers with unready status: " + names_of(cs);
  set_condition(s, "ContainersReady", "False", reason, msg, t);
  set_condition(s, "Ready", "False", reason, msg, t);
}

// Every init container terminated (Completed), Initialized True.
void set_inits_done(core::PodStatus& s, const Containers& ics, Time t) {
  s.init_container_statuses.clear();
  for (const auto& c : ics) {
    auto st = container_status(c, true, "terminated", "Completed");
    st.exit_code = 0;
    s.init_container_statuses.push_back(st);
  }
  set_condition(s, "Initialized", "True", "", "", t);
}

// Containers are being created.
void set_creating(core::PodStatus& s, const Containers& ics, const Containers& cs, Time t) {
  s.phase = "Pending";
  if (ics.empty()) {
    set_inits_done(s, ics, t);
    for (const auto& c : cs) s.container_statuses.push_back(container_status(c, false, "waiting", "ContainerCreating"));
  } else {
    s.init_container_statuses.clear();
    for (const auto& c : ics)
      s.init_container_statuses.push_back(container_status(c, false, "waiting", "PodInitializing"));
    set_condition(s, "Initialized", "False", "ContainersNotInitialized",
                  "containers with incomplete status: " + names_of(ics), t);
    for (const auto& c : cs) s.container_statuses.push_back(container_status(c, false, "waiting", "PodInitializing"));
  }
  set_not_ready(s, cs, "ContainersNotReady", t);
}

// The first init container runs for ever (FaultKind::kStuckInInit).
void set_stuck_in_init(core::PodStatus& s, const Containers& ics, const Containers& cs, Time t) {
  s.phase = "Pending";
  s.init_container_statuses.clear();
  for (size_t i = 0; i < ics.size(); ++i)
    s.init_container_statuses.push_back(i == 0 ? container_status(ics[i], false, "running")
                                               : container_status(ics[i], false, "waiting", "PodInitializing"));
  set_condition(s, "Initialized", "False", "ContainersNotInitialized",
                "containers with incomplete status: " + names_of(ics), t);
  for (const auto& c : cs) s.container_statuses.push_back(container_status(c, false, "waiting", "PodInitializing"));
  set_not_ready(s, cs, "ContainersNotReady", t);
}

// Held at a validation gate: the `passed` init containers before it
// completed, it runs (a played one: `run`, in CrashLoopBackOff once it
// failed), the rest wait.
void set_gated(core::PodStatus& s, const PodRecord& pod, const Containers& ics, const Containers& cs, size_t passed,
               const std::optional<InitRun>& run, Time t) {
  s.phase = "Pending";
  s.init_container_statuses.clear();
  for (size_t i = 0; i < ics.size(); ++i) {
    if (i < passed) {
      auto st = container_status(ics[i], true, "terminated", "Completed");
      st.exit_code = 0;
      s.init_container_statuses.push_back(st);
    } else if (i == passed && run && run->state == InitRun::kFailed) {
      const Duration backoff = init_restart_backoff(run->restarts);
      auto st = container_status(ics[i], false, "waiting", "CrashLoopBackOff",
                                 "back-off " + backoff_text(backoff) + " restarting failed container=" + ics[i].name +
                                     " pod=" + pod.name + "_" + pod.namespace_() + "(" + pod.uid + ")");
      st.restart_count = run->restarts;
      st.last_terminated = core::ContainerStatus::Termination{1, "Error", run->message};
      s.init_container_statuses.push_back(st);
    } else if (i == passed && run) {
      auto st = container_status(ics[i], false, "running");
      st.restart_count = run->restarts;
      s.init_container_statuses.push_back(st);
    } else {
      s.init_container_statuses.push_back(i == passed ? container_status(ics[i], false, "running")
                                                      : container_status(ics[i], false, "waiting", "PodInitializing"));
    }
  }
  set_condition(
      s, "Initialized", "False", "ContainersNotInitialized",
      "containers with incomplete status: " +
          names_of(std::vector<core::Container>(ics.begin() + static_cast<std::ptrdiff_t>(passed), ics.end())),
      t);
  for (const auto& c : cs) s.container_statuses.push_back(container_status(c, false, "waiting", "PodInitializing"));
  set_not_ready(s, cs, "ContainersNotReady", t);
}

// The image cannot be pulled: ErrImagePull, then (`backoff`) ImagePullBackOff.
void set_image_pull(core::PodStatus& s, const Containers& cs, bool backoff) {
  s.phase = "Pending";
  for (const auto& c : cs) {
    if (backoff)
      s.container_statuses.push_back(
          container_status(c, false, "waiting", "ImagePullBackOff", "Back-off pulling image \"" + c.image + "\""));
    else
      s.container_statuses.push_back(container_status(
          c, false, "waiting", "ErrImagePull", "failed to pull and unpack image \"" + c.image + "\": not found"));
  }
}

// Every container in CrashLoopBackOff, restarted 5 times.
void set_crash_loop(core::PodStatus& s, const PodRecord& pod, const Containers& cs, Time t) {
  for (const auto& c : cs) {
    auto st = container_status(c, false, "waiting", "CrashLoopBackOff",
                               "back-off 5m0s restarting failed container=" + c.name + " pod=" + pod.name + "_" +
                                   pod.namespace_() + "(" + pod.uid + ")");
    st.restart_count = 5;
    s.container_statuses.push_back(st);
  }
  set_not_ready(s, cs, "ContainersNotReady", t);
}

}  // namespace

void Kubelet::on_node(uint32_t id) {
  node_queue.push(c_.node_table[id].name);
  for (uint64_t pid : c_.node_table[id].pods) pod_queue.push(pid);
}

// ------------------------------------------------------------ nodes

// KWOK's node-initialize stage; see kubelet.h.
void Kubelet::initialize_node(const std::string& name) {
  const core::Node* n = c_.store.find_node(name);
  if (!n) return;
  bool need_alloc = n->allocatable.empty(), need_cond = n->ready_status().empty();
  if (!need_alloc && !need_cond) return;
  // The same for every node: built once.
  static const std::map<std::string, core::Quantity> kAllocatable = {{"cpu", core::Quantity::parse("1k")},
                                                                     {"memory", core::Quantity::parse("1Ti")},
                                                                     {"pods", core::Quantity::parse("1M")}};
  static const std::vector<core::NodeCondition> kConditions = {
      {"Ready", "True", "KubeletReady", "kubelet is posting ready status"},
      {"MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"},
      {"DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"},
      {"PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"},
      {"NetworkUnavailable", "False", "RouteCreated", "RouteController created a route"},
  };
  c_.store.mutate_node(name, [&](core::Node& node) {
    if (need_alloc)
      for (const auto& [k, q] : kAllocatable) node.allocatable[k] = q;
    if (!need_cond) return;
    // Each standard condition replaces one of its type (a Ready without a
    // status, as a PUT of the node's status may leave it) or is added: never
    // a second of a type, as ready_status() reads the first (appending left
    // the status-less Ready first, so the node was initialized again, each
    // round 5 conditions longer, until the controllers' round limit:
    // fuzz/regressions/api_server/).
    for (const auto& want : kConditions) {
      auto it = std::find_if(node.conditions.begin(), node.conditions.end(),
                             [&](const core::NodeCondition& c) { return c.type == want.type; });
      if (it == node.conditions.end())
        node.conditions.push_back(want);
      else if (want.type == "Ready")
        *it = want;
    }
  });
}

// ------------------------------------------------------------ faults

const Fault* Kubelet::fault_for(const PodRecord& pod) const {
  if (faults_.empty()) return nullptr;
  const core::OwnerReference* ref = pod.shared_meta().controller_ref();
  for (const auto& [id, f] : faults_) {
    if (!f.node.empty() && f.node != pod.node_name) continue;
    if (!f.daemonset.empty() && (!ref || ref->kind != "DaemonSet" || ref->name != f.daemonset)) continue;
    if (f.kind == FaultKind::kStuckInInit && pod.shared_spec().init_containers.empty()) continue;
    return &f;
  }
  return nullptr;
}

// Queues the pods of node `node` ("": of every node) for a sync.
void Kubelet::resync_node_pods(const std::string& node) {
  for (const auto& n : c_.node_table)
    if (node.empty() || node == n.name)
      for (uint64_t pod : n.pods) pod_queue.push(pod);
}

int Kubelet::inject_fault(const Fault& fault) {
  int id = next_fault_++;
  faults_[id] = fault;
  resync_node_pods(fault.node);
  return id;
}

void Kubelet::clear_fault(int id) {
  auto it = faults_.find(id);
  if (it == faults_.end()) return;
  std::string node = it->second.node;
  faults_.erase(it);
  resync_node_pods(node);
}

void Kubelet::clear_faults() {
  std::vector<int> ids;
  for (const auto& [id, f] : faults_) ids.push_back(id);
  for (int id : ids) clear_fault(id);
}

// ------------------------------------------------------------ pods

// mirrors generateAPIPodStatus / getPhase, pkg/kubelet/kubelet_pods.go, or
// KWOK's pod-ready stage: the status for a bound, live pod, given its fault
// `f`. Sets `timed` when it started a timer for the pod.
size_t Kubelet::gate(const PodRecord& pod, std::optional<InitRun>& run) {
  const auto& inits = pod.shared_spec().init_containers;
  if (!gates_ || c_.opt.profile != KubeletProfile::kKubelet || inits.empty()) return inits.size();
  // Once initialized, a pod stays so (the validation files persist).
  if (const core::PodCondition* c = pod.condition("Initialized"); c && c->status == "True") return inits.size();
  if (pod.id >= c_.pod_info.size() || c_.pod_info[pod.id].bound == PodInfo::kNoNode) return inits.size();
  const NodeEntry& entry = c_.node_table[c_.pod_info[pod.id].bound];
  if (!entry.node) return inits.size();
  std::vector<const PodRecord*> pods;
  for (uint64_t id : entry.pods)
    if (const PodRecord* p = c_.store.find_pod_by_id(id); p && p->node_name == entry.name) pods.push_back(p);
  auto host = c_.hosts.find(entry.name);
  const bool host_driver = host != c_.hosts.end() && host->second.driver == NodeHost::Driver::kPreInstalled;
  auto played = [&](const core::Container& c) -> std::optional<bool> {
    if (!agent_ || !agent_->runs(pod, c)) return std::nullopt;
    run = agent_->progress(pod, false);
    return run->state == InitRun::kCompleted;
  };
  return gates_->passed(pod, *entry.node, pods, host_driver, played);
}

core::PodStatus Kubelet::generate_api_pod_status(const PodRecord& pod, const std::string& key, const Fault* f,
                                                 bool& timed, bool& gated) {
  const uint64_t id = pod.id;
  const Time now = c_.now;
  const ClusterOptions& opt = c_.opt;
  Time t = truncate_seconds(now);
  core::PodStatus s = *pod.status;
  s.reason.clear();
  s.message.clear();
  if (!s.start_time) s.start_time = t;
  const core::PodCondition* sched = pod.condition("PodScheduled");
  Time bound_at = sched && sched->last_transition_time ? *sched->last_transition_time : t;
  Time started_at = opt.profile == KubeletProfile::kKubelet ? bound_at + opt.start_delay : bound_at;
  const auto& cs = pod.shared_spec().containers;
  const auto& ics = pod.shared_spec().init_containers;
  s.container_statuses.clear();
  if (f && f->kind == FaultKind::kFailed) {
    // Admission rejection (pkg/kubelet/lifecycle/predicate.go).
    s.phase = "Failed";
    s.reason = f->reason.empty() ? "UnexpectedAdmissionError" : f->reason;
    s.message = "Pod was rejected: " + s.reason;
    return s;
  }
  if (now < started_at) {
    // Containers are being created.
    set_creating(s, ics, cs, t);
    c_.timers.at(started_at, "kubelet start of pod " + key, [this, id] { pod_queue.push(id); });
    timed = true;
    return s;
  }
  if (f && f->kind == FaultKind::kStuckInInit) {
    // A played first init container does its work up to where it hangs.
    if (agent_ && gates_ && opt.profile == KubeletProfile::kKubelet && agent_->runs(pod, ics[0]))
      agent_->progress(pod, true);
    set_stuck_in_init(s, ics, cs, t);
    return s;
  }
  std::optional<InitRun> run;
  if (size_t passed = gate(pod, run); passed < ics.size()) {
    // A validation gate: the init containers before it completed, it runs
    // (and waits), the rest wait (kubectl: Init:<passed>/<n>). A played
    // container that failed waits out the kubelet's restart back-off
    // (kubectl: Init:CrashLoopBackOff), then runs again.
    gated = true;
    if (run && run->state == InitRun::kFailed) {
      const Duration backoff = init_restart_backoff(run->restarts);
      if (run->restarts < kMaxPlayedRestarts && now >= run->finished + backoff) {
        agent_->restart(pod);
        run = agent_->progress(pod, false);
      } else if (run->restarts < kMaxPlayedRestarts) {
        c_.timers.at(run->finished + backoff, "kubelet restart back-off of pod " + key,
                     [this, id] { pod_queue.push(id); });
        timed = true;
      }
    }
    set_gated(s, pod, ics, cs, passed, run, t);
    return s;
  }
  set_inits_done(s, ics, t);
  if (f && f->kind == FaultKind::kImagePull) {
    bool backoff = opt.profile == KubeletProfile::kKwok || now >= started_at + kImagePullBackoff;
    set_image_pull(s, cs, backoff);
    if (!backoff)
      c_.timers.at(started_at + kImagePullBackoff, "kubelet image pull back-off of pod " + key,
                   [this, id] { pod_queue.push(id); });
    set_not_ready(s, cs, "ContainersNotReady", t);
    return s;
  }
  s.phase = "Running";
  if (f && f->kind == FaultKind::kCrashLoop) {
    set_crash_loop(s, pod, cs, t);
    return s;
  }
  if (f && f->kind == FaultKind::kNeverReady) {
    for (const auto& c : cs) s.container_statuses.push_back(container_status(c, false, "running"));
    set_not_ready(s, cs, "ContainersNotReady", t);
    return s;
  }
  for (const auto& c : cs) s.container_statuses.push_back(container_status(c, true, "running"));
  set_condition(s, "ContainersReady", "True", "", "", t);
  set_condition(s, "Ready", "True", "", "", t);
  return s;
}

// mirrors syncPod, pkg/kubelet/kubelet.go (simplified); see kubelet.h.
void Kubelet::sync_pod(uint64_t id) {
  ObjectStore& store = c_.store;
  const Time now = c_.now;
  const PodRecord* pod = store.find_pod_by_id(id);
  if (!pod || pod->node_name.empty()) return;
  const std::string& key = *store.pod_key(id);
  const core::Node* node = c_.node_table[c_.info_of(*pod).bound].node;
  if (!node) return;  // no kubelet: pod GC handles these
  std::string ready = node->ready_status();
  if (pod->deletion_timestamp) {
    if (ready == "Unknown") return;  // unreachable: stays Terminating
    if (c_.opt.profile == KubeletProfile::kKwok || now >= *pod->deletion_timestamp) {
      // KWOK pod-delete stage / kubelet after the grace period: delete with grace 0.
      store.force_remove_pod(key);
    } else {
      c_.timers.at(*pod->deletion_timestamp, "graceful deletion of pod " + key, [this, id] { pod_queue.push(id); });
    }
    return;
  }
  if (terminal(*pod) || ready != "True") return;      // a NotReady node's kubelet starts nothing new
  if (id >= kept_first_ && id <= kept_last_) return;  // an imported pod's status stays the real kubelet's
  // Without a fault the status depends only on the pod's status, its shared
  // template part and the time; pods in the same state share the result.
  const Fault* f = fault_for(*pod);
  std::shared_ptr<const core::PodStatus> out;
  if (!f && memo_.hit(*pod, now)) {
    out = memo_.out;
  } else {
    bool timed = false, gated = false;
    core::PodStatus s = generate_api_pod_status(*pod, key, f, timed, gated);
    if (same_status(s, *pod->status)) return;
    out = std::make_shared<const core::PodStatus>(std::move(s));
    if (!f && !timed && !gated && !gates_) memo_ = StatusMemo{pod->status, pod->base, now, out};
  }
  if (out == pod->status) return;
  writing_ = true;
  store.set_pod_status(id, std::move(out));
  writing_ = false;
  // What the gates of the node's other pods read (readiness, init
  // progress) may have changed: sync them again.
  const PodRecord* now_pod = store.find_pod_by_id(id);
  if (gates_ && c_.opt.profile == KubeletProfile::kKubelet && now_pod)
    for (uint64_t other : c_.node_table[c_.info_of(*now_pod).bound].pods)
      if (other != id) pod_queue.push(other);
}

}  // namespace gpuops::simulator::internal
