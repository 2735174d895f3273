// Item: one queued change to a key — a mutation, a prepare (the first half of
// a SyncWrite), or the commit or abort that resolves a prepare.
//
// Items are immutable once queued and shared: the checkpoint that queued one,
// every cursor that read it and the hash table that made it visible hold the
// same object through a QueuedItem, so passing one around costs a reference
// count, never a copy of the value. The count is intrusive (Item::refs, an
// 8-byte boost::intrusive_ptr): a std::shared_ptr was 16 bytes a holder and
// a 16-byte control block per item.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <boost/smart_ptr/intrusive_ptr.hpp>

namespace syncwrite::vbucket {

// Sequence numbers order a vbucket's changes. The first change queued in a
// vbucket gets 1; 0 means "none".
using Seqno = uint64_t;
// Compare-and-swap value, chosen by the caller; carried, never interpreted.
using Cas = uint64_t;

enum class QueueOp : uint8_t { kMutation, kPrepare, kCommit, kAbort };

// "mutation", "prepare", "commit", "abort".
std::string_view toString(QueueOp op) noexcept;

// What a client stores beside the value and gets back with it (memcached's
// flags and expiry, and the value's datatype bits), carried, never
// interpreted by this layer.
struct ItemMeta {
  uint32_t flags = 0;
  // Absolute expiry in seconds since the Unix epoch; 0 = never.
  uint32_t expiry = 0;
  uint8_t datatype = 0;
};

// The heap block an item is the first part of (vbucket/checkpoint_manager.cc
// builds them): what its last reference frees.
enum class ItemBlock : uint8_t { kQueued, kPrepare };

// The size of each kind of block, by ItemBlock: its item's key and value
// bytes start there (x86-64; checkpoint_manager.cc checks them against the
// blocks it builds).
inline constexpr uint32_t kItemBlockSizes[] = {80, 120};

// The key's and the value's bytes are not in the item but right after its
// block, in the same allocation (checkpoint_manager.cc builds both): no string
// objects, no allocation of their own, and no pointer to them (the block's
// kind says where they start). The fields are ordered so that the small ones
// share the last 16 bytes: 40 in all on x86-64, the reference count included
// (checked in item.cc). `meta` may share its tail padding with what follows
// it. An item is never copied: its bytes belong to its block.
struct Item {
  std::string_view key() const noexcept { return {bytes(), key_size}; }
  std::string_view value() const noexcept { return {bytes() + key_size, value_size}; }
  // The key, then the value.
  const char* bytes() const noexcept {
    return reinterpret_cast<const char*>(this) + kItemBlockSizes[static_cast<size_t>(block)];
  }

  uint32_t key_size = 0;
  uint32_t value_size = 0;
  Cas cas = 0;
  Seqno seqno = 0;  // assigned when queued (CheckpointManager::queue, queuePrepare)
  [[no_unique_address]] ItemMeta meta{};
  QueueOp op = QueueOp::kMutation;
  // A deletion: the key has no value once this commits (a plain delete, or a
  // durable delete's prepare and commit).
  bool deleted = false;
  ItemBlock block = ItemBlock::kQueued;  // set by the block that holds the item
  // The QueuedItems that refer to this item (and so to its block).
  mutable std::atomic<uint32_t> refs{0};

  // True when the item has an expiry and `unix_now` (seconds since the epoch)
  // has reached it.
  bool expiredAt(uint32_t unix_now) const noexcept {
    return meta.expiry != 0 && unix_now >= meta.expiry;
  }

  // Bytes this item accounts for: the object and its key and value bytes.
  // An estimate (allocator overhead and the block around the item are not
  // counted), used by checkpoint memory statistics.
  size_t estimatedSize() const noexcept { return sizeof(Item) + key_size + value_size; }
};

// The seqno at which `item` became the committed value of its key: its own
// seqno for a mutation, its commit's for a prepare queued with
// CheckpointManager::queuePrepare and committed since (as kv_engine's committed
// item carries the commit's seqno); the prepare's own seqno while it has no
// commit or abort. Requires that the resolution, if any, was queued before the
// caller obtained `item` through a synchronising hand-off (the hash table's
// lock). Defined with the blocks, in checkpoint_manager.cc. O(1).
Seqno committedSeqno(const Item& item) noexcept;

// QueuedItem's reference counting (found by argument-dependent lookup). The
// last release frees the item's whole block; defined with the blocks, in
// checkpoint_manager.cc. Items exist only inside those blocks.
inline void intrusive_ptr_add_ref(const Item* item) noexcept {
  item->refs.fetch_add(1, std::memory_order_relaxed);
}
void intrusive_ptr_release(const Item* item) noexcept;

using QueuedItem = boost::intrusive_ptr<const Item>;

}  // namespace syncwrite::vbucket
