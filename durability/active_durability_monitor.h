// ActiveDurabilityMonitor: the SyncWrites in flight in one vbucket, while it
// is active, from prepare to commit or abort. Thread-safe.
//
// Writes are tracked in seqno order (prepares are queued under the monitor's
// lock) and leave only from the front, so commits and aborts reach the
// checkpoint in prepare order:
//  - commit: while the oldest write is satisfied (AckState: a majority of
//    every chain, the active among them, at its level), its prepare becomes
//    the key's visible value (or removes the key), a commit is queued, and it
//    resolves committed; a satisfied write waits behind an unsatisfied one;
//  - abort on timeout: processTimeout(now) aborts the prefix whose deadlines
//    are strictly before `now`, queueing an abort for each;
//  - answered at its own deadline (beyond kv_engine): a write that expires
//    behind an unexpired head is answered ambiguous (kTimeout,
//    resolution_seqno 0) by that processTimeout(), and stays tracked, its key
//    busy, until committed or aborted in order (counted, not answered again);
//  - abortAll(): every write resolves ambiguous, its abort queued in order
//    unless the bucket is going away. Each completion is called exactly once,
// from a ResolvedWrites filled under the lock and notified by the caller after.
// A key with a write in flight refuses another, plain or durable
// (kSyncWriteInProgress): a set of the writes' deque positions (4 bytes a
// slot), hashed and compared by their prepares' keys.
//
// The next deadline is the head's, or an earlier one of an unanswered write
// behind it. Writes whose deadline is earlier than an older write's (none when
// all share a timeout) are also kept in a min-heap: finding it is O(1), adding
// one O(log of them); stale entries are skipped at the top, and the heap is
// rebuilt past twice the writes tracked plus 16, so it stays O(writes).
// hasSyncWrites(), headDeadline() and nextDeadline() are single atomic loads;
// processTimeout() with nothing expired takes no lock. The DeadlineListener
// is told (under the lock) whenever the next deadline becomes earlier, never
// when later. The in-flight set holds the vbucket's id while it tracks a write:
// updated under the lock, after the deadlines are published and before the
// listener is told, one atomic read-modify-write on becoming (non-)empty.
//
// Memory per tracked write: a 40-byte TrackedWrite in the deque, a key set
// slot (and a 16-byte heap entry if it can expire behind the head); the
// prepare is the checkpoint's item, shared. The deque keeps one spare block
// (480 bytes), so steady traffic allocates only each write's item.
// tests/idle_memory_test.cc (PendingSyncWriteMemory) pins it; docs/memory.md.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <absl/container/flat_hash_set.h>
#include <absl/strings/string_view.h>

#include "base/mutex.h"
#include "base/spare_block.h"
#include "clock/time.h"
#include "durability/ack_state.h"
#include "durability/commit_latency.h"
#include "durability/passive_durability_monitor.h"
#include "durability/resolved_writes.h"
#include "durability/sync_write.h"
#include "durability/topology.h"
#include "vbucket/vbucket.h"
#include "vbucket/vbucket_set.h"

namespace syncwrite::durability {

// The bucket-wide settings every monitor reads when a write is added. Kept
// current by the owner's config listeners; relaxed atomics, since a write
// racing with a change may see either value.
struct DurabilitySettings {
  std::atomic<Level> min_level{Level::kNone};
  // False for a bucket that keeps nothing on disk (bucket_type ephemeral):
  // a SyncWrite whose level needs persistence is refused kInvalidLevel, as
  // kv_engine's ephemeral buckets refuse it (EphemeralVBucket::
  // isValidDurabilityLevel). Set before any monitor sees a write.
  bool persistent = true;
  std::atomic<int64_t> default_timeout_ms{30000};
  // Not a setting: the writes tracked by all the bucket's monitors whose
  // level needs this node's persistence. A monitor raises it (sequentially
  // consistent, for notifyLocalPersistence()'s lock-free check), under
  // its lock, before the write's prepare is queued, so a flusher that read the
  // prepare from the checkpoint (under the checkpoint's lock) then reads a
  // count that includes it; it lowers it when the write leaves. While it is
  // 0, notifyLocalPersistence() takes no lock: a persisted seqno that is not
  // recorded can satisfy no later write, whose seqno is higher. On a line of
  // its own, which majority writes never write: a flusher's load of it hits
  // in its cache (a count in each monitor, beside the fields every write
  // changes, missed once per report).
  alignas(64) mutable std::atomic<uint64_t> awaiting_persistence{0};
  // Not a setting either: the writes a promotion took from a replica that
  // have not committed or aborted yet (ActiveDurabilityMonitor::
  // adoptPrepares). A read checks it before asking the monitor whether its
  // key is being re-committed: one load of a line nothing writes meanwhile.
  mutable std::atomic<uint64_t> recommits_pending{0};
  // Not a setting: every monitor records its clients' commits here
  // (commit_latency.h), each measured from the prepare's CAS.
  mutable CommitLatency commit_latency;

