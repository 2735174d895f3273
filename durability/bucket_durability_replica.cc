// BucketDurability's replica side: the passive monitors of replica
// vbuckets, promotion of a replica to active, and a replica's rollback to 0.
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "durability/bucket_durability_impl.h"

namespace syncwrite::durability {

absl::StatusOr<vbucket::VBucket*> BucketDurability::Impl::replicaVbucket(
    Vbid vbid, std::string_view caller) const {
  if (vbid >= map.size()) {
    return absl::InvalidArgumentError(std::string(caller) + ": vbucket " + std::to_string(vbid) +
                                      " does not exist");
  }
  vbucket::VBucket& vb = map.at(vbid);
  if (vb.state() != vbucket::VBucketState::kReplica) {
    return absl::FailedPreconditionError(std::string(caller) + ": vbucket " + std::to_string(vbid) +
                                         " is " + std::string(vbucket::toString(vb.state())) +
                                         ", not a replica");
  }
  return &vb;
}

PassiveDurabilityMonitor& BucketDurability::passiveMonitor(Vbid vbid) {
  Impl& d = *impl_;
  if (vbid >= d.map.size()) {
    throw std::out_of_range("passiveMonitor: vbucket " + std::to_string(vbid) + " of " +
                            std::to_string(d.map.size()));
  }
  vbucket::VBucket& vb = d.map.at(vbid);
  base::MutexLock lock(d.passive_mutex);
  std::unique_ptr<PassiveDurabilityMonitor>& slot = d.passive[vbid];
  if (!slot) slot = std::make_unique<PassiveDurabilityMonitor>(vb);
  return *slot;
}

Seqno BucketDurability::replicaHighPreparedSeqno(Vbid vbid) const {
  const Impl& d = *impl_;
  base::MutexLock lock(d.passive_mutex);
  auto it = d.passive.find(vbid);
  return it == d.passive.end() ? 0 : it->second->highPreparedSeqno();
}

absl::StatusOr<size_t> BucketDurability::resetReplica(Vbid vbid) {
  absl::StatusOr<vbucket::VBucket*> replica = impl_->replicaVbucket(vbid, "resetReplica");
  if (!replica.ok()) return replica.status();
  vbucket::VBucket& vb = **replica;
  // The monitor first: its prepares hold blocks the log would free.
  passiveMonitor(vbid).reset();
  size_t dropped = 0;
  for (const std::string& key : vb.hashTable().keys()) dropped += vb.hashTable().erase(key) ? 1 : 0;
  vbucket::ExpelledItems removed = vb.checkpointManager().reset();
  return dropped;
}

absl::StatusOr<size_t> BucketDurability::promote(Vbid vbid, const std::string& this_node,
                                                 std::optional<ReplicationTopology> topology) {
  Impl& d = *impl_;
  absl::StatusOr<vbucket::VBucket*> replica = d.replicaVbucket(vbid, "promote");
  if (!replica.ok()) return replica.status();
  if (topology && topology->active() != this_node) {
    return absl::InvalidArgumentError("promote: the topology's active is '" + topology->active() +
                                      "', not this node '" + this_node + "'");
  }
  vbucket::VBucket& vb = **replica;
  PassiveDurabilityMonitor& passive = passiveMonitor(vbid);
  ActiveDurabilityMonitor& monitor = *d.slots[vbid].monitor;
  ResolvedWrites resolved;
  if (topology) {
    monitor.setTopology(std::move(*topology), resolved);
  } else {
    monitor.awaitTopology();
  }
  const size_t adopted = monitor.adoptPrepares(passive.takeAll(), passive.persistedSeqno());
  vb.setState(vbucket::VBucketState::kActive);
  monitor.commitSatisfied(resolved);
  resolved.notify();
  return adopted;
}

bool BucketDurability::reCommitInProgress(Vbid vbid, std::string_view key) const {
  const Impl& d = *impl_;
  if (d.settings.recommits_pending.load(std::memory_order_relaxed) == 0) return false;
  if (vbid >= d.slots.size()) return false;
  return d.slots[vbid].monitor->reCommitInProgress(key);
}

void BucketDurability::setPassiveAckListener(PassiveAckListener listener) {
  impl_->passive_ack_listener = std::move(listener);
}

}  // namespace syncwrite::durability
