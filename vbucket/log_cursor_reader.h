// LogCursorReader: one reader of a bucket's checkpoint logs — a cursor of its
// own on every vbucket, read only where something was queued since the last
// read.
//
// A writer calls markDirty(vbid) after queueing; the first mark since the
// last readDirty() returns true, and the caller then wakes whatever runs
// readDirty() (an executor task, a strand). readDirty() visits the marked
// vbuckets and reads about a batch of records from each; a vbucket with more
// stays marked. A reader that needs each prepare's seqno skims
// (readDirty(), CheckpointManager::skimPrepares): records with no prepare
// after them are passed without being read, through a cursor handle found
// once per vbucket. A reader that needs only whether there was a prepare
// calls passDirty() instead, which reads no entry at all: the simulated
// flusher and (since acks are cumulative) the simulated replica both do. A
// reader that writes the records elsewhere (kvstore's disk flusher) copies
// them out with readRecords().
// Under plain SETs this took the two readers from 16.6% of the server's
// samples to 3.4% (docs/benchmarks.md as of d3081a1, "Readers that skim").
//
// Memory: the cursor holds back expel (vbucket/checkpoint_manager.h): what it
// has not read stays in memory, so a reader that stops reading makes
// checkpoint memory grow until the bucket refuses writes (docs/memory.md).
//
// Thread-safety: markDirty() and itemsQueued() from any thread; readDirty()
// from one thread at a time (its caller's task or strand).
// Lifetime: the map must outlive the reader; the destructor removes the
// cursors.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <absl/functional/function_ref.h>

#include "vbucket/vbucket_map.h"

namespace syncwrite::vbucket {

class LogCursorReader {
 public:
  // Registers `cursor` on every vbucket of `map`, at the oldest item in
  // memory. std::invalid_argument (registering none) when a vbucket already
  // has a cursor of that name.
  LogCursorReader(VBucketMap& map, std::string cursor);
  ~LogCursorReader();
  LogCursorReader(const LogCursorReader&) = delete;
  LogCursorReader& operator=(const LogCursorReader&) = delete;

  const std::string& cursor() const noexcept { return cursor_; }

  // `vbid` has something new to read. True for the first mark since the last
  // readDirty(): the caller must then have readDirty() run. Two relaxed
  // loads when the vbucket is already marked.
  bool markDirty(Vbid vbid) noexcept {
    std::atomic<bool>& flag = dirty_[vbid];
    if (flag.load(std::memory_order_relaxed)) return false;
    // seq_cst with readDirty()'s clear-then-look: either it sees this mark or
    // this sees its clear and reports a first mark.
    flag.store(true, std::memory_order_seq_cst);
    return claimWake();
  }

  // Marks `vbid` without claiming a wake-up: for a record nobody waits for.
  // It is read by the next readDirty(), whoever makes it run; claimWake()
  // says whether the caller must.
  void markDirtyQuietly(Vbid vbid) noexcept {
    std::atomic<bool>& flag = dirty_[vbid];
    if (!flag.load(std::memory_order_relaxed)) flag.store(true, std::memory_order_seq_cst);
  }
  // True when no first mark is outstanding since the last readDirty(): the
  // caller must then have readDirty() run (as for markDirty()'s true).
  bool claimWake() noexcept {
    return !any_dirty_.load(std::memory_order_seq_cst) &&
           !any_dirty_.exchange(true, std::memory_order_acq_rel);
  }

  // Reads on from the cursor of each marked vbucket, about `batch` records
  // (CheckpointManager::skimPrepares: a run with no prepare is passed whole,
  // without reading it): `prepare(vbid, seqno)` for each prepare, called
  // under that vbucket's log lock (it must only note what it needs: no
  // locks, no calls into the bucket), then `done(vbid, count, last_seqno)`
  // once the lock is released, for each vbucket that had records. True when
  // a vbucket had a batch or more (it stays marked, and the caller should
  // run readDirty() again).
  bool readDirty(size_t batch, absl::FunctionRef<void(Vbid, Seqno)> prepare,
                 absl::FunctionRef<void(Vbid, size_t count, Seqno last_seqno)> done);

  // As readDirty(), for a reader that needs only whether a vbucket's records
  // held a prepare and how far they went (the flusher; the simulated
  // replica, whose acks are cumulative): CheckpointManager::passAll reads no entry,
  // so `done(vbid, passed)` gets Skimmed::prepare, which may be true when no
  // prepare was passed, never false when one was.
  bool passDirty(size_t batch,
                 absl::FunctionRef<void(Vbid, const CheckpointManager::Skimmed&)> done);

  // As readDirty(), for a reader that needs every record (a flusher that
  // writes them to disk): up to `batch` records of each marked vbucket,
  // copied out of the log (CheckpointManager::readItems: the records hold
  // references to their items, not copies), handed to `records(vbid,
  // them)` after the lock is released, for each vbucket that had any.
  // O(records read).
  bool readRecords(size_t batch,
                   absl::FunctionRef<void(Vbid, std::vector<LogRecord>&& records)> records);

  // Until the next readDirty(), marks report no first mark: for a caller
  // that will read again soon anyway and wants no wake-ups meanwhile.
  void holdMarks() noexcept { any_dirty_.store(true, std::memory_order_seq_cst); }

  // True while some vbucket is marked.
  bool anyDirty() const noexcept { return any_dirty_.load(std::memory_order_acquire); }

  // Records queued and not yet read, over every vbucket: the cursors'
  // distance from the head. O(vbuckets).
  size_t itemsQueued() const;

 private:
  // The loop of readDirty() and passDirty(): `read(vbid, handle)` reads one
  // marked vbucket, `done(vbid, skimmed)` follows for each that had records.
  template <typename Read, typename Done>
  bool readMarked(size_t batch, Read read, Done done);

  VBucketMap& map_;
  const std::string cursor_;
  // Per vbucket: its cursor, found once (removed only by the destructor).
  std::unique_ptr<CheckpointManager::CursorHandle[]> handles_;
  std::unique_ptr<std::atomic<bool>[]> dirty_;  // per vbucket
  std::atomic<bool> any_dirty_{false};
};

}  // namespace syncwrite::vbucket
