// serve_bench (docs/PERFORMANCE.md): the simulator behind `gpuops serve`.
//
//   ninja -C build serve_bench && build/bench/serve_bench
//
// BM_SettleServed/<nodes>/<operands>/<mode>: the settle of BM_SettleFromEmpty
// (simulator_bench.cpp: N nodes with every deploy label "true", the first
// `operands` operands of the gpu-operator catalog applied, then settle()
// timed) with
//   mode 0: no server (the bare simulator, the reference);
//   mode 1: a simulator::ApiServer serving the cluster (subscribed to the
//           store, I/O thread running), no watch open; the settle runs in
//           ApiServer::with_cluster, as every write of `gpuops serve` does;
//   mode 2: as 1, with one watch per served kind (namespaces, nodes, pods,
//           daemonsets, controllerrevisions; all namespaces, no selector, the
//           Table that `kubectl get -w` asks for) opened before the settle,
//           each read by its own thread (counting events, not decoding them).
// The CPU column is the settle's thread (Google Benchmark's default): what
// the simulator costs. Counters: `server_cpu_ms`, the CPU of the rest of the
// process (the server's I/O thread; the watch readers' own CPU is measured
// and left out) from the settle's start until the server has caught up
// (mode 2: every watch has received the last write of its kind; mode 1: a
// request sent after the settle is answered, i.e. the I/O thread has worked
// through what the settle posted); `catchup_ms`, the wall time from the end
// of the settle to that point; `watch_events`, events the watches received;
// `watches_cut`, watches the server closed before their last event (its
// backlog bound, ApiServer::Options::watch_backlog_hard_bytes).
//
// BM_FieldSelectorLists/<nodes>: N nodes x 5 operands settled and served;
// then one `GET /api/v1/namespaces/gpu-operator/pods?fieldSelector=
// spec.nodeName=<node>&limit=500` per node (what `kubectl get pods
// --field-selector spec.nodeName=<node>` sends, one kubectl per node), on one
// kept-alive connection (real::Client::send, the body not decoded). Each
// answer must hold that node's 5 pods. The CPU column is the client thread;
// `server_cpu_ms` is the rest of the process.
//
// Results: docs/PERFORMANCE-HISTORY.md ("The served simulator").
#include <benchmark/benchmark.h>

#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "bench/bench_common.h"
#include "real/client.h"
#include "real/kubeconfig.h"
#include "simulator/apiserver/api_server.h"
#include "simulator/fake_cluster.h"

namespace {

namespace core = gpuops::core;
namespace bench = gpuops::bench;
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using gpuops::simulator::ApiServer;
using gpuops::simulator::FakeCluster;
using gpuops::simulator::Kind;
using Clock = std::chrono::steady_clock;
using bench::kNs;

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

// As simulator_bench.cpp's populate: N nodes, the first `operands`
// operands applied; not settled.
void populate(FakeCluster& c, int nodes, int operands) {
  auto ops = bench::operands(operands);
  c.create_namespace(kNs);
  for (int n = 0; n < nodes; ++n) c.add_node(bench::node(n, ops));
  std::vector<core::Object> ds;
  for (const auto& op : ops) ds.emplace_back(bench::daemonset(op));
  c.apply(ds);
}

// A real::Client for the server (its CA and token, no kubeconfig file).
std::unique_ptr<gpuops::real::Client> client_for(const ApiServer& server) {
  gpuops::real::RestConfig rc;
  gpuops::real::parse_server(server.url(), true, rc);
  rc.ca_data = server.ca_pem();
  rc.token = server.token();
  return std::make_unique<gpuops::real::Client>(rc);
}

// One watch of a whole resource, read on its own thread: the events are
// counted and the resourceVersion of the last one kept, nothing decoded
// (a reader that keeps up at little cost, so what is measured is the
// server).
class WatchReader {
 public:
  WatchReader(const ApiServer& server, std::string path) : path_(std::move(path)) {
    thread_ = std::thread([this, port = server.port(), ca = server.ca_pem(), token = server.token()] {
      try {
        run(port, ca, token);
      } catch (const std::exception&) {
        // The server went away (its destructor cuts the watches).
      }
      cpu_s_ = thread_cpu_s();
      done_ = true;
    });
  }
  ~WatchReader() {
    if (thread_.joinable()) thread_.join();
  }
  bool open() const { return open_; }
  // The stream ended (the server closed it, or cut it).
  bool done() const { return done_; }
  uint64_t last_rv() const { return last_rv_; }
  size_t events() const { return events_; }
  // This thread's CPU so far (an estimate while it runs: read at each chunk).
  double cpu_s() const { return done_ ? cpu_s_.load() : chunk_cpu_s_.load(); }
  void join() {
    if (thread_.joinable()) thread_.join();
  }

