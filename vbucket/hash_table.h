// HashTable: a vbucket's committed items, key → the item that last committed
// it (value, cas, and the seqno it committed at: committedSeqno()).
//
// Only committed state lives here: a mutation, or the commit of a prepare.
// Prepares in flight belong to the layer above until they commit. The value
// is the queued item itself, shared with the checkpoint that queued it.
//
// Thread-safety: every member may be called from any thread; one mutex guards
// the map. A table that has never held an item owns no heap memory
// (tests/idle_memory_test.cc); erase() does not shrink one that has.
//
// Memory: the table keeps no copy of a key — a slot is the item, whose block
// holds the key. Given a BucketMemory, each key it holds is charged to the
// bucket's index bytes (its slot, slotBytes()) while it holds it; the items
// themselves are charged by the checkpoint that queued them.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <absl/container/flat_hash_set.h>
#include <absl/strings/string_view.h>

#include "base/mutex.h"
#include "vbucket/bucket_memory.h"
#include "vbucket/item.h"
#include "vbucket/item_key.h"

namespace syncwrite::vbucket {

class HashTable {
 public:
  explicit HashTable(BucketMemory* memory = nullptr) noexcept : memory_(memory) {}
  ~HashTable();
  HashTable(const HashTable&) = delete;
  HashTable& operator=(const HashTable&) = delete;

  // Makes `item` the visible value of item->key(), unless the key already holds
  // an item committed at a higher seqno (committedSeqno(), item.h; then it
  // changes nothing and returns false):
  // racing committers of one key converge on the newest. Requires a non-null
  // item. O(1) expected; a replaced item is released after the lock.
  bool setCommitted(QueuedItem item);

  // The committed item for `key`, or null. O(1) expected.
  QueuedItem find(std::string_view key) const;

  // Hints for a caller about to look up several keys (a connection's turn of
  // requests): they start loading memory into the cache and change nothing,
  // not even an item's reference count. Three stages, each over every key
  // before the next, so that the cache misses of the keys overlap instead of
  // each lookup waiting for its own:
  //  - prefetchTable(): the table's own fields (its mutex, the map's header);
  //  - prefetchSlot(key): the control bytes and slots find(key) probes first;
  //  - prefetchItem(key): without reading them, the items of the slots whose
  //    hash bits match the key's along its probe sequence (the one a lookup
  //    compares, and any false candidates up to the first group with an empty
  //    slot): their first three cache lines, which hold the item's fields and
  //    the start of its key and value.
  void prefetchTable() const noexcept;
  void prefetchSlot(std::string_view key) const;
  void prefetchItem(std::string_view key) const;

  // Removes `key`; false when absent.
  bool erase(std::string_view key);

  size_t size() const;

  // Every key it holds now, copied under the lock. O(size()).
  std::vector<std::string> keys() const;

  // What one key costs the index: its slot, the same for every key (8
  // bytes; a slot with a std::string key was 40, plus a heap copy of a key
  // over 15 bytes).
  static size_t slotBytes(std::string_view /*key*/) noexcept { return sizeof(Slot); }

 private:
  // The item, replaceable in place by another of the same key (that changes
  // neither the hash nor equality, which read the key through the item).
  struct Slot {
    mutable QueuedItem item;
    friend absl::string_view itemKey(const Slot& slot) noexcept { return itemKey(slot.item.get()); }
  };

  // A key looked up only to prefetch its item: SlotEq starts loading each
  // candidate slot's item (the slots whose hash bits match) and reports no
  // match, so the lookup never reads the item it is waiting for.
  struct PrefetchProbe {
    absl::string_view key;
    friend absl::string_view itemKey(const PrefetchProbe& probe) noexcept { return probe.key; }
  };
  struct SlotEq : ItemKeyEq {
    using ItemKeyEq::operator();
    bool operator()(const Slot& slot, const PrefetchProbe& /*probe*/) const noexcept {
      prefetchBlock(slot.item.get());
      return false;
    }
    bool operator()(const PrefetchProbe& probe, const Slot& slot) const noexcept {
      return (*this)(slot, probe);
    }
  };
  // The item's fields, then the start of its key and value, which follow it
  // in its block (item.h): the block's first three cache lines.
  static void prefetchBlock(const Item* item) noexcept;

  void charge(int64_t slots) noexcept;

  BucketMemory* const memory_;
  mutable base::Mutex mutex_;
  absl::flat_hash_set<Slot, ItemKeyHash, SlotEq> items_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace syncwrite::vbucket
