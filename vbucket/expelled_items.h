// ExpelledItems: what CheckpointManager::extractItemsToExpel() took out of
// the checkpoints — a detached chain of entries, plus any whole checkpoints
// that were removed because every cursor had passed them.
//
// The point of this type is *where* the freeing happens: the manager detaches
// the items under its lock in O(1) and hands them over in this object; they
// are released (item references dropped, entries allocated on their own
// deleted) only when the object is destroyed or release() is called — after
// the manager's lock is dropped. An entry living in its item's block goes with
// the block, when its last holder lets go: a prepare's block stays while its
// commit or abort is still in a checkpoint, or a reader holds the item.
//
// Move-only. Not thread-safe: one owner.
#pragma once

#include <cstddef>
#include <functional>
#include <list>

#include "vbucket/checkpoint.h"

namespace syncwrite::vbucket {

class ExpelledItems {
 public:
  ExpelledItems() = default;
  ~ExpelledItems() { release(); }
  ExpelledItems(ExpelledItems&& other) noexcept;
  ExpelledItems& operator=(ExpelledItems&& other) noexcept;
  ExpelledItems(const ExpelledItems&) = delete;
  ExpelledItems& operator=(const ExpelledItems&) = delete;

  // Items expelled, counting those of removed checkpoints.
  size_t count() const noexcept;
  // Their bytes, as counted by the checkpoint memory statistics.
  size_t bytes() const noexcept;
  // Whole checkpoints removed.
  size_t checkpointsRemoved() const noexcept { return removed_.size(); }
  bool empty() const noexcept { return count() == 0 && removed_.empty(); }

  // Calls fn on every expelled log record, oldest first. O(count).
  void forEach(const std::function<void(const LogRecord&)>& fn) const;

  // Frees everything now. O(count).
  void release() noexcept;

 private:
  friend class CheckpointManager;

  EntryChain chain_;               // expelled from the oldest remaining checkpoint
  std::list<Checkpoint> removed_;  // older checkpoints, removed whole
};

}  // namespace syncwrite::vbucket
