#include "durability/passive_durability_monitor.h"

#include <stdexcept>
#include <utility>

#include <absl/strings/str_cat.h>

namespace syncwrite::durability {

absl::Status PassiveDurabilityMonitor::receivePrepare(const ReceivedPrepare& p) {
  if (p.level == Level::kNone) {
    return absl::InvalidArgumentError(
        absl::StrCat("prepare at seqno ", p.seqno, " has durability level none"));
  }
  base::MutexLock lock(mutex_);
  vbucket::QueuedPrepare queued;
  try {
    queued = vb_.checkpointManager().queuePrepare(p.key, p.value, p.cas, p.deleted, p.meta,
                                                  static_cast<uint8_t>(p.level), p.seqno);
  } catch (const std::invalid_argument& e) {
    return absl::InvalidArgumentError(absl::StrCat("prepare: ", e.what()));
  }
  tracked_.push_back({std::move(queued), p.level, false});
  return absl::OkStatus();
}

absl::Status PassiveDurabilityMonitor::receiveCommit(std::string_view key, Seqno prepared_seqno,
                                                     Seqno commit_seqno) {
  base::MutexLock lock(mutex_);
  return completeLocked(vbucket::QueueOp::kCommit, key, prepared_seqno, commit_seqno);
}

absl::Status PassiveDurabilityMonitor::receiveAbort(std::string_view key, Seqno prepared_seqno,
                                                    Seqno abort_seqno) {
  base::MutexLock lock(mutex_);
  return completeLocked(vbucket::QueueOp::kAbort, key, prepared_seqno, abort_seqno);
}

absl::Status PassiveDurabilityMonitor::completeLocked(vbucket::QueueOp op, std::string_view key,
                                                      Seqno prepared_seqno,
                                                      Seqno resolution_seqno) {
  // absl::StrCat here takes absl::string_view, which Debian's Abseil keeps
  // apart from std::string_view: the views are copied.
  const std::string what(vbucket::toString(op));
  const std::string key_text(key);
  PassivePrepare* oldest = nullptr;
  for (PassivePrepare& p : tracked_) {
    if (!p.completed) {
      oldest = &p;
      break;
    }
  }
  if (oldest == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(what, " of prepared seqno ", prepared_seqno,
                                                   " for key '", key_text,
                                                   "', but no prepare is open"));
  }
  if (oldest->prepare->seqno != prepared_seqno || oldest->prepare->key() != key) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " of prepared seqno ", prepared_seqno, " for key '", key_text,
        "', but the oldest open prepare is seqno ", oldest->prepare->seqno, " for key '",
        std::string(oldest->prepare->key()), "' (the active resolves in seqno order)"));
  }
  try {
    vb_.checkpointManager().queueResolution(op, oldest->prepare, resolution_seqno);
  } catch (const std::invalid_argument& e) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": ", e.what()));
  }
  if (op == vbucket::QueueOp::kCommit) {
    if (oldest->prepare->deleted) {
      vb_.hashTable().erase(oldest->prepare->key());
    } else {
      vb_.hashTable().setCommitted(oldest->prepare.item);
    }
  }
  oldest->completed = true;
  hcs_ = prepared_seqno;
  trimLocked();
  return absl::OkStatus();
}

std::optional<Seqno> PassiveDurabilityMonitor::snapshotReceived(Seqno end) {
  base::MutexLock lock(mutex_);
  if (end > received_) received_ = end;
  if (!advanceLocked()) return std::nullopt;
  return hps_;
}

std::optional<Seqno> PassiveDurabilityMonitor::notifyLocalPersistence(Seqno persisted) {
  base::MutexLock lock(mutex_);
  if (persisted > vb_.highSeqno()) return std::nullopt;
  if (persisted > persisted_) persisted_ = persisted;
  if (!advanceLocked()) return std::nullopt;
  return hps_;
}

void PassiveDurabilityMonitor::reset() {
  std::deque<PassivePrepare> dropped;  // freed after the lock
  base::MutexLock lock(mutex_);
  dropped.swap(tracked_);
  hps_ = hcs_ = received_ = persisted_ = 0;
}

bool PassiveDurabilityMonitor::advanceLocked() {
  const Seqno before = hps_;
  for (const PassivePrepare& p : tracked_) {
    const Seqno seqno = p.prepare->seqno;
    if (seqno <= hps_) continue;
    if (seqno > received_) break;
    if (needsReplicaPersistence(p.level) && seqno > persisted_) break;
    hps_ = seqno;
  }
  trimLocked();
  return hps_ != before;
}

void PassiveDurabilityMonitor::trimLocked() {
  while (!tracked_.empty() && tracked_.front().completed &&
         tracked_.front().prepare->seqno <= hps_) {
    tracked_.pop_front();
  }
}

Seqno PassiveDurabilityMonitor::highPreparedSeqno() const {
  base::MutexLock lock(mutex_);
  return hps_;
}

Seqno PassiveDurabilityMonitor::highCompletedSeqno() const {
  base::MutexLock lock(mutex_);
  return hcs_;
}

Seqno PassiveDurabilityMonitor::persistedSeqno() const {
  base::MutexLock lock(mutex_);
  return persisted_;
}

size_t PassiveDurabilityMonitor::numTracked() const {
  base::MutexLock lock(mutex_);
  return tracked_.size();
}

std::vector<PassivePrepare> PassiveDurabilityMonitor::takeAll() {
  base::MutexLock lock(mutex_);
  std::vector<PassivePrepare> out(std::make_move_iterator(tracked_.begin()),
                                  std::make_move_iterator(tracked_.end()));
  tracked_.clear();
  return out;
}

}  // namespace syncwrite::durability
