// CheckpointMemoryRecovery: a bucket's checkpoint memory recovery — kv_engine's
// CheckpointMemRecoveryTask, as a task on the executor that an idle bucket
// never runs.
//
// The task sleeps until BucketMemory's trigger wakes it: checkpoint bytes
// crossed the upper mark. A run visits the vbuckets round-robin, resuming
// where the last run stopped, and calls extractItemsToExpel() on each —
// removing the closed checkpoints every cursor has passed and detaching, in
// O(1), the items every cursor has read from the oldest one — and frees what
// it took after the manager's lock is released. It stops once checkpoint bytes
// are at or under the lower mark, or after one full round.
//  - Under the upper mark at the end: recoveryDone(), and the task sleeps
//    until the next crossing. (A crossing during the run finds recovery still
//    requested and wakes no one, so the run checks again after it clears the
//    request.)
//  - Still above it: a reader is holding items (paused, stuck, or far
//    behind). The request stays set — writes above the mark wake no one —
//    and the task tries again `retry_interval` later, until readers move.
//    While checkpoint bytes are at the checkpoint quota, writes are refused
//    (BucketMemory::shouldRefuseWrites), so memory stays bounded.
// Cursors are never dropped: a reader that is far behind keeps its items and
// writes wait for it (see docs/memory.md for why).
//
// Thread-safety: runNow() and stats() may be called from any thread; runs
// never overlap (the pool never runs a task concurrently with itself, and
// runNow() takes the same mutex).
// Lifetime: the map, the memory object and the pool must outlive this object;
// its destructor unregisters the task and waits for a run in progress. The
// trigger it installs calls only the pool, so it stays safe afterwards.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "base/mutex.h"
#include "executor/executor_pool.h"
#include "vbucket/bucket_memory.h"
#include "vbucket/vbucket_map.h"

namespace syncwrite::vbucket {

struct RecoveryStats {
  uint64_t runs = 0;
  uint64_t items_expelled = 0;         // including those of removed checkpoints
  uint64_t checkpoints_removed = 0;    // closed checkpoints no cursor needed
  uint64_t bytes_freed = 0;            // checkpoint bytes
  uint64_t runs_above_upper_mark = 0;  // runs that ended still above the upper mark
};

class CheckpointMemoryRecovery {
 public:
  // Schedules the (sleeping) task on `pool` and installs it as `memory`'s
  // recovery trigger. `name` names the task's owner (the bucket).
  CheckpointMemoryRecovery(
      std::string name, VBucketMap& map, BucketMemory& memory, executor::ExecutorPool& pool,
      std::chrono::milliseconds retry_interval = std::chrono::milliseconds(10));
  ~CheckpointMemoryRecovery();
  CheckpointMemoryRecovery(const CheckpointMemoryRecovery&) = delete;
  CheckpointMemoryRecovery& operator=(const CheckpointMemoryRecovery&) = delete;

  // One run on the calling thread, as the task would make it (for tests and
  // for a caller that needs memory back now). True when it ended at or under
  // the upper mark.
  bool runNow();

  RecoveryStats stats() const;

 private:
  class Task;

  // One run; false when it ended above the upper mark.
  bool recover();

  VBucketMap& map_;
  BucketMemory& memory_;
  executor::ExecutorPool& pool_;
  const std::chrono::milliseconds retry_interval_;
  executor::Taskable owner_;
  std::shared_ptr<Task> task_;
  base::Mutex run_mu_;  // serialises runs
  size_t next_vbucket_ ABSL_GUARDED_BY(run_mu_) = 0;
  // Written by runs, read by stats().
  std::atomic<uint64_t> runs_{0};
  std::atomic<uint64_t> items_expelled_{0};
  std::atomic<uint64_t> checkpoints_removed_{0};
  std::atomic<uint64_t> bytes_freed_{0};
  std::atomic<uint64_t> runs_above_upper_mark_{0};
};

}  // namespace syncwrite::vbucket
