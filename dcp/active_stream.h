// ActiveStream: one vbucket's DCP stream on the producer (the active node),
// from the seqno a consumer asked to start after.
//
// It reads the vbucket's log through a cursor of its own, registered when the
// stream opens, and yields it as snapshots: a marker, then the items, in
// seqno order. Every mutation, deletion, prepare, commit and abort is sent
// (the log is not de-duplicated, so no seqno is skipped but as below).
//
// Backfill: when the log no longer holds what follows the start (expel has
// freed it), the first snapshot is a disk snapshot built from the vbucket's
// committed items and the prepares its active monitor tracks that the log
// no longer holds, each at its seqno, up to the seqno before the oldest item
// in memory; the memory snapshots follow. A commit read later whose prepare
// the consumer was never sent (it was committed before the backfill looked)
// goes as a mutation (or a deletion) at the commit's seqno, and such an
// abort is not sent, as kv_engine's producer does for a stream that did not
// see the prepare. A backfill can be served only from 0: a consumer that
// already holds items (start > 0) and asks past what the log holds, or asks
// beyond the vbucket's high seqno, is told to roll back to 0.
//
// Thread-safety: one thread at a time (the producer's connection). Memory:
// the cursor keeps what it has not read in the checkpoints (vbucket/
// checkpoint_manager.h); the backfill holds references to the items it sends,
// never copies.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <absl/container/flat_hash_set.h>

#include "dcp/stream_item.h"
#include "durability/bucket_durability.h"
#include "vbucket/vbucket.h"

namespace syncwrite::dcp {

class ActiveStream {
 public:
  // What open() decided: a stream, or the seqno the consumer must roll back
  // to (always 0 for now) before it asks again.
  struct Opened {
    std::unique_ptr<ActiveStream> stream;
    bool rollback = false;
    Seqno rollback_seqno = 0;
  };

  // Opens a stream of `vb` (which must outlive it; `durability` gives the
  // tracked prepares a backfill needs) for a consumer that holds everything
  // up to `start_seqno`. Registers the cursor `cursor_name`, replacing one of
  // that name left by an earlier stream.
  static Opened open(vbucket::VBucket& vb, const durability::BucketDurability& durability,
                     const std::string& cursor_name, Seqno start_seqno);
  ~ActiveStream();  // removes the cursor
  ActiveStream(const ActiveStream&) = delete;
  ActiveStream& operator=(const ActiveStream&) = delete;

  struct Batch {
    SnapshotMarker marker;
    std::vector<StreamItem> items;  // empty: nothing to send now
  };
  // The next snapshot: the backfill (once), else up to `max_items` records of
  // the log. O(items returned); the backfill's first call O(items in the
  // vbucket × log of them).
  Batch next(size_t max_items);

  // Records the log holds that the stream has not read (a lag figure).
  size_t itemsRemaining() const;
  vbucket::Vbid vbid() const noexcept { return vb_.id(); }

 private:
  ActiveStream(vbucket::VBucket& vb, std::string cursor_name, Seqno start_seqno);
  // Builds the backfill of every committed item and tracked prepare below
  // `first_in_memory`.
  void buildBackfill(const durability::BucketDurability& durability, Seqno first_in_memory);
  // Appends `record` to `out` as the consumer is to see it (see the file
  // comment); false when it is not sent.
  bool toStreamItem(const vbucket::LogRecord& record, StreamItem& out);

  vbucket::VBucket& vb_;
  const std::string cursor_;
  const Seqno start_;
  Seqno max_visible_ = 0;
  // The records read at open() to find where the log starts, sent first.
  std::vector<vbucket::LogRecord> first_read_;
  // The backfill, until next() hands it out.
  std::vector<StreamItem> backfill_;
  Seqno backfill_end_ = 0;  // 0: no backfill
  bool backfill_sent_ = false;
  // Below backfill_end_: the prepares the backfill sent, whose commits and
  // aborts go as they are.
  absl::flat_hash_set<Seqno> backfilled_prepares_;
};

}  // namespace syncwrite::dcp
