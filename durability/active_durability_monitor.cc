#include "durability/active_durability_monitor.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <stdexcept>
#include <utility>

namespace syncwrite::durability {

namespace {

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
absl::string_view keyView(std::string_view key) noexcept { return {key.data(), key.size()}; }

bool isKnownLevel(Level level) noexcept {
  return level == Level::kMajority || level == Level::kMajorityAndPersistOnMaster ||
         level == Level::kPersistToMajority;
}

}  // namespace

ActiveDurabilityMonitor::TrackedWrite::TrackedWrite(vbucket::QueuedPrepare p,
                                                    clock::TimePoint deadline, Level level,
                                                    Completion&& c) noexcept
    : prepare(std::move(p)),
      completion(std::move(c)),
      deadline_(std::clamp(deadline.time_since_epoch().count(), clock::Duration::rep{-kNeverBits},
                           clock::Duration::rep{kNeverBits})),
      level_(static_cast<uint8_t>(level)) {}

clock::TimePoint ActiveDurabilityMonitor::TrackedWrite::deadline() const noexcept {
  return deadline_ == kNeverBits ? clock::kNever : clock::TimePoint(clock::Duration(deadline_));
}

absl::string_view ActiveDurabilityMonitor::keyAt(uint32_t position) const noexcept {
  return keyView(writes_[position - front_position_].prepare->key());
}

size_t ActiveDurabilityMonitor::PositionHash::operator()(uint32_t position) const noexcept {
  return (*this)(monitor->keyAt(position));
}

size_t ActiveDurabilityMonitor::PositionHash::operator()(absl::string_view key) const noexcept {
  return absl::Hash<absl::string_view>{}(key);
}

bool ActiveDurabilityMonitor::PositionEq::operator()(uint32_t a,
                                                     absl::string_view key) const noexcept {
  return monitor->keyAt(a) == key;
}

ActiveDurabilityMonitor::ActiveDurabilityMonitor(vbucket::VBucket& vb,
                                                 const DurabilitySettings& settings,
                                                 ReplicationTopology topology,
                                                 vbucket::VBucketSet* in_flight)
    : vb_(vb),
      settings_(settings),
      in_flight_(in_flight),
      acks_(std::move(topology)),
      durability_possible_(acks_.topology().isDurabilityPossible()) {}

bool ActiveDurabilityMonitor::resolvesLocked() const {
  return !closed_ && vb_.state() == vbucket::VBucketState::kActive;
}

WriteStatus ActiveDurabilityMonitor::checkLocked(const WriteRequest& request, bool durable) const {
  if (!resolvesLocked()) return WriteStatus::kNotActive;
  if (durable && awaiting_topology_) return WriteStatus::kTemporaryFailure;
  if (durable && !durability_possible_) {
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

WriteResult ActiveDurabilityMonitor::write(WriteRequest request, Completion&& completion,
                                           clock::TimePoint now, ResolvedWrites& resolved) {
  Level level = Level::kNone;
  if (request.durability) {
    level = request.durability->level;
    // A durability requirement must name a level: "none" is not one (the
    // protocol answers invalid level for it, as kv_engine does). A SyncWrite
    // with nobody to answer, or a persist level on a bucket without a disk,
    // is refused the same way.
    if (!isKnownLevel(level) || !completion ||
        (needsActivePersistence(level) && !settings_.persistent)) {
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
  if (deleted) request.value = {};

  base::MutexLock lock(mutex_);
  if (const WriteStatus status = checkLocked(request, durable); status != WriteStatus::kPending) {
    ++counters_.refused;
    return {status, 0};
  }
  if (!durable) return writePlainLocked(request);

  const clock::TimePoint deadline = timeout.deadline(now, settings_.defaultTimeout());
  // Earlier than an older write's deadline: it may expire behind the head.
  if (writes_.empty()) max_deadline_ = clock::TimePoint::min();
  const bool may_expire_behind = deadline < max_deadline_;
  max_deadline_ = std::max(max_deadline_, deadline);
  // Counted before the prepare is queued (DurabilitySettings::awaiting_persistence).
  const bool persists = needsActivePersistence(level);
  // Sequentially consistent: a flusher that read this prepare from the log
  // then sees the count raised (notifyLocalPersistence's lock-free check).
  if (persists) settings_.awaiting_persistence.fetch_add(1, std::memory_order_seq_cst);
  TrackedWrite* added = nullptr;
  try {
    added = &writes_.emplace_back(
        vb_.checkpointManager().queuePrepare(request.key, request.value, request.cas, deleted,
                                             request.meta, static_cast<uint8_t>(level)),
        deadline, level, std::move(completion));
  } catch (...) {
    if (persists) settings_.awaiting_persistence.fetch_sub(1, std::memory_order_relaxed);
    throw;
  }
  TrackedWrite& tracked = *added;
  const Seqno seqno = tracked.seqno();
  last_prepare_ = seqno;
  ++counters_.accepted_by_level[static_cast<size_t>(level)];
  keys_.insert(front_position_ + static_cast<uint32_t>(writes_.size() - 1));
  if (may_expire_behind) {
    early_.push_back({deadline.time_since_epoch().count(), seqno});
    std::push_heap(early_.begin(), early_.end(), std::greater<>());
  }
  if (writes_.size() == 1 ||
      deadline.time_since_epoch().count() < next_deadline_.load(std::memory_order_relaxed)) {
    publishLocked();
  }
  // Satisfied already when the active alone is a majority; the caller defers
  // the notification.
  commitSatisfiedLocked(resolved);
  return {WriteStatus::kPending, seqno};
}

WriteResult ActiveDurabilityMonitor::writePlainLocked(const WriteRequest& request) {
  const bool deleted = request.op == WriteOp::kDelete;
  // The item copies the key and the value into its block.
  vbucket::QueuedItem item = vb_.checkpointManager().queue(
      vbucket::QueueOp::kMutation, request.key, request.value, request.cas, deleted, request.meta);
  if (deleted) {
    vb_.hashTable().erase(request.key);
  } else {
    vb_.hashTable().setCommitted(item);
  }
  ++counters_.plain_writes;
  return {WriteStatus::kCommitted, item->seqno};
}

bool ActiveDurabilityMonitor::seqnoAckReceived(const std::string& node, Seqno prepared_seqno,
                                               ResolvedWrites& resolved) {
  base::MutexLock lock(mutex_);
  if (!resolvesLocked()) return false;
  // Every prepare up to the high seqno is tracked (or resolved) by now: it is
  // queued and tracked under mutex_. One queued later gets a higher seqno.
  if (!acks_.seqnoAck(node, std::min(prepared_seqno, vb_.highSeqno()))) return false;
  commitSatisfiedLocked(resolved);
  return true;
}

Seqno ActiveDurabilityMonitor::ackedSeqno(const std::string& node) const {
  base::MutexLock lock(mutex_);
  return acks_.ackedSeqno(node);
}

std::vector<std::pair<std::string, uint64_t>> ActiveDurabilityMonitor::unackedByReplica() const {
  base::MutexLock lock(mutex_);
  std::vector<std::pair<std::string, uint64_t>> out;
  for (const ReplicationChain& chain : acks_.topology().chains()) {
    for (const std::string& replica : chain.replicas) {
      if (replica.empty()) continue;
      const Seqno acked = acks_.ackedSeqno(replica);
      // writes_ is in seqno order: those above the ack are a suffix.
      const auto first =
          std::upper_bound(writes_.begin(), writes_.end(), acked,
                           [](Seqno a, const TrackedWrite& w) noexcept { return a < w.seqno(); });
      out.emplace_back(replica, static_cast<uint64_t>(writes_.end() - first));
    }
  }
  return out;
}

std::vector<std::pair<std::string, uint64_t>> ActiveDurabilityMonitor::ackLagByReplica() const {
  base::MutexLock lock(mutex_);
  std::vector<std::pair<std::string, uint64_t>> out;
  for (const ReplicationChain& chain : acks_.topology().chains()) {
    for (const std::string& replica : chain.replicas) {
      if (replica.empty()) continue;
      const Seqno acked = acks_.ackedSeqno(replica);
      out.emplace_back(replica, acked >= last_prepare_ ? 0 : last_prepare_ - acked);
    }
  }
  return out;
}

void ActiveDurabilityMonitor::notifyLocalPersistence(Seqno persisted_seqno,
                                                     ResolvedWrites& resolved) {
  if (settings_.awaiting_persistence.load(std::memory_order_relaxed) == 0) return;
  base::MutexLock lock(mutex_);
  if (!resolvesLocked()) return;
  acks_.localPersistence(persisted_seqno);
  commitSatisfiedLocked(resolved);
}

void ActiveDurabilityMonitor::commitSatisfiedLocked(ResolvedWrites& resolved) {
  if (awaiting_topology_) return;  // the chain whose majority counts is not known yet
  bool head_changed = false;
  int64_t now_ns = 0;  // the real-time clock, read at the first commit with a client
  while (!writes_.empty()) {
    TrackedWrite& head = writes_.front();
    if (!acks_.isSatisfied(head.prepare->seqno, head.level())) break;
    const bool inherited = head.seqno() <= inherited_through_;
    // Held by head.prepare until it moves into the hash table, its last use.
    const vbucket::Item& prepare = *head.prepare;
    Resolution r = resolutionOf(prepare, vb_.id());
    r.committed = true;
    // The commit refers to the prepare, whose item becomes the visible value
    // as it is (no copy of the key or the value).
    r.resolution_seqno =
        vb_.checkpointManager().queueResolution(vbucket::QueueOp::kCommit, head.prepare);
    keys_.erase(front_position_);  // while the head still holds the key
    if (prepare.deleted) {
      vb_.hashTable().erase(prepare.key());
    } else {
      vb_.hashTable().setCommitted(std::move(head.prepare.item));
    }
    if (inherited) {
      ++counters_.recommitted;  // a promoted replica's prepare: no client waits for it
    } else if (head.answered()) {
      ++counters_.committed_after_answer;  // its client heard "ambiguous" at its deadline
    } else {
      if (now_ns == 0) {
        now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count();
      }
      settings_.commit_latency.record(head.level(), now_ns - static_cast<int64_t>(prepare.cas));
      resolved.add(std::move(head.completion), r);
    }
    ++counters_.committed;
    ++counters_.committed_by_level[static_cast<size_t>(head.level())];
    popHeadLocked(inherited);
    head_changed = true;
  }
  if (head_changed) publishLocked();
}

void ActiveDurabilityMonitor::processTimeout(clock::TimePoint now, ResolvedWrites& resolved,
                                             size_t max_writes) {
  // The common case on both timeout paths: nothing has expired yet, so no
  // lock (the next deadline only becomes later by what follows, so there is
  // no listener to tell either).
  if (next_deadline_.load(std::memory_order_acquire) >= now.time_since_epoch().count()) return;
  processExpired(now, resolved, max_writes);
}

void ActiveDurabilityMonitor::processExpired(clock::TimePoint now, ResolvedWrites& resolved,
                                             size_t max_writes) {
  max_writes = std::max<size_t>(max_writes, 1);  // 0 would leave its caller spinning
  base::MutexLock lock(mutex_);
  if (!resolvesLocked()) return;
  size_t taken = 0;
  for (; taken < max_writes && !writes_.empty() && writes_.front().deadline() < now; ++taken) {
    TrackedWrite& head = writes_.front();
    const Seqno abort_seqno =
        vb_.checkpointManager().queueResolution(vbucket::QueueOp::kAbort, head.prepare);
    if (!head.answered()) {
      Resolution r = resolutionOf(*head.prepare, vb_.id());
      r.reason = AmbiguousReason::kTimeout;
      r.resolution_seqno = abort_seqno;
      resolved.add(std::move(head.completion), r);
      ++counters_.ambiguous_by_reason[static_cast<size_t>(AmbiguousReason::kTimeout)];
    }
    ++counters_.aborted_timeout;
    ++counters_.aborted_by_level[static_cast<size_t>(head.level())];
    keys_.erase(front_position_);
    popHeadLocked(/*inherited=*/false);  // an adopted write has no deadline
  }
  answerExpiredLocked(now, resolved, max_writes - taken);
  publishLocked();
}

void ActiveDurabilityMonitor::answerExpiredLocked(clock::TimePoint now, ResolvedWrites& resolved,
                                                  size_t max_writes) {
  const clock::Duration::rep now_rep = now.time_since_epoch().count();
  for (size_t answered = 0; answered < max_writes; ++answered) {
    const EarlyEntry* top = earlyTopLocked();
    if (top == nullptr || top->deadline >= now_rep) break;
    TrackedWrite& w = writeWithSeqnoLocked(top->seqno);
    std::pop_heap(early_.begin(), early_.end(), std::greater<>());
    early_.pop_back();
    Resolution r = resolutionOf(*w.prepare, vb_.id());
    r.reason = AmbiguousReason::kTimeout;  // nothing queued yet: resolution_seqno 0
    resolved.add(std::move(w.completion), r);
    w.completion = nullptr;  // answered()
    ++counters_.answered_behind_head;
    ++counters_.ambiguous_by_reason[static_cast<size_t>(AmbiguousReason::kTimeout)];
  }
}

const ActiveDurabilityMonitor::EarlyEntry* ActiveDurabilityMonitor::earlyTopLocked() {
  while (!early_.empty()) {
    if (!writes_.empty() && early_.front().seqno >= writes_.front().seqno()) {
      return &early_.front();
    }
    std::pop_heap(early_.begin(), early_.end(), std::greater<>());  // its write has left
    early_.pop_back();
  }
  return nullptr;
}

ActiveDurabilityMonitor::TrackedWrite& ActiveDurabilityMonitor::writeWithSeqnoLocked(Seqno seqno) {
  // Present: an entry is stale only below the head's seqno (earlyTopLocked).
  const auto it = std::lower_bound(
      writes_.begin(), writes_.end(), seqno,
      [](const TrackedWrite& w, Seqno wanted) noexcept { return w.seqno() < wanted; });
  return *it;
}

void ActiveDurabilityMonitor::abortAll(AmbiguousReason reason, bool close,
                                       ResolvedWrites& resolved) {
  base::MutexLock lock(mutex_);
  if (close) closed_ = true;
  if (writes_.empty()) return;
  keys_.clear();
  uint64_t persisting = 0;
  for (TrackedWrite& w : writes_) {
    if (needsActivePersistence(w.level())) ++persisting;
    // In seqno order, so the log resolves its prepares in order.
    const Seqno abort_seqno =
        close ? 0 : vb_.checkpointManager().queueResolution(vbucket::QueueOp::kAbort, w.prepare);
    if (!close) {
      ++counters_.aborted_other;
      ++counters_.aborted_by_level[static_cast<size_t>(w.level())];
    }
    if (w.answered()) continue;  // answered at its deadline already
    Resolution r = resolutionOf(*w.prepare, vb_.id());
    r.reason = reason;
    r.resolution_seqno = abort_seqno;
    resolved.add(std::move(w.completion), r);
    ++counters_.ambiguous_other;
    ++counters_.ambiguous_by_reason[static_cast<size_t>(reason)];
  }
  uint64_t inherited = 0;
  for (const TrackedWrite& w : writes_) inherited += w.seqno() <= inherited_through_ ? 1 : 0;
  if (inherited != 0) settings_.recommits_pending.fetch_sub(inherited, std::memory_order_relaxed);
  inherited_through_ = 0;
  writes_.clear();
  if (persisting != 0)
    settings_.awaiting_persistence.fetch_sub(persisting, std::memory_order_relaxed);
  early_.clear();
  publishLocked();
}

size_t ActiveDurabilityMonitor::adoptPrepares(std::vector<PassivePrepare> prepares,
                                              Seqno persisted_seqno) {
  base::MutexLock lock(mutex_);
  if (vb_.state() == vbucket::VBucketState::kActive || !writes_.empty()) {
    throw std::logic_error("adoptPrepares: the vbucket must not be active nor track writes yet");
  }
  acks_.localPersistence(persisted_seqno);
  size_t adopted = 0;
  uint64_t persisting = 0;
  for (PassivePrepare& p : prepares) {
    if (p.completed) continue;
    const Seqno seqno = p.prepare->seqno;
    if (needsActivePersistence(p.level)) ++persisting;
    writes_.emplace_back(std::move(p.prepare), clock::kNever, p.level, Completion());
    keys_.insert(front_position_ + static_cast<uint32_t>(writes_.size() - 1));
    inherited_through_ = seqno;
    last_prepare_ = std::max(last_prepare_, seqno);
    ++adopted;
  }
  if (persisting != 0) {
    settings_.awaiting_persistence.fetch_add(persisting, std::memory_order_seq_cst);
  }
  settings_.recommits_pending.fetch_add(adopted, std::memory_order_relaxed);
  if (adopted != 0) publishLocked();
  return adopted;
}

void ActiveDurabilityMonitor::commitSatisfied(ResolvedWrites& resolved) {
  base::MutexLock lock(mutex_);
  if (resolvesLocked()) commitSatisfiedLocked(resolved);
}

bool ActiveDurabilityMonitor::reCommitInProgress(std::string_view key) const {
  base::MutexLock lock(mutex_);
  if (inherited_through_ == 0) return false;
  auto it = keys_.find(absl::string_view(key.data(), key.size()));
  if (it == keys_.end()) return false;
  return writes_[*it - front_position_].seqno() <= inherited_through_;
}

void ActiveDurabilityMonitor::forgetQueuedAck(const std::string& node) {
  base::MutexLock lock(mutex_);
  acks_.forgetQueuedAck(node);
}

void ActiveDurabilityMonitor::setTopology(ReplicationTopology topology, ResolvedWrites& resolved) {
  base::MutexLock lock(mutex_);
  acks_.setTopology(std::move(topology));
  durability_possible_ = acks_.topology().isDurabilityPossible();
  awaiting_topology_ = false;
  if (!resolvesLocked()) return;
  commitSatisfiedLocked(resolved);
}

void ActiveDurabilityMonitor::awaitTopology() {
  base::MutexLock lock(mutex_);
  awaiting_topology_ = true;
}

bool ActiveDurabilityMonitor::awaitingTopology() const {
  base::MutexLock lock(mutex_);
  return awaiting_topology_;
}

ReplicationTopology ActiveDurabilityMonitor::topology() const {
  base::MutexLock lock(mutex_);
  return acks_.topology();
}

void ActiveDurabilityMonitor::setDeadlineListener(DeadlineListener* listener) {
  base::MutexLock lock(mutex_);
  listener_.store(listener, std::memory_order_release);
  if (listener != nullptr && nextDeadline() != clock::kNever) {
    listener->nextDeadlineEarlier(nextDeadline());
  }
}

// The caller has erased the head's position from keys_ (before a commit
// moves the item its hash reads the key from).
void ActiveDurabilityMonitor::popHeadLocked(bool inherited) {
  if (needsActivePersistence(writes_.front().level())) {
    settings_.awaiting_persistence.fetch_sub(1, std::memory_order_relaxed);
  }
  if (inherited) {
    settings_.recommits_pending.fetch_sub(1, std::memory_order_relaxed);
    if (writes_.size() == 1 || writes_[1].seqno() > inherited_through_) inherited_through_ = 0;
  }
  writes_.pop_front();
  ++front_position_;
  if (writes_.empty()) {
    early_.clear();
    return;
  }
  // Rebuilt once it holds more than twice the writes tracked (plus 16): the
  // live entries are at most one a write, so more than half of it is stale
  // and dropped — O(1) amortised per entry pushed.
  if (early_.size() > 2 * writes_.size() + 16) {
    const Seqno front = writes_.front().seqno();
    std::erase_if(early_, [front](const EarlyEntry& e) { return e.seqno < front; });
    std::make_heap(early_.begin(), early_.end(), std::greater<>());
  }
}

void ActiveDurabilityMonitor::publishLocked() {
  clock::Duration::rep head = clock::kNeverRep;
  clock::Duration::rep next = clock::kNeverRep;
  if (!writes_.empty()) {
    head = writes_.front().deadline().time_since_epoch().count();
    next = head;
    if (const EarlyEntry* top = earlyTopLocked()) next = std::min(next, top->deadline);
  }
  head_deadline_.store(head, std::memory_order_release);
  // Written only under the lock: a load and a store, no read-modify-write.
  const bool earlier = next < next_deadline_.load(std::memory_order_relaxed);
  // An earlier deadline is stored sequentially consistent, before the
  // listener reads what its timer is armed for: a timer that has begun to
  // look (stored that it is armed for nothing) then either finds it, or this
  // listener sees that store and arms it (bucket_timeout_task.h).
  next_deadline_.store(next, earlier ? std::memory_order_seq_cst : std::memory_order_release);
  const bool had_writes = has_writes_.load(std::memory_order_relaxed);
  const bool has_writes = !writes_.empty();
  has_writes_.store(has_writes, std::memory_order_release);
  if (in_flight_ != nullptr && had_writes != has_writes) {
    if (has_writes) {
      in_flight_->insert(vb_.id());
    } else {
      in_flight_->erase(vb_.id());
    }
  }
  if (!earlier) return;
  if (DeadlineListener* l = listener_.load(std::memory_order_relaxed)) {
    l->nextDeadlineEarlier(nextDeadline());
  }
}

size_t ActiveDurabilityMonitor::numTracked() const {
  base::MutexLock lock(mutex_);
  return writes_.size();
}

std::vector<std::pair<vbucket::QueuedItem, Level>> ActiveDurabilityMonitor::trackedPrepares()
    const {
  base::MutexLock lock(mutex_);
  std::vector<std::pair<vbucket::QueuedItem, Level>> out;
  out.reserve(writes_.size());
  for (const TrackedWrite& w : writes_) out.emplace_back(w.prepare.item, w.level());
  return out;
}

size_t ActiveDurabilityMonitor::heapEntries() const {
  base::MutexLock lock(mutex_);
  return early_.size();
}

MonitorCounters ActiveDurabilityMonitor::counters() const {
  base::MutexLock lock(mutex_);
  MonitorCounters c = counters_;
  c.in_flight = writes_.size();
  return c;
}

}  // namespace syncwrite::durability
