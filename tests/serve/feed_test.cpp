// What watches and field-selected pod lists of gpuops serve return, against
// what the store holds: the watch feed (the store's writes kept for the open
// watches, ApiServer's StoreSubscriber), watches from an older
// resourceVersion (ObjectStore::events_since, which the feed does not
// touch), and the pods' spec.nodeName index behind `--field-selector
// spec.nodeName=<node>` lists and watches.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <sstream>
#include <thread>
#include <tuple>

#include "core/base/base64.h"
#include "core/codec/encode.h"
#include "core/gpu_operator/operands.h"
#include "core/model/quantity.h"
#include "real/client.h"
#include "real/kubeconfig.h"
#include "tests/serve/helpers.h"

namespace gpuops::serve_testing {
namespace {

namespace json = boost::json;
using simulator::EventType;
using simulator::FakeCluster;
using simulator::Kind;
using namespace std::chrono_literals;

const char* kNs = "gpu-operator";

const core::Catalog& lab() {
  static const core::Catalog c = core::load_catalog("lab");
  return c;
}

// The operand's DaemonSet as the GPU Operator shapes it: selector and pod
// label app=<app>, nodeSelector <deploy label>: "true", one container.
core::DaemonSet operand_daemonset(const core::Operand& op) {
  core::DaemonSet d;
  d.metadata.name = op.daemonset;
  d.metadata.namespace_ = kNs;
  d.selector.match_labels = {{"app", op.app}};
  d.template_.labels = {{"app", op.app}};
  d.template_.spec.node_selector = {{op.label, "true"}};
  core::Container c;
  c.name = op.container.empty() ? op.name : op.container;
  c.image = op.image;
  c.requests["memory"] = core::Quantity::parse("64Mi");
  d.template_.spec.containers.push_back(c);
  return d;
}

std::vector<core::Object> lab_daemonsets() {
  std::vector<core::Object> out;
  for (const auto& op : lab().operands) out.emplace_back(operand_daemonset(op));
  return out;
}

// Every lab node labelled for every operand.
void label_lab_nodes(FakeCluster& c) {
  for (int i = 0; i < 3; ++i)
    for (const auto& op : lab().operands) c.set_node_label("lab-node-" + std::to_string(i), op.label, "true");
}

core::Node gpu_node(const std::string& name) {
  core::Node n;
  n.metadata.name = name;
  n.metadata.labels["kubernetes.io/hostname"] = name;
  for (const auto& op : lab().operands) n.metadata.labels[op.label] = "true";
  return n;
}

std::unique_ptr<real::Client> client_of(const Served& s) {
  real::LoadOptions lo;
  lo.kubeconfig = s.kubeconfig;
  lo.getenv = [](const std::string&) { return std::optional<std::string>(); };
  return std::make_unique<real::Client>(real::load_rest_config(lo));
}

json::value get(real::Client& c, const std::string& path, std::vector<std::pair<std::string, std::string>> q = {}) {
  real::Request r;
  r.path = path;
  r.query = std::move(q);
  return c.send_json(r);
}

// Every write, as the API serves the object right after it: what a watch
// open at that moment must send (core::encode of the stored object).
struct Reference : simulator::StoreSubscriber {
  struct Write {
    EventType type;
    Kind kind;
    uint64_t rv;
    std::string json;
  };
  bool wants(Kind, const std::string&) const override { return true; }
  void on_write(const simulator::StoreWrite& w) override {
    writes.push_back(Write{w.type, w.kind, w.resource_version, json::serialize(core::encode(w.materialise()))});
  }
  // "TYPE <object JSON>" of each write of `kind`, in order.
  std::vector<std::string> of(Kind kind) const {
    std::vector<std::string> out;
    for (const auto& w : writes)
      if (w.kind == kind) out.push_back(std::string(simulator::event_type_name(w.type)) + " " + w.json);
    return out;
  }
  std::vector<Write> writes;
};

// A watch read on its own thread: "TYPE <object JSON>" per event.
class Watch {
 public:
  Watch(const Served& s, std::string path, std::vector<std::pair<std::string, std::string>> query)
      : client_(client_of(s)) {
    thread_ = std::thread([this, path = std::move(path), query = std::move(query)] {
      real::Request r;
      r.path = path;
      r.query = query;
      r.query.emplace_back("watch", "1");
      // Bounded, should a test stop early: a watch that gets nothing ends
      // only when the server ends it (or the server goes, see the tests'
      // ends).
      bool timeout = false;
      for (const auto& [k, v] : query) timeout = timeout || k == "timeoutSeconds";
      if (!timeout) r.query.emplace_back("timeoutSeconds", "20");
      try {
        client_->watch(
            r,
            [this](const json::object& ev) {
              std::lock_guard<std::mutex> lock(mu_);
              events_.push_back(std::string(ev.at("type").as_string()) + " " + json::serialize(ev.at("object")));
              return !stop_;
            },
            60s);
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(mu_);
        error_ = e.what();
      }
      done_ = true;
    });
  }
  ~Watch() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  // Waits until `n` events have come (or the stream ended, or 30 s).
  std::vector<std::string> wait_for(size_t n) {
    return wait_until([n](const std::vector<std::string>& evs) { return evs.size() >= n; });
  }
  // Waits until `done` holds for the events so far (or as wait_for).
  std::vector<std::string> wait_until(const std::function<bool(const std::vector<std::string>&)>& done) {
    for (auto end = std::chrono::steady_clock::now() + 30s; std::chrono::steady_clock::now() < end;) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (done(events_) || done_) return events_;
      }
      std::this_thread::sleep_for(5ms);
    }
    return events();
  }
  // Waits until the server ends the stream (timeoutSeconds).
  std::vector<std::string> wait_end() {
    thread_.join();
    return events();
  }
  std::vector<std::string> events() {
    std::lock_guard<std::mutex> lock(mu_);
    return events_;
  }
  std::string error() {
    std::lock_guard<std::mutex> lock(mu_);
    return error_;
  }

