// gpuops exporter: watches the cluster (real::ClusterCache: one list, then
// watches, per resource) and serves what the analyses say as Prometheus
// metrics on /metrics, with /healthz and /readyz (cli/http_endpoint.h).
//
// /healthz: 200 "ok" while the process serves (liveness). /readyz: 200 once
// every reflector has listed once and the metrics were computed from it,
// else 503 naming what has not synced (readiness: Prometheus is not sent to
// a half-filled cache). /metrics: the families of cli/exporter_metrics.h
// (absent until ready) and the exporter's own:
//   gpuops_exporter_synced                         1 once ready
//   gpuops_exporter_last_sync_timestamp_seconds    Unix time the metrics were
//       last computed from a synced cache
//   gpuops_exporter_lists_total{resource}          lists completed
//   gpuops_exporter_watch_events_total{resource}   watch events applied
//   gpuops_exporter_expired_total{resource}        410 Gone answers (relists)
//   gpuops_exporter_failures_total{resource}       failures retried after a
//       backoff
// The metrics are recomputed after a change, at most once per --min-interval
// (a burst of events is one recomputation). With --cluster NAME every series,
// the exporter's own included, carries cluster="NAME" (the families' constant
// labels), so a fleet's Prometheus federating several tells them apart
// (docs/EXPORTER.md, "A fleet").
#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <atomic>
#include <csignal>
#include <iostream>
#include <mutex>
#include <sstream>
#include <thread>

#include "cli/app.h"
#include "cli/cluster_options.h"
#include "cli/commands.h"
#include "cli/exporter_metrics.h"
#include "cli/http_endpoint.h"
#include "core/base/terminal.h"
#include "core/gpu_operator/operator_install.h"

#ifdef GPUOPS_HAVE_REAL
#include "real/cluster_cache.h"
#include "real/kubeconfig.h"
#endif

