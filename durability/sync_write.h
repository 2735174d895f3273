// The vocabulary of one write through the durability layer: what is asked
// (WriteRequest), what the layer answers at once (WriteResult), and how a
// SyncWrite resolves later (Resolution, delivered to its Completion).
//
// A write is either plain — committed at once, answered kCommitted, its
// completion never called — or a SyncWrite: a prepare is queued, the write is
// answered kPending, and its completion is called exactly once, later, with
// the Resolution:
//  - committed: a majority of every chain (the active among them) acknowledged
//    it at its level; the value is visible and a commit is queued;
//  - ambiguous: it was aborted before that — its deadline passed (an abort is
//    queued), or its vbucket left active, or the bucket was deleted or shut
//    down. "Ambiguous" because a replica may have the prepare: the client
//    cannot know whether the write will survive a failover (kv_engine answers
//    SyncWriteAmbiguous, status 0xa3, in the same cases).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/borrowed_view.h"
#include "durability/completion.h"
#include "durability/requirements.h"
#include "vbucket/item.h"
#include "vbucket/vbucket_state.h"

namespace syncwrite::durability {

using vbucket::Cas;
using vbucket::Seqno;
using vbucket::Vbid;

// The memcached mutations the layer serves. kAdd, kReplace and kDelete check
// their precondition under the same lock that orders the write, so no other
// write to the key can slip in between the check and the write.
enum class WriteOp : uint8_t {
  kSet,      // unconditional
  kAdd,      // only when the key has no committed value
  kReplace,  // only when it has one
  kDelete,   // only when it has one; the commit removes it
};

// The key and the value are views: the layer copies their bytes into the
// item it queues within the write() call, and keeps no reference to them
// after it returns. They need only live until then (the server points them
// into the request as read from the socket: no copy per write). A temporary
// std::string is refused at compile time (base/borrowed_view.h).
struct WriteRequest {
  WriteOp op = WriteOp::kSet;
  base::BorrowedView key;
  base::BorrowedView value;  // ignored for kDelete
  Cas cas = 0;               // the CAS the written item carries; chosen by the caller
  // None: a plain write — unless durability_min_level is above none, which
  // makes every write a SyncWrite at (at least) that level.
  std::optional<Requirements> durability;
  // Nonzero: the write happens only if the key's committed item has this CAS
  // (kKeyNotFound when it has none, kKeyExists when it differs), checked
  // under the lock that orders the write.
  Cas expected_cas = 0;
  vbucket::ItemMeta meta{};  // stored with the item
  // Seconds since the Unix epoch, for the existence checks of kAdd, kReplace,
  // kDelete and expected_cas: an item expired at this time counts as absent.
  // 0: expiry is not considered.
  uint32_t unix_now = 0;
};

enum class WriteStatus : uint8_t {
  kCommitted,             // a plain write, done and visible; no completion call
  kPending,               // a SyncWrite was accepted; its completion will be called
  kInvalidLevel,          // a SyncWrite asked for Level::kNone or no known level
  kDurabilityImpossible,  // the topology cannot reach a majority
  kSyncWriteInProgress,   // the key already has a SyncWrite in flight
  kNotActive,             // the vbucket is not active here (or does not exist)
  kKeyExists,             // kAdd of a key that has a value
  kKeyNotFound,           // kReplace or kDelete of a key that has none
  kTemporaryFailure,      // refused for now (the bucket is at its memory quota); retry
};

// "committed", "pending", "invalid_level", "durability_impossible",
// "sync_write_in_progress", "not_active", "key_exists", "key_not_found",
// "temporary_failure".
std::string_view toString(WriteStatus status) noexcept;

struct WriteResult {
  WriteStatus status = WriteStatus::kNotActive;
  Seqno seqno = 0;  // of the mutation (kCommitted) or the prepare (kPending); else 0
};

// Why a SyncWrite was answered ambiguous.
enum class AmbiguousReason : uint8_t {
  kTimeout,        // its deadline passed; an abort was queued
  kLeftActive,     // its vbucket became replica, pending or dead; an abort was queued
  kBucketDeleted,  // its bucket went away
  kShutdown,       // the process is stopping
  kFlushed,        // the bucket was flushed (BucketDurability::flush); an abort was queued
};
inline constexpr size_t kAmbiguousReasonCount = 5;

// "timeout", "left_active", "bucket_deleted", "shutdown", "flushed".
std::string_view toString(AmbiguousReason reason) noexcept;

struct Resolution {
  bool committed = false;
  AmbiguousReason reason = AmbiguousReason::kTimeout;  // meaningful when !committed
  Vbid vbid = 0;
  Seqno prepare_seqno = 0;
  // The seqno of the commit or the abort; 0 when nothing was queued (the
  // bucket went away or the process is stopping, or a write answered at its
  // deadline behind the head before its abort was queued).
  Seqno resolution_seqno = 0;
  Cas cas = 0;  // the request's
};

// A SyncWrite's Completion (durability/completion.h) is called exactly once
// per accepted SyncWrite, on whichever thread resolved it
// (an acknowledging thread, a timeout task, the thread that changed the
// vbucket's state or shut the bucket down), never with a durability lock held
// and never from inside the call that added the write. It must not throw.
// It holds a callable without an allocation only when that is trivially
// copyable and at most 16 bytes.

}  // namespace syncwrite::durability
