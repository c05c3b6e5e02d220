// real::Reflector against a scripted API server: list, watch from the list's
// resourceVersion, events applied, bookmarks followed, 410 Gone and a
// dropped watch relist after the backoff manager's wait (client-go
// reflector.go Run, ListAndWatch, watchHandler, isExpiredError), an event
// over 16 MiB is refused (apimachinery streaming.Decoder's maxBytes).
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "real/reflector.h"
#include "test_server.h"

namespace gpuops::real {
namespace {

namespace json = boost::json;
using namespace gpuops::real::testing;
using std::chrono::milliseconds;

// Keeps the names, as a store of metadata.name would.
struct NameSink : ReflectorSink {
  std::mutex mu;
  std::set<std::string> names, pending;
  std::vector<std::string> log;
  bool listing = false;
  static std::string name(const core::Document& d) {
    return std::string(d.value.at("metadata").at("name").as_string());
  }
  void begin_list() override {
    std::lock_guard<std::mutex> l(mu);
    pending.clear();
    listing = true;
    log.push_back("begin");
  }
  void end_list() override {
    std::lock_guard<std::mutex> l(mu);
    names.swap(pending);
    listing = false;
    log.push_back("end");
  }
  void add(const core::Document& d) override {
    std::lock_guard<std::mutex> l(mu);
    (listing ? pending : names).insert(name(d));
    log.push_back("add " + name(d));
  }
  void remove(const core::Document& d) override {
    std::lock_guard<std::mutex> l(mu);
    names.erase(name(d));
    log.push_back("remove " + name(d));
  }
};

std::string list_body(const std::vector<std::string>& names, const std::string& rv) {
  json::array items;
  for (const auto& n : names) items.push_back(json::object{{"metadata", json::object{{"name", n}}}});
  return json::serialize(
      json::object{{"kind", "NodeList"}, {"metadata", json::object{{"resourceVersion", rv}}}, {"items", items}});
}

std::string event(const std::string& type, const std::string& name, const std::string& rv) {
  json::object md{{"resourceVersion", rv}};
  if (!name.empty()) md["name"] = name;
  return json::serialize(json::object{{"type", type}, {"object", json::object{{"metadata", md}}}}) + "\n";
}

// The client configuration of `server` (its CA, token "t").
RestConfig config_for(const TestServer& server) {
  RestConfig c;
  parse_server(server.url(), true, c);
  c.ca_data = Pki::get().ca.cert;
  c.token = "t";
  return c;
}

// Backoffs short and not jittered, so that the order of requests is known.
ReflectorOptions quick() {
  ReflectorOptions o;
  o.initial_backoff = milliseconds(20);
  o.jitter = false;
  return o;
}

TEST(Reflector, ListsWatchesRelistsOnGoneAndBacksOffAfterADrop) {
  std::atomic<int> n{0};
  NameSink sink;
  TestServer server({}, [&](const HttpRequest&, Exchange& ex) {
    switch (n++) {
      case 0: return ex.reply(200, list_body({"n1"}, "10"));
      case 1:
        ex.begin_stream(200);
        ex.chunk(event("ADDED", "n2", "11"));
        ex.chunk(event("MODIFIED", "n1", "12"));
        ex.chunk(event("BOOKMARK", "", "13"));
        ex.chunk(event("DELETED", "n1", "14"));
        // The watch cache no longer has the resourceVersion: a Status in an ERROR event.
        ex.chunk(json::serialize(json::object{
                     {"type", "ERROR"},
                     {"object", json::parse(status_json(410, "Expired", "too old resource version: 14 (40)"))}}) +
                 "\n");
        return ex.end_stream();
      case 2: return ex.reply(200, list_body({"n3"}, "20"));
      case 3:
        ex.begin_stream(200);
        ex.chunk(event("ADDED", "n4", "21"));
        return ex.drop();  // mid-stream: a failure, then a backoff and a list
      case 4: return ex.reply(200, list_body({"n3", "n5"}, "30"));
      default:
        ex.begin_stream(200);  // nothing more happens; the server ends it
        std::this_thread::sleep_for(milliseconds(50));
        return ex.end_stream();
    }
  });
  RestConfig c = config_for(server);
  ReflectorOptions o = quick();
  o.watch_timeout = std::chrono::seconds(7);
  Reflector r(c, "/api/v1/nodes", sink, o);
  std::thread t([&] { r.run(); });
  for (int i = 0; i < 400 && n < 7; ++i) std::this_thread::sleep_for(milliseconds(10));
  r.stop();
  t.join();
  auto seen = server.seen();
  ASSERT_GE(seen.size(), 7u);
  EXPECT_EQ(seen[0].target, "/api/v1/nodes?limit=500");
  EXPECT_EQ(seen[1].target, "/api/v1/nodes?watch=1&allowWatchBookmarks=true&resourceVersion=10&timeoutSeconds=7");
  EXPECT_EQ(seen[2].target, "/api/v1/nodes?limit=500");  // 410: listed again after the backoff
  EXPECT_EQ(seen[3].target, "/api/v1/nodes?watch=1&allowWatchBookmarks=true&resourceVersion=20&timeoutSeconds=7");
  EXPECT_EQ(seen[4].target, "/api/v1/nodes?limit=500");  // the drop: listed again after the backoff
  EXPECT_EQ(seen[5].target, "/api/v1/nodes?watch=1&allowWatchBookmarks=true&resourceVersion=30&timeoutSeconds=7");
  // A watch the server closed is reopened from where it was, without a list.
  EXPECT_EQ(seen[6].target, "/api/v1/nodes?watch=1&allowWatchBookmarks=true&resourceVersion=30&timeoutSeconds=7");
  std::vector<std::string> want_log = {"begin",  "add n1", "end",    "add n2", "add n1", "remove n1", "begin",
                                       "add n3", "end",    "add n4", "begin",  "add n3", "add n5",    "end"};
  EXPECT_EQ(sink.log, want_log);
  EXPECT_EQ(sink.names, (std::set<std::string>{"n3", "n5"}));
  EXPECT_EQ(r.stats().lists, 3u);
  EXPECT_EQ(r.stats().expired, 1u);
  EXPECT_EQ(r.stats().failures, 1u);
  EXPECT_EQ(r.stats().events, 4u);
  EXPECT_TRUE(r.stats().synced);
  EXPECT_NE(r.last_error().find("watch /api/v1/nodes dropped mid-stream"), std::string::npos) << r.last_error();
}

TEST(Reflector, AnOptionalResourceWithoutItsCrdIsSyncedAndEmpty) {
  std::atomic<int> n{0};
  NameSink sink;
  TestServer server({}, [&](const HttpRequest&, Exchange& ex) {
    ++n;
    ex.reply(404, status_json(404, "NotFound", "the server could not find the requested resource"));
  });
  RestConfig c = config_for(server);
  ReflectorOptions o;
  o.optional = true;
  Reflector r(c, "/apis/nvidia.com/v1/clusterpolicies", sink, o);
  std::thread t([&] { r.run(); });
  for (int i = 0; i < 300 && !r.stats().synced; ++i) std::this_thread::sleep_for(milliseconds(10));
  r.stop();
  t.join();
  EXPECT_TRUE(r.stats().synced);
  EXPECT_EQ(n, 1);  // asked again only after max_backoff (30 s)
  // The failed list began and never ended; the empty store replaces the old.
  EXPECT_EQ(sink.log, (std::vector<std::string>{"begin", "begin", "end"}));
  EXPECT_EQ(r.stats().failures, 0u);
}

// A server whose watch always answers 410 used to be listed about 20 times a
// second for as long as it ran. Each relist now waits the backoff manager's
// step (wait.BackoffUntil): 20, 40, 80, 80, ... ms here, so about a dozen
// lists in one second, not hundreds.
TEST(Reflector, APermanent410IsListedAgainOnlyAfterTheBackoff) {
  std::atomic<int> lists{0};
  NameSink sink;
  TestServer server({}, [&](const HttpRequest& req, Exchange& ex) {
    if (std::string(req.target()).find("watch=1") == std::string::npos) {
      ++lists;
      return ex.reply(200, list_body({"n1"}, "10"));
    }
    ex.begin_stream(200);
    ex.chunk(json::serialize(json::object{
                 {"type", "ERROR"}, {"object", json::parse(status_json(410, "Expired", "too old resource version"))}}) +
             "\n");
    return ex.end_stream();
  });
  RestConfig c = config_for(server);
  ReflectorOptions o = quick();
  o.max_backoff = milliseconds(80);
  Reflector r(c, "/api/v1/nodes", sink, o);
  std::thread t([&] { r.run(); });
  std::this_thread::sleep_for(milliseconds(1000));
  r.stop();
  t.join();
  // 20 + 40 + 80 * k ms of waits in a second: at most 13 lists, whatever
  // the machine's speed (a slow machine lists fewer).
  EXPECT_LE(lists.load(), 14);
  EXPECT_GE(lists.load(), 2);
  EXPECT_GE(r.stats().expired, 1u);
}

// A watch event that never ends (a string without its closing quote) used
// to grow the exporter's memory without bound; it is refused past 16 MiB,
// as apimachinery's streaming decoder refuses "object to decode was longer
// than maximum allowed size", and the reflector lists again.
TEST(Reflector, AnEventOver16MiBIsRefused) {
  std::atomic<int> watches{0};
  NameSink sink;
  TestServer server({}, [&](const HttpRequest& req, Exchange& ex) {
    if (std::string(req.target()).find("watch=1") == std::string::npos) return ex.reply(200, list_body({"n1"}, "10"));
    if (watches++ > 0) {
      ex.begin_stream(200);
      return ex.end_stream();
    }
    ex.begin_stream(200);
    ex.chunk(R"({"type":"ADDED","object":{"metadata":{"name":")");
    const std::string mib(1 << 20, 'x');
    for (int i = 0; i < 20; ++i) ex.chunk(mib);
    return ex.end_stream();
  });
  RestConfig c = config_for(server);
  ReflectorOptions o = quick();
  Reflector r(c, "/api/v1/nodes", sink, o);
  std::thread t([&] { r.run(); });
  for (int i = 0; i < 500 && r.stats().failures == 0; ++i) std::this_thread::sleep_for(milliseconds(10));
  r.stop();
  t.join();
  EXPECT_EQ(r.stats().failures, 1u);
  EXPECT_NE(r.last_error().find("object to decode was longer than maximum allowed size (16777216 bytes)"),
            std::string::npos)
      << r.last_error();
  EXPECT_EQ(r.stats().events, 0u);
}

}  // namespace
}  // namespace gpuops::real