 private:
  void run(uint16_t port, const std::string& ca, const std::string& token) {
    asio::io_context io;
    ssl::context ctx(ssl::context::tls_client);
    ctx.add_certificate_authority(asio::buffer(ca));
    ctx.set_verify_mode(ssl::verify_peer);
    beast::ssl_stream<beast::tcp_stream> s(io, ctx);
    beast::get_lowest_layer(s).connect(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
    s.handshake(ssl::stream_base::client);
    http::request<http::empty_body> req(http::verb::get, path_, 11);
    req.set(http::field::host, "127.0.0.1");
    req.set(http::field::authorization, "Bearer " + token);
    // kubectl get -w (its Table Accept).
    req.set(http::field::accept,
            "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,"
            "application/json");
    http::write(s, req);
    beast::flat_buffer buf;
    http::response_parser<http::buffer_body> p;
    p.body_limit(boost::none);
    http::read_header(s, buf, p);
    open_ = true;
    std::vector<char> data(64 * 1024);
    std::string carry;  // the last, incomplete line
    while (!p.is_done()) {
      p.get().body().data = data.data();
      p.get().body().size = data.size();
      beast::error_code ec;
      http::read_some(s, buf, p, ec);
      if (ec == http::error::need_buffer) ec = {};
      if (ec) return;
      size_t n = data.size() - p.get().body().size;
      carry.append(data.data(), n);
      size_t last = carry.rfind('\n');
      if (last == std::string::npos) continue;
      size_t lines = 0;
      for (size_t i = carry.size() - n; i < carry.size(); ++i) lines += carry[i] == '\n';
      size_t begin = last == 0 ? std::string::npos : carry.rfind('\n', last - 1);
      begin = begin == std::string::npos ? 0 : begin + 1;
      // The event's resourceVersion: the first one in its line (a Table's
      // metadata, or the object's).
      static const std::string kRv = "\"resourceVersion\":\"";
      size_t at = carry.find(kRv, begin);
      if (at != std::string::npos && at < last) last_rv_ = std::strtoull(carry.c_str() + at + kRv.size(), nullptr, 10);
      events_ += lines;
      carry.erase(0, last + 1);
      chunk_cpu_s_ = thread_cpu_s();
    }
  }

  std::string path_;
  std::thread thread_;
  std::atomic<bool> open_{false}, done_{false};
  std::atomic<uint64_t> last_rv_{0};
  std::atomic<size_t> events_{0};
  std::atomic<double> cpu_s_{0}, chunk_cpu_s_{0};
};

struct Watched {
  const char* path;
  Kind kind;
};
constexpr Watched kWatched[] = {
    {"/api/v1/namespaces?watch=1", Kind::kNamespace},
    {"/api/v1/nodes?watch=1", Kind::kNode},
    {"/api/v1/pods?watch=1", Kind::kPod},
    {"/apis/apps/v1/daemonsets?watch=1", Kind::kDaemonSet},
    {"/apis/apps/v1/controllerrevisions?watch=1", Kind::kControllerRevision},
};

// The resourceVersion of the last write to each watched kind.
std::vector<uint64_t> last_write_per_kind(gpuops::simulator::ObjectStore& store) {
  std::vector<uint64_t> out;
  for (const auto& w : kWatched) {
    uint64_t rv = 0;
    for (const auto& obj : store.list(w.kind)) {
      const auto& m = gpuops::simulator::meta_of(obj);
      if (!m.resource_version.empty()) rv = std::max<uint64_t>(rv, std::stoull(m.resource_version));
    }
    out.push_back(rv);
  }
  return out;
}

void BM_SettleServed(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0)), operands = static_cast<int>(state.range(1));
  const int mode = static_cast<int>(state.range(2));
  size_t pods = 0;
  double server_cpu = 0, catchup = 0, events = 0, cut = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto c = std::make_unique<FakeCluster>();
    populate(*c, nodes, operands);
    std::unique_ptr<ApiServer> server;
    std::vector<std::unique_ptr<WatchReader>> readers;
    std::unique_ptr<gpuops::real::Client> client;
    if (mode > 0) {
      server = std::make_unique<ApiServer>(*c, ApiServer::Options());
      server->start();
      client = client_for(*server);
      client->send(gpuops::real::Request{http::verb::get, "/version", {}, "", ""});
    }
    if (mode == 2) {
      for (const auto& w : kWatched) readers.push_back(std::make_unique<WatchReader>(*server, w.path));
      for (auto& r : readers)
        while (!r->open()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    double readers_cpu0 = 0;
    for (auto& r : readers) readers_cpu0 += r->cpu_s();
    double p0 = process_cpu_s(), t0 = thread_cpu_s();
    state.ResumeTiming();
    if (server) {
      server->with_cluster([](FakeCluster& fc) { fc.settle(); });
    } else {
      c->settle();
    }
    state.PauseTiming();
    double t1 = thread_cpu_s();
    auto settled = Clock::now();
    if (mode == 2) {
      std::vector<uint64_t> want;
      server->with_cluster([&](FakeCluster& fc) { want = last_write_per_kind(fc.store()); });
      for (size_t i = 0; i < readers.size(); ++i) {
        while (!readers[i]->done() && readers[i]->last_rv() < want[i])
          std::this_thread::sleep_for(std::chrono::microseconds(200));
        if (readers[i]->last_rv() < want[i]) ++cut;
      }
    } else if (mode == 1) {
      client->send(gpuops::real::Request{http::verb::get, "/version", {}, "", ""});
    }
    catchup += std::chrono::duration<double>(Clock::now() - settled).count();
    double readers_cpu = 0;
    for (auto& r : readers) readers_cpu += r->cpu_s();
    double t2 = thread_cpu_s();
    server_cpu += (process_cpu_s() - p0) - (t1 - t0) - (t2 - t1) - (readers_cpu - readers_cpu0);
    for (auto& r : readers) events += static_cast<double>(r->events());
    pods = c->store().pod_count();
    client.reset();
    server.reset();  // cuts the watches
    readers.clear();
    c.reset();
    state.ResumeTiming();
  }
  if (pods != static_cast<size_t>(nodes) * operands) state.SkipWithError("wrong pod count");
  const double n = static_cast<double>(state.iterations());
  state.counters["pods"] = static_cast<double>(pods);
  state.counters["server_cpu_ms"] = server_cpu * 1000 / n;
  state.counters["catchup_ms"] = catchup * 1000 / n;
  state.counters["watch_events"] = events / n;
  state.counters["watches_cut"] = cut / n;
  state.counters["peak_rss_MB"] = bench::peak_rss_mb();
}
BENCHMARK(BM_SettleServed)
    ->ArgNames({"nodes", "operands", "mode"})
    ->Args({1000, 16, 0})
    ->Args({1000, 16, 1})
    ->Args({1000, 16, 2})
    ->Args({5000, 16, 0})
    ->Args({5000, 16, 1})
    ->Args({5000, 16, 2})
    ->Args({65000, 16, 0})  // the largest production clusters (issue 49): bare and behind the API server
    ->Args({65000, 16, 1})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

void BM_FieldSelectorLists(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  FakeCluster c;
  populate(c, nodes, 5);
  c.settle();
  ApiServer server(c, ApiServer::Options());
  server.start();
  auto client = client_for(server);
  const std::string path = std::string("/api/v1/namespaces/") + kNs + "/pods";
  client->send(gpuops::real::Request{http::verb::get, path, {{"limit", "1"}}, "", ""});
  double server_cpu = 0;
  size_t bytes = 0;
  for (auto _ : state) {
    double p0 = process_cpu_s(), t0 = thread_cpu_s();
    for (int i = 0; i < nodes; ++i) {
      std::string node = bench::node_name(i);
      gpuops::real::Response r = client->send(gpuops::real::Request{
          http::verb::get, path, {{"fieldSelector", "spec.nodeName=" + node}, {"limit", "500"}}, "", ""});
      bytes += r.body.size();
      // Each node runs the 5 operands' pods: 5 items, each naming the node.
      size_t named = 0;
      for (size_t at = r.body.find("\"nodeName\":\"" + node + "\""); at != std::string::npos;
           at = r.body.find("\"nodeName\":\"" + node + "\"", at + 1))
        ++named;
      if (named != 5) state.SkipWithError(("wrong items for " + node).c_str());
    }
    server_cpu += (process_cpu_s() - p0) - (thread_cpu_s() - t0);
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["lists"] = nodes;
  state.counters["server_cpu_ms"] = server_cpu * 1000 / n;
  state.counters["bytes"] = static_cast<double>(bytes) / n;
}
BENCHMARK(BM_FieldSelectorLists)
    ->ArgNames({"nodes"})
    ->Arg(100)
    ->Arg(300)
    ->Arg(1000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