 private:
  std::unique_ptr<real::Client> client_;
  std::thread thread_;
  std::mutex mu_;
  std::vector<std::string> events_;
  std::string error_;
  std::atomic<bool> stop_{false}, done_{false};
};

std::string type_of(const std::string& event) { return event.substr(0, event.find(' ')); }

// Event lists equal, or where they first differ (not both lists whole).
::testing::AssertionResult same_events(const std::vector<std::string>& got, const std::vector<std::string>& want) {
  if (got == want) return ::testing::AssertionSuccess();
  size_t i = 0;
  while (i < got.size() && i < want.size() && got[i] == want[i]) ++i;
  auto at = [i](const std::vector<std::string>& v) { return i < v.size() ? v[i].substr(0, 600) : "(none)"; };
  return ::testing::AssertionFailure() << got.size() << " events, " << want.size() << " expected; first difference at "
                                       << i << ":\n  got:  " << at(got) << "\n  want: " << at(want);
}

uint64_t rv_of(const std::string& event) {
  json::value v = json::parse(event.substr(event.find(' ') + 1));
  return std::stoull(std::string(v.at("metadata").at("resourceVersion").as_string()));
}

// ---- the feed: live watches ----

// Objects that give each watch below an initial event, so a test knows its
// watches are open before it writes: a pod and a DaemonSet that no node fits.
void add_markers(FakeCluster& c) {
  core::Pod p;
  p.metadata.namespace_ = "other";
  p.metadata.name = "marker";
  p.spec.node_selector["example.com/none"] = "x";
  p.spec.containers.push_back(core::Container{"c", "i", {}, {}});
  c.store().create(p);
  core::DaemonSet d = operand_daemonset(lab().operands[0]);
  d.metadata.name = "marker";
  d.selector.match_labels = {{"app", "marker"}};
  d.template_.labels = {{"app", "marker"}};
  d.template_.spec.node_selector = {{"example.com/none", "x"}};
  c.apply({core::Object(d)});
}

// The lab's nodes, labelled, the namespaces and the markers, settled.
void lab_with_markers(FakeCluster& c) {
  label_lab_nodes(c);
  c.create_namespace(kNs);
  c.create_namespace("other");
  add_markers(c);
  c.settle();
}

// `ref` sees every write of the served store from now on (on its thread).
void subscribe(Served& s, Reference& ref) {
  s.server->with_cluster([&](FakeCluster& c) { c.store().add_subscriber(&ref); });
}

// Ends `ref`'s subscription; what it saw, read on the store's thread.
Reference unsubscribe(Served& s, Reference& ref) {
  Reference done;
  s.server->with_cluster([&](FakeCluster& c) {
    c.store().remove_subscriber(&ref);
    done = ref;
  });
  return done;
}

// `n` nodes of 64 KiB each (an annotation), added in one burst.
void add_big_nodes(Served& s, size_t n) {
  s.server->with_cluster([&](FakeCluster& c) {
    for (size_t i = 0; i < n; ++i) {
      core::Node node;
      node.metadata.name = "big-" + std::to_string(i);
      node.metadata.annotations["example.com/blob"] = std::string(64 * 1024, 'x');
      c.add_node(node);
    }
  });
}

std::vector<std::string> without_first(std::vector<std::string> v, size_t n) {
  v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(std::min(n, v.size())));
  return v;
}

