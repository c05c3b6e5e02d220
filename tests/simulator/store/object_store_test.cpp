// ObjectStore: what the API server adds on writes, and the event stream.
#include <gtest/gtest.h>

#include <boost/json/serialize.hpp>
#include <set>

#include "../helpers.h"
#include "core/codec/decode.h"
#include "core/codec/documents.h"
#include "core/codec/encode.h"

namespace gpuops::simulator {
namespace {

using namespace testing;

TEST(ObjectStore, ResourceVersionIsOneClusterWideCounter) {
  FakeCluster c;
  ObjectStore& s = c.store();
  uint64_t v0 = s.resource_version();
  c.create_namespace(kNs);
  c.add_node(make_node("a"));
  EXPECT_EQ(s.resource_version(), v0 + 2);
  auto ns = std::get<core::Namespace>(*s.get(Kind::kNamespace, "", kNs));
  auto node = std::get<core::Node>(*s.get(Kind::kNode, "", "a"));
  EXPECT_EQ(ns.metadata.resource_version, std::to_string(v0 + 1));
  EXPECT_EQ(node.metadata.resource_version, std::to_string(v0 + 2));
  EXPECT_EQ(node.metadata.uid.size(), 36u);
  EXPECT_NE(node.metadata.uid, ns.metadata.uid);
  EXPECT_EQ(node.metadata.creation_timestamp, c.now());
  c.set_node_label("a", "x", "y");
  EXPECT_EQ(std::get<core::Node>(*s.get(Kind::kNode, "", "a")).metadata.resource_version, std::to_string(v0 + 3));
}

// Creating a node that exists is refused as kube-apiserver v1.37 refuses
// POST /api/v1/nodes of an existing name: 409, reason AlreadyExists,
// message `nodes "x" already exists` (measured; kubectl create prints
// `Error from server (AlreadyExists): nodes "x" already exists`). The node
// is left as it was: no write, no event.
TEST(ObjectStore, AddingANodeThatExistsIsAlreadyExists) {
  FakeCluster c;
  ObjectStore& s = c.store();
  c.add_node(make_node("x", {{"nvidia.com/gpu.deploy.driver", "true"}}));
  const uint64_t v = s.resource_version();
  try {
    c.add_node(make_node("x", {{"nvidia.com/gpu.deploy.driver", "false"}}));
    FAIL() << "a second add_node of x succeeded";
  } catch (const core::ClusterError& e) {
    EXPECT_EQ(e.http_status(), 409);
    EXPECT_STREQ(e.what(), "nodes \"x\" already exists");
  }
  EXPECT_EQ(s.resource_version(), v);
  EXPECT_EQ(std::get<core::Node>(*s.get(Kind::kNode, "", "x")).metadata.labels.at("nvidia.com/gpu.deploy.driver"),
            "true");
  // apply() of a Node is still the create-or-update.
  core::Node relabelled = make_node("x", {{"nvidia.com/gpu.deploy.driver", "false"}});
  c.apply({relabelled});
  EXPECT_EQ(std::get<core::Node>(*s.get(Kind::kNode, "", "x")).metadata.labels.at("nvidia.com/gpu.deploy.driver"),
            "false");
}

// pkg/registry/apps/daemonset/strategy.go: generation starts at 1 and is
// bumped by spec changes only; status writes do not bump it.
TEST(ObjectStore, DaemonSetGeneration) {
  FakeCluster c;
  c.create_namespace(kNs);
  ObjectStore& s = c.store();
  s.create(lab_daemonset("driver"));
  auto d = std::get<core::DaemonSet>(*s.get(Kind::kDaemonSet, kNs, "nvidia-driver-daemonset"));
  EXPECT_EQ(d.metadata.generation, 1);
  d.status.desired_number_scheduled = 7;
  s.update_status(d);
  d = std::get<core::DaemonSet>(*s.get(Kind::kDaemonSet, kNs, "nvidia-driver-daemonset"));
  EXPECT_EQ(d.metadata.generation, 1);
  EXPECT_EQ(d.status.desired_number_scheduled, 7);
  d.metadata.labels["team"] = "gpu";  // metadata only
  s.update(d);
  d = std::get<core::DaemonSet>(*s.get(Kind::kDaemonSet, kNs, "nvidia-driver-daemonset"));
  EXPECT_EQ(d.metadata.generation, 1);
  EXPECT_EQ(d.status.desired_number_scheduled, 7);  // a spec update keeps status
  d.min_ready_seconds = 5;
  s.update(d);
  d = std::get<core::DaemonSet>(*s.get(Kind::kDaemonSet, kNs, "nvidia-driver-daemonset"));
  EXPECT_EQ(d.metadata.generation, 2);
  EXPECT_EQ(d.metadata.annotations.at("deprecated.daemonset.template.generation"), "1");  // template unchanged
}

TEST(ObjectStore, ConflictsAndNotFound) {
  FakeCluster c;
  ObjectStore& s = c.store();
  c.add_node(make_node("a"));
  auto n = std::get<core::Node>(*s.get(Kind::kNode, "", "a"));
  c.set_node_label("a", "k", "v");  // n is now stale
  n.metadata.labels["other"] = "1";
  try {
    s.update(n);
    FAIL();
  } catch (const core::ClusterError& e) {
    EXPECT_EQ(e.http_status(), 409);
  }
  try {
    s.create(make_node("a"));
    FAIL();
  } catch (const core::ClusterError& e) {
    EXPECT_EQ(e.http_status(), 409);
    EXPECT_STREQ(e.what(), "nodes \"a\" already exists");
  }
  try {
    c.set_node_label("missing", "k", "v");
    FAIL();
  } catch (const core::ClusterError& e) {
    EXPECT_EQ(e.http_status(), 404);
    EXPECT_STREQ(e.what(), "nodes \"missing\" not found");
  }
  EXPECT_THROW(c.set_node_label("a", "bad key!", "v"), core::InputError);
  EXPECT_THROW(c.set_node_label("a", "k", "-bad-"), core::InputError);
}

// ValidateDaemonSetUpdate (pkg/apis/apps/validation/validation.go):
// spec.selector is immutable in apps/v1. An update that changes it, in
// matchLabels or matchExpressions, is InputError 422 on spec.selector; one
// that keeps it is stored.
TEST(ObjectStore, DaemonSetSelectorIsImmutable) {
  FakeCluster c;
  c.create_namespace(kNs);
  ObjectStore& s = c.store();
  s.create(lab_daemonset("driver"));
  auto d = std::get<core::DaemonSet>(*s.get(Kind::kDaemonSet, kNs, "nvidia-driver-daemonset"));
  core::DaemonSet changed = d;
  changed.selector.match_labels["extra"] = "x";
  changed.template_.labels["extra"] = "x";
  try {
    s.update(changed);
    FAIL();
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.http_status, 422);
    EXPECT_EQ(e.field(), "spec.selector");
    EXPECT_EQ(e.message(), "field is immutable");
  }
  changed = d;
  changed.selector.match_expressions.push_back(core::Requirement{"x", core::SelectorOperator::kExists, {}, ""});
  EXPECT_THROW(s.update(changed), core::InputError);
  d.metadata.labels["team"] = "gpu";
  s.update(d);
  EXPECT_EQ(
      std::get<core::DaemonSet>(*s.get(Kind::kDaemonSet, kNs, "nvidia-driver-daemonset")).metadata.labels.at("team"),
      "gpu");
}

// Objects keep every field they were given (raw), also through updates.
TEST(ObjectStore, KeepsUnmodelledFields) {
  FakeCluster c;
  c.create_namespace(kNs);
  auto docs = core::read_documents(
      "apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: ds\n  namespace: gpu-operator\nspec:\n"
      "  revisionHistoryLimit: 3\n  selector:\n    matchLabels:\n      app: ds\n  template:\n    metadata:\n"
      "      labels:\n        app: ds\n    spec:\n      priorityClassName: system-node-critical\n"
      "      containers:\n      - name: c\n        image: i\n        env:\n        - name: X\n          value: \"1\"\n",
      "ds.yaml");
  c.apply({core::decode_daemonset(docs.at(0))});
  c.settle();
  auto j = c.store().to_json(Kind::kDaemonSet, kNs, "ds");
  auto text = boost::json::serialize(j);
  EXPECT_NE(text.find("\"revisionHistoryLimit\":3"), std::string::npos) << text;
  EXPECT_NE(text.find("\"priorityClassName\":\"system-node-critical\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"env\""), std::string::npos) << text;
  EXPECT_EQ(j.at("metadata").at("generation").as_int64(), 1);
}

// events_since: one event per changed object, in resourceVersion order,
// ADDED for objects created after the version, MODIFIED otherwise, DELETED
// tombstones; 410 when the version is older than the kept tombstones.
TEST(ObjectStore, EventsSince) {
  FakeCluster::Options o;
  o.tombstone_capacity = 2;
  FakeCluster c(o);
  ObjectStore& s = c.store();
  c.add_node(make_node("a"));
  c.add_node(make_node("b"));
  uint64_t v = s.resource_version();
  c.set_node_label("a", "k", "v");
  c.add_node(make_node("c"));
  c.delete_node("b");
  auto ev = s.events_since(v);
  ASSERT_EQ(ev.size(), 3u);
  EXPECT_EQ(ev[0].type, EventType::kModified);
  EXPECT_EQ(std::get<core::Node>(ev[0].object).metadata.name, "a");
  EXPECT_EQ(ev[0].resource_version, v + 1);
  EXPECT_EQ(ev[1].type, EventType::kAdded);
  EXPECT_EQ(std::get<core::Node>(ev[1].object).metadata.name, "c");
  EXPECT_EQ(ev[2].type, EventType::kDeleted);
  EXPECT_EQ(std::get<core::Node>(ev[2].object).metadata.name, "b");
  EXPECT_EQ(ev[2].resource_version, v + 3);
  EXPECT_EQ(s.events_since(s.resource_version()).size(), 0u);
  EXPECT_EQ(s.events_since(v, Kind::kPod).size(), 0u);
  // Two more deletions push b's tombstone out: asking from before it is 410.
  c.delete_node("a");
  c.delete_node("c");
  try {
    s.events_since(v);
    FAIL();
  } catch (const core::ClusterError& e) {
    EXPECT_EQ(e.http_status(), 410);
  }
  EXPECT_EQ(s.events_since(v + 3).size(), 2u);
}

// A subscriber is given the writes it wants, in write order, each with the
// object as stored right after that write; the writes it does not want cost
// it nothing but the question.
TEST(ObjectStore, SubscribersAreGivenTheWritesTheyWant) {
  struct Recorder : StoreSubscriber {
    bool wants(Kind kind, const std::string& ns) const override {
      ++asked;
      return kind == Kind::kNode || (kind == Kind::kPod && ns == kNs);
    }
    void on_write(const StoreWrite& w) override {
      seen.push_back(std::string(event_type_name(w.type)) + " " + kind_name(w.kind) + " " +
                     std::to_string(w.resource_version) + " ns=" + w.namespace_());
      objects.push_back(core::encode(w.materialise()));
      if (auto* p = std::get_if<const PodRecord*>(&w.object)) pods.push_back(**p);
    }
    mutable int asked = 0;
    std::vector<std::string> seen;
    std::vector<boost::json::object> objects;
    std::vector<PodRecord> pods;
  };
  FakeCluster c;
  c.create_namespace(kNs);
  c.create_namespace("other");
  Recorder r;
  c.store().add_subscriber(&r);
  uint64_t v = c.store().resource_version();
  c.add_node(make_node("a", all_deploy_labels()));
  boost::json::object node_added = c.store().to_json(Kind::kNode, "", "a");
  c.apply({lab_daemonset("driver")});
  c.settle();  // the node is initialised, the driver's pod created, bound and Running
  c.store().create_generated_pod(c.store().list_pods(kNs).at(0)->base, "elsewhere-", "");
  core::Pod other;
  other.metadata.namespace_ = "other";
  other.metadata.name = "p";
  other.spec.containers.push_back(core::Container{"c", "i", {}, {}});
  c.store().create(other);
  c.store().remove_subscriber(&r);
  c.delete_node("a");

  ASSERT_FALSE(r.seen.empty());
  EXPECT_EQ(r.seen[0], "ADDED Node " + std::to_string(v + 1) + " ns=");
  EXPECT_EQ(r.objects[0], node_added);
  // Versions grow; no DaemonSet, ControllerRevision or pod of "other"; the
  // delete after remove_subscriber is not given.
  uint64_t last = 0;
  for (size_t i = 0; i < r.seen.size(); ++i) {
    EXPECT_EQ(r.seen[i].find("DaemonSet"), std::string::npos) << r.seen[i];
    EXPECT_EQ(r.seen[i].find("ControllerRevision"), std::string::npos) << r.seen[i];
    EXPECT_EQ(r.seen[i].find("ns=other"), std::string::npos) << r.seen[i];
    EXPECT_EQ(r.seen[i].find("DELETED"), std::string::npos) << r.seen[i];
    uint64_t rv = std::stoull(r.seen[i].substr(r.seen[i].find(' ', r.seen[i].find(' ') + 1)));
    EXPECT_GT(rv, last);
    last = rv;
  }
  EXPECT_GT(r.asked, static_cast<int>(r.seen.size()));
  // The driver's pod: created (Pending, unbound), bound, Running; each as it
  // was then, the record and its materialised pod alike.
  std::vector<PodRecord> driver;
  for (const auto& p : r.pods)
    if (p.name.rfind("nvidia-driver-daemonset-", 0) == 0) driver.push_back(p);
  ASSERT_GE(driver.size(), 3u);
  EXPECT_EQ(driver.front().node_name, "");
  EXPECT_NE(driver.front().status->phase, "Running");
  EXPECT_EQ(driver.back().node_name, "a");
  EXPECT_EQ(driver.back().status->phase, "Running");
  for (size_t i = 0, j = 0; i < r.objects.size(); ++i) {
    const auto& md = r.objects[i].at("metadata").as_object();
    if (!md.at("name").as_string().starts_with("nvidia-driver-daemonset-")) continue;
    EXPECT_EQ(r.objects[i], core::encode(core::Object(driver[j].pod())));
    EXPECT_EQ(md.at("resourceVersion").as_string(), std::to_string(driver[j].resource_version));
    ++j;
  }
  EXPECT_EQ(r.seen.back().substr(0, 9), "ADDED Pod");  // the generated one, in kNs
}

// list_pods_on_node is list_pods filtered by spec.nodeName, in the same
// order, with the index on (what the API server turns on) or off, through
// every write that sets, changes or drops a pod's nodeName.
TEST(ObjectStore, PodsOnNodeAreTheListFilteredByNodeName) {
  FakeCluster indexed, plain;
  indexed.store().index_pods_by_node_name();
  auto check = [&](const std::string& when) {
    for (FakeCluster* c : {&indexed, &plain}) {
      ObjectStore& s = c->store();
      for (const std::string& ns : {std::string(), std::string(kNs), std::string("other")}) {
        for (const std::string node : {"a", "b", "c", ""}) {
          std::vector<const PodRecord*> want;
          for (const PodRecord* p : s.list_pods(ns))
            if (p->node_name == node) want.push_back(p);
          EXPECT_EQ(s.list_pods_on_node(node, ns), want) << when << (c == &indexed ? " (indexed)" : " (not indexed)")
                                                         << " node '" << node << "' ns '" << ns << "'";
        }
      }
    }
  };
  auto both = [&](const std::function<void(FakeCluster&)>& fn) {
    fn(indexed);
    fn(plain);
  };
  both([](FakeCluster& c) {
    c.create_namespace(kNs);
    c.create_namespace("other");
    for (const char* n : {"a", "b", "c"}) c.add_node(make_node(n, all_deploy_labels()));
    c.apply({lab_daemonset("driver"), lab_daemonset("container-toolkit")});
  });
  check("created, unbound");
  both([](FakeCluster& c) { c.settle(); });
  check("bound");
  both([](FakeCluster& c) {
    // A pod created bound through the API, one in another namespace, and
    // an update through the API that keeps it.
    core::Pod p;
    p.metadata.namespace_ = "other";
    p.metadata.name = "static";
    p.spec.node_name = "b";
    p.spec.containers.push_back(core::Container{"c", "i", {}, {}});
    c.store().create(p);
    auto stored = std::get<core::Pod>(*c.store().get(Kind::kPod, "other", "static"));
    stored.metadata.labels["x"] = "y";
    c.store().update(stored);
    c.store().mutate_pod("other/static", [](core::Pod& pod) { pod.spec.node_name = "c"; });
  });
  check("API pods");
  both([](FakeCluster& c) {
    c.set_node_label("a", lab_catalog().by_name("driver")->label, "false");  // its driver pod deleted
    c.settle();
    c.delete_node("b");  // pod GC deletes its pods
    c.advance(std::chrono::seconds(120));
    c.settle();
  });
  check("deleted");
  both([](FakeCluster& c) { c.delete_namespace("other"); });
  check("namespace deleted");
  // An index turned on late is built from what is stored.
  plain.store().index_pods_by_node_name();
  check("indexed late");
}

// list_pods is in (namespace, name) order, as the API lists (by key in
// etcd), through creations in any order, deletions and a name created
// again: the order kept between lists (ObjectStore::merge_new_pods) is the
// order of the pods that exist. Namespace "a-b" sorts after "a" (by the
// pair, not by the joined key "a-b/..." < "a/...").
TEST(ObjectStore, PodListIsInNamespaceThenNameOrder) {
  FakeCluster c;
  ObjectStore& s = c.store();
  for (const char* ns : {"a", "a-b", "b"}) c.create_namespace(ns);
  std::set<std::pair<std::string, std::string>> want;
  auto create = [&](const std::string& ns, const std::string& name) {
    core::Pod p;
    p.metadata.namespace_ = ns;
    p.metadata.name = name;
    p.spec.containers.push_back(core::Container{"c", "i", {}, {}});
    s.create(p);
    want.insert({ns, name});
  };
  auto remove = [&](const std::string& ns, const std::string& name) {
    s.force_remove_pod(ns + "/" + name);
    want.erase({ns, name});
  };
  auto check = [&](const std::string& when) {
    for (const std::string& ns : {std::string(), std::string("a"), std::string("a-b")}) {
      std::vector<std::pair<std::string, std::string>> got, expected;
      for (const PodRecord* p : s.list_pods(ns)) got.emplace_back(p->namespace_(), p->name);
      for (const auto& k : want)
        if (ns.empty() || k.first == ns) expected.push_back(k);
      EXPECT_EQ(got, expected) << when << ", namespace '" << ns << "'";
    }
  };
  check("empty");
  for (const char* n : {"p-9", "p-10", "p-1", "q"}) create("b", n);
  for (const char* n : {"z", "m", "a"}) create("a-b", n);
  check("created in no order");
  create("a", "only");
  create("b", "p-5");
  check("created between lists");
  remove("b", "p-10");
  remove("a-b", "z");
  check("deleted");
  create("b", "p-10");  // again, a new pod of the same name
  check("created again");
  for (int i = 0; i < 40; ++i) create("a", "n-" + std::to_string(i));
  for (int i = 0; i < 40; ++i) remove("a", "n-" + std::to_string(i));
  check("more deleted than kept");
  create("a", "after");
  check("created after the deleted went");
}

// A whole pod list is materialised by two threads from 20,000 pods on:
// the same pods, each as PodRecord::pod gives it, in list order.
TEST(ObjectStore, LargeStateIsEveryPodInListOrder) {
  FakeCluster c;
  c.create_namespace(kNs);
  const int n = 25000;
  for (int i = n; i-- > 0;) {
    core::Pod p;
    p.metadata.namespace_ = kNs;
    p.metadata.name = "pod-" + std::to_string(i);
    p.metadata.labels["i"] = std::to_string(i);
    p.spec.node_name = "node-" + std::to_string(i % 7);
    p.spec.containers.push_back(core::Container{"c", "image-" + std::to_string(i), {}, {}});
    c.store().create(p);
  }
  core::ClusterState st = c.state(kNs);
  std::vector<const PodRecord*> recs = c.store().list_pods(kNs);
  ASSERT_EQ(st.pods.size(), static_cast<size_t>(n));
  ASSERT_EQ(recs.size(), static_cast<size_t>(n));
  for (size_t i = 0; i < recs.size(); ++i) {
    if (i) {
      ASSERT_LT(recs[i - 1]->name, recs[i]->name);
    }
    ASSERT_EQ(boost::json::serialize(core::encode(st.pods[i])), boost::json::serialize(core::encode(recs[i]->pod())))
        << i;
  }
  EXPECT_EQ(st.pods.front().metadata.name, "pod-0");
  EXPECT_EQ(st.pods.front().spec.containers.at(0).image, "image-0");
}

TEST(ObjectStore, GenerateName) {
  FakeCluster c;
  c.create_namespace(kNs);
  core::Pod p;
  p.metadata.namespace_ = kNs;
  p.raw = boost::json::object{{"metadata", boost::json::object{{"generateName", "mypod-"}}}};
  p.spec.containers.push_back(core::Container{"c", "i", {}, {}});
  auto created = std::get<core::Pod>(c.store().create(p));
  EXPECT_EQ(created.metadata.name.size(), 11u);
  EXPECT_EQ(created.metadata.name.rfind("mypod-", 0), 0u);
  EXPECT_EQ(created.status.phase, "Pending");
}

// Two clusters with the same seed make the same names and uids.
TEST(ObjectStore, Deterministic) {
  auto names = [] {
    FakeCluster c;
    c.create_namespace(kNs);
    c.add_node(make_node("a", all_deploy_labels()));
    c.apply({lab_daemonset("driver")});
    c.settle();
    auto p = c.state(kNs).pods.at(0);
    return p.metadata.name + " " + p.metadata.uid;
  };
  EXPECT_EQ(names(), names());
}

}  // namespace
}  // namespace gpuops::simulator
