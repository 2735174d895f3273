#include "vbucket/checkpoint_memory_recovery.h"

#include <utility>

namespace syncwrite::vbucket {

class CheckpointMemoryRecovery::Task final : public executor::Task {
 public:
  Task(executor::Taskable& owner, CheckpointMemoryRecovery& recovery)
      : executor::Task(owner, "checkpoint memory recovery", executor::TaskGroup::kNonIO,
                       clock::kNever),
        recovery_(recovery) {}

  bool run() override {
    if (taskable().isShutdown()) return false;
    const bool done = recovery_.recover();
    // Done: asleep until the trigger wakes it. Not done: try again soon.
    snooze(done ? clock::Duration::max()
                : std::chrono::duration_cast<clock::Duration>(recovery_.retry_interval_));
    return true;
  }

 private:
  CheckpointMemoryRecovery& recovery_;
};

CheckpointMemoryRecovery::CheckpointMemoryRecovery(std::string name, VBucketMap& map,
                                                   BucketMemory& memory,
                                                   executor::ExecutorPool& pool,
                                                   std::chrono::milliseconds retry_interval)
    : map_(map),
      memory_(memory),
      pool_(pool),
      retry_interval_(retry_interval),
      owner_(std::move(name)),
      task_(std::make_shared<Task>(owner_, *this)) {
  const executor::TaskId id = pool_.schedule(task_);
  // The pool, not this object: a write racing the destructor may still call
  // the trigger, and a wake of an unregistered task is harmless.
  memory_.setRecoveryTrigger([&pool = pool_, id] { pool.wake(id); });
}

CheckpointMemoryRecovery::~CheckpointMemoryRecovery() { pool_.unregisterTaskable(owner_); }

bool CheckpointMemoryRecovery::runNow() { return recover(); }

bool CheckpointMemoryRecovery::recover() {
  base::MutexLock lock(run_mu_);
  runs_.fetch_add(1, std::memory_order_relaxed);
  const size_t n = map_.size();
  size_t visited = 0;
  while (visited < n && memory_.aboveLowerMark()) {
    VBucket& vb = map_.at(static_cast<Vbid>(next_vbucket_));
    next_vbucket_ = (next_vbucket_ + 1) % n;
    ++visited;
    ExpelledItems out = vb.checkpointManager().extractItemsToExpel();
    if (out.empty()) continue;
    items_expelled_.fetch_add(out.count(), std::memory_order_relaxed);
    checkpoints_removed_.fetch_add(out.checkpointsRemoved(), std::memory_order_relaxed);
    bytes_freed_.fetch_add(out.bytes(), std::memory_order_relaxed);
    // `out` frees its items here, with no manager's lock held.
  }
  if (memory_.aboveUpperMark()) {
    runs_above_upper_mark_.fetch_add(1, std::memory_order_relaxed);
    return false;  // the request stays set: the retry, not the writers, runs next
  }
  memory_.recoveryDone();
  // A write that crossed the mark during the run found the request set and
  // woke no one: look again now that it is clear.
  if (memory_.aboveUpperMark()) memory_.requestRecovery();
  return true;
}

RecoveryStats CheckpointMemoryRecovery::stats() const {
  return {runs_.load(std::memory_order_relaxed), items_expelled_.load(std::memory_order_relaxed),
          checkpoints_removed_.load(std::memory_order_relaxed),
          bytes_freed_.load(std::memory_order_relaxed),
          runs_above_upper_mark_.load(std::memory_order_relaxed)};
}

}  // namespace syncwrite::vbucket
