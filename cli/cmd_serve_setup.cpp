// cli/cmd_serve_setup.cpp: see cmd_serve_setup.h.
#include "cli/cmd_serve_setup.h"

#include <cstdio>
#include <filesystem>
#include <ostream>

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

namespace {

// Kept, the objects of a snapshot cost about this many times its size
// (cmd_serve_setup.h).
constexpr std::uintmax_t kKeptFieldsCost = 10;

std::string gib(std::uintmax_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / (1u << 30));
  return buf;
}

}  // namespace

std::uintmax_t snapshot_bytes(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::uintmax_t total = 0;
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) {
      auto n = fs::file_size(p, ec);
      if (!ec) total += n;
      continue;
    }
    if (!fs::is_directory(p, ec)) continue;
    for (fs::recursive_directory_iterator it(p, fs::directory_options::skip_permission_denied, ec), end;
         !ec && it != end; it.increment(ec)) {
      std::error_code fe;
      if (it->is_regular_file(fe)) {
        auto n = it->file_size(fe);
        if (!fe) total += n;
      }
    }
  }
  return total;
}

bool keep_every_served_field(std::uintmax_t bytes, std::uintmax_t memory_bytes, std::ostream& err) {
  const std::uintmax_t budget = memory_bytes / 2, need = bytes * kKeptFieldsCost;
  if (memory_bytes == 0 || need <= budget) return true;
  err << "gpuops serve: note: the snapshot (" << gib(bytes)
      << ") is served with the fields gpuops models (metadata, spec and status as `gpuops audit --snapshot` reads "
         "them), not every field it holds: keeping every field takes about "
      << kKeptFieldsCost << "x the snapshot (" << gib(need) << "), more than half of this machine's memory ("
      << gib(budget) << "). To see every field of some objects, serve a smaller snapshot of them (kubectl get ... "
      << "-l/--field-selector ... -o json)\n";
  return false;
}

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
