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
  // Every caller holds the monitor's lock, so a load and a store suffice (no
  // read-modify-write on the write path).
  const clock::Duration::rep deadline = head_deadline.time_since_epoch().count();
  if (armed_.load(std::memory_order_relaxed) != deadline) {
    armed_.store(deadline, std::memory_order_release);
    rearms_.store(rearms_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  if (id() == executor::kNoTask) return;  // not scheduled (yet, or refused)

  // Always re-arm, even to the same deadline: inside run() the wake time is
  // still the one that fired, and the task would run again at once. A later
  // deadline (the head committed, or kNever) is a store of the wake time: the
  // pool's timer fires at the earlier time, sees the later one and sleeps
  // again. Only an earlier one re-arms the timer.
  if (head_deadline == clock::kNever) {
    pool_.snooze(*this, clock::Duration::max());
    return;
  }
  const clock::TimePoint now = clock_.now();
  // Expired already: run now. Not yet: at least kMinSleep (see the header).
  const clock::TimePoint wake =
      head_deadline < now ? now : std::max(head_deadline, now + kMinSleep);
  if (clock_.onSteadyTimeline()) {
    pool_.snoozeUntil(*this, wake);  // the pool's timeline: no second clock read
  } else {
    pool_.snooze(*this, wake - now);
  }
}

}  // namespace syncwrite::durability
