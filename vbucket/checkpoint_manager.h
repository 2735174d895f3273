// CheckpointManager: a vbucket's ordered log of queued items, read by named
// cursors and trimmed by expel.
//
// Every change to a vbucket — mutation, prepare, commit, abort — is queued
// here, and the queue calls are where the vbucket's seqno is assigned: seqnos
// start at 1 and increase by one per queued item, in queue order, so the log
// is in seqno order by construction. A prepare queued with queuePrepare() is
// later resolved with queueResolution(), whose commit or abort refers to the
// prepare's item instead of carrying one of its own: a SyncWrite costs one
// heap block however it ends.
//
// The log is split into checkpoints (see checkpoint.h): closed ones, oldest
// first, then the open one. A checkpoint closes when createCheckpoint() is
// called or when it holds CheckpointOptions::max_items_per_checkpoint items
// and another is queued.
//
// Cursors are named readers (a replication stream, the persistence flusher)
// with a position in the log. readItems() returns the records after the
// position and advances it. A cursor registered late starts at the oldest
// item still in memory; items expelled before it existed are not shown to it.
//
// Expel: extractItemsToExpel() removes memory no reader needs any more:
//  - closed checkpoints that every cursor has passed are removed whole;
//  - from the (then) oldest checkpoint, the items that every cursor has read
//    are detached.
// Both happen under the lock in time independent of the number of items
// (O(checkpoints removed + cursors)); the items are handed back in an
// ExpelledItems and freed when the caller drops it, after the lock.
// With no cursor registered, every item counts as read.
//
// Memory: with CheckpointOptions::memory set, each queued block is charged to
// the bucket's item bytes while it lives, and each entry to its checkpoint
// bytes from queue until expel, removal or the manager's destruction — the
// charge is made after the lock is released.
//
// Thread-safety: every member may be called from any thread; one mutex
// guards the log, so calls are serialised. highSeqno() is a lock-free read.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <absl/functional/function_ref.h>

#include "base/mutex.h"
#include "vbucket/bucket_memory.h"
#include "vbucket/checkpoint.h"
#include "vbucket/expelled_items.h"
#include "vbucket/item.h"
#include "vbucket/vbucket_state.h"

namespace syncwrite::vbucket {

// Told, after the lock is released, that a vbucket's manager queued an item
// (`op`: a write, a prepare, a commit, an abort): how the bucket's readers (a
// flusher, a replica's stream) learn there is something to read.
class QueueListener {
 public:
  virtual void queued(Vbid vbid, QueueOp op) noexcept = 0;

 protected:
  ~QueueListener() = default;
};

struct CheckpointOptions {
  // The open checkpoint closes when it holds this many items and another is
  // queued. 0: it closes only on createCheckpoint().
  size_t max_items_per_checkpoint = 10000;
  // The bucket's memory counts (bucket_memory.h), or null for none: item
  // blocks are charged to it from allocation to free, checkpoint entries from
  // queue to expel. Must outlive the manager and every item it queued.
  BucketMemory* memory = nullptr;
  // Told of every queued item, with `vbid` (VBucket sets it to its own id),
  // or null for none. Must outlive the manager.
  QueueListener* listener = nullptr;
  Vbid vbid = 0;
};

struct CheckpointStats {
  size_t num_checkpoints = 0;   // including the open one
  size_t num_items = 0;         // queued and not expelled
  size_t memory_bytes = 0;      // of those items (CheckpointEntry::bytes)
  uint64_t items_expelled = 0;  // ever
  uint64_t bytes_expelled = 0;  // ever
  uint64_t checkpoints_removed = 0;
  size_t num_cursors = 0;
  Seqno high_seqno = 0;
};

// How extractItemsToExpel() takes the items out. kCopy exists only as the
// benchmark's baseline: it copies the expelled entries under the lock and
// then erases the originals, O(N) under the lock.
enum class ExpelMethod { kSplice, kCopy };

// Memory layout (alignas(64)): the fields are grouped by who touches them,
// so that expel, which runs rarely and after a reader has gone through many
// items, finds its state on lines the reader and the writer keep warm:
//   line 0: the mutex and the checkpoint list — every call takes the lock;
//           queue and expel read the list;
//   line 1: the cursor map, which every read searches, the head of the
//           cursors' list, which expel walks, and the next checkpoint id;
//   then:   the lock-free seqno and the rarely touched totals.
class alignas(64) CheckpointManager {
  struct Cursor;  // below

 public:
  explicit CheckpointManager(CheckpointOptions options = {});
  ~CheckpointManager();
  CheckpointManager(const CheckpointManager&) = delete;
  CheckpointManager& operator=(const CheckpointManager&) = delete;

