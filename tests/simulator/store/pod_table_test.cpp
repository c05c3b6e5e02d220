// PodTable: the object store's pods by "namespace/name", held as a
// node-based map held them (std::unordered_map: an entry keeps its address
// until erased, try_emplace moves nothing when the key is taken).
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "simulator/store/object_store.h"
#include "simulator/store/pod_table.h"

namespace gpuops::simulator {
namespace {

PodRecord record(const std::shared_ptr<const core::Pod>& base, const std::string& name) {
  PodRecord r;
  r.base = base;
  r.name = name;
  return r;
}

TEST(PodTable, EntriesKeepTheirAddressAndContentsAsTheTableGrows) {
  auto base = std::make_shared<const core::Pod>();
  PodTable t;
  std::map<std::string, PodTable::Entry*> at;
  for (int i = 0; i < 5000; ++i) {
    std::string name = "nvidia-device-plugin-daemonset-" + std::to_string(i);
    auto [e, fresh] = t.try_emplace("gpu-operator/" + name, record(base, name));
    ASSERT_TRUE(fresh);
    at[e->first] = e;
  }
  EXPECT_EQ(t.size(), 5000u);
  for (const auto& [key, e] : at) {
    EXPECT_EQ(t.find(key), e);
    EXPECT_EQ(e->first, key);
    EXPECT_EQ("gpu-operator/" + e->second.name, key);
  }
  size_t visited = 0;
  for (const auto& [key, e] : t) {
    EXPECT_EQ(key.text, e->first);
    EXPECT_EQ(at.at(std::string(key.text)), e);
    ++visited;
  }
  EXPECT_EQ(visited, 5000u);
  EXPECT_EQ(t.find("gpu-operator/nvidia-device-plugin-daemonset-5000"), nullptr);
  EXPECT_FALSE(t.contains("gpu-operator/"));
}

// The store's generated names retry with the same buffer when a name is
// taken (create_generated_pod): a taken key must be left as it was given.
TEST(PodTable, ATakenKeyIsNeitherStoredNorMovedFrom) {
  auto base = std::make_shared<const core::Pod>();
  PodTable t;
  std::string key = "gpu-operator/a-name-longer-than-the-short-string-buffer";
  auto [first, fresh] = t.try_emplace(std::string(key), record(base, "one"));
  ASSERT_TRUE(fresh);
  std::string again = key;
  PodRecord other = record(base, "two");
  auto [same, fresh2] = t.try_emplace(std::move(again), std::move(other));
  EXPECT_FALSE(fresh2);
  EXPECT_EQ(same, first);
  EXPECT_EQ(again, key);         // NOLINT(bugprone-use-after-move): not moved from, as documented
  EXPECT_EQ(other.name, "two");  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(first->second.name, "one");
  auto [same2, fresh3] = t.try_emplace(std::move(again));
  EXPECT_FALSE(fresh3);
  EXPECT_EQ(same2, first);
  EXPECT_EQ(again, key);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(t.size(), 1u);
}

TEST(PodTable, EraseRemovesOnlyThatEntryAndDestroysIt) {
  auto base = std::make_shared<const core::Pod>();
  PodTable t;
  for (int i = 0; i < 3000; ++i) t.try_emplace("ns/p" + std::to_string(i), record(base, "p" + std::to_string(i)));
  EXPECT_EQ(base.use_count(), 3001);
  for (int i = 0; i < 3000; i += 2) t.erase(t.find("ns/p" + std::to_string(i)));
  EXPECT_EQ(t.size(), 1500u);
  EXPECT_EQ(base.use_count(), 1501);
  for (int i = 0; i < 3000; ++i) {
    const PodTable::Entry* e = t.find("ns/p" + std::to_string(i));
    if (i % 2 == 0) {
      EXPECT_EQ(e, nullptr) << i;
    } else {
      ASSERT_NE(e, nullptr) << i;
      EXPECT_EQ(e->second.name, "p" + std::to_string(i));
    }
  }
  // Erased keys can be stored again, each its own entry.
  for (int i = 0; i < 3000; i += 2) {
    auto [e, fresh] = t.try_emplace("ns/p" + std::to_string(i), record(base, "again" + std::to_string(i)));
    EXPECT_TRUE(fresh);
    EXPECT_EQ(e->second.name, "again" + std::to_string(i));
  }
  EXPECT_EQ(t.size(), 3000u);
  EXPECT_EQ(t.find("ns/p1")->second.name, "p1");
  {
    PodTable u;
    u.try_emplace("ns/x", record(base, "x"));
    EXPECT_EQ(base.use_count(), 3002);
  }
  EXPECT_EQ(base.use_count(), 3001);  // the table's destructor destroys its entries
}

}  // namespace
}  // namespace gpuops::simulator
