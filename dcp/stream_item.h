// The vocabulary of a DCP stream, independent of the wire: a snapshot marker
// and the items that follow it, as a producer's ActiveStream yields them and a
// consumer's PassiveStream applies them. server/protocol/dcp_messages.h
// encodes and decodes them as kv_engine's messages (docs/dcp/documentation/
// commands/: snapshot-marker.md, mutation.md, deletion.md, prepare.md,
// commit.md, abort.md).
#pragma once

#include <cstdint>
#include <string_view>

#include "durability/level.h"
#include "vbucket/item.h"

namespace syncwrite::dcp {

using vbucket::Seqno;

// Snapshot types (snapshot-marker.md): a bit field.
inline constexpr uint32_t kSnapshotMemory = 0x01;
inline constexpr uint32_t kSnapshotDisk = 0x02;
inline constexpr uint32_t kSnapshotCheckpoint = 0x04;

// A range of seqnos whose items follow the marker, in seqno order. The
// consumer holds a consistent copy of the vbucket once it has received every
// item up to `end`. V2.0 fields: the last seqno a reader sees (not a prepare
// or an abort), and the high completed seqno (meaningful for disk snapshots).
struct SnapshotMarker {
  Seqno start = 0;
  Seqno end = 0;
  uint32_t flags = kSnapshotMemory;
  Seqno max_visible_seqno = 0;
  Seqno high_completed_seqno = 0;
};

enum class StreamItemKind : uint8_t { kMutation, kDeletion, kPrepare, kCommit, kAbort };

// "mutation", "deletion", "prepare", "commit", "abort".
std::string_view toString(StreamItemKind kind) noexcept;

// One item of a stream. `item` carries the key, and for a mutation or a
// prepare the value, CAS and meta; for a commit or an abort it is the
// prepare resolved. `seqno` is the item's position in the stream (the
// commit's or abort's own for those), `prepared_seqno` the prepare's for a
// commit or an abort.
struct StreamItem {
  StreamItemKind kind = StreamItemKind::kMutation;
  Seqno seqno = 0;
  Seqno prepared_seqno = 0;
  vbucket::QueuedItem item;
  durability::Level level = durability::Level::kNone;  // a prepare's
};

// An item as a consumer received it: views of the key and value in the
// message (PassiveStream copies them into the item it queues).
struct ReceivedItem {
  StreamItemKind kind = StreamItemKind::kMutation;
  Seqno seqno = 0;
  Seqno prepared_seqno = 0;  // commit, abort
  std::string_view key;
  std::string_view value;
  vbucket::Cas cas = 0;
  vbucket::ItemMeta meta{};
  durability::Level level = durability::Level::kNone;  // prepare
  bool deleted = false;                                // prepare: a durable delete
};

// STREAM_END's reasons (stream-end.md).
enum class StreamEndReason : uint32_t {
  kOk = 0,
  kClosed = 1,
  kStateChanged = 2,
  kDisconnected = 3,
  kTooSlow = 4,
};

}  // namespace syncwrite::dcp