// A watch open while the controllers write gets every write, in order, each
// object as the API served it right after that write (pods are kept as
// their compact records and encoded later: the JSON must be the same), and
// nothing of other kinds or namespaces.
TEST(ServeFeed, LiveWatchesGetEveryWriteAsStoredThen) {
  Served s(true, {}, lab_with_markers);
  Reference ref;
  subscribe(s, ref);
  Watch nodes(s, "/api/v1/nodes", {});
  Watch pods(s, "/api/v1/pods", {});
  Watch in_ns(s, "/api/v1/namespaces/other/pods", {});
  Watch dss(s, std::string("/apis/apps/v1/namespaces/") + kNs + "/daemonsets", {});
  // The initial ADDED events: the watches are open.
  ASSERT_EQ(nodes.wait_for(3).size(), 3u) << nodes.error();
  ASSERT_EQ(pods.wait_for(1).size(), 1u) << pods.error();
  ASSERT_EQ(in_ns.wait_for(1).size(), 1u) << in_ns.error();
  ASSERT_EQ(dss.wait_for(1).size(), 1u) << dss.error();
  s.server->with_cluster([&](FakeCluster&) { EXPECT_TRUE(ref.writes.empty()); });
  s.server->with_cluster([&](FakeCluster& c) {
    c.apply(lab_daemonsets());  // 15 pods: created, bound, Running
    c.settle();
    c.set_node_label("lab-node-1", lab().operands[0].label, "false");  // its driver pod deleted
    c.add_node(gpu_node("lab-node-3"));                                // 5 more pods
    c.settle();
    core::Pod p;
    p.metadata.namespace_ = "other";
    p.metadata.name = "static";
    p.spec.node_name = "lab-node-2";
    p.spec.containers.push_back(core::Container{"c", "i", {}, {}});
    c.store().create(p);
    c.store().remove(Kind::kPod, "other", "static", 0);
    // A name too long to travel with the uid in the feed's fixed space
    // (FeedEvent::ids): kept whole another way, the same JSON.
    p.metadata.name = "static-" + std::string(200, 'a');
    c.store().create(p);
    c.store().remove(Kind::kPod, "other", p.metadata.name, 0);
  });
  Reference done = unsubscribe(s, ref);
  auto want_pods = done.of(Kind::kPod);
  auto want_nodes = done.of(Kind::kNode);
  auto want_dss = done.of(Kind::kDaemonSet);
  ASSERT_GE(want_pods.size(), 3u * 20 + 4);
  ASSERT_FALSE(want_nodes.empty());
  ASSERT_FALSE(want_dss.empty());
  std::vector<std::string> want_other;
  for (const auto& w : want_pods)
    if (w.find("\"namespace\":\"other\"") != std::string::npos) want_other.push_back(w);
  ASSERT_GE(want_other.size(), 4u);  // the static pods' ADDED and DELETED, and what the marker got

  EXPECT_TRUE(same_events(without_first(pods.wait_for(1 + want_pods.size()), 1), want_pods));
  EXPECT_TRUE(same_events(without_first(in_ns.wait_for(1 + want_other.size()), 1), want_other));
  EXPECT_TRUE(same_events(without_first(dss.wait_for(1 + want_dss.size()), 1), want_dss));
  EXPECT_TRUE(same_events(without_first(nodes.wait_for(3 + want_nodes.size()), 3), want_nodes));
  // Nothing more came (a write given twice, or one of another namespace).
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(pods.events().size(), 1 + want_pods.size());
  EXPECT_EQ(in_ns.events().size(), 1 + want_other.size());
  s.server.reset();  // ends the watches
}

// The feed's events live in slots that are used again once delivered
// (BlockQueue): writes in batches, each delivered before the next, so that
// later batches fill the slots of earlier ones (a pod where a DaemonSet
// was, a node where a pod was, a short name where a long one was and the
// other way round). Every watch still gets exactly what the API served
// after each write: nothing of a slot's last use shows.
TEST(ServeFeed, EventsInReusedSlotsCarryNothingOver) {
  Served s(true, {}, lab_with_markers);
  Reference ref;
  subscribe(s, ref);
  Watch nodes(s, "/api/v1/nodes", {});
  Watch pods(s, "/api/v1/pods", {});
  Watch dss(s, std::string("/apis/apps/v1/namespaces/") + kNs + "/daemonsets", {});
  ASSERT_EQ(nodes.wait_for(3).size(), 3u) << nodes.error();
  ASSERT_EQ(pods.wait_for(1).size(), 1u) << pods.error();
  ASSERT_EQ(dss.wait_for(1).size(), 1u) << dss.error();
  // Runs `write` on the store, then waits until every watch has all of it.
  auto batch = [&](const std::function<void(FakeCluster&)>& write) {
    size_t n_pods = 0, n_nodes = 0, n_dss = 0;
    s.server->with_cluster([&](FakeCluster& c) {
      write(c);
      n_pods = ref.of(Kind::kPod).size();
      n_nodes = ref.of(Kind::kNode).size();
      n_dss = ref.of(Kind::kDaemonSet).size();
    });
    // At least: the server's clock may write more in between (compared
    // whole at the end).
    EXPECT_GE(pods.wait_for(1 + n_pods).size(), 1 + n_pods);
    EXPECT_GE(nodes.wait_for(3 + n_nodes).size(), 3 + n_nodes);
    EXPECT_GE(dss.wait_for(1 + n_dss).size(), 1 + n_dss);
  };
  auto static_pod = [](const std::string& name) {
    core::Pod p;
    p.metadata.namespace_ = "other";
    p.metadata.name = name;
    p.spec.node_name = "lab-node-2";
    p.spec.containers.push_back(core::Container{"c", "i", {}, {}});
    return p;
  };
  const std::string long_name = "long-" + std::string(120, 'x');  // name and uid over FeedEvent::kIds
  batch([&](FakeCluster& c) {                                     // DaemonSets, then their pods
    c.apply(lab_daemonsets());
    c.settle();
  });
  batch([&](FakeCluster& c) { c.store().create(static_pod(long_name)); });
  for (int round = 0; round < 3; ++round) {
    batch([&](FakeCluster& c) {
      c.store().create(static_pod("s" + std::to_string(round)));
      c.set_node_label("lab-node-1", lab().operands[0].label, round % 2 ? "true" : "false");
      c.settle();
      c.store().remove(Kind::kPod, "other", "s" + std::to_string(round), 0);
    });
    batch([&](FakeCluster& c) {
      c.store().remove(Kind::kPod, "other", long_name, 0);
      c.store().create(static_pod(long_name));
    });
  }
  Reference done = unsubscribe(s, ref);
  EXPECT_TRUE(same_events(without_first(pods.events(), 1), done.of(Kind::kPod)));
  EXPECT_TRUE(same_events(without_first(nodes.events(), 3), done.of(Kind::kNode)));
  EXPECT_TRUE(same_events(without_first(dss.events(), 1), done.of(Kind::kDaemonSet)));
  s.server.reset();
}

