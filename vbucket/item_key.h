// Items found by their own key: hashing and equality for the sets of items
// (or of holders of one) that are searched by key and keep no copy of it —
// the vbucket's hash table, the durability monitor's keys in flight.
//
// itemKey() reads a key, or an item's; a holder type adds an overload of its
// own next to it (argument-dependent lookup finds it), as HashTable's slot
// does. Both functors are transparent: a set of items is searched with an
// absl::string_view.
#pragma once

#include <cstddef>
#include <string_view>

#include <absl/hash/hash.h>
#include <absl/strings/string_view.h>

#include "vbucket/item.h"

namespace syncwrite::vbucket {

inline absl::string_view itemKey(absl::string_view key) noexcept { return key; }
inline absl::string_view itemKey(const Item* item) noexcept {
  const std::string_view key = item->key();
  return {key.data(), key.size()};
}

struct ItemKeyHash {
  using is_transparent = void;
  template <typename K>
  size_t operator()(const K& k) const noexcept {
    return absl::Hash<absl::string_view>{}(itemKey(k));
  }
};

struct ItemKeyEq {
  using is_transparent = void;
  template <typename A, typename B>
  bool operator()(const A& a, const B& b) const noexcept {
    return itemKey(a) == itemKey(b);
  }
};

}  // namespace syncwrite::vbucket
