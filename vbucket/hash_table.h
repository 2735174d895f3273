// HashTable: a vbucket's committed items, key → the item that last committed
// it (value, cas, seqno).
//
// Only committed state lives here: a mutation, or the commit of a prepare.
// Prepares in flight belong to the layer above until they commit. The value
// is the queued item itself, shared with the checkpoint that queued it.
//
// Thread-safety: every member may be called from any thread; one mutex guards
// the map. A table that has never held an item owns no heap memory
// (tests/idle_memory_test.cc); erase() does not shrink one that has.
//
// Memory: given a BucketMemory, each key it holds is charged to the bucket's
// index bytes (the key's copy and its slot, slotBytes()) while it holds it;
// the items themselves are charged by the checkpoint that queued them.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "base/mutex.h"
#include "vbucket/bucket_memory.h"
#include "vbucket/item.h"

namespace syncwrite::vbucket {

class HashTable {
 public:
  explicit HashTable(BucketMemory* memory = nullptr) noexcept : memory_(memory) {}
  ~HashTable();
  HashTable(const HashTable&) = delete;
  HashTable& operator=(const HashTable&) = delete;

  // Makes `item` the visible value of item->key(), unless the key already holds
  // an item with a higher seqno (then it changes nothing and returns false):
  // racing committers of one key converge on the newest. Requires a non-null
  // item. O(1) expected; a replaced item is released after the lock.
  bool setCommitted(QueuedItem item);

  // The committed item for `key`, or null. O(1) expected.
  QueuedItem find(std::string_view key) const;

  // Removes `key`; false when absent.
  bool erase(std::string_view key);

  size_t size() const;

  // Every key it holds now, copied under the lock. O(size()).
  std::vector<std::string> keys() const;

  // What one key costs the index: its copy and its slot.
  static size_t slotBytes(std::string_view key) noexcept {
    return key.size() + sizeof(std::pair<const std::string, QueuedItem>);
  }

 private:
  void charge(std::string_view key, int64_t sign) noexcept;

  BucketMemory* const memory_;
  mutable base::Mutex mutex_;
  absl::flat_hash_map<std::string, QueuedItem> items_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace syncwrite::vbucket
