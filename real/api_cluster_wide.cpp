// real/api_cluster_wide.cpp: the reads of real::ApiCluster across every
// namespace (real/api_cluster.h): where the GPU Operator's DaemonSets are, and
// the GPU workloads a driver needs gone. Each is one paged list, a 403 (a role
// bound to one namespace) leaving it unknown.
#include <boost/json.hpp>

#include <set>

#include "core/base/errors.h"
#include "core/codec/decode.h"
#include "core/codec/documents.h"
#include "core/codec/pod_list_reader.h"
#include "core/gpu_operator/gpu_node_rules.h"
#include "core/gpu_operator/operator_install.h"
#include "real/api_cluster.h"

namespace gpuops::real {

namespace json = boost::json;

std::vector<std::string> ApiCluster::operator_namespaces() {
  std::set<std::string> out;
  const std::string path = "/apis/apps/v1/daemonsets";
  try {
    list_items(
        path, "DaemonSet", nullptr,
        [&](core::Document& d) {
          core::DaemonSet ds = core::decode_daemonset_typed(d);
          if (core::operator_controlled(ds)) out.insert(ds.metadata.namespace_);
        },
        [&] { out.clear(); });
  } catch (const ApiError& e) {
    if (e.http_status() != 403) throw;
    return {};
  }
  return {out.begin(), out.end()};
}

std::optional<std::vector<core::Pod>> ApiCluster::gpu_workloads(const std::string& ns) {
  std::vector<core::Pod> out;
  auto keep = [&](core::Pod& p) {
    if (p.metadata.namespace_ != ns && core::holds_gpu(p)) out.push_back(std::move(p));
  };
  const std::string path = "/api/v1/pods";
  core::PodListPage fast;
  auto read_pods = [&](const std::string& body, std::string& cont, std::optional<std::string>& rv) {
    if (!core::read_pod_list_page(body, fast)) return false;
    for (core::Pod& p : fast.pods) keep(p);
    cont = std::move(fast.continue_token);
    rv = std::move(fast.resource_version);
    return true;
  };
  try {
    list_items(
        path, "Pod", nullptr,
        [&](core::Document& d) {
          core::Pod p = core::decode_pod_typed(d);
          keep(p);
        },
        [&] { out.clear(); }, read_pods,
        // The operands' own pods are read by the namespace's list already:
        // the server leaves them out (a field every kind indexes).
        {{"fieldSelector", "metadata.namespace!=" + ns}});
  } catch (const ApiError& e) {
    // A role that lists pods in its own namespace only: the GPU workloads
    // are unseen, which the analyses say (ClusterState::gpu_workloads).
    if (e.http_status() != 403) throw;
    return std::nullopt;
  }
  return out;
}

}  // namespace gpuops::real
