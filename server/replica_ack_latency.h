// ReplicaAckLatencies: per replica node, how long it took to acknowledge the
// prepares this node's DCP producers sent it — from the moment a prepare was
// written into the replica's connection to the DCP_SEQNO_ACKNOWLEDGED that
// covered it, by the prepare's durability level — for metrics
// (kv_replica_ack_duration_seconds). A replica that persists before it acks
// (persist_to_majority) includes its disk in the figure.
//
// One histogram (durability::CommitLatency's buckets and sharding) per name,
// made the first time a producer streams to that replica and kept for the
// bucket's life, so counts stay monotonic across reconnections.
//
// Thread-safety: every member may be called from any thread. A reference
// from of() stays valid as long as this object.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/mutex.h"
#include "durability/commit_latency.h"

namespace syncwrite::server {

class ReplicaAckLatencies {
 public:
  // `replica`'s histogram, made on first use. Cost: a lock and a map lookup:
  // call it once per connection, not per ack.
  durability::CommitLatency& of(const std::string& replica);

  // Each replica's histogram, in name order.
  std::vector<std::pair<std::string, const durability::CommitLatency*>> all() const;

 private:
  mutable base::Mutex mutex_;
  std::map<std::string, std::unique_ptr<durability::CommitLatency>> by_replica_
      ABSL_GUARDED_BY(mutex_);
};

}  // namespace syncwrite::server