// BOOKMARK events never claim a version the watch has not been given every
// event up to: during a burst of writes (delivered in slices), each event
// comes after every bookmark with a lower version.
TEST(ServeFeed, BookmarksNeverRunAheadOfEvents) {
  simulator::ApiServer::Options o;
  o.bookmark_interval = 2ms;
  Served s(true, o, lab_with_markers);
  Reference ref;
  subscribe(s, ref);
  Watch pods(s, "/api/v1/pods", {{"allowWatchBookmarks", "true"}});
  ASSERT_GE(pods.wait_for(1).size(), 1u) << pods.error();
  s.server->with_cluster([&](FakeCluster& c) {
    c.apply(lab_daemonsets());
    for (int i = 3; i < 60; ++i) c.add_node(gpu_node("lab-node-" + std::to_string(i)));
    c.settle();
  });
  Reference done = unsubscribe(s, ref);
  auto want = done.of(Kind::kPod);
  ASSERT_GE(want.size(), 60u * 5 * 3);
  auto events_in = [](const std::vector<std::string>& evs) {
    size_t n = 0;
    for (const auto& e : evs) n += e.compare(0, 9, "BOOKMARK ") != 0;
    return n;
  };
  std::vector<std::string> evs =
      pods.wait_until([&](const std::vector<std::string>& e) { return events_in(e) >= 1 + want.size(); });
  std::vector<std::string> got;
  uint64_t bookmark = 0, last = 0;
  size_t bookmarks = 0;
  for (const auto& e : evs) {
    uint64_t rv = rv_of(e);
    if (type_of(e) == "BOOKMARK") {
      ++bookmarks;
      EXPECT_GE(rv, last) << "a bookmark behind an event it follows";
      bookmark = std::max(bookmark, rv);
      continue;
    }
    EXPECT_GT(rv, bookmark) << "an event after a bookmark of a later version: " << e.substr(0, 200);
    EXPECT_GT(rv, last);
    last = rv;
    got.push_back(e);
  }
  EXPECT_TRUE(same_events(without_first(got, 1), want));
  EXPECT_GT(bookmarks, 0u);
  s.server.reset();
}

// A burst of events many times the backlog bound, to a client that reads:
// the feed waits for the watch's writes instead of queueing the burst
// whole, so the watch gets all of it and is not closed as a slow client.
TEST(ServeFeed, AReadingWatchIsNotCutByABurstBeyondTheBacklogBound) {
  simulator::ApiServer::Options o;
  o.watch_backlog_hard_bytes = 4 << 20;
  Served s(true, o);
  Reference ref;
  subscribe(s, ref);
  Watch nodes(s, "/api/v1/nodes", {});
  ASSERT_EQ(nodes.wait_for(3).size(), 3u) << nodes.error();
  const size_t kEvents = 200;  // nodes of 64 KiB each, each written twice: 26 MB, six times the bound
  add_big_nodes(s, kEvents);
  Reference done = unsubscribe(s, ref);
  auto want = done.of(Kind::kNode);
  ASSERT_GE(want.size(), kEvents);
  std::vector<std::string> got = without_first(nodes.wait_for(3 + want.size()), 3);
  EXPECT_TRUE(same_events(got, want)) << nodes.error();
  EXPECT_EQ(nodes.error(), "");
  s.server.reset();
}