  std::chrono::milliseconds defaultTimeout() const noexcept {
    return std::chrono::milliseconds(default_timeout_ms.load(std::memory_order_relaxed));
  }
};

// Told, under the monitor's lock, the monitor's next deadline when it became
// earlier than it was (never clock::kNever). Must not block and must not call
// back into the monitor. One listener may serve many monitors.
class DeadlineListener {
 public:
  virtual void nextDeadlineEarlier(clock::TimePoint next_deadline) = 0;

 protected:
  ~DeadlineListener() = default;
};

// Totals since construction, for stats.
struct MonitorCounters {
  uint64_t in_flight = 0;  // tracked now (the others are totals)
  uint64_t committed = 0;
  uint64_t aborted_timeout = 0;  // aborts queued at the deadline (answered then or before)
  uint64_t ambiguous_other = 0;
  uint64_t aborted_other = 0;  // aborts queued by abortAll() (left active, flushed)
  // Answered ambiguous at their deadline while an older write headed the
  // vbucket; each is also counted when its prepare later commits or aborts.
  uint64_t answered_behind_head = 0;
  uint64_t committed_after_answer = 0;  // of those, the ones that committed
  uint64_t recommitted = 0;  // prepares taken over at a promotion, committed (adoptPrepares)
  uint64_t plain_writes = 0;
  uint64_t refused = 0;
  // By level (indexed by Level's value; kNone stays 0): SyncWrites accepted,
  // committed (promoted prepares included), and aborts queued for any reason.
  std::array<uint64_t, kLevelCount> accepted_by_level{};
  std::array<uint64_t, kLevelCount> committed_by_level{};
  std::array<uint64_t, kLevelCount> aborted_by_level{};
  // Clients answered SyncWriteAmbiguous, by AmbiguousReason's value.
  std::array<uint64_t, kAmbiguousReasonCount> ambiguous_by_reason{};
};

class ActiveDurabilityMonitor {
 public:
  // Tracks writes of `vb` while it is active. `settings` and `in_flight`
  // (optional: the in-flight set of the file comment; its size must exceed vb's id)
  // must outlive the monitor.
  ActiveDurabilityMonitor(vbucket::VBucket& vb, const DurabilitySettings& settings,
                          ReplicationTopology topology, vbucket::VBucketSet* in_flight = nullptr);
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
  WriteResult write(WriteRequest request, Completion&& completion, clock::TimePoint now,
                    ResolvedWrites& resolved);

  // A replica acknowledged prepares up to `prepared_seqno`; commits what
  // that satisfies. An ack beyond the vbucket's high seqno counts up to the
  // high seqno only: it covers the prepares that exist, never one queued
  // later (kv_engine's active monitor likewise advances a node over tracked
  // writes only). False when the vbucket is not active, or when `node` is
  // not a replica of the topology: that ack is kept for a topology that adds
  // the node (AckState::seqnoAck()). O(writes committed).
  bool seqnoAckReceived(const std::string& node, Seqno prepared_seqno, ResolvedWrites& resolved);
  // What `node` has acknowledged, as counted (0: nothing, or not a replica).
  Seqno ackedSeqno(const std::string& node) const;
  // For each defined replica of the topology, how many tracked writes it has
  // not acknowledged yet (seqno above its ack), in chain order. O(replicas ×
  // log writes) under the lock.
  std::vector<std::pair<std::string, uint64_t>> unackedByReplica() const;
  // For each defined replica of the topology, how many seqnos its ack is
  // behind the last prepare this monitor queued or adopted (0 when it acked
  // it), in chain order. Unlike unackedByReplica(), it counts prepares a
  // majority already committed. O(replicas) under the lock.
  std::vector<std::pair<std::string, uint64_t>> ackLagByReplica() const;

