// ActiveDurabilityMonitor: the SyncWrites in flight in one vbucket, while it
// is active, from prepare to commit or abort.
//
// Writes are tracked in seqno order — the order their prepares were queued,
// which the monitor's lock makes the same as the order they were added. They
// leave only from the front:
//  - commit: while the oldest write is satisfied (AckState: a majority of
//    every chain, the active among them, at the write's level), it commits —
//    the prepare becomes the key's visible value in the hash table (or the key
//    is removed, for a delete), a commit is queued in the checkpoint, and the
//    write resolves committed. A satisfied write behind an unsatisfied one
//    waits for it, so commits reach the checkpoint in prepare order;
//  - abort on timeout: processTimeout(now) aborts the prefix of writes whose
//    deadline is strictly before `now`, queueing an abort for each. A write
//    behind an unexpired one waits, as in kv_engine, so aborts are in order
//    too;
//  - abortAll(): the vbucket left active, or the bucket is going away; every
//    write resolves ambiguous and nothing is queued.
// Every write resolves exactly once. Resolutions are appended to a
// ResolvedWrites under the lock; the caller notifies them after it.
//
// Keys: a key with a write in flight refuses another (kSyncWriteInProgress),
// plain or durable — a set of string views into the tracked prepares.
//
// Timers: an optional HeadDeadlineListener (the event-driven timeout task) is
// told, under the lock, the new deadline of the oldest write whenever the
// oldest write changes, and at the end of every processTimeout(). Being told
// under the lock is what orders the re-arms of concurrent callers: the last
// one told is always the current head.
//
// Lock-free reads for the timeout paths: hasSyncWrites() and headDeadline()
// are single atomic loads; processTimeout() with nothing expired takes no lock.
//
// Memory per tracked write: one TrackedWrite (72 bytes) in a deque plus one
// slot of the key set; the prepare itself is the checkpoint's item, shared.
// bench/durability_bench reports the measured figure.
//
// Thread-safety: every member may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>

#include <absl/container/flat_hash_set.h>
#include <absl/strings/string_view.h>

#include "base/mutex.h"
#include "clock/time.h"
#include "durability/ack_state.h"
#include "durability/resolved_writes.h"
#include "durability/sync_write.h"
#include "durability/topology.h"
#include "vbucket/vbucket.h"

namespace syncwrite::durability {

// The bucket-wide settings every monitor reads when a write is added. Kept
// current by the owner's config listeners; relaxed atomics, since a write
// racing with a change may see either value.
struct DurabilitySettings {
  std::atomic<Level> min_level{Level::kNone};
  std::atomic<int64_t> default_timeout_ms{30000};

  std::chrono::milliseconds defaultTimeout() const noexcept {
    return std::chrono::milliseconds(default_timeout_ms.load(std::memory_order_relaxed));
  }
};

// Told the deadline of the oldest write (clock::kNever: none) under the
// monitor's lock. Must not block and must not call back into the monitor.
class HeadDeadlineListener {
 public:
  virtual void headDeadlineChanged(clock::TimePoint head_deadline) = 0;

 protected:
  ~HeadDeadlineListener() = default;
};

// Totals since construction, for stats.
struct MonitorCounters {
  uint64_t in_flight = 0;  // tracked now (the others are totals)
  uint64_t committed = 0;
  uint64_t aborted_timeout = 0;
  uint64_t ambiguous_other = 0;
  uint64_t plain_writes = 0;
  uint64_t refused = 0;
};

class ActiveDurabilityMonitor {
 public:
  // Tracks writes of `vb` while it is active. `settings` must outlive the
  // monitor.
  ActiveDurabilityMonitor(vbucket::VBucket& vb, const DurabilitySettings& settings,
                          ReplicationTopology topology);
  ActiveDurabilityMonitor(const ActiveDurabilityMonitor&) = delete;
  ActiveDurabilityMonitor& operator=(const ActiveDurabilityMonitor&) = delete;

