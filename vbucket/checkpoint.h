// Checkpoint: one segment of a vbucket's log of queued items.
//
// A CheckpointManager keeps its log as a list of checkpoints: closed ones,
// oldest first, then the single open one that new items are appended to. This
// file is the manager's building block; nothing else uses it directly, and it
// does no locking of its own (the manager's lock guards it).
//
// Layout: a singly linked chain of heap-allocated entries hanging off a
// sentinel link that lives inside the Checkpoint object. The sentinel is what
// makes expel O(1) and cheap: a cursor that has read nothing of the remaining
// items points at the sentinel, which never moves; removing a prefix of the
// chain rewrites only the sentinel's `next` and the last removed entry's
// `next`, and never touches (so never faults in) the entries in between.
//
// Each entry records its ordinal (1-based position among all the items ever
// appended to this checkpoint; the low 32 bits, see Checkpoint::ordinalOf)
// and the running total of bytes through it, so the count and the bytes of
// any prefix are a subtraction, not a walk.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include "vbucket/item.h"

namespace syncwrite::vbucket {

struct CheckpointLink {
  CheckpointLink* next = nullptr;
};

// One position of the log as a reader sees it: what happened (op) at which
// seqno, and the item it concerns. For a mutation or a prepare, op and seqno
// are the item's own; for a commit or an abort queued by
// CheckpointManager::queueResolution, `item` is the prepare resolved — its
// key, and for a commit the value that became visible — while item->seqno is
// the prepared seqno.
struct LogRecord {
  QueueOp op = QueueOp::kMutation;
  Seqno seqno = 0;
  QueuedItem item;
  // For a prepare: the durability level byte it was queued with
  // (CheckpointManager::queuePrepare); 0 otherwise.
  uint8_t durability_level = 0;
};

// 32 bytes on x86-64: the link, the item, the bytes through it, and the
// ordinal's low half with the three small fields.
struct CheckpointEntry : CheckpointLink {
  QueuedItem item;
  uint64_t bytes_through = 0;  // sum of bytes() of entries 1..ordinal
  // The low 32 bits of the ordinal: 1-based, among everything appended to the
  // checkpoint (Checkpoint::ordinalOf restores the rest).
  uint32_t ordinal = 0;
  QueueOp op = QueueOp::kMutation;
  // True for an entry allocated on its own (new); false for one that lives in
  // the same heap block as its item (CheckpointManager::queue, queuePrepare
  // and queueResolution use such entries), which `item` keeps alive until the
  // entry is released.
  bool own_allocation = true;
  // A ResolutionEntry (below): a commit or abort queued through
  // CheckpointManager::queueResolution, whose item is the prepare it resolves.
  bool resolution = false;
  // A prepare's durability level, as the layer above encodes it (durability
  // Level's wire byte); carried for readers that stream prepares, never
  // interpreted here. 0 for every other entry. Lives in what was padding.
  uint8_t durability_level = 0;

  // The log position: for a mutation or a prepare item->seqno; for a
  // resolution the commit or abort's own.
  Seqno seqno() const noexcept;
  LogRecord record() const { return {op, seqno(), item, durability_level}; }
  // Bytes this entry accounts for in checkpoint memory statistics: the entry
  // and the item it keeps alive. A commit or abort keeps its prepare's item
  // (value included) alive just as the prepare's entry does, so both count
  // it: while both are present the statistics are an upper bound, and they
  // never report as freed what an entry still holds.
  size_t bytes() const noexcept { return sizeof(CheckpointEntry) + item->estimatedSize(); }
};

// The entry of a commit or abort: its item is the prepare it resolves, so it
// keeps its own seqno (the prepare's item->seqno is the prepared one).
struct ResolutionEntry : CheckpointEntry {
  ResolutionEntry() noexcept { resolution = true; }
  Seqno own_seqno = 0;
};

inline Seqno CheckpointEntry::seqno() const noexcept {
  return resolution ? static_cast<const ResolutionEntry*>(this)->own_seqno : item->seqno;
}

// A prepare queued by CheckpointManager::queuePrepare: its item, whose heap
// block also holds the entry reserved for its commit or abort
// (CheckpointManager::queueResolution uses it up). Holding `item` keeps the
// entry valid; nothing else is stored, so a tracked prepare costs one
// pointer. Move-only, so that one reservation has one owner: a moved-from
// object has no item.
struct QueuedPrepare {
  QueuedPrepare() = default;
  explicit QueuedPrepare(QueuedItem prepared) noexcept : item(std::move(prepared)) {}
  QueuedPrepare(QueuedPrepare&& other) noexcept = default;
  QueuedPrepare& operator=(QueuedPrepare&& other) noexcept = default;
  QueuedPrepare(const QueuedPrepare&) = delete;
  QueuedPrepare& operator=(const QueuedPrepare&) = delete;

