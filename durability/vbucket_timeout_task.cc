#include "durability/vbucket_timeout_task.h"

#include <algorithm>
#include <string>

#include "clock/precise_clock.h"

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
  // Re-arms this task (nextDeadlineChanged) under the monitor's lock. The
  // pool reads the wake time after run() returns, so a re-arm by a writer
  // during this run is not lost either.
  monitor_.processTimeout(clock_.now(), resolved);
  resolved.notify();
  // Counted once the run's work is done, so that a test that sees the count
  // rise knows this run's timeouts have been processed.
  counters_.runs.fetch_add(1, std::memory_order_release);
  return true;
}

void VBucketTimeoutTask::nextDeadlineChanged(clock::TimePoint next_deadline) {
  // Every caller holds the monitor's lock, so a load and a store suffice (no
  // read-modify-write on the write path).
  const clock::Duration::rep deadline = next_deadline.time_since_epoch().count();
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
  if (next_deadline == clock::kNever) {
    pool_.snooze(*this, clock::Duration::max());
    return;
  }
  if (clock_.onSteadyTimeline() && next_deadline >= clock::PreciseClock::now()) {
    // Ahead in real time: due the instant real time passes it. 1 ns later,
    // so that a precise read when it fires is strictly past the deadline.
    pool_.snoozeUntil(*this, next_deadline + clock::Duration(1));
    return;
  }
  const clock::TimePoint now = clock_.now();
  if (next_deadline < now) {
    pool_.snooze(*this, clock::Duration::zero());  // expired already: run now
    return;
  }
  // Due in real time but not yet by a lagging clock, or a clock off the
  // steady timeline: relative to real now, and at least kMinSleep.
  pool_.snooze(*this, std::max(next_deadline - now, kMinSleep));
}

}  // namespace syncwrite::durability