// The bytes of a watch: one HTTP chunk per event, each the serialisation of
// {"type", "object"} with the object as a GET serves it; for a Table watch,
// the object is the one-row Table that a Table list has for it (same
// columns, same row), at the event's resourceVersion.
TEST(ServeFeed, WatchLinesAreTheEventsSerialisedWhole) {
  Served s(true, {}, [](FakeCluster& c) { c.create_namespace(kNs); });
  const std::string table = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";
  auto request = [&](const std::string& target, bool as_table) {
    return "GET " + target + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + s.server->token() + "\r\n" +
           (as_table ? "Accept: " + table + "\r\n" : "") + "\r\n";
  };
  // Reads until `done` holds for what came (at most 10 s).
  auto read_until = [](RawClient& c, std::string& got, const std::function<bool(const std::string&)>& done) {
    for (auto end = std::chrono::steady_clock::now() + 10s;
         !done(got) && !c.eof && std::chrono::steady_clock::now() < end;)
      got += c.read(100ms);
  };
  // The chunks of a chunked body after the header.
  auto chunks = [](const std::string& raw) {
    std::vector<std::string> out;
    size_t at = raw.find("\r\n\r\n");
    if (at == std::string::npos) return out;
    for (at += 4; at < raw.size();) {
      size_t eol = raw.find("\r\n", at);
      if (eol == std::string::npos) break;
      size_t n = std::stoul(raw.substr(at, eol - at), nullptr, 16);
      if (n == 0 || eol + 2 + n + 2 > raw.size()) break;
      out.push_back(raw.substr(eol + 2, n));
      at = eol + 2 + n + 2;
    }
    return out;
  };
  const std::string target = std::string("/api/v1/namespaces/") + kNs + "/pods";
  RawClient plain(s.server->port()), tab(s.server->port());
  std::string plain_raw, tab_raw;
  for (auto [c, raw, as_table] : {std::tuple{&plain, &plain_raw, false}, std::tuple{&tab, &tab_raw, true}}) {
    c->handshake();
    c->write(request(target + "?watch=1", as_table));
    read_until(*c, *raw, [](const std::string& g) { return g.find("\r\n\r\n") != std::string::npos; });
    ASSERT_EQ(raw->rfind("HTTP/1.1 200", 0), 0u) << *raw;
  }
  s.server->with_cluster([](FakeCluster& c) {  // ADDED, then Running (the kubelet): MODIFIED
    core::Pod p;
    p.metadata.namespace_ = kNs;
    p.metadata.name = "p";
    p.spec.node_name = "lab-node-0";
    p.spec.containers.push_back(core::Container{"c", "i", {}, {}});
    c.store().create(p);
  });
  auto two = [&](const std::string& g) { return chunks(g).size() >= 2; };
  read_until(plain, plain_raw, two);
  read_until(tab, tab_raw, two);
  std::vector<std::string> plain_events = chunks(plain_raw), tab_events = chunks(tab_raw);
  ASSERT_EQ(plain_events.size(), 2u) << plain_raw;
  ASSERT_EQ(tab_events.size(), 2u) << tab_raw;

  auto client = client_of(s);
  json::value pod = get(*client, target + "/p");
  EXPECT_EQ(plain_events[1], json::serialize(json::object{{"type", "MODIFIED"}, {"object", pod}}) + "\n");
  EXPECT_EQ(plain_events[0], json::serialize(json::parse(plain_events[0])) + "\n");

  RawClient list(s.server->port());
  list.handshake();
  list.write(request(target, true));
  std::string list_raw;
  read_until(list, list_raw, [](const std::string& g) {
    size_t at = g.find("\r\n\r\n");
    if (at == std::string::npos) return false;
    size_t len = g.find("Content-Length: ");
    return len != std::string::npos && g.size() >= at + 4 + std::stoul(g.substr(len + 16));
  });
  json::value t = json::parse(list_raw.substr(list_raw.find("\r\n\r\n") + 4));
  ASSERT_EQ(t.at("rows").as_array().size(), 1u);
  json::object want{{"kind", "Table"},
                    {"apiVersion", "meta.k8s.io/v1"},
                    {"metadata", json::object{{"resourceVersion", pod.at("metadata").at("resourceVersion")}}},
                    {"columnDefinitions", t.at("columnDefinitions")},
                    {"rows", json::array{t.at("rows").at(0)}}};
  EXPECT_EQ(tab_events[1], json::serialize(json::object{{"type", "MODIFIED"}, {"object", want}}) + "\n");
  EXPECT_EQ(tab_events[0], json::serialize(json::parse(tab_events[0])) + "\n");
}