namespace gpuops::cli {

#ifdef GPUOPS_HAVE_REAL
namespace {

std::atomic<bool> g_stop{false};
extern "C" void on_stop_signal(int) { g_stop = true; }

// The resource of a reflector's path, for labels: its last segment.
std::string resource_of(const std::string& path) { return path.substr(path.rfind('/') + 1); }

struct Published {
  std::mutex mu;
  std::string text;  // the last computation's families in the text format
  bool ready = false;
  double last_sync = 0;  // Unix seconds
  std::string error;     // of the last computation, "" if it succeeded
};

std::vector<prometheus::MetricFamily> own_metrics(const real::ClusterCache& cache, const Published& p,
                                                  const prometheus::Labels& constant) {
  prometheus::Registry reg;
  prometheus::BuildGauge()
      .Name("gpuops_exporter_synced")
      .Help("1 once every watched resource has been listed and the metrics computed from it")
      .Labels(constant)
      .Register(reg)
      .Add({})
      .Set(p.ready ? 1 : 0);
  prometheus::BuildGauge()
      .Name("gpuops_exporter_last_sync_timestamp_seconds")
      .Help("Unix time the metrics were last computed from a synced cache")
      .Labels(constant)
      .Register(reg)
      .Add({})
      .Set(p.last_sync);
  auto& lists = prometheus::BuildCounter()
                    .Name("gpuops_exporter_lists_total")
                    .Help("Lists completed")
                    .Labels(constant)
                    .Register(reg);
  auto& events = prometheus::BuildCounter()
                     .Name("gpuops_exporter_watch_events_total")
                     .Help("Watch events (ADDED, MODIFIED, DELETED) applied")
                     .Labels(constant)
                     .Register(reg);
  auto& expired = prometheus::BuildCounter()
                      .Name("gpuops_exporter_expired_total")
                      .Help("410 Gone answers: the resourceVersion was too old and the resource was listed again")
                      .Labels(constant)
                      .Register(reg);
  auto& failures = prometheus::BuildCounter()
                       .Name("gpuops_exporter_failures_total")
                       .Help("List or watch failures, each retried after a backoff")
                       .Labels(constant)
                       .Register(reg);
  for (const auto& r : cache.reflectors()) {
    prometheus::Labels l{{"resource", resource_of(r->path())}};
    lists.Add(l).Increment(static_cast<double>(r->stats().lists.load()));
    events.Add(l).Increment(static_cast<double>(r->stats().events.load()));
    expired.Add(l).Increment(static_cast<double>(r->stats().expired.load()));
    failures.Add(l).Increment(static_cast<double>(r->stats().failures.load()));
  }
  return reg.Collect();
}

}  // namespace

int cmd_exporter(const Args& args, std::ostream& out, std::ostream& err) {
  cxxopts::Options opts(command_name("exporter"),
                        "Watch nodes, the namespace's DaemonSets and pods and the GPU Operator's resources, and serve "
                        "the audit, the matrix and diagnose's findings as Prometheus metrics on /metrics (with "
                        "/healthz and /readyz). In a pod it uses the in-cluster config; else the kubeconfig as "
                        "kubectl finds it. Runs until SIGTERM or SIGINT. docs/EXPORTER.md lists the metrics.");
  opts.add_options()("kubeconfig", "path to the kubeconfig", cxxopts::value<std::string>())(
      "context", "kubeconfig context to use", cxxopts::value<std::string>())(
      "n,namespace", "namespace of the operand DaemonSets (default: the context's, else gpu-operator)",
      cxxopts::value<std::string>())(
      "operands", "operand catalog: lab, gpu-operator, ... (default: lab; on a GPU Operator install, its version's)",
      cxxopts::value<std::string>())("listen", "address to serve on: HOST:PORT, [IPv6]:PORT or :PORT (all addresses)",
                                     cxxopts::value<std::string>()->default_value(":9402"))(
      "min-interval", "shortest time between two recomputations of the metrics, in milliseconds",
      cxxopts::value<int>()->default_value("500"))("watch-timeout",
                                                   "timeoutSeconds of each watch (the server ends it; it is reopened)",
                                                   cxxopts::value<int>()->default_value("300"))(
      "cluster", "label every series cluster=NAME (a fleet federated into one Prometheus; default: no such label)",
      cxxopts::value<std::string>())("h,help", "show this help");
  auto r = parse(opts, args);
  if (r.count("help")) {
    out << opts.help();
    return 0;
  }
  if (!r.unmatched().empty()) throw UsageError("unexpected argument \"" + r.unmatched()[0] + "\"");
  int min_interval = r["min-interval"].as<int>();
  int watch_timeout = r["watch-timeout"].as<int>();
  if (min_interval < 0 || min_interval > 600000) throw UsageError("--min-interval must be 0 to 600000");
  if (watch_timeout < 1 || watch_timeout > 3600) throw UsageError("--watch-timeout must be 1 to 3600");
  prometheus::Labels constant;
  if (r.count("cluster")) {
    std::string cluster = r["cluster"].as<std::string>();
    std::string problem = cluster_label_problem(cluster);
    if (!problem.empty()) throw UsageError("--cluster " + problem);
    constant.emplace("cluster", std::move(cluster));
  }
  std::string host;
  uint16_t port = 0;
  split_listen_address("--listen", r["listen"].as<std::string>(), host, port);
  bool catalog_given = r.count("operands") > 0;
  std::string operands = catalog_given ? r["operands"].as<std::string>() : "lab";
  if (catalog_given) core::load_catalog(operands);  // a typo fails before anything is contacted

  real::LoadOptions lo;
  if (r.count("kubeconfig")) lo.kubeconfig = r["kubeconfig"].as<std::string>();
  if (r.count("context")) lo.context = r["context"].as<std::string>();
  if (r.count("namespace")) lo.namespace_ = r["namespace"].as<std::string>();
  real::RestConfig rc = real::load_rest_config(lo);
  std::string ns = r.count("namespace") ? lo.namespace_ : rc.namespace_ == "default" ? "gpu-operator" : rc.namespace_;

  real::ReflectorOptions ro;
  ro.watch_timeout = std::chrono::seconds(watch_timeout);
  real::ClusterCache cache(rc, ns, ro);
  Published pub;

  raise_open_file_limit();
  HttpEndpoint endpoint(host, port, [&](const std::string& target) -> HttpAnswer {
    if (target == "/healthz" || target == "/livez") return {200, "text/plain; charset=utf-8", "ok\n"};
    if (target == "/readyz") {
      std::lock_guard<std::mutex> lock(pub.mu);
      if (pub.ready) return {200, "text/plain; charset=utf-8", "ok\n"};
      std::string why;
      for (const auto& rf : cache.reflectors())
        if (!rf->stats().synced) why += "not synced: " + resource_of(rf->path()) + "\n";
      if (why.empty()) why = pub.error.empty() ? "metrics not computed yet\n" : "analysis failed: " + pub.error + "\n";
      return {503, "text/plain; charset=utf-8", why};
    }
    if (target == "/metrics") {
      std::ostringstream os;
      std::lock_guard<std::mutex> lock(pub.mu);
      prometheus::TextSerializer().Serialize(os, own_metrics(cache, pub, constant));
      // The text exposition format, version 0.0.4.
      return {200, "text/plain; version=0.0.4; charset=utf-8", os.str() + pub.text};
    }
    return {404, "text/plain; charset=utf-8", "404 page not found\n"};
  });
  err << "gpuops exporter: watching " << rc.origin << " (namespace " << ns << "), serving on port " << endpoint.port()
      << "\n";
  err.flush();

  std::signal(SIGTERM, on_stop_signal);
  std::signal(SIGINT, on_stop_signal);
  cache.start();
  uint64_t seen = 0;
  bool computed = false;
  while (!g_stop) {
    uint64_t v = cache.wait_change(seen, std::chrono::milliseconds(500));
    if ((v == seen && computed) || !cache.synced()) continue;
    // A burst of events becomes one computation.
    std::this_thread::sleep_for(std::chrono::milliseconds(min_interval));
    seen = cache.version();
    try {
      // The analyses read the cache in place (no copy of 5,000 nodes' pods);
      // the families are serialized once here, not at every scrape.
      std::ostringstream text;
      cache.with_state([&](const core::ClusterState& state) {
        core::Catalog catalog = choose_catalog(core::detect_operator_install(state), operands, catalog_given);
        prometheus::TextSerializer().Serialize(text, state_metrics(state, catalog, !catalog_given, constant));
      });
      double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
      std::lock_guard<std::mutex> lock(pub.mu);
      pub.text = std::move(text).str();
      pub.ready = true;
      pub.last_sync = now;
      pub.error.clear();
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(pub.mu);
      pub.error = e.what();
      err << "gpuops exporter: " << core::escape_terminal(e.what(), true) << "\n";
    }
    computed = true;
  }
  err << "gpuops exporter: stopping\n";
  err.flush();
  out.flush();
  // The reflectors' watches end only at their timeout or next event: a
  // process told to stop does not wait for them.
  std::_Exit(0);
}
#else
int cmd_exporter(const Args&, std::ostream&, std::ostream&) {
  throw UsageError("this gpuops was built without the real-cluster backend");
}
#endif

}  // namespace gpuops::cli
