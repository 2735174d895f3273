#include "durability/vbucket_timeout_task.h"

#include <algorithm>
#include <string>

namespace syncwrite::durability {

VBucketTimeoutTask::VBucketTimeoutTask(executor::Taskable& owner, executor::ExecutorPool& pool,
                                       ActiveDurabilityMonitor& monitor, clock::ClockRef clock,
                                       TimeoutTaskCounters& counters)
    : Task(owner, "durability timeout vb:" + std::to_string(monitor.vbucket().id()),
           executor::TaskGroup::kNonIO, clock::kNever),
      pool_(pool),
      monitor_(monitor),
      clock_(clock),
      counters_(counters),
      armed_(clock::kNever.time_since_epoch().count()) {}

bool VBucketTimeoutTask::run() {
  if (taskable().isShutdown()) return false;
  ResolvedWrites resolved;
  // Re-arms this task (headDeadlineChanged) under the monitor's lock. The
  // pool reads the wake time after run() returns, so a re-arm by a writer
  // during this run is not lost either.
  monitor_.processTimeout(clock_.now(), resolved);
  resolved.notify();
  // Counted once the run's work is done, so that a test that sees the count
  // rise knows this run's timeouts have been processed.
  counters_.runs.fetch_add(1, std::memory_order_release);
  return true;
}

void VBucketTimeoutTask::headDeadlineChanged(clock::TimePoint head_deadline) {
  const clock::Duration::rep previous =
      armed_.exchange(head_deadline.time_since_epoch().count(), std::memory_order_acq_rel);
  if (previous != head_deadline.time_since_epoch().count()) {
    counters_.rearms.fetch_add(1, std::memory_order_relaxed);
  }
  // Always snooze, even to the same deadline: inside run() the wake time is
  // still the one that fired, and the task would run again at once.
  const executor::TaskId task_id = id();
  if (task_id == executor::kNoTask) return;  // not scheduled (yet, or refused)
  if (head_deadline == clock::kNever) {
    pool_.snooze(task_id, clock::Duration::max());
    return;
  }
  const clock::Duration remaining = head_deadline - clock_.now();
  // Expired already: run now. Not yet: at least kMinSleep (see the header).
  pool_.snooze(task_id, remaining < clock::Duration::zero() ? clock::Duration::zero()
                                                            : std::max(remaining, kMinSleep));
}

}  // namespace syncwrite::durability