// A watch whose client stops reading holds the others back only for a
// while (ApiServer::Impl::kDrainWait): then the feed lets it go, the
// watches that read get everything, and Options' backlog bounds close it
// as they did before the feed waited for watches.
TEST(ServeFeed, AWatchThatDoesNotReadDoesNotStopTheOthers) {
  simulator::ApiServer::Options o;
  o.watch_backlog_bytes = 2 << 20;
  o.watch_stall = 500ms;
  Served s(true, o);
  Reference ref;
  subscribe(s, ref);
  RawClient stuck(s.server->port());
  stuck.handshake();
  stuck.write("GET /api/v1/nodes?watch=true HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + s.server->token() +
              "\r\n\r\n");
  std::string head = stuck.read(5s, 12);
  ASSERT_EQ(head, "HTTP/1.1 200");
  Watch reading(s, "/api/v1/nodes", {});
  ASSERT_EQ(reading.wait_for(3).size(), 3u) << reading.error();
  const size_t kEvents = 200;
  auto t0 = std::chrono::steady_clock::now();
  add_big_nodes(s, kEvents);
  Reference done = unsubscribe(s, ref);
  auto want = done.of(Kind::kNode);
  EXPECT_TRUE(same_events(without_first(reading.wait_for(3 + want.size()), 3), want)) << reading.error();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 20s);
  // Its backlog is over watch_backlog_bytes and nothing was written for
  // more than watch_stall: the next event closes it.
  std::this_thread::sleep_for(o.watch_stall + 200ms);
  s.server->with_cluster([&](FakeCluster& c) { c.add_node(gpu_node("one-more")); });
  std::string rest = stuck.read(20s);
  EXPECT_TRUE(stuck.eof) << "the watch that does not read is still open after " << rest.size() << " bytes";
  EXPECT_EQ(rest.find("\r\n0\r\n\r\n"), std::string::npos) << "closed as a slow client, not ended cleanly";
  s.server.reset();
}

// ---- watches from an older resourceVersion ----

// Writes made while no watch is open are not kept by the feed; a watch
// started afterwards at the version before them still gets them, coalesced
// as ObjectStore::events_since gives them: one event per changed object
// with the object as it is now (ADDED if created since, else MODIFIED),
// DELETED tombstones, in version order; then it ends (timeoutSeconds).
TEST(ServeFeed, AWatchFromAnOlderVersionGetsTheChangesSinceIt) {
  Served s(true, {}, [](FakeCluster& c) {
    label_lab_nodes(c);
    c.create_namespace(kNs);
    c.apply(lab_daemonsets());
    c.settle();
  });
  auto client = client_of(s);
  std::string rv0(get(*client, "/api/v1/pods").at("metadata").at("resourceVersion").as_string());
  s.server->with_cluster([&](FakeCluster& c) {
    c.set_node_label("lab-node-1", lab().operands[0].label, "false");  // a pod deleted
    c.add_node(gpu_node("lab-node-3"));                                // 5 pods created
    c.set_node_label("lab-node-2", "example.com/x", "1");              // a node changed
  });
  std::vector<std::string> want_pods, want_nodes;
  s.server->with_cluster([&](FakeCluster& c) {
    for (const auto& ev : c.store().events_since(std::stoull(rv0), Kind::kPod))
      want_pods.push_back(std::string(simulator::event_type_name(ev.type)) + " " +
                          json::serialize(core::encode(ev.object)));
    for (const auto& ev : c.store().events_since(std::stoull(rv0), Kind::kNode))
      want_nodes.push_back(std::string(simulator::event_type_name(ev.type)) + " " +
                           json::serialize(core::encode(ev.object)));
  });
  // One pod deleted (lab-node-1's driver), five added on lab-node-3, each
  // as it is now (bound and Running, not as created).
  ASSERT_EQ(want_pods.size(), 6u);
  std::vector<std::string> want_on3;
  size_t deleted = 0;
  for (const auto& w : want_pods) {
    if (type_of(w) == "DELETED") {
      ++deleted;
      EXPECT_NE(w.find("\"nodeName\":\"lab-node-1\""), std::string::npos);
      continue;
    }
    EXPECT_EQ(type_of(w), "ADDED");
    EXPECT_NE(w.find("\"nodeName\":\"lab-node-3\""), std::string::npos);
    EXPECT_NE(w.find("\"phase\":\"Running\""), std::string::npos);
    want_on3.push_back(w);
  }
  EXPECT_EQ(deleted, 1u);
  // The nodes: lab-node-1 and lab-node-2 modified, lab-node-3 added (its
  // initialisation coalesced into the one event).
  ASSERT_EQ(want_nodes.size(), 3u);
  Watch pods(s, "/api/v1/pods", {{"resourceVersion", rv0}, {"timeoutSeconds", "1"}});
  Watch nodes(s, "/api/v1/nodes", {{"resourceVersion", rv0}, {"timeoutSeconds", "1"}});
  EXPECT_TRUE(same_events(pods.wait_end(), want_pods));
  EXPECT_TRUE(same_events(nodes.wait_end(), want_nodes));
  // A field-selected one: the changes on that node only.
  Watch on3(s, "/api/v1/pods",
            {{"resourceVersion", rv0}, {"timeoutSeconds", "1"}, {"fieldSelector", "spec.nodeName=lab-node-3"}});
  EXPECT_TRUE(same_events(on3.wait_end(), want_on3));
}

