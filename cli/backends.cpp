#include "cli/backends.h"

#include "cli/cluster_options.h"
#include "core/base/errors.h"
#include "core/base/input_file.h"

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
  void inject_fault(const core::FaultSpec& f) override { c_.inject_fault(f); }
  void clear_faults() override { c_.clear_faults(); }
  void install_operator(const core::Catalog& catalog, const std::string& ns) override {
    c_.install_operator(catalog, ns);
  }
  void uninstall_operator() override { c_.uninstall_operator(); }
  void set_host(const core::HostSpec& host) override { c_.set_host(host); }

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

std::unique_ptr<core::SimulationControls> simulation_controls(simulator::FakeCluster& cluster) {
  return std::make_unique<SimControls>(cluster);
}
#else
SimBackend open_simulator(const std::string&) { throw UsageError("this gpuops was built without the simulator"); }
#endif

#ifdef GPUOPS_HAVE_REAL
std::unique_ptr<core::Cluster> open_real(const std::string& kubeconfig, const std::string& context,
                                         const std::string& ns, std::string* namespace_out,
                                         const ConnectionOverrides& overrides,
                                         const std::function<bool()>& interrupted) {
  const std::string& server = overrides.server;
  const std::string& token = overrides.token;
  real::LoadOptions lo;
  lo.kubeconfig = kubeconfig;
  lo.context = context;
  lo.namespace_ = ns;
  lo.server = server;
  real::RestConfig rc = real::load_rest_config(lo);
  // An override of either TLS flag replaces the cluster's CA and insecure
  // setting together (getCluster), then the two may not both be set.
  if (overrides.insecure_skip_tls_verify || !overrides.certificate_authority.empty()) {
    rc.insecure_skip_tls_verify = overrides.insecure_skip_tls_verify;
    rc.ca_data.clear();
    if (!overrides.certificate_authority.empty()) rc.ca_data = core::read_input_file(overrides.certificate_authority);
    if (rc.insecure_skip_tls_verify && !rc.ca_data.empty())
      throw core::InputError(overrides.certificate_authority, 0, "certificate-authority",
                             "specifying a root certificates file with the insecure flag is not allowed");
  }
  if (!server.empty()) {
    rc.path_prefix.clear();
    rc.server = server;
    real::parse_server(server,
                       !rc.ca_data.empty() || rc.insecure_skip_tls_verify || !rc.client_certificate_data.empty(), rc);
  }
  if (!token.empty()) {
    rc.token = token;
    rc.token_file.clear();
    rc.exec.reset();
    rc.username.clear();
    rc.password.clear();
  }
  if (namespace_out) *namespace_out = rc.namespace_ == "default" ? "" : rc.namespace_;
  real::ApiClusterOptions options;
  options.interrupted = interrupted;
  return std::make_unique<real::ApiCluster>(rc, options);
}
#else
std::unique_ptr<core::Cluster> open_real(const std::string&, const std::string&, const std::string&, std::string*,
                                         const ConnectionOverrides&, const std::function<bool()>&) {
  throw UsageError("this gpuops was built without the real-cluster backend");
}
#endif

}  // namespace gpuops::cli
