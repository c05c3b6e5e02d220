// gpuops diagnose gives the same findings on the simulator and on a kubectl
// dump of the same state.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "cli/app.h"
#include "core/codec/encode.h"
#include "core/diagnose/diagnose.h"
#include "core/lab/lab.h"
#include "simulator/fake_cluster.h"

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace gpuops;

TEST(DiagnoseParity, SimulatorAndDumpAgree) {
  simulator::FakeCluster sim;
  core::Catalog catalog = core::load_catalog("lab");
  fs::path dir = fs::temp_directory_path() / ("gpuops-parity-" + std::to_string(::getpid()));
  core::LabRunOptions lo;
  lo.dir = (dir / "lab").string();
  core::run_lab(sim, catalog, lo);
  // Something to diagnose beyond the lab: a crash-looping DCGM exporter and a
  // team taint on lab-node-1.
  simulator::Fault f;
  f.kind = simulator::FaultKind::kCrashLoop;
  f.daemonset = "nvidia-dcgm-exporter";
  sim.inject_fault(f);
  core::Taint t;
  t.key = "dedicated";
  t.value = "ml-team";
  t.effect = "NoExecute";  // evicts: NoSchedule alone would let the running pods stay
  sim.set_node_taints("lab-node-1", {t});
  sim.settle();

  core::ClusterState state = sim.state("gpu-operator");
  std::string from_sim = core::render_json(core::diagnose(state, catalog, {}));

  // The same state as `kubectl get nodes,daemonsets,pods -A -o json` prints it.
  json::array items;
  for (const auto& n : state.nodes) items.push_back(core::encode(n));
  for (const auto& d : state.daemonsets) items.push_back(core::encode(d));
  for (const auto& p : state.pods) items.push_back(core::encode(p));
  fs::path dump = dir / "dump.json";
  std::ofstream(dump) << json::serialize(json::object{{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}});

  std::ostringstream out, err;
  int code = cli::run({"diagnose", "--snapshot", dump.string(), "-o", "json", "--severity", "info"}, out, err);
  EXPECT_EQ(out.str(), from_sim + "\n");  // -o json ends its line, as every command's does
  EXPECT_EQ(code, 1);                     // the crash loop is an error finding
  EXPECT_NE(from_sim.find("untolerated-taint"), std::string::npos);
  EXPECT_NE(from_sim.find("dedicated=ml-team:NoExecute"), std::string::npos);
  EXPECT_NE(from_sim.find("CrashLoopBackOff"), std::string::npos);
  fs::remove_all(dir);
}
