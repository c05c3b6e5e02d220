// FakeCluster: the loop, the timers and the core::Cluster port. The
// controllers live in rooms of their own, each mirroring one upstream
// component (see fake_cluster.h for the overview):
//   daemon_controller.{h,cpp}          pkg/controller/daemon
//   scheduler.{h,cpp}                  pkg/scheduler
//   kubelet.{h,cpp}                    the kubelet, KWOK's stages
//   node_lifecycle_controller.{h,cpp}  pkg/controller/nodelifecycle
//   podgc.{h,cpp}                      pkg/controller/podgc
//   garbage_collector.{h,cpp}          pkg/controller/garbagecollector
//   clusterpolicy_controller.{h,cpp}   the GPU Operator (NVIDIA/gpu-operator
//                                      controllers/), once installed
//   driver_manager.{h,cpp}             its k8s-driver-manager init container
//   mig_manager.{h,cpp}                its MIG manager (NVIDIA/mig-parted)
// and share a ClusterContext (cluster_context.h): clock, store, timers and
// the indexes by node and pod id.
//
// Work is event driven: the ObjectStore calls Impl's StoreObserver methods on
// every write; Impl keeps the shared indexes and hands the event to each
// controller's handler, which only marks work (its queue, dirty sets). The
// controllers run in run_until_idle(), one pass over each queue per round,
// until no queue has work.
//
// Adding a controller: give it a class of its own holding a ClusterContext&,
// event handlers and a queue; construct it in Impl, call its handlers from
// the observer methods, and add its queue to has_work(), the round in
// run_until_idle() and busy_description().
#include "simulator/fake_cluster.h"

#include <algorithm>
#include <deque>
#include <set>
#include <thread>

#include "core/base/errors.h"
#include "core/base/terminal.h"
#include "core/codec/decode.h"
#include "core/codec/encode.h"
#include "core/codec/patch.h"
#include "core/gpu_operator/gpu_node_rules.h"
#include "core/kube/names.h"
#include "core/model/rfc3339.h"
#include "simulator/gpu_operator/clusterpolicy_controller.h"
#include "simulator/gpu_operator/driver_manager.h"
#include "simulator/gpu_operator/mig_manager.h"
#include "simulator/gpu_operator/operator_validation.h"
#include "simulator/kube/cluster_context.h"
#include "simulator/kube/daemon_controller.h"
#include "simulator/kube/garbage_collector.h"
#include "simulator/kube/kubelet.h"
#include "simulator/kube/node_lifecycle_controller.h"
#include "simulator/kube/podgc.h"
#include "simulator/kube/scheduler.h"
#include "simulator/kube/steady_cycle.h"

namespace gpuops::simulator {

using core::ClusterError;
using core::Duration;
using core::Time;
using internal::PodInfo;

struct FakeCluster::Impl : StoreObserver {
  internal::ClusterContext ctx;
  internal::DaemonSetController daemonsets{ctx};
  internal::Scheduler scheduler{ctx};
  internal::Kubelet kubelet{ctx};
  internal::NodeLifecycleController node_lifecycle{ctx};
  internal::PodGC podgc{ctx};
  internal::GarbageCollector garbage_collector{ctx, daemonsets};
  internal::ClusterPolicyController cluster_policy{ctx, daemonsets};
  internal::DriverManager driver_manager{ctx, kubelet.pod_queue};
  internal::MigManager mig_manager{ctx};
  std::optional<internal::ValidationGates> gates;  // the installed operator's

  explicit Impl(Options o) : ctx(o) {
    ctx.store.add_observer(this);
    kubelet.set_init_agent(&driver_manager);
  }

  // The operator of `catalog`'s release and its operands' helpers start
  // (`adopt`: ClusterPolicyController::install's); the CRDs are the caller's.
  void start_operator(const core::Catalog& catalog, const std::string& ns, bool adopt) {
    cluster_policy.install(catalog, ns, adopt);
    gates.emplace(cluster_policy.catalog());
    kubelet.set_init_gates(&*gates);
    driver_manager.install(&cluster_policy.catalog(), ns);
    mig_manager.install(&cluster_policy.catalog(), ns);
  }

