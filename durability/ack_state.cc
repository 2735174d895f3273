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
  absl::flat_hash_map<std::string, Seqno> acks;
  for (const ReplicationChain& chain : topology_.chains()) {
    for (const std::string& replica : chain.replicas) {
      if (replica.empty()) continue;
      auto previous = replica_acks_.find(replica);
      acks[replica] = previous == replica_acks_.end() ? 0 : previous->second;
    }
  }
  replica_acks_ = std::move(acks);
}

bool AckState::seqnoAck(const std::string& node, Seqno prepared_seqno) {
  auto it = replica_acks_.find(node);
  if (it == replica_acks_.end()) return false;
  it->second = std::max(it->second, prepared_seqno);
  return true;
}

void AckState::localPersistence(Seqno persisted_seqno) noexcept {
  persisted_seqno_ = std::max(persisted_seqno_, persisted_seqno);
}

bool AckState::isSatisfied(Seqno seqno, Level level) const noexcept {
  if (needsActivePersistence(level) && persisted_seqno_ < seqno) return false;
  for (const ReplicationChain& chain : topology_.chains()) {
    size_t acks = 1;  // the active, checked above
    for (const std::string& replica : chain.replicas) {
      if (replica.empty()) continue;
      auto it = replica_acks_.find(replica);
      if (it != replica_acks_.end() && it->second >= seqno) ++acks;
    }
    if (acks < chain.majority()) return false;
  }
  return true;
}

Seqno AckState::ackedSeqno(const std::string& node) const noexcept {
  auto it = replica_acks_.find(node);
  return it == replica_acks_.end() ? 0 : it->second;
}

}  // namespace syncwrite::durability
