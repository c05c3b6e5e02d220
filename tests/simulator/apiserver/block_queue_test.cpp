// BlockQueue (simulator/apiserver/block_queue.h): the watch feed's queue, filled on
// one side and emptied on the other, handed over in blocks.
#include "simulator/apiserver/block_queue.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace gpuops::simulator {
namespace {

// Small blocks, so that a few elements cross block boundaries.
using Queue = BlockQueue<std::string, 4>;

void push(Queue& q, const std::string& v) {
  q.back_slot() = v;
  q.commit();
}

std::vector<std::string> drain(Queue& q) {
  std::vector<std::string> out;
  while (!q.empty()) {
    out.push_back(q.front());
    q.pop_front();
  }
  return out;
}

TEST(BlockQueue, HandsOverEveryElementInOrderAcrossBlocks) {
  Queue producer, consumer;
  EXPECT_TRUE(producer.empty());
  EXPECT_TRUE(consumer.empty());
  for (int i = 0; i < 10; ++i) push(producer, "e" + std::to_string(i));  // blocks of 4, 4, 2
  EXPECT_FALSE(producer.empty());
  EXPECT_EQ(producer.front(), "e0");
  consumer.take_from(producer);
  EXPECT_TRUE(producer.empty());
  // Taken part-way, then more written and taken: appended behind.
  EXPECT_EQ(consumer.front(), "e0");
  consumer.pop_front();
  for (int i = 10; i < 13; ++i) push(producer, "e" + std::to_string(i));
  consumer.take_from(producer);
  std::vector<std::string> want;
  for (int i = 1; i < 13; ++i) want.push_back("e" + std::to_string(i));
  EXPECT_EQ(drain(consumer), want);
  EXPECT_TRUE(consumer.empty());
}

TEST(BlockQueue, ASlotNotCommittedIsNotQueuedAndIsOverwrittenNext) {
  Queue producer, consumer;
  push(producer, "a");
  producer.back_slot() = "half-written";            // as if an exception left before commit()
  EXPECT_EQ(producer.back_slot(), "half-written");  // the same slot again
  consumer.take_from(producer);
  EXPECT_TRUE(producer.empty());
  EXPECT_EQ(drain(consumer), std::vector<std::string>{"a"});
  producer.back_slot() = "b";
  producer.commit();
  consumer.take_from(producer);
  EXPECT_EQ(drain(consumer), std::vector<std::string>{"b"});
}

TEST(BlockQueue, SpentBlocksComeBackWithTheirSlotsAsLeft) {
  Queue producer, consumer;
  for (int i = 0; i < 4; ++i) push(producer, "x" + std::to_string(i));  // one full block
  consumer.take_from(producer);
  EXPECT_EQ(drain(consumer).size(), 4u);
  consumer.take_from(producer);  // hands the spent block back
  // The producer's next slots are that block's, as the last use left them.
  EXPECT_EQ(producer.back_slot(), "x0");
  producer.commit();
  EXPECT_EQ(producer.back_slot(), "x1");
}

TEST(BlockQueue, KeepsAtMostKKeepSpentBlocksAndDestroysEverySlot) {
  // Each element holds a reference to `token`: its use count is the number
  // of slots alive.
  auto token = std::make_shared<int>(0);
  using Q = BlockQueue<std::shared_ptr<int>, 2>;
  const size_t blocks = Q::kKeep + 3;
  {
    Q producer, consumer;
    for (size_t i = 0; i < 2 * blocks; ++i) {
      producer.back_slot() = token;
      producer.commit();
    }
    EXPECT_EQ(token.use_count(), static_cast<long>(1 + 2 * blocks));
    consumer.take_from(producer);
    while (!consumer.empty()) consumer.pop_front();  // slots left as they are
    EXPECT_EQ(token.use_count(), static_cast<long>(1 + 2 * blocks));
    consumer.take_from(producer);  // kKeep blocks go back, the rest are freed
    EXPECT_EQ(token.use_count(), static_cast<long>(1 + 2 * Q::kKeep));
  }
  EXPECT_EQ(token.use_count(), 1);
}

}  // namespace
}  // namespace gpuops::simulator
