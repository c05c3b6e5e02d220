// PodJsonEncoder: the JSON of a stored pod equals core::encode(record.pod()),
// byte for byte, for every shape of pod the store holds; so does its text
// (append_serialized) equal that JSON serialised.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "../helpers.h"
#include "core/codec/encode.h"
#include "simulator/store/pod_json.h"

namespace gpuops::simulator {
namespace {

using namespace testing;

// Every stored pod, encoded both ways; returns how many were compared.
size_t expect_same_json(const ObjectStore& s, PodJsonEncoder& enc) {
  size_t n = 0;
  auto sp = boost::json::make_shared_resource<boost::json::monotonic_resource>();
  for (const PodRecord* r : s.list_pods()) {
    std::string want = boost::json::serialize(core::encode(r->pod()));
    EXPECT_EQ(boost::json::serialize(enc.encode(*r)), want) << r->name;
    EXPECT_EQ(boost::json::serialize(enc.encode(*r, sp)), want) << r->name;
    std::string text = "x";  // appended to, not replaced
    enc.append_serialized(*r, text);
    EXPECT_EQ(text, "x" + want) << r->name;
    ++n;
  }
  return n;
}

TEST(PodJsonEncoder, EqualsEncodeOfThePod) {
  FakeCluster c;
  c.create_namespace(kNs);
  for (const char* n : {"a", "b", "c"}) c.add_node(make_node(n, all_deploy_labels()));
  std::vector<core::Object> ds;
  for (const auto& op : lab_catalog().operands) ds.emplace_back(lab_daemonset(op.name));
  c.apply(ds);
  c.settle();
  ObjectStore& s = c.store();
  // A pod written through the API: its own base, unmodelled fields in raw, a
  // generated name.
  core::Pod p;
  p.metadata.namespace_ = kNs;
  p.metadata.labels["app"] = "mine";
  p.raw = boost::json::object{
      {"metadata", boost::json::object{{"generateName", "mypod-"}, {"finalizers", boost::json::array{"x/y"}}}},
      {"spec", boost::json::object{{"priorityClassName", "high"}, {"nodeName", "b"}}}};
  p.spec.containers.push_back(core::Container{"c", "i", {}, {}});
  s.create(p);

  PodJsonEncoder enc;
  EXPECT_EQ(expect_same_json(s, enc), 16u);
  // Fewer prototypes than pods: pods share their template part and status.
  EXPECT_LT(enc.size(), 16u);

  // New per-pod values in prototypes already cached: a node lost (pods
  // re-created on the others), a label flip, graceful deletion
  // (deletionTimestamp, deletionGracePeriodSeconds).
  c.set_node_label("a", lab_catalog().operands.at(0).label, "false");
  c.settle();
  for (const PodRecord* r : s.list_pods())
    if (r->node_name == "c") {
      s.remove(Kind::kPod, kNs, r->name, 30);
      break;
    }
  EXPECT_EQ(expect_same_json(s, enc), 15u);
  // The shapes compared include each optional per-pod field.
  bool pinned = false, bound = false, graceful = false, generated = false;
  for (const PodRecord* r : s.list_pods()) {
    pinned = pinned || !r->pinned_node.empty();
    bound = bound || !r->node_name.empty();
    graceful = graceful || (r->deletion_timestamp && r->deletion_grace_period_seconds);
    generated = generated || r->name.rfind("mypod-", 0) == 0;
  }
  EXPECT_TRUE(pinned && bound && graceful && generated);
  c.delete_node("b");
  c.settle();
  expect_same_json(s, enc);
  enc.clear();
  EXPECT_EQ(enc.size(), 0u);
  expect_same_json(s, enc);
}

// A pod whose own fields hold the text the encoder marks its per-pod slots
// with (control characters, quotes, non-ASCII in an annotation) is still
// written as core::encode writes it.
TEST(PodJsonEncoder, TextOfAPodHoldingTheSlotMarker) {
  FakeCluster c;
  c.create_namespace(kNs);
  ObjectStore& s = c.store();
  for (std::string note : {std::string("\x01gpuops-pod-slot-0\x01"), std::string("\x01gpuops-pod-slot-32\x01"),
                           std::string("\"q\" \\ \u2028 \x7f")}) {
    core::Pod p;
    p.metadata.namespace_ = kNs;
    p.metadata.labels["app"] = "mine";
    p.raw = boost::json::object{{"metadata", boost::json::object{{"generateName", "mypod-"},
                                                                 {"annotations", boost::json::object{{"n", note}}}}},
                                {"spec", boost::json::object{{"nodeName", "b"}}}};
    p.spec.containers.push_back(core::Container{"c", "i", {}, {}});
    s.create(p);
  }
  PodJsonEncoder enc;
  EXPECT_EQ(expect_same_json(s, enc), 3u);
}

// Pods that share nothing (each created with its own template part, as pods
// imported from a real cluster each have their own status) keep at most
// kMaxPrototypes prototypes, and their JSON is still exact past the bound.
TEST(PodJsonEncoder, PrototypesAreBoundedWhenNoPodsShareThem) {
  FakeCluster c;
  c.create_namespace(kNs);
  c.add_node(make_node("a", {}));
  ObjectStore& s = c.store();
  const size_t pods = PodJsonEncoder::kMaxPrototypes + 100;
  for (size_t i = 0; i < pods; ++i) {
    core::Pod p;
    p.metadata.namespace_ = kNs;
    p.metadata.name = "p-" + std::to_string(i);
    p.metadata.labels["i"] = std::to_string(i);  // a template part of its own
    p.spec.containers.push_back(core::Container{"c", "i", {}, {}});
    s.create(p);
  }
  PodJsonEncoder enc;
  size_t most = 0;
  std::string text;
  for (const PodRecord* r : s.list_pods()) {
    enc.append_serialized(*r, text);
    most = std::max(most, enc.size());
  }
  EXPECT_EQ(most, PodJsonEncoder::kMaxPrototypes);
  EXPECT_EQ(enc.size(), 100u);  // cleared once, at the 4097th
  EXPECT_EQ(expect_same_json(s, enc), pods);
  EXPECT_LE(enc.size(), PodJsonEncoder::kMaxPrototypes);
}

}  // namespace
}  // namespace gpuops::simulator