// A version older than the tombstones kept: the watch gets one ERROR event,
// a 410 Expired Status, and ends (the watch cache's answer).
TEST(ServeFeed, AWatchFromAVersionPastTheTombstonesIsGone) {
  Served s(true);
  auto client = client_of(s);
  std::string rv0(get(*client, "/api/v1/nodes").at("metadata").at("resourceVersion").as_string());
  s.server->with_cluster([&](FakeCluster& c) {
    // The store keeps its last 4096 tombstones (FakeCluster default): push
    // rv0's neighbours out with more deletions than that.
    for (int i = 0; i < 4100; ++i) {
      core::Node n;
      n.metadata.name = "short-" + std::to_string(i);
      c.add_node(n);
      c.delete_node(n.metadata.name);
    }
  });
  Watch w(s, "/api/v1/nodes", {{"resourceVersion", rv0}, {"timeoutSeconds", "5"}});
  std::vector<std::string> got = w.wait_end();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(type_of(got[0]), "ERROR");
  json::value st = json::parse(got[0].substr(6));
  EXPECT_EQ(st.at("code"), 410);
  EXPECT_EQ(st.at("reason"), "Expired");
}

// ---- field-selected pod lists (the spec.nodeName index) ----

// The pods of namespace `ns` (all when empty) from a list without selectors,
// kept when `keep` says so.
json::array filtered(const json::value& full, const std::function<bool(const json::object&)>& keep) {
  json::array out;
  for (const auto& item : full.at("items").as_array())
    if (keep(item.as_object())) out.push_back(item);
  return out;
}

std::string node_of(const json::object& pod) {
  const json::value* v = pod.at("spec").as_object().if_contains("nodeName");
  return v ? std::string(v->as_string()) : "";
}

// upstream's continue token (storage.EncodeContinue) for a page that ended
// at `key`: base64.RawURLEncoding (URL alphabet, no padding).
std::string continue_token(const std::string& rv, const std::string& key) {
  json::object o;
  o["v"] = "meta.k8s.io/v1";
  o["rv"] = std::stoull(rv);
  o["start"] = key + std::string(1, '\0');
  std::string t = core::base64_encode(json::serialize(o));
  while (!t.empty() && t.back() == '=') t.pop_back();
  for (char& c : t) c = c == '+' ? '-' : c == '/' ? '_' : c;
  return t;
}

class FieldSelectedLists : public ::testing::Test {
 protected:
  FieldSelectedLists()
      : s(true, {},
          [](FakeCluster& c) {
            label_lab_nodes(c);
            c.create_namespace(kNs);
            c.create_namespace("other");
            c.apply(lab_daemonsets());
            c.settle();
            c.set_node_label("lab-node-2", lab().operands[1].label, "false");  // 4 pods there
            // Pods of another namespace: two bound to lab-node-1 (one a
            // sibling of the operands' names, one ordered before them), one
            // that no node fits (no nodeName).
            for (const char* name : {"a-static", "z-static"}) {
              core::Pod p;
              p.metadata.namespace_ = "other";
              p.metadata.name = name;
              p.metadata.labels["app"] = lab().operands[0].app;
              p.spec.node_name = "lab-node-1";
              p.spec.containers.push_back(core::Container{"c", "i", {}, {}});
              c.store().create(p);
            }
            core::Pod unfit;
            unfit.metadata.namespace_ = "other";
            unfit.metadata.name = "unfit";
            unfit.spec.node_selector["example.com/none"] = "x";
            unfit.spec.containers.push_back(core::Container{"c", "i", {}, {}});
            c.store().create(unfit);
            c.settle();
          }),
        client(client_of(s)) {}
  Served s;
  std::unique_ptr<real::Client> client;
};

// Every node (and none, and one that does not exist), every scope, with
// other terms and a label selector: the items, their order and the list's
// resourceVersion are the full list's filtered, byte for byte.
TEST_F(FieldSelectedLists, AreTheFullListFiltered) {
  for (const std::string& path : {std::string("/api/v1/pods"), std::string("/api/v1/namespaces/") + kNs + "/pods",
                                  std::string("/api/v1/namespaces/other/pods")}) {
    json::value full = get(*client, path);
    const std::string rv(full.at("metadata").at("resourceVersion").as_string());
    for (const std::string node : {"lab-node-0", "lab-node-1", "lab-node-2", "", "missing"}) {
      struct Case {
        std::string fields, labels;
        std::function<bool(const json::object&)> keep;
      };
      const std::string app = lab().operands[0].app;
      auto on = [node](const json::object& p) { return node_of(p) == node; };
      std::vector<Case> cases = {
          {"spec.nodeName=" + node, "", on},
          {"spec.nodeName==" + node, "", on},
          {"spec.nodeName=" + node + ",status.phase=Running", "",
           [&](const json::object& p) { return on(p) && p.at("status").at("phase") == "Running"; }},
          {"metadata.namespace=other,spec.nodeName=" + node, "",
           [&](const json::object& p) { return on(p) && p.at("metadata").at("namespace") == "other"; }},
          {"spec.nodeName=" + node + ",spec.nodeName!=lab-node-1", "",
           [&](const json::object& p) { return on(p) && node != "lab-node-1"; }},
          {"spec.nodeName=" + node, "app=" + app,
           [&](const json::object& p) {
             const json::value* l = p.at("metadata").as_object().if_contains("labels");
             const json::value* a = l ? l->as_object().if_contains("app") : nullptr;
             return on(p) && a && a->as_string() == app;
           }},
      };
      for (const auto& k : cases) {
        std::vector<std::pair<std::string, std::string>> q = {{"fieldSelector", k.fields}};
        if (!k.labels.empty()) q.emplace_back("labelSelector", k.labels);
        json::value got = get(*client, path, q);
        SCOPED_TRACE(path + "?fieldSelector=" + k.fields + "&labelSelector=" + k.labels);
        EXPECT_EQ(json::serialize(got.at("items")), json::serialize(filtered(full, k.keep)));
        EXPECT_EQ(got.at("metadata").at("resourceVersion").as_string(), rv);
        EXPECT_FALSE(got.at("metadata").as_object().contains("continue"));
        EXPECT_EQ(got.at("kind"), "PodList");
      }
    }
  }
  // The cases above are not empty where they should not be.
  EXPECT_EQ(get(*client, "/api/v1/pods", {{"fieldSelector", "spec.nodeName=lab-node-1"}}).at("items").as_array().size(),
            7u);
  EXPECT_EQ(get(*client, "/api/v1/pods", {{"fieldSelector", "spec.nodeName=lab-node-2"}}).at("items").as_array().size(),
            4u);
  EXPECT_EQ(get(*client, "/api/v1/pods", {{"fieldSelector", "spec.nodeName="}}).at("items").as_array().size(), 1u);
}