  const Item* operator->() const noexcept { return item.get(); }
  const Item& operator*() const noexcept { return *item; }
  // True while CheckpointManager::queueResolution may use its reserved
  // entry: it has an item from queuePrepare, not resolved yet.
  bool resolvable() const noexcept;

  QueuedItem item;
};

struct EntryChain {
  CheckpointEntry* first = nullptr;
  CheckpointEntry* last = nullptr;
  size_t count = 0;
  size_t bytes = 0;

  bool empty() const noexcept { return first == nullptr; }
  // Appends `other` after this chain's last entry. O(1).
  void append(EntryChain other) noexcept;
};

// Releases one entry: deletes it, or, for one in its item's block, drops the
// block reference it holds (freeing the block unless a reader still holds
// the item). The entry must not be touched afterwards.
void releaseEntry(CheckpointEntry* entry) noexcept;

// Releases every entry of `chain`. O(count).
void freeChain(EntryChain chain) noexcept;

// Memory layout: the whole object is one 64-byte aligned cache line. Expel
// reads and writes the sentinel, the tail, the expelled totals and the
// cursor count; a reader checks `open_` each time it reaches the end of the
// checkpoint; append writes the tail and the appended totals. Kept on one
// line, the reader that makes items expellable leaves all of expel's state
// warm, and an expel after a large fill touches one line of the checkpoint.
// Before, a malloc-aligned list node spread the fields over two or three
// lines, and the ones only the fill wrote went cold under the read stream.
// The counts of items and bytes present are derived (appended minus
// expelled) rather than stored, which is also what makes the fields fit.
class alignas(64) Checkpoint {
 public:
  // `appended_before`: the ordinal to count on from (the items are numbered
  // from appended_before + 1); only tests start anywhere but 0, to cross the
  // 32-bit wrap of the entries' ordinals.
  explicit Checkpoint(uint64_t id, uint64_t appended_before = 0) noexcept
      : expelled_(appended_before),
        appended_(appended_before),
        id_(id),
        last_prepare_low_(static_cast<uint32_t>(appended_before) & kPrepareOrdinalMask),
        open_(1) {}
  ~Checkpoint();  // frees the entries still present
  Checkpoint(const Checkpoint&) = delete;
  Checkpoint& operator=(const Checkpoint&) = delete;

  uint64_t id() const noexcept { return id_; }
  bool isOpen() const noexcept { return open_ != 0; }
  void close() noexcept { open_ = 0; }

  // Appends `entry` (which must have its item set) and takes ownership of it.
  // Requires isOpen(). O(1).
  void append(CheckpointEntry* entry) noexcept;

  // The sentinel: the position of a cursor that has read none of the items
  // still present. Stable for the checkpoint's lifetime.
  CheckpointLink* sentinel() noexcept { return &sentinel_; }
  const CheckpointLink* sentinel() const noexcept { return &sentinel_; }
  // The last entry present, or null when none is.
  CheckpointEntry* lastEntry() noexcept {
    return tail_ == &sentinel_ ? nullptr : static_cast<CheckpointEntry*>(tail_);
  }

