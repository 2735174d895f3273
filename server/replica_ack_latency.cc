#include "server/replica_ack_latency.h"

namespace syncwrite::server {

durability::CommitLatency& ReplicaAckLatencies::of(const std::string& replica) {
  base::MutexLock lock(mutex_);
  std::unique_ptr<durability::CommitLatency>& histogram = by_replica_[replica];
  if (!histogram) histogram = std::make_unique<durability::CommitLatency>();
  return *histogram;
}

std::vector<std::pair<std::string, const durability::CommitLatency*>> ReplicaAckLatencies::all()
    const {
  base::MutexLock lock(mutex_);
  std::vector<std::pair<std::string, const durability::CommitLatency*>> out;
  out.reserve(by_replica_.size());
  for (const auto& [name, histogram] : by_replica_) out.emplace_back(name, histogram.get());
  return out;
}

}  // namespace syncwrite::server