  // A write added at `now` (the deadline is counted from it). Plain writes
  // commit here; a SyncWrite's prepare is queued and the write tracked. A
  // SyncWrite this call already satisfies (a chain with no replica, level
  // majority) commits here too and its completion goes to `resolved`: the
  // caller must not notify it from inside its own write call. See
  // sync_write.h for the statuses; `completion` is kept only for kPending.
  // An empty `completion` makes the write plain whatever durability_min_level
  // says; with durability requirements it is refused kInvalidLevel.
  // Cost: O(1) expected.
  WriteResult write(WriteRequest&& request, Completion&& completion, clock::TimePoint now,
                    ResolvedWrites& resolved);

  // A replica acknowledged prepares up to `prepared_seqno`; commits what
  // that satisfies. False when `node` is not a replica of the topology or the
  // vbucket is not active. O(writes committed).
  bool seqnoAckReceived(const std::string& node, Seqno prepared_seqno, ResolvedWrites& resolved);

  // This node persisted the vbucket up to `persisted_seqno`.
  void notifyLocalPersistence(Seqno persisted_seqno, ResolvedWrites& resolved);

  // Aborts the expired prefix (deadline < now) and re-arms the listener.
  // When the oldest write has not expired and there is no listener, one
  // atomic load and no lock: the cost does not depend on how many writes are
  // tracked. O(writes aborted) otherwise.
  void processTimeout(clock::TimePoint now, ResolvedWrites& resolved);

  // Resolves every tracked write ambiguous with `reason`, queueing nothing.
  // With `close`, the monitor refuses every later write (kNotActive) for good.
  void abortAll(AmbiguousReason reason, bool close, ResolvedWrites& resolved);

  // Replaces the topology (acks of nodes still present are kept) and commits
  // what the new one satisfies.
  void setTopology(ReplicationTopology topology, ResolvedWrites& resolved);
  ReplicationTopology topology() const;

  // Attaches (or, with null, detaches) the timer told of head changes, and
  // tells it the current head at once. Only one at a time.
  void setHeadDeadlineListener(HeadDeadlineListener* listener);

  bool hasSyncWrites() const noexcept { return has_writes_.load(std::memory_order_acquire); }
  clock::TimePoint headDeadline() const noexcept {
    return clock::TimePoint(clock::Duration(head_deadline_.load(std::memory_order_acquire)));
  }
  size_t numTracked() const;
  MonitorCounters counters() const;
  vbucket::VBucket& vbucket() const noexcept { return vb_; }

 private:
  struct TrackedWrite {
    vbucket::QueuedPrepare prepare;  // key, value, cas, seqno, deleted; its resolution entry
    clock::TimePoint deadline;
    Level level;
    Completion completion;
  };

  // The status of a write that may not go ahead, or kPending when it may.
  WriteStatus checkLocked(const WriteRequest& request, bool durable) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  WriteResult writePlainLocked(WriteRequest&& request) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  void commitSatisfiedLocked(ResolvedWrites& resolved) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  void popHeadLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Publishes the head's deadline and tells the listener, when it changed.
  void headChangedLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  vbucket::VBucket& vb_;
  const DurabilitySettings& settings_;

  mutable base::Mutex mutex_;
  std::deque<TrackedWrite> writes_ ABSL_GUARDED_BY(mutex_);
  // Views of writes_[i].prepare->key.
  absl::flat_hash_set<absl::string_view> keys_ ABSL_GUARDED_BY(mutex_);
  AckState acks_ ABSL_GUARDED_BY(mutex_);
  // Written under the lock; atomic so that processTimeout() may peek at it
  // before deciding whether to take the lock.
  std::atomic<HeadDeadlineListener*> listener_{nullptr};
  bool closed_ ABSL_GUARDED_BY(mutex_) = false;
  MonitorCounters counters_ ABSL_GUARDED_BY(mutex_);

  std::atomic<bool> has_writes_{false};
  std::atomic<clock::Duration::rep> head_deadline_{clock::kNever.time_since_epoch().count()};
};

}  // namespace syncwrite::durability