  // This node persisted the vbucket up to `persisted_seqno`. One atomic load
  // and no lock while no write tracked in the bucket needs persistence here
  // (DurabilitySettings::awaiting_persistence; the flusher reports every
  // vbucket it wrote a prepare of, whatever its level).
  void notifyLocalPersistence(Seqno persisted_seqno, ResolvedWrites& resolved);

  // Aborts the expired prefix (deadline < now) and answers ambiguous every
  // other write whose deadline < now (left tracked, see above). When nothing
  // has expired, one atomic load and no lock, however many writes are
  // tracked. Otherwise O(writes aborted + writes answered × log).
  //
  // At most `max_writes` aborts and answers together (0 is taken as 1): the
  // rest stay due, and nextDeadline() stays before `now` until a later call
  // takes them (aborts still in seqno order), so that a caller can bound how
  // long it holds its thread however long a vbucket's expired prefix is.
  static constexpr size_t kAllExpired = SIZE_MAX;
  void processTimeout(clock::TimePoint now, ResolvedWrites& resolved,
                      size_t max_writes = kAllExpired);

  // Resolves every tracked write ambiguous with `reason`. Without `close`, it
  // first queues an abort for each, in seqno order (Resolution::resolution_seqno
  // is the abort's), so that no prepare is left unresolved in the log and the
  // key may be written again; a write answered at its deadline already is
  // aborted but not answered again. With `close` it queues nothing and the
  // monitor refuses every later write (kNotActive) for good. O(writes).
  void abortAll(AmbiguousReason reason, bool close, ResolvedWrites& resolved);

  // Promotion: takes the prepares a replica held (passive_durability_monitor.h)
  // that were not completed, oldest first, as SyncWrites with no deadline and
  // no client (never aborted by a timeout; committed once the topology's
  // majority has acknowledged them), and records `persisted_seqno` as this
  // node's persistence. Requires the vbucket not active yet and no write
  // tracked (std::logic_error otherwise); the caller makes it active, then
  // calls commitSatisfied(). Until one of them commits or aborts,
  // reCommitInProgress() is true for its key. Returns how many it took.
  size_t adoptPrepares(std::vector<PassivePrepare> prepares, Seqno persisted_seqno);
  // Commits what the acks and persistence recorded satisfy (after a promotion).
  void commitSatisfied(ResolvedWrites& resolved);
  // True while `key`'s tracked write is one adoptPrepares() took. Takes the
  // lock; callers check DurabilitySettings::recommits_pending first.
  bool reCommitInProgress(std::string_view key) const;

  // AckState::forgetQueuedAck() under the monitor's lock.
  void forgetQueuedAck(const std::string& node);

  // Replaces the topology (acks of nodes still present are kept), ends
  // awaitTopology(), and commits what the new one satisfies.
  void setTopology(ReplicationTopology topology, ResolvedWrites& resolved);
  // The vbucket was made active without a chain that names this node: until
  // the next setTopology(), new SyncWrites are refused kTemporaryFailure and
  // nothing tracked commits (acks are still recorded), as kv_engine's active
  // monitor with no topology (MB-70387). Plain writes are unaffected.
  void awaitTopology();
  bool awaitingTopology() const;
  ReplicationTopology topology() const;

  // Attaches (or, with null, detaches) the timer told of earlier next
  // deadlines, and tells it the current one at once (unless kNever). Only
  // one at a time.
  void setDeadlineListener(DeadlineListener* listener);

