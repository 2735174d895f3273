// DcpReplica: the soak's external replica (issue 18), `replica2` of the
// chain [active, replica1, replica2], on a thread of its own.
//
// The server streams no prepares, so the replica learns what it may hold from
// GET_ALL_VB_SEQNOS: every 2..50 ms it reads the active vbuckets' high seqnos
// and acknowledges them (DCP_SEQNO_ACKNOWLEDGED) for a random half of those
// vbuckets, as a replica that has received everything up to them. Each ack
// is at most the vbucket's high seqno when it was read, so it never names a
// prepare that did not exist. With replica1 (simulated) and replica2 a
// majority of the chain is the active and either replica: while the chaos
// thread pauses replica1, this one's acks commit SyncWrites; while it pauses
// both, they time out.
//
// Checked: GET_ALL_VB_SEQNOS succeeds, and the only answer an ack gets is
// NotMyVbucket (its vbucket left active after the read; kv_engine answers
// nothing to a successful ack). The chaos thread pauses it (setPaused) and
// drops its connection (requestDrop: it reconnects and opens DCP again).
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <random>

#include <nlohmann/json.hpp>

#include "bench/soak/tally.h"
#include "server/protocol/client.h"

namespace syncwrite::bench::soak {

class DcpReplica {
 public:
  // The replica's node name in the soak's topology.
  static constexpr const char* kName = "replica2";

  DcpReplica(uint16_t port, uint64_t seed, Anomalies& anomalies);

  // The thread's body: polls and acks until `stop`, then closes the connection.
  void run(const std::atomic<bool>& stop);
  // Any thread.
  void setPaused(bool paused) { paused_.store(paused); }
  void requestDrop() { drop_.store(true); }

  // After run(): polls, acks sent, acks refused NotMyVbucket, connections.
  nlohmann::json counts() const;

 private:
  bool connect();
  void turn();
  // Every answer to an ack so far must be NotMyVbucket.
  void checkAnswers();

  const uint16_t port_;
  Anomalies& anomalies_;
  std::mt19937_64 random_;
  std::optional<server::protocol::Client> client_;
  std::atomic<bool> paused_{false};
  std::atomic<bool> drop_{false};
  uint64_t polls_ = 0;
  uint64_t acks_ = 0;
  uint64_t not_my_vbucket_ = 0;
  uint64_t connections_ = 0;
};

}  // namespace syncwrite::bench::soak
