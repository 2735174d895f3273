#include "durability/active_durability_monitor.h"

#include <utility>

namespace syncwrite::durability {

namespace {

constexpr clock::Duration::rep kNeverRep = clock::kNever.time_since_epoch().count();

// The resolution of `prepare`'s write, before saying how it resolved.
Resolution resolutionOf(const vbucket::Item& prepare, Vbid vbid) noexcept {
  Resolution r;
  r.vbid = vbid;
  r.prepare_seqno = prepare.seqno;
  r.cas = prepare.cas;
  return r;
}

// The key set's view of a key. Debian's Abseil has a string_view of its own,
// which Abseil hashes itself; std::string_view would go through std::hash.
absl::string_view keyView(const std::string& key) noexcept {
  return absl::string_view(key.data(), key.size());
}

bool isKnownLevel(Level level) noexcept {
  return level == Level::kMajority || level == Level::kMajorityAndPersistOnMaster ||
         level == Level::kPersistToMajority;
}

}  // namespace

ActiveDurabilityMonitor::ActiveDurabilityMonitor(vbucket::VBucket& vb,
                                                 const DurabilitySettings& settings,
                                                 ReplicationTopology topology)
    : vb_(vb), settings_(settings), acks_(std::move(topology)) {}

WriteStatus ActiveDurabilityMonitor::checkLocked(const WriteRequest& request, bool durable) const {
  if (closed_ || vb_.state() != vbucket::VBucketState::kActive) return WriteStatus::kNotActive;
  if (durable && !acks_.topology().isDurabilityPossible()) {
    return WriteStatus::kDurabilityImpossible;
  }
  if (keys_.contains(keyView(request.key))) return WriteStatus::kSyncWriteInProgress;
  if (request.op != WriteOp::kSet || request.expected_cas != 0) {
    const vbucket::QueuedItem current = vb_.hashTable().find(request.key);
    const bool exists =
        current != nullptr && (request.unix_now == 0 || !current->expiredAt(request.unix_now));
    if (request.op == WriteOp::kAdd && exists) return WriteStatus::kKeyExists;
    if (request.op != WriteOp::kAdd && !exists) return WriteStatus::kKeyNotFound;
    if (request.expected_cas != 0 && (current == nullptr || current->cas != request.expected_cas)) {
      return WriteStatus::kKeyExists;
    }
  }
  return WriteStatus::kPending;
}

WriteResult ActiveDurabilityMonitor::write(WriteRequest&& request, Completion&& completion,
                                           clock::TimePoint now, ResolvedWrites& resolved) {
  Level level = Level::kNone;
  if (request.durability) {
    level = request.durability->level;
    // A durability requirement must name a level: "none" is not one (the
    // protocol answers invalid level for it, as kv_engine does). A SyncWrite
    // with nobody to answer is refused the same way.
    if (!isKnownLevel(level) || !completion) {
      base::MutexLock lock(mutex_);
      ++counters_.refused;
      return {WriteStatus::kInvalidLevel, 0};
    }
  }
  // A caller that gave no completion cannot wait: durability_min_level does
  // not raise its write (see BucketDurability::mayPend()).
  if (completion) level = atLeast(level, settings_.min_level.load(std::memory_order_relaxed));
  const bool durable = level != Level::kNone;
  const Timeout timeout =
      request.durability ? request.durability->timeout : Timeout::bucketDefault();
  const bool deleted = request.op == WriteOp::kDelete;
  if (deleted) request.value.clear();

  base::MutexLock lock(mutex_);
  if (const WriteStatus status = checkLocked(request, durable); status != WriteStatus::kPending) {
    ++counters_.refused;
    return {status, 0};
  }
  if (!durable) return writePlainLocked(std::move(request));

  const clock::TimePoint deadline = timeout.deadline(now, settings_.defaultTimeout());
  TrackedWrite& tracked = writes_.emplace_back(TrackedWrite{
      vb_.checkpointManager().queuePrepare(std::move(request.key), std::move(request.value),
                                           request.cas, deleted, request.meta),
      deadline, level, std::move(completion)});
  const Seqno seqno = tracked.prepare->seqno;
  keys_.insert(keyView(tracked.prepare->key));
  if (writes_.size() == 1) headChangedLocked();
  // Satisfied already when the active alone is a majority; the caller defers
  // the notification.
  commitSatisfiedLocked(resolved);
  return {WriteStatus::kPending, seqno};
}

WriteResult ActiveDurabilityMonitor::writePlainLocked(WriteRequest&& request) {
  const bool deleted = request.op == WriteOp::kDelete;
  std::string key = deleted ? request.key : std::string();
  vbucket::QueuedItem item =
      vb_.checkpointManager().queue(vbucket::QueueOp::kMutation, std::move(request.key),
                                    std::move(request.value), request.cas, deleted, request.meta);
  if (deleted) {
    vb_.hashTable().erase(key);
  } else {
    vb_.hashTable().setCommitted(item);
  }
  ++counters_.plain_writes;
  return {WriteStatus::kCommitted, item->seqno};
}

bool ActiveDurabilityMonitor::seqnoAckReceived(const std::string& node, Seqno prepared_seqno,
                                               ResolvedWrites& resolved) {
  base::MutexLock lock(mutex_);
  if (closed_ || vb_.state() != vbucket::VBucketState::kActive) return false;
  if (!acks_.seqnoAck(node, prepared_seqno)) return false;
  commitSatisfiedLocked(resolved);
  return true;
}

void ActiveDurabilityMonitor::notifyLocalPersistence(Seqno persisted_seqno,
                                                     ResolvedWrites& resolved) {
  base::MutexLock lock(mutex_);
  acks_.localPersistence(persisted_seqno);
  commitSatisfiedLocked(resolved);
}

void ActiveDurabilityMonitor::commitSatisfiedLocked(ResolvedWrites& resolved) {
  bool head_changed = false;
  while (!writes_.empty()) {
    TrackedWrite& head = writes_.front();
    if (!acks_.isSatisfied(head.prepare->seqno, head.level)) break;
    // Held by head.prepare until it moves into the hash table, its last use.
    const vbucket::Item& prepare = *head.prepare;
    Resolution r = resolutionOf(prepare, vb_.id());
    r.committed = true;
    // The commit refers to the prepare, whose item becomes the visible value
    // as it is (no copy of the key or the value).
    r.resolution_seqno =
        vb_.checkpointManager().queueResolution(vbucket::QueueOp::kCommit, head.prepare);
    keys_.erase(keyView(prepare.key));
    if (prepare.deleted) {
      vb_.hashTable().erase(prepare.key);
    } else {
      vb_.hashTable().setCommitted(std::move(head.prepare.item));
    }
    resolved.add(std::move(head.completion), r);
    ++counters_.committed;
    writes_.pop_front();
    head_changed = true;
  }
  if (head_changed) headChangedLocked();
}

void ActiveDurabilityMonitor::processTimeout(clock::TimePoint now, ResolvedWrites& resolved) {
  // The common case on both timeout paths: nothing has expired yet.
  // Without a listener there is nothing to re-arm either, so no lock.
  if (head_deadline_.load(std::memory_order_acquire) >= now.time_since_epoch().count() &&
      listener_.load(std::memory_order_acquire) == nullptr) {
    return;
  }
  base::MutexLock lock(mutex_);
  bool head_changed = false;
  while (!writes_.empty() && writes_.front().deadline < now) {
    TrackedWrite& head = writes_.front();
    const Seqno abort_seqno =
        vb_.checkpointManager().queueResolution(vbucket::QueueOp::kAbort, head.prepare);
    Resolution r = resolutionOf(*head.prepare, vb_.id());
    r.reason = AmbiguousReason::kTimeout;
    r.resolution_seqno = abort_seqno;
    resolved.add(std::move(head.completion), r);
    ++counters_.aborted_timeout;
    popHeadLocked();
    head_changed = true;
  }
  if (head_changed) {
    headChangedLocked();
  } else if (HeadDeadlineListener* l = listener_.load(std::memory_order_relaxed)) {
    l->headDeadlineChanged(headDeadline());  // woken early: sleep again
  }
}

void ActiveDurabilityMonitor::abortAll(AmbiguousReason reason, bool close,
                                       ResolvedWrites& resolved) {
  base::MutexLock lock(mutex_);
  if (close) closed_ = true;
  if (writes_.empty()) return;
  keys_.clear();
  for (TrackedWrite& w : writes_) {
    Resolution r = resolutionOf(*w.prepare, vb_.id());
    r.reason = reason;  // ambiguous, nothing queued
    resolved.add(std::move(w.completion), r);
  }
  counters_.ambiguous_other += writes_.size();
  writes_.clear();
  headChangedLocked();
}

void ActiveDurabilityMonitor::setTopology(ReplicationTopology topology, ResolvedWrites& resolved) {
  base::MutexLock lock(mutex_);
  acks_.setTopology(std::move(topology));
  if (closed_ || vb_.state() != vbucket::VBucketState::kActive) return;
  commitSatisfiedLocked(resolved);
}

ReplicationTopology ActiveDurabilityMonitor::topology() const {
  base::MutexLock lock(mutex_);
  return acks_.topology();
}

void ActiveDurabilityMonitor::setHeadDeadlineListener(HeadDeadlineListener* listener) {
  base::MutexLock lock(mutex_);
  listener_.store(listener, std::memory_order_release);
  if (listener != nullptr) listener->headDeadlineChanged(headDeadline());
}

void ActiveDurabilityMonitor::popHeadLocked() {
  keys_.erase(keyView(writes_.front().prepare->key));
  writes_.pop_front();
}

void ActiveDurabilityMonitor::headChangedLocked() {
  const clock::Duration::rep deadline =
      writes_.empty() ? kNeverRep : writes_.front().deadline.time_since_epoch().count();
  head_deadline_.store(deadline, std::memory_order_release);
  has_writes_.store(!writes_.empty(), std::memory_order_release);
  if (HeadDeadlineListener* l = listener_.load(std::memory_order_relaxed)) {
    l->headDeadlineChanged(headDeadline());
  }
}

size_t ActiveDurabilityMonitor::numTracked() const {
  base::MutexLock lock(mutex_);
  return writes_.size();
}

MonitorCounters ActiveDurabilityMonitor::counters() const {
  base::MutexLock lock(mutex_);
  MonitorCounters c = counters_;
  c.in_flight = writes_.size();
  return c;
}

}  // namespace syncwrite::durability