  // ------------------------------------------------------------ observers

  void on_node(EventType type, const core::Node& node) override {
    const uint32_t id = ctx.node_id(node.metadata.name);
    if (type != EventType::kModified) ctx.sorted_node_ids_stale = true;
    ctx.node_table[id].node = type == EventType::kDeleted ? nullptr : &node;
    daemonsets.on_node(type, node, id);
    scheduler.on_node(id);
    if (type == EventType::kDeleted) {
      node_lifecycle.on_node_deleted(node.metadata.name);
      podgc.on_node_deleted(id);
      return;
    }
    kubelet.on_node(id);
    node_lifecycle.on_node(node.metadata.name);
    cluster_policy.on_node(type, node);
    mig_manager.on_node(type, node);
  }

  void on_daemonset(EventType type, const core::DaemonSet& d) override {
    if (type == EventType::kDeleted) {
      if (const auto* st = daemonsets.find(ObjectStore::key(d.metadata.namespace_, d.metadata.name)))
        garbage_collector.on_owner_deleted(*st);  // background propagation: the dependents go next
    } else if (d.metadata.deletion_timestamp) {
      garbage_collector.on_owner_deleting(d);  // foreground or orphan: the finalizer's work
    }
    daemonsets.on_daemonset(type, d);
    cluster_policy.on_daemonset(type, d);
  }

  void on_cluster_policy(EventType type, const core::ClusterPolicy& cp) override {
    if (type == EventType::kDeleted) garbage_collector.on_cluster_policy_deleted(cp.metadata.uid);
    cluster_policy.on_cluster_policy(type, cp);
  }

  void on_pod(EventType type, const PodRecord& pod) override {
    const bool was_bound = pod.id < ctx.pod_info.size() && ctx.pod_info[pod.id].bound != PodInfo::kNoNode;
    PodInfo& info = ctx.info_of(pod);
    const uint32_t target = info.target;
    // Pods by node. A pod with no target node (neither pinned nor created
    // bound) is listed under "" until bound: from then on it is one of its
    // node's pods too (the node lifecycle controller marks it, pod GC
    // collects it).
    const bool bound_elsewhere = info.bound != PodInfo::kNoNode && info.bound != target;
    auto& node_table = ctx.node_table;
    if (bound_elsewhere && !was_bound && type != EventType::kDeleted) node_table[info.bound].pods.push_back(pod.id);
    if (type == EventType::kAdded) {
      node_table[target].pods.push_back(pod.id);
    } else if (type == EventType::kDeleted) {
      std::erase(node_table[target].pods, pod.id);
      if (bound_elsewhere) std::erase(node_table[info.bound].pods, pod.id);
    }
    if (type == EventType::kDeleted && info.st) garbage_collector.on_dependent_deleted(*info.st);
    daemonsets.on_pod(type, pod, info);
    scheduler.on_pod(type, pod, info);
    driver_manager.on_pod(type, pod);
    mig_manager.on_pod(type, pod);
    if (type != EventType::kDeleted && !pod.node_name.empty()) {
      kubelet.on_bound_pod(pod);
      podgc.on_bound_pod(pod, info);
    }
  }

  // ------------------------------------------------------------ loop

  bool has_work() const {
    return !kubelet.node_queue.empty() || !node_lifecycle.queue.empty() || !daemonsets.queue.empty() ||
           !scheduler.queue.empty() || !kubelet.pod_queue.empty() || !garbage_collector.queue.empty() ||
           !garbage_collector.daemonset_queue.empty() || cluster_policy.has_work() || driver_manager.has_work() ||
           mig_manager.has_work() || !garbage_collector.owners.empty() || !garbage_collector.revisions.empty();
  }

