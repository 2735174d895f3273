// PassiveStream: one replica vbucket's side of a DCP stream — it applies
// what the active's stream sends, in order, and says when to acknowledge.
//
// A snapshot marker, then its items, each with a seqno above the last one
// applied and within the marker's range:
//  - a mutation is queued in the vbucket's log at its seqno and becomes the
//    key's visible value; a deletion is queued and removes the key;
//  - a prepare, a commit and an abort go to the vbucket's
//    PassiveDurabilityMonitor (durability/passive_durability_monitor.h);
//  - the item at the marker's end completes the snapshot: the monitor's HPS
//    may move.
// Whatever moved the HPS is returned, so the caller sends one
// DCP_SEQNO_ACKNOWLEDGED of it. Anything out of order — an item before any
// marker, a seqno not above the last or beyond the marker's end, a marker
// starting at or below what was applied, a commit of a prepare this vbucket
// does not hold — is refused with InvalidArgument naming it, and changes
// nothing: the caller ends the stream (the stream is not to be trusted) and
// asks again from lastSeqno().
//
// Thread-safety: one thread at a time (the consumer's connection). The
// vbucket and the monitor must outlive it.
#pragma once

#include <optional>

#include <absl/status/statusor.h>

#include "dcp/stream_item.h"
#include "durability/passive_durability_monitor.h"
#include "vbucket/vbucket.h"

namespace syncwrite::dcp {

class PassiveStream {
 public:
  PassiveStream(vbucket::VBucket& vb, durability::PassiveDurabilityMonitor& monitor)
      : vb_(vb), monitor_(monitor), last_(vb.highSeqno()) {}

  absl::Status snapshotMarker(const SnapshotMarker& marker);

  // An item of the current snapshot. Returns the HPS to acknowledge when it
  // moved.
  absl::StatusOr<std::optional<Seqno>> item(const ReceivedItem& item);

  // The last seqno applied: where the stream is to resume.
  Seqno lastSeqno() const noexcept { return last_; }
  // The current snapshot's range (zeros before the first marker).
  const SnapshotMarker& marker() const noexcept { return marker_; }

 private:
  absl::Status apply(const ReceivedItem& item);

  vbucket::VBucket& vb_;
  durability::PassiveDurabilityMonitor& monitor_;
  Seqno last_;
  SnapshotMarker marker_{};
  bool in_snapshot_ = false;
};

}  // namespace syncwrite::dcp
