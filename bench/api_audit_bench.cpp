// api_audit_bench (docs/PERFORMANCE.md): the audit over the Kubernetes API against the
// simulator's API front end, and the lab's kubectl-based script against the
// same served cluster.
//
//   api_audit_bench --nodes 1000 [--operands 5] [--runs 5] [--kubectl]
//
// Builds a FakeCluster with `--nodes` nodes and the first `--operands`
// operands of the gpu-operator catalog (bench_common.h), settles it, serves it
// with simulator::ApiServer on a loopback port and writes a kubeconfig. Then:
//  - `--runs` times: real::ApiCluster::state("gpu-operator") (three paged
//    lists, page size 500) + core::audit, counting the requests and response
//    body bytes (real::Client::requests_sent / bytes_received), wall time and
//    the CPU time of the calling thread (the client) and of the rest of the
//    process (the server, which runs on its own thread here). The median run
//    (by wall time) is reported.
//  - with --kubectl: data/lab/operand-audit.sh (bash, kubectl, jq; the copy
//    compiled into the binary) with KUBECONFIG set to the served cluster, once;
//    wall time and the CPU time of the script and its children (kubectl, jq).
//    Its output must equal the audit's, byte for byte.
// Prints `key=value` lines (scripts/bench.sh turns them into its table).
// The script knows the lab's five operands only: compare at --operands 5.
// Exit 1 when the outputs differ or the audit is not all OK.
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <cxxopts.hpp>

#include "bench/bench_common.h"
#include "core/analysis/analysis.h"
#include "core/lab/lab.h"
#include "real/api_cluster.h"
#include "real/kubeconfig.h"
#include "simulator/apiserver/api_server.h"
#include "simulator/fake_cluster.h"