  bool hasSyncWrites() const noexcept { return has_writes_.load(std::memory_order_acquire); }
  // The oldest write's deadline (kNever when none).
  clock::TimePoint headDeadline() const noexcept {
    return clock::TimePoint(clock::Duration(head_deadline_.load(std::memory_order_acquire)));
  }
  // The next deadline (see above; kNever when none). Sequentially
  // consistent (a plain load on x86): a timer that publishes "I am looking"
  // and then reads this either sees a deadline made earlier concurrently, or
  // is told of it (publishLocked).
  clock::TimePoint nextDeadline() const noexcept {
    return clock::TimePoint(clock::Duration(next_deadline_.load(std::memory_order_seq_cst)));
  }
  size_t numTracked() const;
  // The prepares tracked now, oldest first, with their levels (a stream's
  // backfill sends the ones its log no longer holds). O(writes), under the lock.
  std::vector<std::pair<vbucket::QueuedItem, Level>> trackedPrepares() const;
  // Entries in the heap of writes that may expire behind the head, stale ones
  // included (a test's view of the memory bound above).
  size_t heapEntries() const;
  MonitorCounters counters() const;
  vbucket::VBucket& vbucket() const noexcept { return vb_; }

 private:
  // 40 bytes on x86-64, twelve to a 480-byte deque block: the deadline and
  // the level share 8 bytes, and a write answered at its deadline is one
  // whose completion was called (and so is empty).
  class TrackedWrite {
   public:
    TrackedWrite(vbucket::QueuedPrepare p, clock::TimePoint deadline, Level level,
                 Completion&& c) noexcept;

    clock::TimePoint deadline() const noexcept;
    Level level() const noexcept { return static_cast<Level>(level_); }
    // Its completion was called at its deadline, behind the head.
    bool answered() const noexcept { return !completion; }
    Seqno seqno() const noexcept { return prepare->seqno; }

    vbucket::QueuedPrepare prepare;  // key, value, cas, seqno, deleted; its resolution entry
    Completion completion;           // empty once answered

   private:
    // The deadline's count in 62 bits: 73 years either side of the clock's
    // epoch. Later is clock::kNever (Timeout::infinite()); earlier, 73 years
    // before it (no deadline is: the clock starts at its epoch).
    static constexpr int64_t kNeverBits = (int64_t{1} << 61) - 1;
    int64_t deadline_ : 62;
    uint8_t level_ : 2;
  };
  static_assert(sizeof(TrackedWrite) == 40,
                "TrackedWrite grew: a pending write costs more (docs/memory.md)");
  // The position of writes_[i] is front_position_ + i (mod 2^32): what keys_
  // holds. Hashes and compares a position by its write's key, and a key as
  // itself. Used only under mutex_, as every call on keys_ is.
  struct PositionHash {
    using is_transparent = void;
    const ActiveDurabilityMonitor* monitor;
    size_t operator()(uint32_t position) const noexcept;
    size_t operator()(absl::string_view key) const noexcept;
  };
  struct PositionEq {
    using is_transparent = void;
    const ActiveDurabilityMonitor* monitor;
    bool operator()(uint32_t a, uint32_t b) const noexcept { return a == b; }
    bool operator()(uint32_t a, absl::string_view key) const noexcept;
  };
  // The key of the write at `position`. Requires mutex_ held (keys_'s hash
  // and equality run only inside calls on keys_, all made under it).
  absl::string_view keyAt(uint32_t position) const noexcept ABSL_NO_THREAD_SAFETY_ANALYSIS;
  // A write that may expire behind the head; ordered earliest first. Found
  // in writes_ by its prepare's seqno (writes_ is in seqno order); stale
  // once that is below the head's.
  struct EarlyEntry {
    clock::Duration::rep deadline;
    Seqno seqno;
    bool operator>(const EarlyEntry& o) const noexcept { return deadline > o.deadline; }
  };
  // The status of a write that may not go ahead, or kPending when it may.
  WriteStatus checkLocked(const WriteRequest& request, bool durable) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  WriteResult writePlainLocked(const WriteRequest& request) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  void commitSatisfiedLocked(ResolvedWrites& resolved) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Drops the oldest write, whose key the caller has erased already and
  // whose prepare it may have moved out; `inherited`: it was adopted
  // (adoptPrepares), which the caller checked before.
  void popHeadLocked(bool inherited) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // The earliest heap entry whose write is still tracked (stale ones are
  // dropped on the way), or null.
  const EarlyEntry* earlyTopLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // The tracked write whose prepare has `seqno`. O(log writes).
  TrackedWrite& writeWithSeqnoLocked(Seqno seqno) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // processTimeout() past its lock-free check. Out of line, so that the
  // check saves no registers: with the bound in the same function, GCC put
  // the slow path's prologue ahead of it, and ProcessTimeoutNoneExpired went
  // from ~2.0 to ~3.3 ns.
  [[gnu::noinline]] void processExpired(clock::TimePoint now, ResolvedWrites& resolved,
                                        size_t max_writes) ABSL_LOCKS_EXCLUDED(mutex_);
  // Answers unanswered writes with deadline < now behind the head, earliest
  // deadline first, at most `max_writes` of them.
  void answerExpiredLocked(clock::TimePoint now, ResolvedWrites& resolved, size_t max_writes)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Open and the vbucket active: only then does the monitor take writes or
  // commit and abort them. The vbucket's state changes before its listener's
  // abortAll() takes mutex_ (vbucket.h), so an ack, a persisted seqno or a
  // timeout run can take the lock in between: it resolves nothing, and
  // abortAll() answers every write ambiguous (kLeftActive), as kv_engine
  // answers the SyncWrites of a vbucket that left active.
  bool resolvesLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Publishes the head's and the next deadline and the in-flight set's bit,
  // and tells the listener when the next deadline became earlier.
  void publishLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  vbucket::VBucket& vb_;
  const DurabilitySettings& settings_;
  vbucket::VBucketSet* const in_flight_;