  // Items and bytes present (appended and not expelled).
  size_t numItems() const noexcept { return appended_ - expelled_; }
  size_t memoryBytes() const noexcept { return bytes_appended_ - bytes_expelled_; }
  // The whole ordinal of `entry`, which must be present: entries present are
  // the last 2^32 appended at most (each is at least 32 bytes), so the low
  // bits it keeps name one. O(1).
  uint64_t ordinalOf(const CheckpointEntry* entry) const noexcept {
    return appended_ - static_cast<uint32_t>(static_cast<uint32_t>(appended_) - entry->ordinal);
  }

  // False when a prepare was appended after ordinal `passed` (a cursor's
  // position). May be false when none was, never true when one was: the
  // checkpoint keeps only the low 24 bits of the last prepare's ordinal (the
  // line has no room for more), so after 2^24 appends with no prepare the
  // test errs towards "maybe". It also treats ordinal appended_before (0
  // outside tests) as a prepare, which no cursor is before. O(1).
  bool noPrepareAfter(uint64_t passed) const noexcept {
    return noPrepareAfter(appended_, last_prepare_low_, passed);
  }
  // The test itself, given what the checkpoint stores: `appended` items,
  // the low 24 bits of the last prepare's ordinal, which is at most
  // `appended`. Public for tests.
  static constexpr bool noPrepareAfter(uint64_t appended, uint32_t last_prepare_low,
                                       uint64_t passed) noexcept {
    // The newest ordinal <= appended with those low bits: the last prepare's,
    // or a later one when that is 2^24 or more behind.
    const uint64_t since_last_prepare = (appended - last_prepare_low) & kPrepareOrdinalMask;
    return appended - since_last_prepare <= passed;
  }
  static constexpr uint32_t kPrepareOrdinalMask = (1u << 24) - 1;

  // Items appended so far: the ordinal of the last one.
  uint64_t numAppended() const noexcept { return appended_; }

  // Items expelled so far: also the ordinal a cursor at the sentinel has
  // passed.
  uint64_t numExpelled() const noexcept { return expelled_; }
  uint64_t bytesExpelled() const noexcept { return bytes_expelled_; }

  // Cursors whose position is in this checkpoint (maintained by the manager).
  size_t numCursors() const noexcept { return num_cursors_; }
  void addCursor() noexcept { ++num_cursors_; }
  void removeCursor() noexcept { --num_cursors_; }

  // Removes the entries from the first present one through `through`
  // (inclusive), which must be present. O(1): reads and writes only this
  // checkpoint's line and `through`. Inline, so that expel's
  // code under the lock is one function: it runs rarely, so its code is
  // usually cold, and each extra function is another line to fetch.
  EntryChain detachThrough(CheckpointEntry* through) noexcept {
    const uint64_t through_ordinal = ordinalOf(through);
    EntryChain chain{static_cast<CheckpointEntry*>(sentinel_.next), through,
                     through_ordinal - expelled_, through->bytes_through - bytes_expelled_};
    sentinel_.next = through->next;
    through->next = nullptr;
    if (tail_ == through) tail_ = &sentinel_;
    expelled_ = through_ordinal;
    bytes_expelled_ = through->bytes_through;
    return chain;
  }

  // The copying baseline for the benchmark: copies the same entries into a
  // new chain (an allocation and a reference count each), then deletes the
  // originals, as an erase from a copied container would. O(N).
  EntryChain copyThenEraseThrough(CheckpointEntry* through);

 private:
  // Checks, at compile time, the layout described above the class.
  static void checkLayout() noexcept;

  // One cache line, 64 bytes: see above the class.
  CheckpointLink sentinel_;
  CheckpointLink* tail_ = &sentinel_;  // last link: the sentinel when empty
  uint64_t expelled_ = 0;              // ordinal of the last entry expelled
  uint64_t bytes_expelled_ = 0;        // bytes_through of the last entry expelled
  uint64_t appended_ = 0;              // ordinal of the last entry appended
  uint64_t bytes_appended_ = 0;        // bytes_through of the last entry appended
  const uint64_t id_;
  uint32_t num_cursors_ = 0;
  // The low 24 bits of the last prepare's ordinal (noPrepareAfter), and the
  // open flag, in the line's last four bytes.
  uint32_t last_prepare_low_ : 24;
  uint32_t open_ : 1;
};

}  // namespace syncwrite::vbucket
