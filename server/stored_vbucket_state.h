// StoredVBucketState: what a persistent bucket keeps of a vbucket beside its
// documents — written by the flusher with every batch that touches the
// vbucket, read back at warmup. Stored as a JSON text in KVStore's vbucket
// state family, with kv_engine's vbucket_state key names where it has one
// (engines/ep/src/vbucket_state.cc: "state", "failover_table" as
// [{"id": uuid, "seq": seqno}, ...] newest first, "replication_topology",
// "max_cas"), plus "high_seqno" (what the batch wrote up to) and "version".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <absl/status/statusor.h>

#include "vbucket/failover_table.h"
#include "vbucket/vbucket_state.h"

namespace syncwrite::server {

struct StoredVBucketState {
  static constexpr int kVersion = 1;

  vbucket::VBucketState state = vbucket::VBucketState::kActive;
  vbucket::Seqno high_seqno = 0;
  std::vector<vbucket::FailoverEntry> failovers;  // newest first
  // ReplicationTopology::toJson() as JSON text (written as it is, so the
  // flusher dumps it once); "null" for none.
  std::string topology = "null";
  uint64_t max_cas = 0;

  std::string toJson() const;
  // The state `json` stores for `vbid`. DataLoss naming the vbucket and
  // what is wrong for text that is not such a state (another version, a
  // missing or mistyped key).
  static absl::StatusOr<StoredVBucketState> fromJson(vbucket::Vbid vbid, std::string_view json);
};

}  // namespace syncwrite::server
