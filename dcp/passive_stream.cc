#include "dcp/passive_stream.h"

#include <stdexcept>
#include <string>

#include <absl/strings/str_cat.h>

namespace syncwrite::dcp {

absl::Status PassiveStream::snapshotMarker(const SnapshotMarker& marker) {
  if (in_snapshot_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "snapshot marker [", marker.start, ", ", marker.end, "] while the snapshot [",
        marker_.start, ", ", marker_.end, "] has items to come (last applied ", last_, ")"));
  }
  if (marker.start > marker.end || marker.end <= last_) {
    return absl::InvalidArgumentError(absl::StrCat("snapshot marker [", marker.start, ", ",
                                                   marker.end, "] after seqno ", last_,
                                                   " was applied: its end must be above it"));
  }
  marker_ = marker;
  in_snapshot_ = true;
  return absl::OkStatus();
}

absl::StatusOr<std::optional<Seqno>> PassiveStream::item(const ReceivedItem& item) {
  const std::string kind(toString(item.kind));
  if (!in_snapshot_) {
    return absl::InvalidArgumentError(
        absl::StrCat(kind, " at seqno ", item.seqno, " outside a snapshot"));
  }
  if (item.seqno <= last_ || item.seqno > marker_.end) {
    return absl::InvalidArgumentError(absl::StrCat(kind, " at seqno ", item.seqno, " after seqno ",
                                                   last_, " in snapshot [", marker_.start, ", ",
                                                   marker_.end, "]"));
  }
  if (absl::Status applied = apply(item); !applied.ok()) return applied;
  last_ = item.seqno;
  if (last_ < marker_.end) return std::optional<Seqno>();
  in_snapshot_ = false;
  return monitor_.snapshotReceived(last_);
}

absl::Status PassiveStream::apply(const ReceivedItem& item) {
  switch (item.kind) {
    case StreamItemKind::kMutation:
    case StreamItemKind::kDeletion: {
      const bool deleted = item.kind == StreamItemKind::kDeletion;
      vbucket::QueuedItem queued;
      try {
        queued = vb_.checkpointManager().queue(vbucket::QueueOp::kMutation, item.key,
                                               deleted ? std::string_view() : item.value, item.cas,
                                               deleted, item.meta, item.seqno);
      } catch (const std::invalid_argument& e) {
        return absl::InvalidArgumentError(e.what());
      }
      if (deleted) {
        vb_.hashTable().erase(item.key);
      } else {
        vb_.hashTable().setCommitted(std::move(queued));
      }
      return absl::OkStatus();
    }
    case StreamItemKind::kPrepare:
      return monitor_.receivePrepare({.key = item.key,
                                      .value = item.value,
                                      .cas = item.cas,
                                      .seqno = item.seqno,
                                      .level = item.level,
                                      .deleted = item.deleted,
                                      .meta = item.meta});
    case StreamItemKind::kCommit:
      return monitor_.receiveCommit(item.key, item.prepared_seqno, item.seqno);
    case StreamItemKind::kAbort:
      return monitor_.receiveAbort(item.key, item.prepared_seqno, item.seqno);
  }
  return absl::InvalidArgumentError("unknown stream item");
}

}  // namespace syncwrite::dcp
