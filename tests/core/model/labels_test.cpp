// core::Labels, a sorted flat map, and the readers that build one from input
// in any order (LabelsBuilder: sorted once, a key given twice keeps its last
// value, as Go's map decoding does).
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include <string>

#include "core/cluster/must_gather.h"
#include "core/codec/decode.h"
#include "core/codec/documents.h"

using namespace gpuops;

namespace {

std::string key(int i) {
  std::string k = std::to_string(i);
  return "k" + std::string(6 - k.size(), '0') + k;  // k000000 ... sorted as the numbers
}

}  // namespace

TEST(Labels, BuilderSortsAndTheLastValueOfAKeyWins) {
  core::LabelsBuilder b;
  EXPECT_TRUE(b.take().empty());
  b.add("b", "1");
  b.add("a", "1");
  b.add("c", "1");
  b.add("b", "2");
  b.add("a", "2");
  b.add("b", "3");
  core::Labels l = b.take();
  EXPECT_EQ(l, (core::Labels{{"a", "2"}, {"b", "3"}, {"c", "1"}}));
  std::string order;
  for (const auto& [k, v] : l) order += k + "=" + v + " ";
  EXPECT_EQ(order, "a=2 b=3 c=1 ");
  EXPECT_TRUE(b.empty());
}

// As encoding/json decodes a map[string]string: every key, the last value of
// a key given twice; the order of the text does not matter.
TEST(Labels, JsonMapInAnyOrder) {
  core::Document doc;
  doc.value = boost::json::parse(
      R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n","labels":{"z":"1","a":"1","m":"","a":"2"}}})");
  core::Node n = core::decode_node(doc);
  EXPECT_EQ(n.metadata.labels, (core::Labels{{"a", "2"}, {"m", ""}, {"z", "1"}}));
}

// 200,000 labels in descending order, each of which would go to the front of
// the array if inserted one by one: read whole and in order.
TEST(Labels, ManyKeysInDescendingOrder) {
  constexpr int kCount = 200000;
  std::string text = R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n","labels":{)";
  std::string gather = "n\n";
  for (int i = kCount - 1; i >= 0; --i) {
    text += "\"" + key(i) + "\":\"v" + std::to_string(i) + "\"";
    if (i) text += ",";
    gather += "- " + key(i) + "=v" + std::to_string(i) + "\n";
  }
  text += "}}}";
  core::Document doc;
  doc.value = boost::json::parse(text);
  core::Node n = core::decode_node(doc);
  ASSERT_EQ(n.metadata.labels.size(), static_cast<size_t>(kCount));
  EXPECT_EQ(n.metadata.labels.begin()->first, key(0));
  EXPECT_EQ(n.metadata.labels.rbegin()->second, "v" + std::to_string(kCount - 1));
  EXPECT_EQ(n.metadata.labels.at(key(12345)), "v12345");

  auto nodes = core::parse_must_gather_labels(gather, "gpu_nodes.labels");
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].metadata.labels, n.metadata.labels);
}

// gpu_nodes.labels: a node's labels in any order, a key given twice keeps
// the last line's value.
TEST(Labels, MustGatherLabelsInAnyOrder) {
  auto nodes = core::parse_must_gather_labels("a\n- z=1\n- b=1\n- z=2\n\nb\nmap[y=1 x=2 y=3]\n", "gpu_nodes.labels");
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].metadata.labels, (core::Labels{{"b", "1"}, {"z", "2"}}));
  EXPECT_EQ(nodes[1].metadata.labels, (core::Labels{{"x", "2"}, {"y", "3"}}));
}
