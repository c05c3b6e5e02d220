#include "cli/backends.h"

#include "cli/common.h"

#ifdef GPUOPS_HAVE_SIMULATOR
#include "simulator/fake_cluster.h"
#endif
#ifdef GPUOPS_HAVE_REAL
#include "real/api_cluster.h"
#include "real/kubeconfig.h"
#endif

namespace gpuops::cli {

#ifdef GPUOPS_HAVE_SIMULATOR
namespace {

class SimControls : public core::SimulationControls {
 public:
  explicit SimControls(simulator::FakeCluster& c) : c_(c) {}
  void run() override { c_.run(); }
  void advance(core::Duration d) override { c_.advance(d); }
  void inject_fault(const core::FaultSpec& f) override {
    simulator::Fault fault;
    if (f.kind == "image-pull") fault.kind = simulator::FaultKind::kImagePull;
    else if (f.kind == "crash-loop") fault.kind = simulator::FaultKind::kCrashLoop;
    else if (f.kind == "never-ready") fault.kind = simulator::FaultKind::kNeverReady;
    else if (f.kind == "stuck-in-init") fault.kind = simulator::FaultKind::kStuckInInit;
    else if (f.kind == "failed") fault.kind = simulator::FaultKind::kFailed;
    else throw core::InputError("", 0, "fault.kind", "unknown fault \"" + f.kind + "\"");
    fault.node = f.node;
    fault.daemonset = f.daemonset;
    fault.reason = f.reason;
    c_.inject_fault(fault);
  }
  void clear_faults() override { c_.clear_faults(); }

 private:
  simulator::FakeCluster& c_;
};

}  // namespace

SimBackend open_simulator(const std::string& profile) {
  simulator::FakeCluster::Options o;
  o.profile = profile == "kubelet" ? simulator::KubeletProfile::kKubelet : simulator::KubeletProfile::kKwok;
  auto fake = std::make_unique<simulator::FakeCluster>(o);
  auto controls = std::make_shared<SimControls>(*fake);
  SimBackend b;
  b.controls = controls.get();
  b.keep = controls;
  b.cluster = std::move(fake);
  return b;
}
#else
SimBackend open_simulator(const std::string&) { throw UsageError("this gpuops was built without the simulator"); }
#endif

#ifdef GPUOPS_HAVE_REAL
std::unique_ptr<core::Cluster> open_real(const std::string& kubeconfig, const std::string& context,
                                         const std::string& ns, std::string* namespace_out) {
  real::LoadOptions lo;
  lo.kubeconfig = kubeconfig;
  lo.context = context;
  lo.namespace_ = ns;
  real::RestConfig rc = real::load_rest_config(lo);
  if (namespace_out) *namespace_out = rc.namespace_ == "default" ? "" : rc.namespace_;
  return std::make_unique<real::ApiCluster>(rc);
}
#else
std::unique_ptr<core::Cluster> open_real(const std::string&, const std::string&, const std::string&, std::string*) {
  throw UsageError("this gpuops was built without the real-cluster backend");
}
#endif

}  // namespace gpuops::cli
