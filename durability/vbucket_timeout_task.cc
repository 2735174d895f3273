#include "durability/vbucket_timeout_task.h"

#include <algorithm>
#include <string>

#include "clock/coarse_clock.h"

namespace syncwrite::durability {

namespace {

// clock_getres() once per process, not once per task.
clock::Duration coarseTick() {
  static const clock::Duration tick = clock::CoarseClock::resolution();
  return tick;
}

}  // namespace

VBucketTimeoutTask::VBucketTimeoutTask(executor::Taskable& owner, executor::ExecutorPool& pool,
                                       ActiveDurabilityMonitor& monitor, clock::ClockRef clock,
                                       TimeoutTaskCounters& counters)
    : Task(owner, "durability timeout vb:" + std::to_string(monitor.vbucket().id()),
           executor::TaskGroup::kNonIO, clock::kNever),
      pool_(pool),
      monitor_(monitor),
      clock_(clock),
      counters_(counters),
      armed_(clock::kNever.time_since_epoch().count()),
      coarse_tick_(coarseTick()) {}

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
  if (head_deadline < now) {
    pool_.snooze(*this, clock::Duration::zero());  // expired already: run now
    return;
  }
  const clock::Duration remaining = head_deadline - now;
  if (clock_.onSteadyTimeline() && remaining >= kAbsoluteArmMargin) {
    // Far enough ahead to be in the future of real time too, however stale
    // the coarse reading: the deadline is a time on the pool's timeline, and
    // needs no second clock read. Plus a coarse tick, so that the clock has
    // usually moved past it when the task runs.
    pool_.snoozeUntil(*this, head_deadline + coarse_tick_);
  } else {
    // Close, or woken before the clock moved past it: relative to real now,
    // and at least kMinSleep (see the header).
    pool_.snooze(*this, std::max(remaining, kMinSleep));
  }
}

}  // namespace syncwrite::durability
