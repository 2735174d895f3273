// PassiveDurabilityMonitor: the prepares a replica vbucket holds, from the
// moment its active's stream delivers them until the active's commit or abort
// arrives, and the high prepared seqno (HPS) the replica acknowledges.
//
// What it does, as kv_engine's PassiveDurabilityMonitor (engines/ep/src/
// durability/passive_durability_monitor.cc) does:
//  - receivePrepare() queues the prepare in the vbucket's log at the seqno the
//    active gave it and tracks it, in seqno order. A replica never times a
//    prepare out: only the active decides, and only its commit or abort ends
//    one here.
//  - snapshotReceived(end): every item up to `end` is here. The HPS moves over
//    the prepares up to `end`, stopping at the first persist_to_majority
//    prepare this node has not persisted (notifyLocalPersistence() moves it on
//    from there). Majority and majority_and_persist_on_master prepares count
//    once their snapshot is whole, never in the middle of one: a replica
//    promoted then holds a consistent prefix.
//  - receiveCommit() / receiveAbort() complete the oldest prepare not yet
//    completed, which must be the one named (the active resolves in seqno
//    order); a commit makes the prepare the key's visible value (or removes
//    the key for a durable delete); the high completed seqno (HCS) follows.
//    A prepare leaves the monitor once both the HPS and the HCS have passed it.
//
// Each call that can move the HPS returns the new HPS when it moved, so the
// caller (the replica's stream) sends one DCP_SEQNO_ACKNOWLEDGED per move.
//
// Thread-safety: every member may be called from any thread (the stream's I/O
// thread receives, the flusher reports persistence); one mutex. Cost: O(1)
// per item received, plus O(prepares passed) when the HPS moves.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <absl/status/status.h>

#include "base/mutex.h"
#include "durability/level.h"
#include "vbucket/vbucket.h"

namespace syncwrite::durability {

using vbucket::Seqno;

// A prepare as the active's stream delivered it.
struct ReceivedPrepare {
  std::string_view key;
  std::string_view value;
  vbucket::Cas cas = 0;
  Seqno seqno = 0;
  Level level = Level::kMajority;
  bool deleted = false;  // a durable delete
  vbucket::ItemMeta meta{};
};

// A prepare the monitor holds, as promotion takes it: the checkpoint's item
// (with its reserved commit/abort entry) and its level.
struct PassivePrepare {
  vbucket::QueuedPrepare prepare;
  Level level = Level::kMajority;
  bool completed = false;  // its commit or abort was received
};

class PassiveDurabilityMonitor {
 public:
  // Tracks the prepares of `vb`, which must outlive the monitor.
  explicit PassiveDurabilityMonitor(vbucket::VBucket& vb) : vb_(vb) {}
  PassiveDurabilityMonitor(const PassiveDurabilityMonitor&) = delete;
  PassiveDurabilityMonitor& operator=(const PassiveDurabilityMonitor&) = delete;

  // Queues and tracks `prepare`. InvalidArgument, changing nothing, when its
  // level is none or its seqno is not above the vbucket's high seqno.
  absl::Status receivePrepare(const ReceivedPrepare& prepare);

  // The active committed (or aborted) the prepare at `prepared_seqno`, for
  // `key`, at `resolution_seqno`. InvalidArgument, changing nothing, when
  // that is not the oldest prepare not yet completed, or when
  // `resolution_seqno` is not above the vbucket's high seqno.
  absl::Status receiveCommit(std::string_view key, Seqno prepared_seqno, Seqno commit_seqno);
  absl::Status receiveAbort(std::string_view key, Seqno prepared_seqno, Seqno abort_seqno);

  // Every item up to `end` has been received (a snapshot's end). Returns the
  // HPS when it moved.
  std::optional<Seqno> snapshotReceived(Seqno end);

  // This node persisted the vbucket up to `persisted`. Returns the HPS when
  // it moved. A report above the vbucket's high seqno is ignored: it was
  // read before a reset() and names items the vbucket no longer has.
  std::optional<Seqno> notifyLocalPersistence(Seqno persisted);

  // Forgets everything (a rollback to 0): no prepare tracked, HPS, HCS, the
  // received and persisted seqnos 0.
  void reset();

  Seqno highPreparedSeqno() const;
  Seqno highCompletedSeqno() const;
  // The last local persistence reported (notifyLocalPersistence).
  Seqno persistedSeqno() const;
  // Prepares held (not yet passed by both the HPS and the HCS).
  size_t numTracked() const;

  // Every prepare held, oldest first, leaving the monitor empty (for a
  // promotion, which turns the uncompleted ones into active SyncWrites).
  std::vector<PassivePrepare> takeAll();

 private:
  absl::Status completeLocked(vbucket::QueueOp op, std::string_view key, Seqno prepared_seqno,
                              Seqno resolution_seqno) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Moves the HPS as far as received_ and persisted_ allow; true when it moved.
  bool advanceLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Drops the front prepares both the HPS and the HCS have passed.
  void trimLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  vbucket::VBucket& vb_;
  mutable base::Mutex mutex_;
  std::deque<PassivePrepare> tracked_ ABSL_GUARDED_BY(mutex_);
  Seqno hps_ ABSL_GUARDED_BY(mutex_) = 0;
  Seqno hcs_ ABSL_GUARDED_BY(mutex_) = 0;
  Seqno received_ ABSL_GUARDED_BY(mutex_) = 0;   // last snapshot end received whole
  Seqno persisted_ ABSL_GUARDED_BY(mutex_) = 0;  // last local persistence report
};

}  // namespace syncwrite::durability
