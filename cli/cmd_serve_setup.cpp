// cli/cmd_serve_setup.cpp: see cmd_serve_setup.h.
#include "cli/cmd_serve_setup.h"

#include "cli/backends.h"
#include "cli/cluster_options.h"
#include "core/base/errors.h"
#include "core/gpu_operator/operator_install.h"
#include "core/lab/lab.h"
#include "core/lab/lab_operator.h"
#ifdef GPUOPS_HAVE_SIMULATOR
#include "simulator/fake_cluster.h"
#endif

namespace gpuops::cli {

std::string served_operator_release(const std::string& given) {
  if (given.empty()) return core::catalogued_releases().back();
  if (core::is_catalogued_release(given)) return given;
  throw UsageError("--operator: \"" + given + "\": supported values: " + core::catalogued_release_list());
}

std::vector<std::string> operator_value_joined(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--operator" && i + 1 < args.size() && !args[i + 1].empty() && args[i + 1][0] != '-') {
      out.push_back("--operator=" + args[++i]);
      continue;
    }
    out.push_back(args[i]);
  }
  return out;
}

#ifdef GPUOPS_HAVE_SIMULATOR
void set_up_served_scenario(simulator::FakeCluster& cluster, const core::Scenario& scenario) {
  cluster.create_namespace(scenario.namespace_);
  core::Scenario set_up = scenario;
  set_up.steps.clear();
  auto controls = simulation_controls(cluster);
  core::ScenarioResult result = core::run_scenario(set_up, cluster, controls.get(), core::RunOptions{});
  if (!result.error.empty()) throw core::ClusterError(scenario.file + ": " + result.error);
}

void set_up_served_lab_operator(simulator::FakeCluster& cluster, const std::string& release, const std::string& ns) {
  core::add_lab_nodes(cluster);
  core::Catalog catalog = core::load_catalog(core::operator_catalog_name(release));
  catalog.operator_mode = true;
  std::vector<std::string> nodes;
  for (const auto& n : core::lab_nodes()) nodes.push_back(n.metadata.name);
  auto controls = simulation_controls(cluster);
  core::start_lab_operator(cluster, *controls, catalog, ns, nodes);
}
#endif

}  // namespace gpuops::cli