namespace {

namespace core = gpuops::core;
namespace bench = gpuops::bench;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

double process_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

double children_cpu_s() {
  rusage ru{};
  getrusage(RUSAGE_CHILDREN, &ru);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  return s(ru.ru_utime) + s(ru.ru_stime);
}

struct Run {
  double wall_s = 0, cpu_s = 0, process_cpu_s = 0;
  int requests = 0;
  uint64_t bytes = 0;
  size_t nodes = 0, daemonsets = 0, pods = 0;
  std::string text;
  int exit_code = 0;
};

Run api_audit(const std::string& kubeconfig, const core::Catalog& catalog) {
  gpuops::real::LoadOptions lo;
  lo.kubeconfig = kubeconfig;
  gpuops::real::ApiCluster cluster(gpuops::real::load_rest_config(lo));
  Run r;
  auto t0 = Clock::now();
  double c0 = thread_cpu_s(), p0 = process_cpu_s();
  core::ClusterState state = cluster.state(bench::kNs);
  core::Report report = core::audit(state, catalog);
  r.cpu_s = thread_cpu_s() - c0;
  r.process_cpu_s = process_cpu_s() - p0;
  r.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  r.requests = cluster.client().requests_sent();
  r.bytes = cluster.client().bytes_received();
  r.nodes = state.nodes.size();
  r.daemonsets = state.daemonsets.size();
  r.pods = state.pods.size();
  r.text = report.text();
  r.exit_code = report.exit_code;
  return r;
}

Run kubectl_audit(const std::string& kubeconfig, const fs::path& dir) {
  fs::path script = dir / "operand-audit.sh", out = dir / "kubectl-audit.out";
  std::ofstream(script) << core::lab_script("operand-audit.sh");
  std::string cmd = "KUBECONFIG='" + kubeconfig + "' NAMESPACE=" + bench::kNs + " bash '" + script.string() + "' >'" +
                    out.string() + "'";
  Run r;
  auto t0 = Clock::now();
  double c0 = children_cpu_s(), p0 = process_cpu_s();
  int status = std::system(cmd.c_str());
  r.cpu_s = children_cpu_s() - c0;
  // This process only waits in system(): what it spent meanwhile is the
  // server answering kubectl's lists.
  r.process_cpu_s = process_cpu_s() - p0;
  r.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(out);
  std::stringstream ss;
  ss << in.rdbuf();
  r.text = ss.str();
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options options("api_audit_bench", "audit over the API vs the lab's kubectl script");
  options.add_options()("nodes", "nodes", cxxopts::value<int>()->default_value("1000"))(
      "operands", "operands of the gpu-operator catalog", cxxopts::value<int>()->default_value("5"))(
      "runs", "API audit runs (median reported)", cxxopts::value<int>()->default_value("5"))(
      "kubectl", "also run data/lab/operand-audit.sh")("h,help", "help");
  auto args = options.parse(argc, argv);
  if (args.count("help")) {
    std::cout << options.help();
    return 0;
  }
  const int nodes = args["nodes"].as<int>(), n_ops = args["operands"].as<int>(), runs = args["runs"].as<int>();
  auto ops = bench::operands(n_ops);
  core::Catalog catalog = bench::catalog(n_ops);

  auto setup0 = Clock::now();
  gpuops::simulator::FakeCluster cluster;
  cluster.create_namespace(bench::kNs);
  for (int i = 0; i < nodes; ++i) cluster.add_node(bench::node(i, ops));
  std::vector<core::Object> ds;
  for (const auto& op : ops) ds.emplace_back(bench::daemonset(op));
  cluster.apply(ds);
  cluster.settle();
  double setup_s = std::chrono::duration<double>(Clock::now() - setup0).count();

  fs::path dir = fs::temp_directory_path() / ("gpuops-api-audit-bench-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::string kubeconfig = (dir / "kubeconfig").string();
  gpuops::simulator::ApiServer server(cluster);
  server.write_kubeconfig(kubeconfig, bench::kNs);
  server.start();

  std::vector<Run> api;
  for (int i = 0; i < runs; ++i) api.push_back(api_audit(kubeconfig, catalog));
  std::sort(api.begin(), api.end(), [](const Run& a, const Run& b) { return a.wall_s < b.wall_s; });
  const Run& med = api[api.size() / 2];
  auto pages = [](size_t n) { return std::max<size_t>(1, (n + 499) / 500); };
  // The three paged lists of the namespace, the cluster-wide pod list that
  // finds the GPU workloads of other namespaces (ApiCluster::gpu_workloads,
  // fieldSelector metadata.namespace!=<ns>: here every pod is the
  // operands', so one empty page), and one request each for the GPU
  // Operator's ClusterPolicies and NVIDIADrivers (ApiCluster::state; a 404
  // without the CRDs, as here).
  constexpr size_t kOperatorLists = 2;
  size_t expected_requests = pages(med.nodes) + pages(med.daemonsets) + pages(med.pods) + pages(0) + kOperatorLists;

  std::cout << "nodes=" << nodes << "\noperands=" << n_ops << "\npods=" << med.pods << "\nsetup_s=" << setup_s
            << "\napi_requests=" << med.requests << "\napi_list_requests=6\napi_continue_pages=" << (med.requests - 6)
            << "\napi_requests_expected=" << expected_requests << "\napi_bytes=" << med.bytes
            << "\napi_wall_s=" << med.wall_s << "\napi_client_cpu_s=" << med.cpu_s
            << "\napi_server_cpu_s=" << med.process_cpu_s - med.cpu_s << "\napi_runs=" << runs << "\n";
  int rc = 0;
  if (med.exit_code != 0 || med.text.find(" MISSING ") != std::string::npos) {
    std::cerr << "api_audit_bench: the audit is not all OK\n";
    rc = 1;
  }
  if (static_cast<size_t>(med.requests) != expected_requests) {
    std::cerr << "api_audit_bench: " << med.requests << " requests, expected " << expected_requests << "\n";
    rc = 1;
  }
  if (args.count("kubectl")) {
    Run k = kubectl_audit(kubeconfig, dir);
    std::cout << "kubectl_wall_s=" << k.wall_s << "\nkubectl_cpu_s=" << k.cpu_s << "\nkubectl_exit=" << k.exit_code
              << "\nkubectl_same_output=" << (k.text == med.text ? "yes" : "no")
              << "\nkubectl_server_cpu_s=" << k.process_cpu_s << "\nratio_wall="
              << k.wall_s / med.wall_s
              // Like for like: each side's client CPU plus the server's CPU answering it.
              << "\nratio_cpu=" << (k.cpu_s + k.process_cpu_s) / med.process_cpu_s
              << "\nratio_client_cpu=" << k.cpu_s / med.cpu_s << "\n";
    if (k.text != med.text) {
      std::cerr << "api_audit_bench: the kubectl script's output differs from the audit's\n";
      rc = 1;
    }
  }
  server.stop();
  fs::remove_all(dir);
  return rc;
}
