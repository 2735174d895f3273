#include "vbucket/failover_table.h"

#include <algorithm>

#include <absl/strings/str_cat.h>

namespace syncwrite::vbucket {

void FailoverTable::createEntry(uint64_t uuid, Seqno high_seqno) {
  base::MutexLock lock(mutex_);
  entries_.erase(
      std::remove_if(entries_.begin(), entries_.end(),
                     [high_seqno](const FailoverEntry& e) { return e.seqno > high_seqno; }),
      entries_.end());
  entries_.insert(entries_.begin(), FailoverEntry{uuid, high_seqno});
  if (entries_.size() > kMaxEntries) entries_.resize(kMaxEntries);
}

void FailoverTable::replace(const std::vector<FailoverEntry>& entries) {
  base::MutexLock lock(mutex_);
  entries_.assign(entries.begin(), entries.begin() + static_cast<std::ptrdiff_t>(
                                                         std::min(entries.size(), kMaxEntries)));
}

std::vector<FailoverEntry> FailoverTable::entries() const {
  base::MutexLock lock(mutex_);
  return {entries_.begin(), entries_.end()};
}

uint64_t FailoverTable::latestUuid() const {
  base::MutexLock lock(mutex_);
  return entries_.empty() ? 0 : entries_.front().uuid;
}

std::optional<RollbackPoint> FailoverTable::needsRollback(Seqno start_seqno, uint64_t client_uuid,
                                                          Seqno snap_start, Seqno snap_end,
                                                          Seqno high_seqno) const {
  if (start_seqno == 0) return std::nullopt;  // it holds nothing to disagree with
  base::MutexLock lock(mutex_);
  // Oldest first: the first entry of the client's history, and the seqno the
  // next (newer) one starts at.
  Seqno upper = high_seqno;
  bool found = false;
  for (size_t i = entries_.size(); i-- > 0;) {
    if (entries_[i].uuid != client_uuid) continue;
    if (i > 0) upper = entries_[i - 1].seqno;
    found = true;
    break;
  }
  if (!found) {
    return RollbackPoint{0, absl::StrCat("vbucket uuid ", client_uuid,
                                         " is not in the failover table: no common history")};
  }
  // A client at the start of its snapshot holds none of it.
  if (start_seqno == snap_start) snap_end = start_seqno;
  if (snap_end <= upper) return std::nullopt;
  // A client at its snapshot's end holds all of it.
  if (start_seqno == snap_end) snap_start = start_seqno;
  return RollbackPoint{std::min(upper, snap_start),
                       absl::StrCat("the client is ahead of this history, which has seqnos up to ",
                                    upper, " in common with it")};
}

}  // namespace syncwrite::vbucket
