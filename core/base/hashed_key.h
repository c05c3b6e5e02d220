// core/base/hashed_key.h: string keys that carry their hash, for open-addressing
// tables (boost::unordered_flat_map/set) of hundreds of thousands of keys.
//
// Such a table recomputes every key's hash each time it grows; for a key
// whose text is on the heap (over 15 bytes) that is a cache miss per key,
// and at 120,000 pods it was most of the table's cost (docs/PERFORMANCE-HISTORY.md,
// "Past upstream's 5,000-node limit"). A HashedKey keeps the hash it was
// made with, so growing moves the slots without reading the texts, and a
// lookup compares the hashes before the texts.
//
//   boost::unordered_flat_set<HashedKey<std::string>, HashedKeyHash, HashedKeyEqual> s;
//   s.insert(HashedKey<std::string>(text));
//   s.contains(std::string_view("Pod/ns/name"));  // looked up by text, no key built
//
// The hash is std::hash<std::string_view>; the table mixes it further
// (HashedKeyHash is not marked avalanching).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <utility>

namespace gpuops::core {

// `Text` is std::string (the key owns its text) or std::string_view (the
// text lives elsewhere and outlives the key).
template <class Text>
struct HashedKey {
  Text text;
  size_t hash;
  explicit HashedKey(Text t) : text(std::move(t)), hash(std::hash<std::string_view>{}(std::string_view(text))) {}
  // The same text's key, its hash taken from `other` (the text moved or
  // copied from other's).
  template <class Other>
  HashedKey(Text t, const HashedKey<Other>& other) : text(std::move(t)), hash(other.hash) {}
};

// Transparent: hashes a HashedKey by its stored hash and a string_view by its
// text, the same value for the same text.
struct HashedKeyHash {
  using is_transparent = void;
  template <class Text>
  size_t operator()(const HashedKey<Text>& k) const noexcept {
    return k.hash;
  }
  size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

struct HashedKeyEqual {
  using is_transparent = void;
  template <class A, class B>
  bool operator()(const HashedKey<A>& a, const HashedKey<B>& b) const noexcept {
    return a.hash == b.hash && std::string_view(a.text) == std::string_view(b.text);
  }
  template <class A>
  bool operator()(const HashedKey<A>& a, std::string_view b) const noexcept {
    return std::string_view(a.text) == b;
  }
  template <class B>
  bool operator()(std::string_view a, const HashedKey<B>& b) const noexcept {
    return a == std::string_view(b.text);
  }
};

}  // namespace gpuops::core
