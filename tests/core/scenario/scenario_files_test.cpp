// core/scenario/scenario_files.cpp: the shards of a scenario list.
#include <gtest/gtest.h>

#include <stdexcept>
#include <utility>

#include "core/scenario/scenario.h"

namespace core = gpuops::core;

namespace {

using Range = std::pair<size_t, size_t>;

TEST(ScenarioFiles, ShardsAreConsecutiveChunksTheFirstOnesLonger) {
  // 10 scenarios over 3 machines: 4, 3, 3.
  EXPECT_EQ(core::shard_range(10, 0, 3), Range(0, 4));
  EXPECT_EQ(core::shard_range(10, 1, 3), Range(4, 7));
  EXPECT_EQ(core::shard_range(10, 2, 3), Range(7, 10));
  // More machines than scenarios: the last shards are empty.
  EXPECT_EQ(core::shard_range(2, 0, 4), Range(0, 1));
  EXPECT_EQ(core::shard_range(2, 1, 4), Range(1, 2));
  EXPECT_EQ(core::shard_range(2, 3, 4), Range(2, 2));
  EXPECT_EQ(core::shard_range(0, 0, 1), Range(0, 0));
}

TEST(ScenarioFiles, EveryScenarioIsInExactlyOneShard) {
  for (size_t n = 0; n <= 23; ++n)
    for (size_t count = 1; count <= 7; ++count) {
      size_t next = 0, shortest = n, longest = 0;
      for (size_t i = 0; i < count; ++i) {
        auto [first, end] = core::shard_range(n, i, count);
        EXPECT_EQ(first, next) << n << " " << i << "/" << count;
        EXPECT_LE(first, end);
        shortest = std::min(shortest, end - first);
        longest = std::max(longest, end - first);
        next = end;
      }
      EXPECT_EQ(next, n) << n << "/" << count;
      EXPECT_LE(longest - shortest, 1u) << n << "/" << count;
    }
}

TEST(ScenarioFiles, AShardOutsideTheCountIsRefused) {
  EXPECT_THROW(core::shard_range(5, 0, 0), std::invalid_argument);
  EXPECT_THROW(core::shard_range(5, 3, 3), std::invalid_argument);
  try {
    core::shard_range(5, 4, 2);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "the shard index must be below the shard count (2)");
  }
}

}  // namespace