  // Queues a change with the next seqno and returns the item, as every cursor
  // will read it. The item, its entry and a copy of `key` and `value` are one
  // allocation, made before the lock is taken; under it, O(1) (and, once per
  // max_items_per_checkpoint items, the allocation of a new checkpoint).
  // `deleted` marks a deletion (Item::deleted); `meta` is carried as given.
  //
  // `at`: the seqno to give the item instead of the next one — a replica
  // queues what its active sent with the active's seqnos, which may skip
  // some. 0 (the default) means the next one. A non-zero `at` must be above
  // highSeqno(): otherwise std::invalid_argument, and nothing is queued.
  QueuedItem queue(QueueOp op, std::string_view key, std::string_view value, Cas cas,
                   bool deleted = false, ItemMeta meta = {}, Seqno at = 0);

  // Queues a prepare like queue(QueueOp::kPrepare, ...), in a heap block that
  // also holds the entry its commit or abort will take (queueResolution), so
  // that resolving a prepare allocates nothing and copies no key.
  // `durability_level` is carried to readers (LogRecord::durability_level);
  // `at` as for queue().
  QueuedPrepare queuePrepare(std::string_view key, std::string_view value, Cas cas,
                             bool deleted = false, ItemMeta meta = {}, uint8_t durability_level = 0,
                             Seqno at = 0);

  // Queues the commit or abort (`op`) of `prepare`, with the next seqno (or
  // `at`, as for queue()), in the entry reserved for it; returns that seqno.
  // Readers see a LogRecord whose item is the prepare. A prepare is resolved
  // once: the reserved entry is used up (prepare.resolvable() becomes false).
  // Throws std::invalid_argument (queueing nothing) when `op` is not kCommit
  // or kAbort, when `prepare` has no reserved entry left, or when `at` is not
  // above highSeqno(). Under the lock, O(1).
  Seqno queueResolution(QueueOp op, QueuedPrepare& prepare, Seqno at = 0);

  // The seqno of the last item queued (0 before the first). Lock-free.
  Seqno highSeqno() const noexcept { return high_seqno_.load(std::memory_order_acquire); }

  // Closes the open checkpoint and opens a new one; returns the new one's id.
  uint64_t createCheckpoint();

  // Registers a cursor at the oldest item still in memory. False (changing
  // nothing) when a cursor of that name exists.
  bool registerCursor(std::string name);
  // False when there is no such cursor.
  bool removeCursor(std::string_view name);
  bool hasCursor(std::string_view name) const;

  // Up to `max_items` records after the cursor's position, oldest first, and
  // moves the cursor past them. Requires the cursor to exist
  // (std::invalid_argument otherwise). O(items returned + checkpoints crossed).
  std::vector<LogRecord> readItems(std::string_view name, size_t max_items = SIZE_MAX);
  // What a reader that needs only each record's op and seqno sees: as
  // readItems(), but `fn(op, seqno)` is called under the lock for each record
  // instead of copying it out — no allocation, no reference-count traffic.
  // `fn` must not call back into this manager. Returns how many records it
  // passed. Requires the cursor to exist (std::invalid_argument otherwise).
  size_t visitItems(std::string_view name, size_t max_items,
                    absl::FunctionRef<void(QueueOp op, Seqno seqno)> fn);
  // What skimPrepares() or passAll() passed: how many records, the last
  // one's seqno (0 when none), and whether a prepare was among them (from
  // passAll(): may be true when none was, never false when one was).
  struct Skimmed {
    size_t items = 0;
    Seqno last_seqno = 0;
    bool prepare = false;
  };
  // For a reader that needs each prepare's seqno and how far it read (a
  // stream; the server's readers pass instead, passAll()): as visitItems(), but `fn(seqno)` is
  // called for the prepares only, and a run of records with no prepare in it is passed without
  // reading its entries (Checkpoint::noPrepareAfter). Such a run is passed whole, so more than
  // `max_items` records may be passed; with no prepares, O(checkpoints crossed). `fn` runs under
  // the lock and must not call back into this manager. Requires the cursor to exist
  // (std::invalid_argument otherwise).
  Skimmed skimPrepares(std::string_view name, size_t max_items,
                       absl::FunctionRef<void(Seqno seqno)> fn);

  // A cursor found once by name, for a reader that reads after every few
  // writes: skimPrepares() through it skips the search of the cursor map
  // (string compares on cold nodes: half of a skim's cost before). Valid
  // until removeCursor() of that name; the manager must outlive it. A
  // default-constructed one is valid nowhere.
  class CursorHandle {
   public:
    CursorHandle() = default;

