// gpuops serve under load, on loopback, bounded in count and time: clients
// that watch and list while others patch, as kubectl-like clients would.
// Afterwards nothing is lost (every patch is in the object and in every
// watch, in order) and the server's memory is back under a bound.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "real/client.h"
#include "real/kubeconfig.h"
#include "tests/serve/helpers.h"

namespace gpuops::serve_testing {
namespace {

namespace json = boost::json;
using http_verb = boost::beast::http::verb;
using namespace std::chrono_literals;

// This process's resident set, KiB (VmRSS of /proc/self/status).
long rss_kib() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

TEST(ServeLoad, WatchersAndListersWhilePatchersWrite) {
  constexpr int kPatchers = 4, kWatchers = 4, kListers = 2, kPatches = 100;
  Served s(true);
  real::LoadOptions lo;
  lo.kubeconfig = s.kubeconfig;
  lo.getenv = [](const std::string&) { return std::optional<std::string>(); };
  const real::RestConfig cfg = real::load_rest_config(lo);
  auto client = [&] { return std::make_unique<real::Client>(cfg); };
  long rss_before = rss_kib();

  std::string rv;
  {
    real::Request r;
    r.path = "/api/v1/nodes";
    rv = std::string(client()->send_json(r).at("metadata").at("resourceVersion").as_string());
  }
  auto key_of = [](int p) { return "load.example.com/p" + std::to_string(p); };
  auto node_of = [](int p) { return "lab-node-" + std::to_string(p % 3); };

  // Each watcher records, per patcher key, the values it saw in order.
  std::vector<std::map<std::string, std::vector<int>>> seen(kWatchers);
  std::atomic<int> watching{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < kWatchers; ++w) {
    threads.emplace_back([&, w] {
      auto c = client();
      real::Request r;
      r.path = "/api/v1/nodes";
      r.query = {{"watch", "1"}, {"resourceVersion", rv}};
      ++watching;
      c->watch(
          r,
          [&](const json::object& ev) {
            const auto* labels = ev.at("object").at("metadata").as_object().if_contains("labels");
            if (labels) {
              for (int p = 0; p < kPatchers; ++p) {
                const auto* v = labels->as_object().if_contains(key_of(p));
                if (!v) continue;
                int n = std::stoi(std::string(v->as_string()));
                auto& vals = seen[w][key_of(p)];
                if (vals.empty() || vals.back() != n) vals.push_back(n);
              }
            }
            // Done once every key reached its last value.
            for (int p = 0; p < kPatchers; ++p) {
              auto it = seen[w].find(key_of(p));
              if (it == seen[w].end() || it->second.back() != kPatches) return true;
            }
            return false;
          },
          60s);
    });
  }
  while (watching < kWatchers) std::this_thread::sleep_for(1ms);
  std::this_thread::sleep_for(200ms);  // the watches are open

  std::atomic<bool> writing{true};
  std::atomic<int> lists{0};
  for (int l = 0; l < kListers; ++l) {
    threads.emplace_back([&] {
      auto c = client();
      real::Request r;
      r.path = "/api/v1/nodes";
      for (int i = 0; i < 2000 && writing; ++i) {
        EXPECT_EQ(c->send_json(r).at("items").as_array().size(), 3u);
        ++lists;
      }
    });
  }
  std::vector<std::thread> patchers;
  for (int p = 0; p < kPatchers; ++p) {
    patchers.emplace_back([&, p] {
      auto c = client();
      for (int i = 1; i <= kPatches; ++i) {
        real::Request r;
        r.method = http_verb::patch;
        r.path = "/api/v1/nodes/" + node_of(p);
        r.content_type = "application/merge-patch+json";
        r.body = json::serialize(
            json::object{{"metadata", json::object{{"labels", json::object{{key_of(p), std::to_string(i)}}}}}});
        c->send(r);
      }
    });
  }
  for (auto& t : patchers) t.join();
  writing = false;
  for (auto& t : threads) t.join();

  // Every patch is in the object...
  auto c = client();
  for (int p = 0; p < kPatchers; ++p) {
    real::Request r;
    r.path = "/api/v1/nodes/" + node_of(p);
    EXPECT_EQ(c->send_json(r).at("metadata").at("labels").at(key_of(p)).as_string(), std::to_string(kPatches));
  }
  // ... and in every watch, each value once, in order.
  std::vector<int> all(kPatches);
  for (int i = 0; i < kPatches; ++i) all[i] = i + 1;
  for (int w = 0; w < kWatchers; ++w)
    for (int p = 0; p < kPatchers; ++p) EXPECT_EQ(seen[w][key_of(p)], all) << "watcher " << w << " " << key_of(p);
  EXPECT_GT(lists.load(), 0);
  // The server's memory is back under a bound once the clients are gone
  // (the watch queues and list answers freed): 64 MiB above the start.
  // Not under AddressSanitizer, whose quarantine keeps up to 256 MB of freed
  // memory resident on purpose.
#if !defined(__SANITIZE_ADDRESS__)
  std::this_thread::sleep_for(200ms);
  long rss_after = rss_kib();
  EXPECT_LT(rss_after - rss_before, 64 * 1024) << "RSS " << rss_before << " -> " << rss_after << " KiB";
#else
  (void)rss_before;
#endif
}

}  // namespace
}  // namespace gpuops::serve_testing