  mutable base::Mutex mutex_;
  // The block writes_ last freed, for the block it allocates next: writes
  // flowing through the deque allocate nothing (base/spare_block.h).
  // Declared first: it outlives writes_. Touched only through writes_.
  base::SpareBlock spare_;
  using Writes = std::deque<TrackedWrite, base::SpareBlockAllocator<TrackedWrite>>;
  Writes writes_ ABSL_GUARDED_BY(mutex_){base::SpareBlockAllocator<TrackedWrite>(spare_)};
  uint32_t front_position_ ABSL_GUARDED_BY(mutex_) = 0;  // writes_.front()'s position
  // The positions of writes_ (every one, by its key).
  absl::flat_hash_set<uint32_t, PositionHash, PositionEq> keys_ ABSL_GUARDED_BY(mutex_){
      0, PositionHash{this}, PositionEq{this}};
  // Min-heap (std::greater) of the writes that may expire behind the head.
  std::vector<EarlyEntry> early_ ABSL_GUARDED_BY(mutex_);
  // The latest deadline of the writes added since writes_ was last empty.
  clock::TimePoint max_deadline_ ABSL_GUARDED_BY(mutex_) = clock::TimePoint::min();
  AckState acks_ ABSL_GUARDED_BY(mutex_);
  // The timer told of earlier next deadlines. Stored by setDeadlineListener()
  // and loaded by publishLocked(), both under mutex_: nothing reads it
  // without the lock, so once setDeadlineListener(nullptr) returns the old
  // listener is not called again. The atomic adds nothing to that (it is left
  // from when processTimeout() read it before taking the lock).
  std::atomic<DeadlineListener*> listener_{nullptr};
  bool closed_ ABSL_GUARDED_BY(mutex_) = false;
  // acks_.topology().isDurabilityPossible(), kept with the topology: asked
  // on every SyncWrite, it counted the chains' defined names each time (1%
  // of the server's CPU at 4 x 32 durable SETs). Fills padding after closed_.
  bool durability_possible_ ABSL_GUARDED_BY(mutex_);
  // awaitTopology() until setTopology().
  bool awaiting_topology_ ABSL_GUARDED_BY(mutex_) = false;
  MonitorCounters counters_ ABSL_GUARDED_BY(mutex_);
  // The last seqno adoptPrepares() took: a tracked write at or below it is
  // a re-commit (0: none).
  Seqno inherited_through_ ABSL_GUARDED_BY(mutex_) = 0;
  // The seqno of the last prepare queued or adopted here (ackLagByReplica).
  Seqno last_prepare_ ABSL_GUARDED_BY(mutex_) = 0;

  std::atomic<bool> has_writes_{false};
  std::atomic<clock::Duration::rep> head_deadline_{clock::kNever.time_since_epoch().count()};
  std::atomic<clock::Duration::rep> next_deadline_{clock::kNever.time_since_epoch().count()};
};

}  // namespace syncwrite::durability