   private:
    friend class CheckpointManager;
    CursorHandle(const CheckpointManager* owner, Cursor* cursor) noexcept
        : owner_(owner), cursor_(cursor) {}
    const CheckpointManager* owner_ = nullptr;
    Cursor* cursor_ = nullptr;
  };
  // Requires the cursor to exist (std::invalid_argument otherwise).
  CursorHandle cursorHandle(std::string_view name);
  // As above, for the cursor `cursor` names, which must still exist. A
  // handle from another manager, or a default one: std::invalid_argument.
  Skimmed skimPrepares(CursorHandle cursor, size_t max_items,
                       absl::FunctionRef<void(Seqno seqno)> fn);
  // For a reader that needs only whether it passed a prepare, and how far it
  // read (the flusher): as skimPrepares(), but no entry is read, prepares
  // included: the cursor passes each checkpoint's unread records in one step,
  // and Skimmed::prepare says whether one of them may have been a prepare
  // (Checkpoint::noPrepareAfter, which errs towards "maybe"). More than
  // `max_items` may be passed. O(checkpoints crossed). Handles as above.
  Skimmed passAll(CursorHandle cursor, size_t max_items);
  // How many items the cursor has not read yet. Requires the cursor to exist
  // (std::invalid_argument otherwise). O(checkpoints).
  size_t itemsRemaining(std::string_view name) const;

  // See the file comment. The returned object owns the expelled items.
  ExpelledItems extractItemsToExpel(ExpelMethod method = ExpelMethod::kSplice);

  // Empties the log — for a vbucket rolled back to seqno 0, or one whose
  // items warmup loaded (they live on in the hash table): a new open
  // checkpoint, every cursor at its start (reading only what is queued
  // next), every older checkpoint removed, and the high seqno `high_seqno`
  // — the next item queued gets the one after it (or `at`). Cursor handles stay valid. The
  // returned object owns what was removed (free it after any lock of the
  // caller's); checkpoint memory is uncharged here. O(cursors + checkpoints).
  ExpelledItems reset(Seqno high_seqno = 0);

  // O(checkpoints).
  CheckpointStats stats() const;

 private:
  struct Cursor {
    std::list<Checkpoint>::iterator checkpoint;
    CheckpointLink* position;  // last link read: an entry, or the sentinel
    uint64_t passed;           // ordinal of `position` (numExpelled() at the sentinel)
    // The next cursor in the manager's list (first_cursor_), for the walks
    // over all of them.
    Cursor* next_listed = nullptr;
  };

  // Checks, at compile time, the layout described above the class.
  static void checkLayout() noexcept;
  // Charges the entry just queued for `item` to options_.memory and tells
  // the listener. No lock.
  void chargeEntry(const Item& item, QueueOp op) noexcept;
  // extractItemsToExpel() without the memory charge; takes the lock.
  ExpelledItems extractLocked(ExpelMethod method);
  // skimPrepares() with `fn`, passAll() without (null).
  Skimmed skimLocked(Cursor& cursor, size_t max_items,
                     const absl::FunctionRef<void(Seqno seqno)>* fn)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // The cursor a handle names, checked to be this manager's (`what` names
  // the caller in the exception).
  Cursor& cursorOf(CursorHandle cursor, const char* what) const;
  // Moves `cursor` out of closed checkpoints it has finished. Lock held.
  void skipFinishedCheckpoints(Cursor& cursor) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Removes the leading closed checkpoints no cursor is in. Lock held.
  void removeUnreferencedCheckpoints(ExpelledItems& out) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  uint64_t openCheckpointLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Points `entry` at `item`, gives it the next seqno (or `at`, when not 0)
  // and appends it to the open checkpoint. Strong guarantee: if opening a
  // checkpoint throws, or `at` is not above the high seqno
  // (std::invalid_argument), the entry is untouched.
  Seqno appendLocked(CheckpointEntry* entry, const QueuedItem& item, Seqno at)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  // Line 0.
  mutable base::Mutex mutex_;
  std::list<Checkpoint> checkpoints_ ABSL_GUARDED_BY(mutex_);  // never empty; back() is open
  // Line 1.
  std::map<std::string, Cursor, std::less<>> cursors_ ABSL_GUARDED_BY(mutex_);
  // The same cursors, linked through Cursor::next_listed, for the walks over
  // all of them (expel makes two). Walking the map's tree instead read its
  // node links, which nothing else touches between registerCursor() and
  // expel: after a large fill they were cold, a cache miss per expel
  // (cachegrind: the one D1 miss of an expel was in _Rb_tree_increment). An
  // array in the manager had the same problem one level up: a line of the
  // manager that only registerCursor() and expel touched. The head sits on
  // the line the map's header is on, which every read warms; the links are
  // in the cursors, which their reads warm. Map nodes do not move, so the
  // pointers stay valid until removeCursor().
  Cursor* first_cursor_ ABSL_GUARDED_BY(mutex_) = nullptr;
  uint64_t next_checkpoint_id_ ABSL_GUARDED_BY(mutex_) = 1;
  // Then.
  const CheckpointOptions options_;
  std::atomic<Seqno> high_seqno_{0};
  // Totals of checkpoints removed whole (the others count their own, so
  // queue and expel touch no counter here).
  uint64_t removed_items_ ABSL_GUARDED_BY(mutex_) = 0;
  uint64_t removed_bytes_ ABSL_GUARDED_BY(mutex_) = 0;
  uint64_t checkpoints_removed_ ABSL_GUARDED_BY(mutex_) = 0;
};

}  // namespace syncwrite::vbucket
