// simulator/store/pod_table.h: the object store's pods by key ("namespace/name").
//
// What std::unordered_map<std::string, PodRecord> was, laid out for a store
// of hundreds of thousands of pods (docs/PERFORMANCE-HISTORY.md, "Past upstream's
// 5,000-node limit"):
//  * the index is an open-addressing table (boost::unordered_flat_map) of
//    (key text and its hash, entry address): a lookup reads one group of
//    metadata bytes and the one entry whose hash matches, instead of a
//    bucket, the node before it and a chain of separately allocated nodes;
//    growing it moves 32-byte slots, never reading an entry or its key's
//    text (core::HashedKey);
//  * the entries live in chunks of kChunk, allocated in creation order, so
//    the pods one controller creates in a row are neighbours in memory for
//    the next one that walks them (the scheduler, the kubelet); an erased
//    entry's slot is reused by the next insertion.
// An entry's address is stable from insertion to erase (the store's ids,
// observers and watch index keep it), as a node-based map's was.
// Iteration order is unspecified, as it was.
//
// Not thread-safe; the store serializes access.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/unordered/unordered_flat_map.hpp>

#include "core/base/hashed_key.h"

namespace gpuops::simulator {

struct PodRecord;

class PodTable {
 public:
  using Entry = std::pair<const std::string, PodRecord>;
  using Index =
      boost::unordered_flat_map<core::HashedKey<std::string_view>, Entry*, core::HashedKeyHash, core::HashedKeyEqual>;

  PodTable() = default;
  PodTable(const PodTable&) = delete;
  PodTable& operator=(const PodTable&) = delete;
  ~PodTable();

  // The entry stored under `key`, or nullptr.
  // (Out of line: comparing the index's iterators here would instantiate
  // Entry, and PodRecord is incomplete in this header.)
  Entry* find(std::string_view key) const;
  bool contains(std::string_view key) const;
  // Stores `rec` under `key` unless the key is taken: (the entry under key,
  // whether it is the new one). Moves from `key` and `rec` only when it
  // stores them (as std::unordered_map::try_emplace). Throws std::bad_alloc
  // and nothing else; then nothing is stored (and `key` and `rec` may have
  // been moved from).
  std::pair<Entry*, bool> try_emplace(std::string&& key, PodRecord&& rec);
  // As above, a default-constructed record.
  std::pair<Entry*, bool> try_emplace(std::string&& key);
  // Removes and destroys `e` (an entry of this table).
  void erase(Entry* e);
  size_t size() const { return index_.size(); }
  // (key, entry) pairs (the key's text: `.first.text`), in no particular order.
  Index::const_iterator begin() const;
  Index::const_iterator end() const;

 private:
  static constexpr size_t kChunk = 1024;  // entries per chunk
  // Raw storage for one entry, constructed in place.
  void* take_slot();
  // Room in free_ for one more slot, so that a push_back cannot throw.
  void reserve_free_slot();
  Index index_;
  std::vector<std::unique_ptr<std::byte[]>> chunks_;
  size_t used_in_last_ = kChunk;  // slots handed out of chunks_.back()
  std::vector<void*> free_;       // slots of erased entries
};

}  // namespace gpuops::simulator
