// warmup(): a persistent bucket's vbuckets loaded back from its KVStore at
// start, before it serves anyone.
//
// For each vbucket the store has a state for, its committed documents and its
// outstanding prepares (the prepare key space holds exactly the prepares no
// commit or abort has resolved on disk) are applied in seqno order as one
// disk snapshot through a dcp::PassiveStream, as a replica applies a
// backfill: documents become the keys' values, prepares are tracked by the
// vbucket's PassiveDurabilityMonitor. The log is then emptied at the stored
// high seqno (what follows is numbered after it; the items live on in the
// hash table, and a DCP stream from below is backfilled), the stored
// failover table comes back, and everything loaded is reported persisted.
//
// A vbucket the bucket placed active is then promoted
// (BucketDurability::promote): each outstanding prepare becomes a SyncWrite
// with no timeout and no client, which commits once its chain acknowledges
// it again and meanwhile makes reads of its key answer
// SyncWriteReCommitInProgress — as kv_engine's warmup does
// (loadOutstandingPrepares: the prepare "may already have been committed"
// before the restart). It gets a new failover entry at its high seqno (this
// node wrote nothing after it, but cannot vouch for what it had not
// persisted). A vbucket placed replica keeps its prepares in its passive
// monitor and streams on from its high seqno. An aborted prepare never comes
// back: its abort erased it from disk.
//
// Requires: nothing has been written to the bucket, and no cursor but those
// of readers that may skip what warmup loads is registered (the flusher's is
// registered after). Errors (a record or state that does not decode, a stored
// vbucket past max_vbuckets, an out-of-order snapshot) are DataLoss naming
// the vbucket; the bucket must not serve then.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <absl/status/statusor.h>

#include "durability/bucket_durability.h"
#include "kvstore/kvstore.h"
#include "vbucket/vbucket_map.h"

namespace syncwrite::server {

struct WarmupStats {
  size_t vbuckets = 0;     // with a stored state
  uint64_t documents = 0;  // committed documents loaded (tombstones not)
  uint64_t prepares = 0;   // outstanding prepares put back
  uint64_t max_cas = 0;    // the highest CAS stored
  // The active vbuckets that got prepares back, each with its last one's
  // seqno: what an in-process simulated replica is told it received.
  std::vector<std::pair<vbucket::Vbid, vbucket::Seqno>> promoted;
  std::chrono::microseconds took{0};
};

// Gives `vbid` a new failover entry at its high seqno (the bucket's, with a
// random uuid).
using NewHistory = std::function<void(vbucket::Vbid)>;

absl::StatusOr<WarmupStats> warmup(const kvstore::KVStore& store, vbucket::VBucketMap& map,
                                   durability::BucketDurability& durability,
                                   const std::string& node_name, const NewHistory& new_history);

}  // namespace syncwrite::server
