#include "durability/ack_state.h"

#include <algorithm>

namespace syncwrite::durability {

AckState::AckState(ReplicationTopology topology) : topology_(std::move(topology)) {
  keepAcksOfCurrentReplicas();
}

void AckState::setTopology(ReplicationTopology topology) {
  topology_ = std::move(topology);
  keepAcksOfCurrentReplicas();
}

void AckState::keepAcksOfCurrentReplicas() {
  std::vector<std::string> replicas;
  std::vector<Seqno> acks;
  std::vector<std::vector<uint8_t>> chain_slots;
  for (const ReplicationChain& chain : topology_.chains()) {
    std::vector<uint8_t>& slots = chain_slots.emplace_back();
    for (const std::string& replica : chain.replicas) {
      if (replica.empty()) continue;
      auto it = std::find(replicas.begin(), replicas.end(), replica);
      if (it == replicas.end()) {
        const int previous = slotOf(replica);
        Seqno acked = previous < 0 ? 0 : acks_[static_cast<size_t>(previous)];
        const auto queued = queuedAckOf(replica);
        if (queued != queued_.end()) {  // acked while outside: counts from now on
          acked = std::max(acked, queued->second);
          queued_.erase(queued);
        }
        replicas.push_back(replica);
        acks.push_back(acked);
        it = replicas.end() - 1;
      }
      slots.push_back(static_cast<uint8_t>(it - replicas.begin()));
    }
  }
  replicas_ = std::move(replicas);
  acks_ = std::move(acks);
  chain_slots_ = std::move(chain_slots);
}

std::vector<std::pair<std::string, Seqno>>::iterator AckState::queuedAckOf(
    const std::string& node) {
  return std::find_if(queued_.begin(), queued_.end(),
                      [&](const auto& q) { return q.first == node; });
}

int AckState::slotOf(const std::string& node) const noexcept {
  for (size_t i = 0; i < replicas_.size(); ++i) {
    if (replicas_[i] == node) return static_cast<int>(i);
  }
  return -1;
}

bool AckState::seqnoAck(const std::string& node, Seqno prepared_seqno) {
  const int slot = slotOf(node);
  if (slot < 0) {
    if (node.empty() || node == topology_.active()) return false;
    const auto queued = queuedAckOf(node);
    if (queued != queued_.end()) {
      queued->second = std::max(queued->second, prepared_seqno);
    } else if (queued_.size() < kMaxQueuedAcks) {
      queued_.emplace_back(node, prepared_seqno);
    }
    return false;
  }
  Seqno& acked = acks_[static_cast<size_t>(slot)];
  acked = std::max(acked, prepared_seqno);
  return true;
}

void AckState::forgetQueuedAck(const std::string& node) {
  std::erase_if(queued_, [&](const auto& q) { return q.first == node; });
}

void AckState::localPersistence(Seqno persisted_seqno) noexcept {
  persisted_seqno_ = std::max(persisted_seqno_, persisted_seqno);
}

bool AckState::isSatisfied(Seqno seqno, Level level) const noexcept {
  if (needsActivePersistence(level) && persisted_seqno_ < seqno) return false;
  const std::vector<ReplicationChain>& chains = topology_.chains();
  for (size_t c = 0; c < chains.size(); ++c) {
    size_t acked = 1;  // the active, checked above
    for (const uint8_t slot : chain_slots_[c]) acked += acks_[slot] >= seqno ? 1 : 0;
    if (acked < chains[c].majority()) return false;
  }
  return true;
}

Seqno AckState::ackedSeqno(const std::string& node) const noexcept {
  const int slot = slotOf(node);
  return slot < 0 ? 0 : acks_[static_cast<size_t>(slot)];
}

}  // namespace syncwrite::durability