  std::string busy_description() const {
    std::vector<std::string> parts;
    if (!daemonsets.queue.empty()) parts.push_back("DaemonSet controller (" + daemonsets.queue.front() + ")");
    auto pod = [&](uint64_t id) {
      const std::string* k = ctx.store.pod_key(id);
      return k ? *k : "pod #" + std::to_string(id) + ", deleted";
    };
    if (!scheduler.queue.empty()) parts.push_back("scheduler (" + pod(scheduler.queue.q.front()) + ")");
    if (!kubelet.pod_queue.empty()) parts.push_back("kubelet (" + pod(kubelet.pod_queue.q.front()) + ")");
    if (!node_lifecycle.queue.empty()) parts.push_back("node lifecycle (" + node_lifecycle.queue.q.front() + ")");
    if (cluster_policy.has_work()) parts.push_back("GPU Operator (ClusterPolicy reconcile)");
    if (driver_manager.has_work()) parts.push_back("k8s-driver-manager");
    if (mig_manager.has_work()) parts.push_back("MIG manager");
    std::string s;
    for (const auto& p : parts) s += (s.empty() ? "" : ", ") + p;
    return s;
  }

  // Rounds until no queue has work; each round drains every queue once, in
  // a fixed order. Throws ClusterError after Options::max_rounds rounds.
  void run_until_idle() {
    int rounds = 0;
    while (has_work()) {
      if (++rounds > ctx.opt.max_rounds)
        throw ClusterError("simulator: live-lock: controllers still busy after " + std::to_string(ctx.opt.max_rounds) +
                           " rounds at " + core::format_time(ctx.now) + ": " + busy_description());
      for (const auto& k : kubelet.node_queue.take()) kubelet.initialize_node(k);
      for (const auto& k : node_lifecycle.queue.take()) node_lifecycle.monitor_node(k);
      for (const auto& k : garbage_collector.owners.take()) garbage_collector.process_deleting_owner(k);
      for (const auto& k : garbage_collector.daemonset_queue.take()) garbage_collector.attempt_to_delete_daemonset(k);
      for (const auto& k : garbage_collector.queue.take()) garbage_collector.attempt_to_delete_item(k);
      for (const auto& k : garbage_collector.revisions.take()) garbage_collector.attempt_to_delete_revision(k);
      if (cluster_policy.has_work()) cluster_policy.reconcile();
      if (driver_manager.has_work()) driver_manager.run();
      if (mig_manager.has_work()) mig_manager.run();
      std::deque<std::string> dsq;
      dsq.swap(daemonsets.queue);
      for (const auto& k : dsq) daemonsets.sync_daemon_set(k);
      for (const auto& k : scheduler.queue.take()) scheduler.schedule_one(k);
      for (const auto& k : kubelet.pod_queue.take()) kubelet.sync_pod(k);
    }
  }

  // Moves the clock to the next timer (never back), fires the due ones and
  // runs the controllers to quiescence. REQUIRES: !ctx.timers.empty().
  void step_to_next_timer() {
    ctx.now = std::max(ctx.now, ctx.timers.next());
    ctx.timers.fire_due(ctx.now);
    run_until_idle();
  }

