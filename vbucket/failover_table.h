// FailoverTable: a vbucket's history of writers, as kv_engine keeps it
// (engines/ep/src/failover-table.{h,cc}, docs/dcp/documentation/failure-scenarios.md).
//
// Each entry is (vbucket uuid, seqno): from that seqno on, the history was
// written by the active that drew the uuid. A vbucket that becomes active
// adds an entry at its high seqno (createEntry); a replica takes its
// active's table whole when its stream is accepted (replace). A DCP client
// that asks to stream from seqno S of history U is told to roll back when
// this table cannot vouch that its items up to its snapshot end are this
// vbucket's (needsRollback).
//
// Entries are newest first, at most kMaxEntries (kv_engine's default
// max_failover_entries); one entry is held without a heap block. Thread-safe:
// every member takes the table's lock. An empty table (never seeded) has
// latestUuid() 0 and asks every client with a history to roll back to 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <absl/container/inlined_vector.h>

#include "base/mutex.h"
#include "vbucket/item.h"

namespace syncwrite::vbucket {

struct FailoverEntry {
  uint64_t uuid = 0;
  Seqno seqno = 0;
  bool operator==(const FailoverEntry&) const = default;
};

struct RollbackPoint {
  Seqno seqno = 0;
  std::string reason;
};

class FailoverTable {
 public:
  static constexpr size_t kMaxEntries = 25;

  // A new history from `high_seqno` by the writer `uuid` (non-zero). As in
  // kv_engine, entries above `high_seqno` are dropped first: they are a
  // branch this vbucket does not have. The oldest entries go past kMaxEntries.
  void createEntry(uint64_t uuid, Seqno high_seqno);
  // Takes `entries` (newest first, e.g. from a STREAM_REQ answer) as the table.
  void replace(const std::vector<FailoverEntry>& entries);

  std::vector<FailoverEntry> entries() const;
  // The newest entry's uuid; 0 when empty.
  uint64_t latestUuid() const;

  // kv_engine's FailoverTable::needsRollback for a client at `start_seqno`
  // of history `client_uuid`, inside snapshot [snap_start, snap_end], this
  // vbucket being at `high_seqno`. No rollback for a client starting at 0;
  // to 0 when `client_uuid` is not in the table; otherwise the client's
  // history is ours up to the seqno where the entry after its uuid begins
  // (our high seqno for the newest): a snapshot end above that rolls back
  // to it, or to the snapshot's start when that is lower.
  std::optional<RollbackPoint> needsRollback(Seqno start_seqno, uint64_t client_uuid,
                                             Seqno snap_start, Seqno snap_end,
                                             Seqno high_seqno) const;

 private:
  mutable base::Mutex mutex_;
  absl::InlinedVector<FailoverEntry, 1> entries_ ABSL_GUARDED_BY(mutex_);  // newest first
};

}  // namespace syncwrite::vbucket
