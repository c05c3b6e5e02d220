#include "simulator/store/pod_table.h"

#include <algorithm>
#include <new>
#include <tuple>

#include "simulator/store/object_store.h"

namespace gpuops::simulator {

PodTable::~PodTable() {
  for (auto& [key, e] : index_) e->~Entry();
}

PodTable::Entry* PodTable::find(std::string_view key) const {
  auto it = index_.find(key);
  return it == index_.end() ? nullptr : it->second;
}

bool PodTable::contains(std::string_view key) const { return index_.contains(key); }

PodTable::Index::const_iterator PodTable::begin() const { return index_.begin(); }
PodTable::Index::const_iterator PodTable::end() const { return index_.end(); }

void PodTable::reserve_free_slot() {
  // Doubling: std::vector::reserve(size() + 1) allocates exactly that, so
  // erasing n entries one by one would copy the list n times.
  if (free_.size() == free_.capacity()) free_.reserve(std::max<size_t>(64, free_.capacity() * 2));
}

void* PodTable::take_slot() {
  if (!free_.empty()) {
    void* slot = free_.back();
    free_.pop_back();
    return slot;
  }
  if (used_in_last_ == kChunk) {
    // operator new[] of std::byte is aligned for any fundamental type;
    // Entry holds nothing over-aligned.
    static_assert(alignof(Entry) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);
    chunks_.push_back(std::make_unique_for_overwrite<std::byte[]>(kChunk * sizeof(Entry)));
    used_in_last_ = 0;
  }
  return chunks_.back().get() + sizeof(Entry) * used_in_last_++;
}

std::pair<PodTable::Entry*, bool> PodTable::try_emplace(std::string&& key, PodRecord&& rec) {
  const core::HashedKey<std::string_view> probe(key);
  if (auto it = index_.find(probe); it != index_.end()) return {it->second, false};
  reserve_free_slot();  // so that giving the slot back below cannot throw
  void* slot = take_slot();
  Entry* e = nullptr;
  try {
    e = new (slot)
        Entry(std::piecewise_construct, std::forward_as_tuple(std::move(key)), std::forward_as_tuple(std::move(rec)));
    // May throw std::bad_alloc as the index grows. (Not index_.reserve(size
    // + 1) first: boost's reserve also shrinks a table that has room to
    // spare, a rehash of every key after erasures.)
    index_.emplace(core::HashedKey<std::string_view>(e->first, probe), e);
  } catch (...) {
    if (e) e->~Entry();  // `key` and `rec` are lost with it, as the caller was told
    free_.push_back(slot);
    throw;
  }
  return {e, true};
}

std::pair<PodTable::Entry*, bool> PodTable::try_emplace(std::string&& key) {
  return try_emplace(std::move(key), PodRecord{});
}

void PodTable::erase(Entry* e) {
  reserve_free_slot();  // may throw: before anything is erased
  index_.erase(core::HashedKey<std::string_view>(e->first));
  e->~Entry();
  free_.push_back(e);
}

}  // namespace gpuops::simulator