  // advance()'s way through a long wait on a cycle that only repeats itself
  // (pods failing again at the failed-pod backoff's cap, every 15 min, for
  // as long as the fault lasts: a real cluster goes on for ever, and played
  // cycle by cycle `advance: 2562047h` took a quarter of an hour and
  // gigabytes). When every pending timer belongs to one period (Timers) and
  // at least three periods are left before `end`, it plays one period and
  // compares the cluster before and after (steady_cycle_digest). The same:
  // the clock, the timers and the backoff entries of the cycle move forward
  // whole periods at once, leaving at least one period to be played, so
  // every pod of the cycle is created anew before `end`, as it would be.
  // Only the names, uids and resourceVersions of the pods skipped over are
  // never made.
  // Timers that are not periodic (a terminating pod's grace period, say)
  // stay where they are: the cycle is moved forward only up to the first of
  // them (`limit`), which then fires in the cycle's phase, as when played.
  void skip_steady_cycles(Time end) {
    const Duration period = ctx.timers.cycle_period();
    const Time next_aperiodic = ctx.timers.next_aperiodic();
    const size_t aperiodic = ctx.timers.aperiodic_count();
    const Time limit = std::min(end, next_aperiodic);
    if (period <= Duration(0) || limit - ctx.now < 3 * period) return;
    const Time from = ctx.now;
    const std::vector<uint64_t> before = internal::steady_cycle_digest(ctx.store);
    while (!ctx.timers.empty() && ctx.timers.next() <= from + period) step_to_next_timer();
    if (ctx.timers.cycle_period() != period || ctx.timers.next_aperiodic() != next_aperiodic ||
        ctx.timers.aperiodic_count() != aperiodic || internal::steady_cycle_digest(ctx.store) != before)
      return;
    const int64_t periods = (limit - ctx.now) / period - 1;
    if (periods <= 0) return;
    const Duration skip = periods * period;
    ctx.timers.shift(skip);
    daemonsets.shift_backoffs(from, skip);
    ctx.now += skip;
  }
};

// ---------------------------------------------------------------- FakeCluster

FakeCluster::FakeCluster() : FakeCluster(Options{}) {}
FakeCluster::FakeCluster(Options options) : impl_(std::make_unique<Impl>(options)) {}
FakeCluster::~FakeCluster() = default;

ObjectStore& FakeCluster::store() { return impl_->ctx.store; }
const ObjectStore& FakeCluster::store() const { return impl_->ctx.store; }
core::Time FakeCluster::now() const { return impl_->ctx.now; }

void FakeCluster::run() { impl_->run_until_idle(); }

void FakeCluster::install_operator(const core::Catalog& catalog, const std::string& ns) {
  impl_->ctx.store.install_gpu_operator_crds();
  create_namespace(ns);
  impl_->start_operator(catalog, ns, false);
}

void FakeCluster::patch_cluster_policy(const std::string& name, const boost::json::object& merge_patch) {
  ObjectStore& s = impl_->ctx.store;
  auto cur = s.get(Kind::kClusterPolicy, "", name);
  if (!s.gpu_operator_crds() || !cur)
    throw ClusterError("clusterpolicies.nvidia.com " + core::go_quote(name) + " not found", 404);
  boost::json::value patched = core::merge_patch(core::encode(*cur), merge_patch);
  if (!patched.is_object())
    throw core::InputError::with_status(422, "", 0, "", "the patched ClusterPolicy is not an object");
  // A patch that renames it (metadata or its name null too) or changes its
  // kind or apiVersion: refused as the API server refuses it (400 / 422),
  // nothing written.
  core::check_patched_identity(patched, name, true, "ClusterPolicy", "nvidia.com/v1");
  // A patch that sets metadata to a string, a list or a number leaves no
  // object to decode: refused, as the API server's decoding of the patched
  // object into ObjectMeta refuses it.
  boost::json::value* meta = patched.as_object().if_contains("metadata");
  if (!meta || !meta->is_object())
    throw core::InputError::with_status(422, "", 0, "metadata",
                                        "Invalid value: the patched ClusterPolicy's metadata must be an object");
  core::Document doc;
  doc.value = std::move(patched);
  doc.file = "clusterpolicy/" + name;
  core::ClusterPolicy cp = core::decode_cluster_policy(doc);
  cp.metadata.resource_version.clear();
  s.update(core::Object(std::move(cp)));
}

void FakeCluster::delete_cluster_policy(const std::string& name) {
  ObjectStore& s = impl_->ctx.store;
  if (!s.gpu_operator_crds() || !s.get(Kind::kClusterPolicy, "", name))
    throw ClusterError("clusterpolicies.nvidia.com " + core::go_quote(name) + " not found", 404);
  s.remove(Kind::kClusterPolicy, "", name);
}

void FakeCluster::uninstall_operator() {
  impl_->cluster_policy.uninstall();
  impl_->kubelet.set_init_gates(nullptr);
  impl_->gates.reset();
  impl_->driver_manager.install(nullptr, "");
  impl_->mig_manager.install(nullptr, "");
}

void FakeCluster::import_state(core::ClusterState state, const core::Catalog* operator_catalog) {
  Impl& m = *impl_;
  ObjectStore& s = m.ctx.store;
  if (!s.nodes().empty() || !s.daemonsets().empty() || s.pod_count() != 0)
    throw ClusterError("import: the simulator already holds a cluster", 409);
  std::set<std::string> namespaces;
  if (!state.namespace_.empty()) namespaces.insert(state.namespace_);
  for (const auto& d : state.daemonsets) namespaces.insert(d.metadata.namespace_);
  for (const auto& p : state.pods) namespaces.insert(p.metadata.namespace_);
  namespaces.erase("");
  for (const auto& ns : namespaces) create_namespace(ns);
  std::set<std::string> listed;
  for (auto& n : state.nodes) {
    listed.insert(n.metadata.name);
    s.restore(core::Object(std::move(n)));
  }
  for (const auto& p : state.pods)
    if (!p.spec.node_name.empty() && !listed.count(p.spec.node_name)) m.ctx.unseen_nodes.insert(p.spec.node_name);
  if (operator_catalog || !state.cluster_policies.empty() || !state.nvidia_drivers.empty())
    s.install_gpu_operator_crds();
  for (auto& cp : state.cluster_policies) s.restore(core::Object(std::move(cp)));
  for (auto& d : state.nvidia_drivers) s.restore(core::Object(std::move(d)));
  for (auto& d : state.daemonsets) s.restore(core::Object(std::move(d)));
  // Every pod created from here to the end is an imported one (observers
  // write nothing while the store notifies them).
  const uint64_t first_pod = s.last_pod_id() + 1;
  for (auto& p : state.pods) s.restore(core::Object(std::move(p)));
  m.kubelet.keep_statuses(first_pod, s.last_pod_id());
  for (const auto& [key, d] : s.daemonsets()) m.daemonsets.adopt_imported_revision(d);
  // The operator adopts the install last: what it finds is what it saw
  // before (ClusterPolicyController::install, adopt), not a burst of
  // creations its watches would answer.
  if (operator_catalog) m.start_operator(*operator_catalog, state.namespace_, true);
}

core::Time FakeCluster::import_start(const core::ClusterState& state) {
  std::optional<Time> latest;
  auto see = [&](const std::optional<Time>& t) {
    if (t && (!latest || *t > *latest)) latest = t;
  };
  auto meta = [&](const core::ObjectMeta& m) {
    see(m.creation_timestamp);
    see(m.deletion_timestamp);
  };
  for (const auto& n : state.nodes) meta(n.metadata);
  for (const auto& d : state.daemonsets) meta(d.metadata);
  for (const auto& p : state.pods) {
    meta(p.metadata);
    see(p.status.start_time);
    for (const auto& c : p.status.conditions) see(c.last_transition_time);
  }
  for (const auto& cp : state.cluster_policies) meta(cp.metadata);
  if (!latest) return Options{}.start;
  return *latest + std::chrono::seconds(1);
}

void FakeCluster::set_host(const core::HostSpec& spec) {
  using Driver = internal::NodeHost::Driver;
  std::optional<Driver> driver;
  if (spec.driver) {
    if (*spec.driver == "none")
      driver = Driver::kNone;
    else if (*spec.driver == "pre-installed")
      driver = Driver::kPreInstalled;
    else if (*spec.driver == "loaded")
      driver = Driver::kLoaded;
    else
      throw core::InputError::with_status(
          422, "", 0, "host.driver",
          "Unsupported value: \"" + *spec.driver + "\": supported values: \"none\", \"pre-installed\", \"loaded\"");
  }
  if (spec.node.empty()) throw core::InputError::with_status(422, "", 0, "host.node", "Required value");
  internal::NodeHost& host = impl_->ctx.hosts[spec.node];
  if (driver && *driver != host.driver) {
    host.driver = *driver;
    host.loaded_config.clear();
  }
  if (spec.driver_in_use) host.driver_in_use = *spec.driver_in_use;
  if (spec.mig_config) host.mig_config = *spec.mig_config;
  if (spec.mig_apply_fails) host.mig_apply_fails = *spec.mig_apply_fails;
}

bool FakeCluster::operator_installed() const { return impl_->cluster_policy.installed(); }

void FakeCluster::advance(core::Duration d) {
  Impl& m = *impl_;
  Time end = m.ctx.now + std::max(d, Duration(0));
  m.run_until_idle();
  while (!m.ctx.timers.empty() && m.ctx.timers.next() <= end) {
    m.step_to_next_timer();
    m.skip_steady_cycles(end);
  }
  m.ctx.now = end;
  m.run_until_idle();
}

void FakeCluster::settle() {
  Impl& m = *impl_;
  Time start = m.ctx.now;
  m.run_until_idle();
  // A DaemonSet's minReadySeconds (any int32) is a wait the controller owes,
  // not a live-lock: the horizon grows by the longest one, as the DaemonSets
  // are when the wait is met (read again at each step: a step can create one).
  auto limit = [&] {
    int32_t longest = 0;
    for (const auto& [key, ds] : m.ctx.store.daemonsets()) longest = std::max(longest, ds.min_ready_seconds);
    return m.ctx.opt.settle_limit + std::chrono::seconds(longest);
  };
  while (!m.ctx.timers.empty()) {
    // The DaemonSets are read only once the plain limit is passed.
    if (m.ctx.timers.next() > start + m.ctx.opt.settle_limit) {
      const core::Duration horizon = limit();
      if (m.ctx.timers.next() > start + horizon)
        throw ClusterError("simulator: live-lock: no convergence within " +
                           std::to_string(std::chrono::duration_cast<std::chrono::seconds>(horizon).count()) +
                           " s of virtual time; still pending: " + m.ctx.timers.description());
    }
    m.step_to_next_timer();
  }
}

core::ClusterState FakeCluster::state(const std::string& ns) { return partial_state(ns, core::StateParts{}); }

namespace {

// The pods of `recs`, materialised (PodRecord::pod), in their order. A
// large list is materialised by two threads, a half each (at 120,000 pods
// one thread took 0.8 s): the records are only read, and each thread's
// copies come from its own malloc arena.
std::vector<core::Pod> materialise(const std::vector<const PodRecord*>& recs) {
  std::vector<core::Pod> pods(recs.size());
  auto fill = [&](size_t from, size_t to) {
    for (size_t i = from; i < to; ++i) pods[i] = recs[i]->pod();
  };
  constexpr size_t kSplitAt = 20000;
  if (recs.size() < kSplitAt || std::thread::hardware_concurrency() < 2) {
    fill(0, recs.size());
    return pods;
  }
  const size_t half = recs.size() / 2;
  std::thread other(fill, half, recs.size());
  fill(0, half);
  other.join();
  return pods;
}

}  // namespace

core::ClusterState FakeCluster::partial_state(const std::string& ns, const core::StateParts& parts) {
  const ObjectStore& s = impl_->ctx.store;
  core::ClusterState out;
  out.namespace_ = ns;
  out.observed_at = impl_->ctx.now;
  if (parts.nodes && parts.of_nodes) {
    for (const auto& name : *parts.of_nodes)
      if (const core::Node* n = s.find_node(name)) out.nodes.push_back(*n);
  } else if (parts.nodes) {
    for (const auto& [name, n] : s.nodes()) out.nodes.push_back(n);
  }
  if (parts.daemonsets)
    for (const auto& [k, d] : s.daemonsets())
      if (d.metadata.namespace_ == ns) out.daemonsets.push_back(d);
  if (parts.pods && parts.of_nodes) {
    for (const PodRecord* rec : s.list_pods(ns)) {
      // A bound pod's target node is its nodeName (Pod::target_node): only
      // the others are materialised to be asked.
      if (!rec->node_name.empty() && !parts.of_nodes->count(rec->node_name)) continue;
      core::Pod p = rec->pod();
      if (core::in_state_part(p, *parts.of_nodes)) out.pods.push_back(std::move(p));
    }
  } else if (parts.pods) {
    out.pods = materialise(s.list_pods(ns));
  }
  if (parts.pods) {
    // The simulator sees every namespace: the GPU workloads are never unseen
    // (ClusterState::gpu_workloads). Only a pod whose containers ask for GPUs
    // is materialised to be asked.
    out.gpu_workloads.emplace();
    for (const core::Object& o : s.list(Kind::kNamespace)) {
      const std::string& other = std::get<core::Namespace>(o).metadata.name;
      if (other == ns) continue;
      for (const PodRecord* rec : s.list_pods(other)) {
        if (core::gpu_resources(*rec->base).empty()) continue;
        core::Pod p = rec->pod();
        if (!core::holds_gpu(p) || (parts.of_nodes && !core::in_state_part(p, *parts.of_nodes))) continue;
        out.gpu_workloads->push_back(std::move(p));
      }
    }
  }
  if (parts.cluster_policies) {
    for (const auto& [name, cp] : s.cluster_policies()) out.cluster_policies.push_back(cp);
    for (const auto& [name, d] : s.nvidia_drivers()) out.nvidia_drivers.push_back(d);
  }
  return out;
}

void FakeCluster::apply(const std::vector<core::Object>& objects) {
  ObjectStore& s = impl_->ctx.store;
  // Validate everything first: nothing half-applied.
  std::set<std::string> namespaces;
  for (const auto& obj : objects) {
    if (auto* n = std::get_if<core::Namespace>(&obj)) {
      namespaces.insert(n->metadata.name);
      continue;
    }
    if (std::holds_alternative<core::Node>(obj)) continue;
    if (kind_of(obj) == Kind::kClusterPolicy || kind_of(obj) == Kind::kNVIDIADriver) {
      if (!s.gpu_operator_crds())
        throw core::InputError::with_status(
            404, "", 0, "kind",
            std::string("the server could not find the requested resource (") +
                (kind_of(obj) == Kind::kClusterPolicy ? "clusterpolicies" : "nvidiadrivers") +
                ".nvidia.com): the GPU Operator's CRDs are not installed");
      continue;
    }
    const core::ObjectMeta& m = std::visit([](const auto& x) -> const core::ObjectMeta& { return x.metadata; }, obj);
    if (!namespaces.count(m.namespace_) && !s.find_namespace(m.namespace_)) {
      throw core::InputError::with_status(404, "", 0, "metadata.namespace",
                                          "namespaces " + core::go_quote(m.namespace_) + " not found");
    }
    if (auto* d = std::get_if<core::DaemonSet>(&obj))
      if (const core::DaemonSet* cur = s.find_daemonset(m.namespace_, m.name))
        validate_daemonset_selector_update(*d, *cur);
  }
  for (const auto& obj : objects) {
    Kind k = kind_of(obj);
    const core::ObjectMeta& m = std::visit([](const auto& x) -> const core::ObjectMeta& { return x.metadata; }, obj);
    core::Object copy = obj;
    std::visit([](auto& x) { x.metadata.resource_version.clear(); }, copy);  // apply: last writer wins
    if (s.get(k, m.namespace_, m.name)) {
      if (k == Kind::kNamespace) continue;
      if (k == Kind::kNode) {
        // apply of a Node that exists: its labels, annotations, taints and
        // unschedulable flag, and its allocatable and conditions when given.
        const core::Node& node = std::get<core::Node>(copy);
        s.mutate_node(node.metadata.name, [&](core::Node& n) {
          n.metadata.labels = node.metadata.labels;
          n.metadata.annotations = node.metadata.annotations;
          n.unschedulable = node.unschedulable;
          n.taints = node.taints;
          if (!node.allocatable.empty()) n.allocatable = node.allocatable;
          if (!node.conditions.empty()) n.conditions = node.conditions;
        });
        continue;
      }
      s.update(std::move(copy));
    } else {
      s.create(std::move(copy));
    }
  }
}

void FakeCluster::create_namespace(const std::string& name) {
  if (impl_->ctx.store.find_namespace(name)) return;
  // ValidateNamespaceName: a DNS-1123 label.
  std::string err = core::validate_dns1123_label(name);
  if (!err.empty()) {
    throw core::InputError::with_status(422, "", 0, "metadata.name", "Invalid value: \"" + name + "\": " + err);
  }
  core::Namespace ns;
  ns.metadata.name = name;
  impl_->ctx.store.create(ns);
}

void FakeCluster::set_node_label(const std::string& node, const std::string& key,
                                 const std::optional<std::string>& value) {
  std::string err = core::validate_label_key(key);
  if (err.empty() && value) err = core::validate_label_value(*value);
  if (!err.empty()) {
    throw core::InputError::with_status(422, "", 0, "metadata.labels[" + key + "]", err);
  }
  impl_->ctx.store.mutate_node(node, [&](core::Node& n) {
    if (value)
      n.metadata.labels[key] = *value;
    else
      n.metadata.labels.erase(key);
  });
}

// A create, as POST /api/v1/nodes: a node of that name that exists already is
// refused with 409 AlreadyExists (`nodes "NAME" already exists`) and left as
// it is (mirrors Store.Create, staging/src/k8s.io/apiserver/pkg/registry/
// generic/registry/store.go: storage.NewKeyExistsError -> NewAlreadyExists).
void FakeCluster::add_node(const core::Node& node) { impl_->ctx.store.create(node); }

void FakeCluster::delete_node(const std::string& node) { impl_->ctx.store.remove(Kind::kNode, "", node); }

void FakeCluster::set_node_taints(const std::string& node, const std::vector<core::Taint>& taints) {
  impl_->ctx.store.mutate_node(node, [&](core::Node& n) { n.taints = taints; });
}

void FakeCluster::set_node_unschedulable(const std::string& node, bool unschedulable) {
  impl_->ctx.store.mutate_node(node, [&](core::Node& n) { n.unschedulable = unschedulable; });
}

void FakeCluster::set_node_ready(const std::string& node, const std::string& status) {
  if (status != "True" && status != "False" && status != "Unknown") {
    throw core::InputError::with_status(422, "", 0, "status.conditions[Ready].status",
                                        "must be True, False or Unknown, not \"" + status + "\"");
  }
  impl_->ctx.store.mutate_node(node, [&](core::Node& n) {
    core::NodeCondition c{"Ready", status, "", ""};
    if (status == "True") c = {"Ready", "True", "KubeletReady", "kubelet is posting ready status"};
    if (status == "False") c = {"Ready", "False", "KubeletNotReady", "container runtime network not ready"};
    if (status == "Unknown") c = {"Ready", "Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status."};
    for (auto& x : n.conditions)
      if (x.type == "Ready") {
        x = c;
        return;
      }
    n.conditions.insert(n.conditions.begin(), c);
  });
}

void FakeCluster::delete_pod(const std::string& ns, const std::string& name) {
  impl_->ctx.store.remove(Kind::kPod, ns, name);
}

void FakeCluster::delete_daemonset(const std::string& ns, const std::string& name, const std::string& cascade) {
  impl_->ctx.store.remove(Kind::kDaemonSet, ns, name, std::nullopt, core::Cluster::propagation_policy(cascade));
}

void FakeCluster::delete_namespace(const std::string& name) { impl_->ctx.store.remove(Kind::kNamespace, "", name); }

int FakeCluster::inject_fault(const Fault& fault) { return impl_->kubelet.inject_fault(fault); }
void FakeCluster::clear_fault(int id) { impl_->kubelet.clear_fault(id); }
void FakeCluster::clear_faults() { impl_->kubelet.clear_faults(); }

}  // namespace gpuops::simulator
