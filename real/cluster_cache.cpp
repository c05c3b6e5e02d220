#include "real/cluster_cache.h"

#include <map>

#include "core/base/errors.h"
#include "core/codec/decode.h"
#include "real/client.h"

namespace gpuops::real {

struct ClusterCache::Store : ReflectorSink {
  virtual void put_into(core::ClusterState& s) const = 0;
  virtual void move_into(core::ClusterState& s) = 0;
  virtual void move_back(core::ClusterState& s) = 0;
};

namespace {

template <typename T, typename Decode, auto Member>
class TypedStore : public ClusterCache::Store {
 public:
  TypedStore(Decode decode, std::mutex& mu, std::function<void()> changed)
      : decode_(decode), mu_(mu), changed_(std::move(changed)) {}

  void begin_list() override {
    pending_.clear();
    listing_ = true;
  }
  void end_list() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      objects_.swap(pending_);
    }
    pending_.clear();
    listing_ = false;
    changed_();
  }
  void add(const core::Document& d) override {
    T obj = decode(d);
    std::string k = key(obj.metadata);
    if (listing_) {
      pending_.insert_or_assign(std::move(k), std::move(obj));
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      objects_.insert_or_assign(std::move(k), std::move(obj));
    }
    changed_();
  }
  void remove(const core::Document& d) override {
    T obj = decode(d);
    {
      std::lock_guard<std::mutex> lock(mu_);
      objects_.erase(key(obj.metadata));
    }
    changed_();
  }
  // Called with mu_ held.
  void put_into(core::ClusterState& s) const override {
    auto& out = s.*Member;
    out.reserve(objects_.size());
    for (const auto& [k, v] : objects_) out.push_back(v);
  }
  void move_into(core::ClusterState& s) override {
    auto& out = s.*Member;
    out.reserve(objects_.size());
    for (auto& [k, v] : objects_) out.push_back(std::move(v));
  }
  // The same order as move_into: the map did not change meanwhile (mu_ held).
  void move_back(core::ClusterState& s) override {
    auto& in = s.*Member;
    size_t i = 0;
    for (auto& [k, v] : objects_) v = std::move(in[i++]);
    in.clear();
  }

 private:
  static std::string key(const core::ObjectMeta& m) { return m.namespace_ + "/" + m.name; }
  T decode(const core::Document& d) const {
    try {
      return decode_(d);
    } catch (const core::InputError& e) {
      throw core::ClusterError(std::string("cannot read an object from the API server: ") + e.what());
    }
  }

  Decode decode_;
  std::mutex& mu_;
  std::function<void()> changed_;
  std::map<std::string, T> objects_;  // under mu_
  std::map<std::string, T> pending_;  // the reflector thread's only
  bool listing_ = false;
};

template <typename T, auto Member, typename Decode>
std::unique_ptr<ClusterCache::Store> make_store(Decode d, std::mutex& mu, std::function<void()> changed) {
  return std::make_unique<TypedStore<T, Decode, Member>>(d, mu, std::move(changed));
}

}  // namespace

ClusterCache::ClusterCache(RestConfig config, std::string ns, ReflectorOptions options) : namespace_(std::move(ns)) {
  auto changed = [this] { this->changed(); };
  const std::string nsq = query_escape(namespace_);
  struct Kind {
    std::unique_ptr<Store> store;
    std::string path;
    bool optional;
  };
  std::vector<Kind> kinds;
  kinds.push_back({make_store<core::Node, &core::ClusterState::nodes>(core::decode_node_typed, mu_, changed),
                   "/api/v1/nodes", false});
  kinds.push_back(
      {make_store<core::DaemonSet, &core::ClusterState::daemonsets>(core::decode_daemonset_typed, mu_, changed),
       "/apis/apps/v1/namespaces/" + nsq + "/daemonsets", false});
  kinds.push_back({make_store<core::Pod, &core::ClusterState::pods>(core::decode_pod_typed, mu_, changed),
                   "/api/v1/namespaces/" + nsq + "/pods", false});
  kinds.push_back({make_store<core::ClusterPolicy, &core::ClusterState::cluster_policies>(core::decode_cluster_policy,
                                                                                          mu_, changed),
                   "/apis/nvidia.com/v1/clusterpolicies", true});
  kinds.push_back(
      {make_store<core::NVIDIADriver, &core::ClusterState::nvidia_drivers>(core::decode_nvidia_driver, mu_, changed),
       "/apis/nvidia.com/v1alpha1/nvidiadrivers", true});
  for (auto& k : kinds) {
    ReflectorOptions o = options;
    o.optional = k.optional;
    reflectors_.push_back(std::make_unique<Reflector>(config, k.path, *k.store, o));
    stores_.push_back(std::move(k.store));
  }
}

ClusterCache::~ClusterCache() { stop(); }

void ClusterCache::start() {
  for (auto& r : reflectors_) threads_.emplace_back([&r] { r->run(); });
}

void ClusterCache::stop() {
  for (auto& r : reflectors_) r->stop();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
}

bool ClusterCache::synced() const {
  for (const auto& r : reflectors_)
    if (!r->stats().synced) return false;
  return true;
}

core::ClusterState ClusterCache::state() const {
  core::ClusterState s;
  s.namespace_ = namespace_;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& st : stores_) st->put_into(s);
  return s;
}

void ClusterCache::with_state(const std::function<void(const core::ClusterState&)>& fn) {
  core::ClusterState s;
  s.namespace_ = namespace_;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& st : stores_) st->move_into(s);
  std::exception_ptr failure;
  try {
    fn(s);
  } catch (...) {
    failure = std::current_exception();
  }
  for (auto& st : stores_) st->move_back(s);
  if (failure) std::rethrow_exception(failure);
}

uint64_t ClusterCache::version() const {
  std::lock_guard<std::mutex> lock(mu_);
  return version_;
}

uint64_t ClusterCache::wait_change(uint64_t seen, std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return version_ != seen; });
  return version_;
}

void ClusterCache::changed() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++version_;
  }
  cv_.notify_all();
}

}  // namespace gpuops::real
