// simulator/apiserver/block_queue.h: a FIFO kept in fixed blocks, handed whole from
// the thread that fills it to the thread that empties it (the API server's
// watch feed: the store's writes, queued on the settle's thread, delivered
// on the I/O thread).
//
// Why not a std::vector swapped between the threads: a producer that runs
// ahead of its consumer (a settle writes hundreds of thousands of events in
// a fraction of a second; the watches take seconds to send them) grew the
// vector by doubling, copying every queued event into freshly mapped memory
// each time, page faults and all. Here what is queued never moves: a full
// block is left where it is and the next one begun, and a block the
// consumer has finished comes back to the producer for reuse, its slots
// still constructed (a slot's strings keep their buffers, so overwriting
// it does not allocate).
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <utility>
#include <vector>

namespace gpuops::simulator {

// A FIFO of T in blocks of kBlock slots. Not synchronised: one instance is
// a producer's (back_slot, commit) and another a consumer's (front,
// pop_front); take_from() hands the producer's blocks to the consumer and
// the consumer's spent blocks back, with both instances guarded by the
// caller (the API server's cluster mutex). T must be default-constructible
// and assignable; a slot handed out again by back_slot() holds whatever
// its last use left (the caller overwrites every field it reads).
template <class T, size_t kBlock = 1024>
class BlockQueue {
 public:
  // Spent blocks kept for reuse, at most (the rest are freed): kKeep x
  // kBlock x sizeof(T) bytes.
  static constexpr size_t kKeep = 8;

  bool empty() const { return blocks_.empty() || (blocks_.size() == 1 && head_ == blocks_.front()->used); }

  // ---- the producer's side ----

  // The slot the next commit() queues: a slot of a spent block (as its last
  // use left it) or a new T. Calling it again before commit() gives the same
  // slot, so a slot filled half-way when an exception left is simply
  // overwritten by the next write. Throws std::bad_alloc.
  T& back_slot() {
    if (blocks_.empty() || blocks_.back()->used == kBlock) blocks_.push_back(new_block());
    Block& b = *blocks_.back();
    if (b.used == b.slots.size()) b.slots.emplace_back();
    return b.slots[b.used];
  }
  // Queues the slot back_slot() gave.
  void commit() { ++blocks_.back()->used; }

  // ---- the consumer's side ----

  // The oldest queued element; the queue must not be empty.
  T& front() { return blocks_.front()->slots[head_]; }
  const T& front() const { return blocks_.front()->slots[head_]; }
  // Removes front() (left as it is, for reuse); a block once emptied is
  // kept aside for take_from() to hand back.
  void pop_front() {
    if (++head_ < blocks_.front()->used) return;
    try {
      spent_.push_back(std::move(blocks_.front()));
    } catch (...) {  // not kept for reuse, then: freed by pop_front
    }
    blocks_.pop_front();
    head_ = 0;
  }

  // Moves every block of `producer` (its last one too, however full) to
  // the back of this queue, and this queue's spent blocks to `producer`
  // for reuse (at most kKeep kept). Afterwards `producer` is empty. Both
  // instances must be guarded by the caller.
  // Throws std::bad_alloc having moved a prefix of the producer's blocks
  // (the rest still queued there, in order).
  void take_from(BlockQueue& producer) {
    while (!producer.blocks_.empty() && producer.blocks_.front()->used > 0) {
      blocks_.push_back(std::move(producer.blocks_.front()));  // on bad_alloc: not moved
      producer.blocks_.pop_front();
    }
    // Left there: at most a block begun by back_slot() and not committed.
    std::vector<std::unique_ptr<Block>> spent = std::move(spent_);
    spent_.clear();
    for (auto& b : spent) {  // those not handed back are freed with `spent`
      if (producer.free_.size() >= kKeep) break;
      b->used = 0;
      try {
        producer.free_.push_back(std::move(b));  // on bad_alloc: not moved
      } catch (...) {
        break;
      }
    }
  }

 private:
  struct Block {
    std::vector<T> slots;  // constructed on first use, kept after
    size_t used = 0;       // slots queued (or, in the consumer, delivered or not)
  };

  std::unique_ptr<Block> new_block() {
    if (!free_.empty()) {
      std::unique_ptr<Block> b = std::move(free_.back());
      free_.pop_back();
      return b;
    }
    auto b = std::make_unique<Block>();
    b->slots.reserve(kBlock);
    return b;
  }

  std::deque<std::unique_ptr<Block>> blocks_;  // front: the oldest
  size_t head_ = 0;                            // the front block's first slot not popped
  std::vector<std::unique_ptr<Block>> spent_;  // consumer: emptied, to hand back
  std::vector<std::unique_ptr<Block>> free_;   // producer: handed back, for new_block()
};

}  // namespace gpuops::simulator
