// AckState: which prepares each node of the topology has acknowledged, and
// from that, whether a prepare at a given seqno and level is satisfied.
//
// Acknowledgements are cumulative, as in kv_engine's DCP_SEQNO_ACKNOWLEDGED:
// a replica that acks prepared seqno N has every prepare up to N (and, for
// prepares that need persistence, has persisted them — the replica waits for
// that before it acks). So one number per node is the whole state, and a
// SyncWrite carries no per-node bookkeeping.
//
// The active node's own acknowledgement: it holds every prepare in memory as
// soon as it is added, so it always counts for kMajority; for the levels that
// need persistence on the active, it counts once notifyLocalPersistence() has
// reached the prepare's seqno.
//
// Not thread-safe: the owning monitor guards it with its lock.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "durability/level.h"
#include "durability/topology.h"

namespace syncwrite::durability {

using Seqno = uint64_t;

class AckState {
 public:
  explicit AckState(ReplicationTopology topology);

  // Replaces the topology. Acks of nodes present in both are kept; a new
  // node starts from what it acked while outside the topology (queued, see
  // seqnoAck()), or from nothing.
  void setTopology(ReplicationTopology topology);
  const ReplicationTopology& topology() const noexcept { return topology_; }

  // `node` has every prepare up to `prepared_seqno`. A lower seqno than the
  // node already acked is ignored (acks never go backwards). Returns false
  // when `node` is not a replica of the topology: the ack counts for
  // nothing now, but is kept (the highest per node, at most
  // kMaxQueuedAcks nodes) for a topology that adds the node. A replica
  // being added in a rebalance may ack before the new topology arrives, and
  // acks only when new prepares reach it, so a dropped ack would leave
  // writes it holds to time out. kv_engine keeps them too
  // (ActiveDurabilityMonitor's queuedSeqnoAcks, applied by setTopology); it
  // keeps a node's first, this its highest, as acks are cumulative. The
  // active's name and "" are never kept. A kept ack is dropped when a
  // topology takes it, or by forgetQueuedAck().
  bool seqnoAck(const std::string& node, Seqno prepared_seqno);
  // Drops what `node` acked while outside the topology: its replication
  // stream closed, so a later copy of the node may not hold those prepares
  // (kv_engine: VBucket::removeAcksFromADM when the stream goes).
  void forgetQueuedAck(const std::string& node);
  // Nodes whose acks are kept while they are outside the topology: a
  // topology has at most six replicas (two chains of three).
  static constexpr size_t kMaxQueuedAcks = 8;

  // The active has persisted everything up to `persisted_seqno`.
  void localPersistence(Seqno persisted_seqno) noexcept;

  // True when every chain has a majority of acks for `seqno` at `level`,
  // the active among them. Cost: O(nodes), at most 8 — a loop over small
  // arrays, no hashing: it runs on every commit attempt.
  bool isSatisfied(Seqno seqno, Level level) const noexcept;

  // What `node` has acked (0 for none or an unknown node).
  Seqno ackedSeqno(const std::string& node) const noexcept;
  Seqno persistedSeqno() const noexcept { return persisted_seqno_; }

 private:
  // Rebuilds replicas_/acks_/chain_slots_ for topology_, keeping the ack
  // of every replica that was in the previous topology.
  void keepAcksOfCurrentReplicas();
  // The slot of `node` in replicas_, or -1. A linear search of at most six
  // names (two chains of three): cheaper than hashing the name.
  int slotOf(const std::string& node) const noexcept;
  // The kept ack of `node` (seqnoAck()), or queued_.end().
  std::vector<std::pair<std::string, Seqno>>::iterator queuedAckOf(const std::string& node);

  ReplicationTopology topology_;
  std::vector<std::string> replicas_;              // each defined replica once
  std::vector<Seqno> acks_;                        // acks_[i]: what replicas_[i] acked
  std::vector<std::vector<uint8_t>> chain_slots_;  // per chain: its replicas' slots
  // Acks of nodes outside the topology (seqnoAck()), at most kMaxQueuedAcks.
  std::vector<std::pair<std::string, Seqno>> queued_;
  Seqno persisted_seqno_ = 0;
};

}  // namespace syncwrite::durability