// Pages of a field-selected list (limit, continue) are the filtered list cut
// at the same places, with upstream's continue token of the last item, and
// no remainingItemCount (a selector is given).
TEST_F(FieldSelectedLists, PagesAndContinueTokensAreTheFilteredListCut) {
  for (const std::string& path : {std::string("/api/v1/pods"), std::string("/api/v1/namespaces/") + kNs + "/pods"}) {
    json::value full = get(*client, path);
    const std::string rv(full.at("metadata").at("resourceVersion").as_string());
    json::array want = filtered(full, [](const json::object& p) { return node_of(p) == "lab-node-1"; });
    json::array got;
    std::string cont;
    for (int page = 0; page < 10; ++page) {
      std::vector<std::pair<std::string, std::string>> q = {{"fieldSelector", "spec.nodeName=lab-node-1"},
                                                            {"limit", "2"}};
      if (!cont.empty()) q.emplace_back("continue", cont);
      json::value p = get(*client, path, q);
      const json::object& md = p.at("metadata").as_object();
      EXPECT_EQ(md.at("resourceVersion").as_string(), rv);
      EXPECT_FALSE(md.contains("remainingItemCount"));
      for (const auto& item : p.at("items").as_array()) got.push_back(item);
      if (!md.contains("continue")) break;
      const json::object& last = p.at("items").as_array().back().as_object().at("metadata").as_object();
      EXPECT_EQ(md.at("continue").as_string(), continue_token(rv, std::string(last.at("namespace").as_string()) + "/" +
                                                                      std::string(last.at("name").as_string())));
      cont = std::string(md.at("continue").as_string());
    }
    EXPECT_EQ(json::serialize(got), json::serialize(want)) << path;
    EXPECT_GT(want.size(), 2u);
  }
}

// A field-selected watch starts from the same pods: its synthetic ADDED
// events are the filtered list's items.
TEST_F(FieldSelectedLists, AWatchByNodeStartsFromTheFilteredList) {
  json::value full = get(*client, "/api/v1/pods");
  for (const std::string node : {"lab-node-1", ""}) {
    std::vector<std::string> want;
    for (const auto& item : filtered(full, [&](const json::object& p) { return node_of(p) == node; }))
      want.push_back("ADDED " + json::serialize(item));
    Watch w(s, "/api/v1/pods", {{"fieldSelector", "spec.nodeName=" + node}, {"timeoutSeconds", "1"}});
    EXPECT_TRUE(same_events(w.wait_end(), want)) << node;
  }
}

// kubectl per node: `--field-selector spec.nodeName=<node> -o wide` prints
// the rows of the full `-o wide` listing on that node (its Table).
TEST_F(FieldSelectedLists, KubectlPerNodePrintsTheFullListingsRowsOfThatNode) {
  Proc all = s.kubectl({"get", "pods", "-A", "-o", "wide", "--no-headers"});
  ASSERT_EQ(all.code, 0) << all.err;
  Proc one =
      s.kubectl({"get", "pods", "-A", "-o", "wide", "--no-headers", "--field-selector", "spec.nodeName=lab-node-1"});
  ASSERT_EQ(one.code, 0) << one.err;
  std::istringstream in(all.out);
  std::string line, want;
  while (std::getline(in, line)) {
    std::istringstream cols(line);
    std::vector<std::string> c;
    for (std::string w; cols >> w;) c.push_back(w);
    if (c.size() > 7 && c[7] == "lab-node-1") want += line + "\n";
  }
  EXPECT_EQ(one.out, want);
  EXPECT_NE(want, "");
}

}  // namespace
}  // namespace gpuops::serve_testing
